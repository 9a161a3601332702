"""Lint rules: edges — ``derived_from`` edges that look missing (SKILL Step 2).

A missing derivation edge is the classic bug: re-minting a handle leaves a
stale dependant alive, and the run later presents it with the new lineage.
The graph questions live in :mod:`chains.core.graph`; these rules only word
the answers. A gap whose consumed handle is a selection pseudo-handle is
reported once, by ``edges.selection-coupling`` (I3), not again as a missing
derivation. What a commit-class action mints is exempt: landed commits are
facts, not cache (I5), so no re-mint of an input ever invalidates them and
an edge would change nothing (the cascade in :mod:`chains.core.graph` stops
at them too).
"""

from __future__ import annotations

from ..graph import (
    GraphError,
    derivation_graph,
    independence_questions,
    minters,
    missing_edges,
    repair_scope,
    selection_coupling_gaps,
)
from ..graph import selection_handles as _selection_handles
from ..model import ChainSpec, is_external, main_steps
from ..paths import ElementPath
from ..verdicts import Verdict
from .context import LintContext, is_commit_class
from .registry import Found, rule
from .structure import verdicts

__all__: list[str] = []


@rule(
    "edges.missing-derivation",
    "error",
    "SKILL Step 2",
    hint="Add the consumed handle to the minted handle's derived_from (or derive it from a "
    "handle that does), so re-minting the input invalidates the output (SPEC §4 I1).",
)
def missing_derivation(spec: ChainSpec, ctx: LintContext) -> Found:
    """A handle is minted from an input it does not derive from (commit outputs excepted)."""
    picks = _selection_handles(spec)
    for gap in missing_edges(spec):
        if gap.consumed in picks:
            continue  # edges.selection-coupling says it, with the I3 reason
        if is_commit_class(ctx.actions[gap.action]):
            continue  # a landed fact (I5): nothing re-minted upstream invalidates it
        yield (
            ElementPath.handle(gap.minted).field("derived_from"),
            f"{ElementPath.handle(gap.minted)} is minted by {ElementPath.action(gap.action)} from "
            f"{ElementPath.handle(gap.consumed)} but does not derive from it",
        )


@rule(
    "edges.selection-coupling",
    "error",
    "SPEC §4 I3",
    hint="Results coupled to a selection must list the selection pseudo-handle in "
    "derived_from, so a fresh pick invalidates them.",
)
def selection_coupling(spec: ChainSpec, ctx: LintContext) -> Found:
    """A result is computed from a selection but does not derive from it."""
    for gap in selection_coupling_gaps(spec):
        if is_commit_class(ctx.actions[gap.action]):
            continue  # a landed fact (I5) describes the pick it was made from, rightly
        yield (
            ElementPath.handle(gap.minted).field("derived_from"),
            f"{ElementPath.handle(gap.minted)} is minted by {ElementPath.action(gap.action)} "
            "from the selection "
            f"{ElementPath.handle(gap.selection)} but does not derive from it: after a new pick it "
            f"would still describe the old one",
        )


@rule(
    "edges.unverified-independence",
    "warning",
    "SKILL Step 2",
    hint="If re-minting either handle really leaves the other valid, record it in the "
    "chain: independence: [{handles: [A, B], independent: confirmed, note: why}]; "
    "otherwise add the missing derived_from edge.",
)
def unverified_independence(spec: ChainSpec, ctx: LintContext) -> Found:
    """Two handles consumed together have no derivation path between them.

    Not asked about: a handle taken from another chain that no step of this
    one mints. Nothing here re-mints it, and it was made before anything
    this chain mints, so no edge either way could change what dies.
    """
    minted = minters(spec)
    outside = {h.id for h in spec.handles if is_external(h) and h.id not in minted}
    for question in independence_questions(spec):
        if question.answered is not None or outside & set(question.handles):
            continue
        a, b = question.handles
        yield (
            ElementPath.handle(a),
            f"no derivation path between {ElementPath.handle(a)} and {ElementPath.handle(b)}, "
            "consumed together "
            f"by {ElementPath.action(', '.join(question.actions))}: if {a} is re-minted, "
            f"is {b} still valid?",
        )


