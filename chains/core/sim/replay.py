"""Re-deriving a run from its trace (CONFORMANCE C7.2).

A trace records every outside input where it was applied (the ``input`` of
its event: the start parameters, observations, picks, answers, probe
results, proposals, a crash recovery) and the virtual time of every event.
Feeding those inputs to a fresh :class:`~.runtime.Run` at the same times must
reproduce every other field — verdicts, rows, invalidations, budgets,
states — because the runtime is a pure function of its inputs and its seed.
"""

from __future__ import annotations

from typing import Any

from ..model import ChainSpec
from .runtime import Run, SimulationError
from .sealed import unseal, unseal_carried, unseal_observation
from .state import Event, Observation, Proposal, Snapshot

__all__ = ["check_replay", "replay", "replay_input"]


def replay(
    spec: ChainSpec, trace: list[Event], sealed: dict[str, Any] | None = None
) -> list[Event]:
    """Re-derive a run from its trace's inputs alone; returns the re-derived trace.

    Each event that applied an outside input carries it (``input``); virtual
    time is re-created from the events' ``t``. Everything else — verdicts,
    invalidations, budgets — is decided afresh by the classifier and the
    transitions, so comparing the result with ``trace`` checks them.

    Intent values and provider responses are references into the run's
    sealed store (C7.3); with ``sealed`` (the snapshot's store) they are
    resolved and the re-derived run holds the values. Without it the
    references stand for the values: equal values have equal references, and
    the response fields the chain reads to decide are not sealed, so the
    trace alone re-derives every event but a gate answer checked against a
    sealed list the response presented.
    """
    if not trace or trace[0].input is None or trace[0].input.get("kind") != "start":
        raise SimulationError("a replayable trace starts with the run's start event")
    store = sealed or {}
    given = dict(trace[0].input)
    given.pop("kind")
    given["intent"] = unseal(store, given.get("intent") or {})
    if given.get("continuation_of") is not None:
        previous = Snapshot.model_validate(unseal_carried(store, given["continuation_of"]))
        previous.intent = unseal(store, previous.intent)
        previous.sealed = {k: v for k, v in store.items()}
        given["continuation_of"] = previous
    run = Run.start(spec, **given)
    run.snapshot.sealed.update(store)
    for event in trace[1:]:
        if event.seq <= run.snapshot.seq:
            continue  # derived by an input already replayed
        if event.t > run.snapshot.clock:
            run.wait(event.t - run.snapshot.clock)
        if event.input is None or event.seq <= run.snapshot.seq:
            continue
        replay_input(run, spec, event)
        if event.input.get("kind") == "resume":
            run = Run.resume(spec, run.snapshot, run.trace)
    return run.trace


def replay_input(run: Run, spec: ChainSpec, event: Event) -> None:
    """Apply the outside input ``event`` recorded (its ``input``) to ``run``."""
    given = event.input or {}
    kind = given.get("kind")
    store = run.snapshot.sealed  # responses, like intent values, are sealed in the trace (C7.3)
    try:
        if kind == "observe":
            run.observe(Observation(**unseal_observation(store, given["observation"])))
        elif kind == "select":
            run.select(given["option"])
        elif kind == "answer":
            run.answer(given["outcome"], unseal(run.snapshot.sealed, given.get("params") or {}))
        elif kind == "probe":
            cause = given.get("cause")
            seen = Observation(**unseal_observation(store, cause)) if cause is not None else None
            run.probe(given["result"], seen)
        elif kind == "cancel":
            run.cancel()
        elif kind == "propose":
            proposal = Proposal(**given["proposal"])
            proposal.fields = unseal(run.snapshot.sealed, proposal.fields)
            run.propose(proposal)
        elif kind == "resume":
            s = run.snapshot
            # Re-stage the crash: the request was out, or (C1.4) not yet sent.
            s.in_flight = None if given.get("point") == "before_dispatch" else s.waiting.step
    except SimulationError:
        if not (event.note or "").startswith("rejected"):
            raise


def check_replay(
    spec: ChainSpec, trace: list[Event], sealed: dict[str, Any] | None = None
) -> list[str]:
    """Differences between ``trace`` and its re-derivation; empty when they agree."""
    again = replay(spec, trace, sealed)
    problems = []
    for old, new in zip(trace, again, strict=False):
        a, b = old.model_dump(), new.model_dump()
        if a != b:
            diff = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
            problems.append(f"seq {old.seq}: {diff}")
    if len(trace) != len(again):
        problems.append(f"trace has {len(trace)} events; replay derived {len(again)}")
    return problems
