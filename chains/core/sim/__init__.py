"""The simulator: a deterministic runtime for a chain document (SPEC v0.4 §3).

A run is driven by scripted observations instead of real providers. The
state is the SPEC §2.5 run snapshot (:mod:`.state`), every decision is an
event in an append-only trace, and the snapshot plus the trace alone resume
a run. Nothing here calls a model or evaluates an expression: predicates are
matched by name.
"""
