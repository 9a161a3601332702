"""Lint rules: structure — ids are unique, names resolve, the derivation graph is sound.

These rules look only at how a chain's elements point at each other (SPEC
§2.2 and the id fields of §2.1, §2.6, §3): duplicate ids, names that point
at nothing, ``derived_from`` cycles, handles whose minter disagrees, and
orders in which a handle could not exist yet when consumed. Every other rule
family assumes these hold, and keeps the first definition of a duplicated
id (see :class:`~chains.core.lint.context.LintContext`).

Two spellings are not references: ``minted_by: external`` (also with its
origin, ``external(scope A create_order)``) marks a handle minted outside
this chain (reported as info), and ``refresh: n/a`` marks a durable handle
nothing re-mints.

A verdict row may come from a verdict-table core that several chains of one
document share (SKILL Step 6), so its scope can name steps of the other
chains. A scope naming at least one step of this chain applies to those; the
names it lacks are a warning (a shared row, or a misspelt id). A scope
naming no step of this chain applies to nothing here, which is an error. A
scope written as prose (``scope.text``) names nothing to resolve.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterator

from ..graph import action_verdicts, derivation_cycles
from ..model import EFFECTS, ChainSpec, VerdictRow, is_external, row_ref
from ..paths import ElementPath
from ..verdicts import Verdict
from .context import LintContext
from .registry import Found, rule

__all__ = ["EXTERNAL", "row_element", "verdicts"]

EXTERNAL = "external"


def row_element(row: VerdictRow, index: int) -> ElementPath:
    """``verdict_table[D3]`` for a row with an id, else ``verdict_table[#4]`` (:func:`row_ref`)."""
    return ElementPath.row(row_ref(row, index))


def verdicts(spec: ChainSpec) -> Iterator[tuple[ElementPath, Verdict]]:
    """Every verdict written in ``chain``, with the element path where it was written."""
    for action in spec.actions:
        for path, verdict in action_verdicts(action):
            yield ElementPath.action(action.id).join(path), verdict
    for gate in spec.gates:
        for name, outcome in gate.outcomes.items():
            yield ElementPath.gate(gate.id).field("outcomes", name), outcome.verdict
        if gate.timeout is not None and gate.timeout.verdict is not None:
            yield ElementPath.gate(gate.id).field("timeout"), gate.timeout.verdict
        if gate.payload_expiry is not None:
            yield ElementPath.gate(gate.id).field("payload_expiry"), gate.payload_expiry.verdict
    for i, row in enumerate(spec.verdict_table, 1):
        yield row_element(row, i), row.verdict


@rule(
    "structure.no-actions",
    "error",
    "SPEC §2.1",
    hint="Declare the chain's actions (reads, mints, commits); a chain with none has nothing "
    "to run, so nothing here can be reviewed or approved.",
)
def no_actions(spec: ChainSpec, ctx: LintContext) -> Found:
    """The chain declares no actions."""
    if not spec.actions:
        yield "actions", f"chain {spec.id} declares no actions: there is nothing to run."


@rule(
    "structure.duplicate-id",
    "error",
    "SPEC §2.1",
    hint="Give every action, handle, gate and verdict row its own id; merge or rename the copy.",
)
def duplicate_id(spec: ChainSpec, ctx: LintContext) -> Found:
    """Two actions, handles, gates or verdict rows share an id."""
    collections = {
        "actions": [a.id for a in spec.actions],
        "handles": [h.id for h in spec.handles],
        "gates": [g.id for g in spec.gates],
        "verdict_table": [r.id for r in spec.verdict_table if r.id],
    }
    for name, ids in collections.items():
        for element_id, count in Counter(ids).items():
            if count > 1:
                yield f"{name}[{element_id}]", f"{name}[{element_id}] is defined {count} times"


@rule(
    "structure.dangling-reference",
    "error",
    "SPEC §2",
    hint="Define the missing element or correct the name; ids are case-sensitive.",
)
def dangling_reference(spec: ChainSpec, ctx: LintContext) -> Found:
    """A name points at something the chain does not define.

    Actions, handles, gates, a gate's own outcomes, the intent fields a
    repair names, variant values in ``only``, and the action ids in policy.
    """

    def need(element: ElementPath, kind: str, name: str | None, known: Container[str]) -> Found:
        if name is not None and name not in known:
            yield element, f"{element} names {kind} {name!r}, which is not defined"

    actions, handles, gates = ctx.actions, ctx.handles, ctx.gates
    for h in spec.handles:
        where = ElementPath.handle(h.id)
        for parent in h.derived_from:
            yield from need(where.field("derived_from"), "handle", parent, handles)
        if not is_external(h):
            yield from need(where.field("minted_by"), "action", h.minted_by, actions)
        if h.staleness is not None and h.staleness.refresh != "n/a":
            refresh = where.field("staleness", "refresh")
            yield from need(refresh, "action", h.staleness.refresh, actions)

    for a in spec.actions:
        where = ElementPath.action(a.id)
        for name in a.input.handles:
            yield from need(where.field("input", "handles"), "handle", name, handles)
        for name in a.output.handles:
            yield from need(where.field("output", "handles"), "handle", name, handles)
        yield from need(where.field("mutates"), "handle", a.mutates, handles)
        yield from need(where.field("entry_gate"), "gate", a.entry_gate, gates)
        if a.confirmation is not None:
            probe = a.confirmation.probe
            yield from need(where.field("confirmation", "probe"), "action", probe, actions)
        comp = a.compensation
        if comp is not None:
            undo = where.field("compensation")
            if comp.action != "none":
                yield from need(undo.field("action"), "action", comp.action, actions)
            for step in comp.chain:
                yield from need(undo.field("chain"), "action", step, actions)
            for i, rung in enumerate(comp.ladder, 1):
                for rung_step in [rung.action, *rung.chain]:
                    rung_where = undo.field("ladder").item(i)
                    yield from need(rung_where, "action", rung_step, actions)

    for g in spec.gates:
        if g.timeout is not None:
            outcome = g.timeout.outcome
            yield from need(ElementPath.gate(g.id).field("timeout"), "outcome", outcome, g.outcomes)

    for i, row in enumerate(spec.verdict_table, 1):
        where = row_element(row, i).field("scope")
        if not any(step in actions for step in row.scope.steps):
            for step in row.scope.steps:
                yield from need(where, "action", step, actions)
        for name in row.scope.consumers_of:
            yield from need(where, "handle", name, handles)

    for element, verdict in verdicts(spec):
        yield from need(element, "action", verdict.to, actions)
        yield from need(element, "gate", verdict.gate, gates)
        for name in verdict.fields:
            yield from need(element, "intent field", name, ctx.intent_fields)

    values = set(spec.variants.values) if spec.variants is not None else set()
    for element, only in _variant_scopes(spec):
        for value in only:
            yield from need(element.field("only"), "variant value", value, values)

    for key in spec.policy.per_step:
        if key not in EFFECTS and key not in actions:
            place = ElementPath.root("policy", "per_step").field(key)
            yield (
                place,
                f"{place} is neither an effect class ({', '.join(EFFECTS)}) nor an action id",
            )
    order = spec.policy.per_chain.compensation_order
    if isinstance(order, list):
        place = ElementPath.root("policy", "per_chain", "compensation_order")
        for step in order:
            yield from need(place, "action", step, actions)


def _variant_scopes(spec: ChainSpec) -> Iterator[tuple[ElementPath, list[str]]]:
    for h in spec.handles:
        yield ElementPath.handle(h.id), h.only
    for a in spec.actions:
        yield ElementPath.action(a.id), a.only
        for name, intent in a.input.intent.items():
            yield ElementPath.action(a.id).field("input", "intent", name), intent.only
    for g in spec.gates:
        yield ElementPath.gate(g.id), g.only
    for i, row in enumerate(spec.verdict_table, 1):
        yield row_element(row, i), row.only


@rule(
    "structure.scope-names-absent-steps",
    "warning",
    "SKILL Step 6",
    hint="If the row comes from a verdict-table core shared with other chains, nothing is "
    "wrong here; otherwise correct the misspelt step id, or the row misses that step.",
)
def scope_names_absent_steps(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row's scope names steps this chain lacks, next to steps it has."""
    for i, row in enumerate(spec.verdict_table, 1):
        here = [s for s in row.scope.steps if s in ctx.actions]
        absent = [s for s in dict.fromkeys(row.scope.steps) if s not in ctx.actions]
        if here and absent:
            where = row_element(row, i).field("scope")
            yield (
                where,
                f"{where} names steps this chain lacks ({', '.join(absent)}); the row "
                f"applies here only to {', '.join(here)}",
            )


@rule(
    "structure.external-handle",
    "info",
    "SPEC §2.2",
    hint="Nothing to fix if the handle really comes from another chain; its minting, "
    "staleness and lineage are checked there, not here.",
)
def external_handle(spec: ChainSpec, ctx: LintContext) -> Found:
    """A handle is minted outside this chain (``minted_by: external``, or ``external(origin)``)."""
    for h in spec.handles:
        if is_external(h):
            yield (
                ElementPath.handle(h.id),
                f"{ElementPath.handle(h.id)} is minted outside this chain; nothing here "
                "re-mints it",
            )


@rule(
    "structure.derivation-cycle",
    "error",
    "SPEC §4 I1",
    hint="derived_from edges point from a handle to what it was made from; "
    "remove the edge that points back downstream.",
)
def derivation_cycle(spec: ChainSpec, ctx: LintContext) -> Found:
    """The ``derived_from`` edges form a cycle, so invalidation has no order."""
    for cycle in derivation_cycles(spec):
        text = " → ".join(str(ElementPath.handle(h)) for h in [*cycle, cycle[0]])
        yield ElementPath.handle(cycle[0]), f"derived_from cycle: {text}"


@rule(
    "structure.minted-by-mismatch",
    "error",
    "SPEC §2.2",
    hint="A handle's minted_by action must list it in output.handles, "
    "and an action may only output handles that say it mints them.",
)
def minted_by_mismatch(spec: ChainSpec, ctx: LintContext) -> Found:
    """A handle's ``minted_by`` and the actions' ``output.handles`` disagree."""
    for h in spec.handles:
        minter = ctx.actions.get(h.minted_by or "")
        if minter is not None and h.id not in minter.output.handles:
            yield (
                ElementPath.handle(h.id).field("minted_by"),
                f"{ElementPath.handle(h.id)} says it is minted by {ElementPath.action(minter.id)}, "
                f"which does not list it in output.handles",
            )
    for a in spec.actions:
        for name in a.output.handles:
            declared = ctx.handles.get(name)
            if (
                declared is not None
                and declared.minted_by not in (None, a.id)
                and not is_external(declared)
            ):
                yield (
                    ElementPath.action(a.id).field("output", "handles"),
                    f"{ElementPath.action(a.id)} outputs {ElementPath.handle(name)}, "
                    f"which says it is minted by {declared.minted_by!r}",
                )


def _minter(ctx: LintContext, handle_id: str) -> str | None:
    """The action that mints ``handle_id``: its ``minted_by`` if defined, else an outputter."""
    h = ctx.handles.get(handle_id)
    if h is not None and h.minted_by in ctx.actions:
        return h.minted_by
    outputters = ctx.minters.get(handle_id)
    return outputters[0] if outputters else None


@rule(
    "structure.consumed-before-minted",
    "error",
    "SPEC §2.2",
    hint="Move the consuming action after the action that mints the handle, "
    "or mark the handle minted_by: external if it comes from another chain.",
)
def consumed_before_minted(spec: ChainSpec, ctx: LintContext) -> Found:
    """An action consumes a handle before (in chain order) the action that mints it.

    A handle another chain made (``minted_by: external(...)``) exists before
    this chain's first step, so consuming it early is fine even when a later
    step of this chain mints a new one (an exchange re-issuing tickets).
    """
    for a in spec.actions:
        for name in dict.fromkeys(a.input.handles):
            declared = ctx.handles.get(name)
            if declared is not None and is_external(declared):
                continue
            minter = _minter(ctx, name)
            if minter is not None and ctx.order[minter] > ctx.order[a.id]:
                yield (
                    ElementPath.action(a.id).field("input", "handles"),
                    f"{ElementPath.action(a.id)} consumes {ElementPath.handle(name)} before "
                    f"{ElementPath.action(minter)} mints it",
                )


@rule(
    "structure.refresh-does-not-remint",
    "warning",
    "SPEC §2.2",
    hint="staleness.refresh must name the minting action or an earlier action "
    "whose replay reaches it.",
)
def refresh_does_not_remint(spec: ChainSpec, ctx: LintContext) -> Found:
    """Rewinding to a handle's refresh step would not re-mint the handle."""
    for h in spec.handles:
        refresh = h.staleness.refresh if h.staleness is not None else None
        action = ctx.actions.get(refresh or "")
        if action is None or h.id in action.output.handles:
            continue
        minter = _minter(ctx, h.id)
        if minter is None or ctx.order[action.id] > ctx.order[minter]:
            why = (
                f"neither mints it nor comes before its minter {ElementPath.action(minter)}"
                if minter
                else "does not mint it, and no action does"
            )
            yield (
                ElementPath.handle(h.id).field("staleness", "refresh"),
                f"{ElementPath.handle(h.id)} refreshes at {ElementPath.action(action.id)}, "
                f"which {why}: "
                f"replaying from there leaves it dead",
            )


@rule(
    "structure.reselect-target-not-select",
    "error",
    "SPEC §2.3",
    hint="reselect(to: …) must name an effect: select pseudo-step; use rewind or repair "
    "to re-run an ordinary action.",
)
def reselect_target_not_select(spec: ChainSpec, ctx: LintContext) -> Found:
    """A ``reselect`` verdict targets an action that is not a selection step."""
    for element, verdict in verdicts(spec):
        target = ctx.actions.get(verdict.to or "")
        if verdict.type == "reselect" and target is not None and target.effect != "select":
            yield (
                element,
                f"reselect(to: {target.id}) targets {ElementPath.action(target.id)}, "
                f"whose effect is {target.effect}, not select",
            )


@rule(
    "structure.empty-without-route",
    "error",
    "SPEC §2.1 empty, §3 row 2",
    hint="Give output.empty a route: ok to proceed degraded, or the gate, repair, reselect "
    "or dead_end the empty result leads to.",
)
def empty_without_route(spec: ChainSpec, ctx: LintContext) -> Found:
    """A valid empty result has no ``route`` to follow, so the run dead-ends on it.

    ``ok(empty)`` follows the action's ``empty.route``; a route that is
    missing (or was unreadable and dropped at import) leaves the answer with
    nowhere to go, and the runtime fails closed rather than proceed as if the
    step had produced its output (a declined card going on to capture).
    """
    for action in spec.actions:
        empty = action.output.empty
        if empty is not None and empty.valid and empty.route is None:
            yield (
                ElementPath.action(action.id).field("output", "empty"),
                f"{ElementPath.action(action.id)} declares a valid empty result but no route "
                "for it; "
                "the run dead-ends there instead of proceeding without the step's output",
            )