@rule(
    "edges.repair-skips-upstream-minter",
    "warning",
    "SPEC §4 I6",
    hint="Repair from the earliest step whose intent includes the field, or give the two "
    "inputs different names if they are different things.",
)
def repair_skips_upstream_minter(spec: ChainSpec, ctx: LintContext) -> Found:
    """A repair resumes after a step that also takes a repaired field and mints a handle.

    I6 invalidates every handle whose minting inputs include a repaired field,
    wherever it stands; resuming at a later step leaves that earlier step's
    handle dead with nothing to re-mint it.
    """
    for where, verdict in verdicts(spec):
        if verdict.type != "repair" or verdict.to not in ctx.order:
            continue
        if _replay_gaps(spec, ctx, verdict):
            continue  # reported as an error by edges.repair-kills-replayed-input
        fields = set(verdict.fields)
        earlier = [
            a
            for a in spec.actions
            if ctx.order.get(a.id, 0) < ctx.order[verdict.to]
            and fields & set(a.input.intent)
            and a.output.handles
        ]
        if earlier:
            first = earlier[0]
            shared = ", ".join(sorted(fields & set(first.input.intent)))
            yield (
                where,
                f"{where} repairs {shared} at {verdict.to}, but {first.id} (earlier) also takes "
                f"{shared} and mints {', '.join(first.output.handles)}, which the repair "
                "invalidates without re-minting.",
            )


@rule(
    "edges.repair-kills-replayed-input",
    "warning",
    "SPEC §4 I6",
    hint="Repair from the step that mints the dead handle (its minting inputs include the "
    "repaired field); if the two steps' fields of that name are different things (passenger "
    "counts at the search, passport details at the booking), give them different names.",
)
def repair_kills_replayed_input(spec: ChainSpec, ctx: LintContext) -> Found:
    """A repair kills a handle that its own replay consumes before anything re-mints it.

    I6 invalidates every handle whose minting inputs include a repaired field
    (and, by I1, what derives from it); the replay starts at the repair's
    target, so a main step of the replay that consumes such a handle would
    run on a dead one (the explorer finds it as a dispatch without a live
    handle). A warning, not an error: the text cannot tell whether two
    steps' fields of one name are one thing; when they are, this is a bug.
    """
    for where, verdict in verdicts(spec):
        if verdict.type != "repair" or verdict.to not in ctx.order:
            continue
        for step, handle in _replay_gaps(spec, ctx, verdict):
            fields = ", ".join(verdict.fields)
            yield (
                where,
                f"{where} repairs {fields} at {verdict.to}, which invalidates {handle} (SPEC I6: "
                f"its minting inputs include a repaired field); the replay from {verdict.to} "
                f"reaches {step}, which consumes {handle} before anything re-mints it, so it "
                "would run on a dead handle.",
            )


def _replay_gaps(spec: ChainSpec, ctx: LintContext, verdict: Verdict) -> list[tuple[str, str]]:
    """(step, handle) pairs where the replay of a repair consumes a handle the repair killed.

    The replay is the main path from the repair's target on, in any variant;
    compensators and probe-only reads act on landed facts, not on the replay.
    """
    target = verdict.to
    if target is None or target not in ctx.order:
        return []
    try:
        dead = _killed(spec, ctx, target, verdict.fields)
    except GraphError:
        return []  # unknown fields or step: the structure rules say so
    variants: list[str | None] = [*spec.variants.values] if spec.variants else []
    main = {s for v in (variants or [None]) for s in main_steps(spec, v)}
    gaps = []
    for action in spec.actions[ctx.order[target] :]:
        if action.id not in main:
            continue
        gaps += [(action.id, h) for h in dict.fromkeys(action.input.handles) if h in dead]
        dead -= set(action.output.handles)
    return gaps


def _killed(spec: ChainSpec, ctx: LintContext, target: str, fields: list[str]) -> set[str]:
    """The handles a repair invalidates, less what dies only through a landed fact.

    What a commit mints is a landed fact (I5), even when the repaired commit
    is the one that (re-)issues it, so it neither dies nor kills what derives
    from it: an exchange re-issuing tickets taken from the chain that first
    issued them leaves the options shopped from those tickets alive.
    """
    dead = set(repair_scope(spec, target, fields).invalidated)
    graph = derivation_graph(spec)
    facts = {h for h in dead if graph.nodes[h].get("fact")}
    if not facts:
        return dead
    repaired = set(fields)
    seeds = [
        h
        for h, step in minters(spec).items()
        if h in dead
        and h not in facts
        and (step == target or repaired & set(ctx.actions[step].input.intent))
    ]
    killed: set[str] = set()  # reached from a seed without passing a fact
    stack = seeds
    while stack:
        h = stack.pop()
        if h in killed:
            continue
        killed.add(h)
        stack.extend(c for c in graph.successors(h) if c in dead and c not in facts)
    return killed
