"""Lint rules: gates (SPEC §2.6, SKILL Step 7).

A gate is checked for what makes a pause safe to resume: declared outcomes
whose verdicts the runtime can execute, a timeout that resolves to one thing,
a human audience whenever money or consent is at stake, and answers that
write only intent fields the rest of the run will read. A gate is *raised*
by the steps that can park the run at it: an ``entry_gate``, a precondition,
empty route, business expiry or revocation route of an action, and verdict
rows over the steps of their scope.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..graph import action_verdicts
from ..model import ChainSpec, Gate, money_or_consent
from ..paths import ElementPath
from ..signals import reads_a_response, scope_actions
from .context import LintContext
from .registry import Found, rule
from .structure import verdicts
from .values import names_payload_field

__all__: list[str] = []

# SPEC §2.6: what a resumed gate may do next.
OUTCOME_VERDICTS = ("ok", "repair", "rewind", "reselect", "dead_end")


def _outcomes(spec: ChainSpec) -> Iterator[tuple[ElementPath, Gate, str]]:
    for gate in spec.gates:
        for name in gate.outcomes:
            yield ElementPath.gate(gate.id).field("outcomes", name), gate, name


@rule(
    "gates.no-outcomes",
    "error",
    "SPEC §2.6",
    hint="Declare the answers the gate accepts, each with its verdict (approve: ok, ...).",
)
def no_outcomes(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate declares no outcome, so a parked run can never resume."""
    for gate in spec.gates:
        if not gate.outcomes:
            yield ElementPath.gate(gate.id), f"{ElementPath.gate(gate.id)} declares no outcomes."


@rule(
    "gates.outcome-verdict-not-allowed",
    "error",
    "SPEC §2.6",
    hint="Use ok, repair(...), rewind(...), reselect(...) or dead_end as the outcome's verdict.",
)
def outcome_verdict_not_allowed(spec: ChainSpec, ctx: LintContext) -> Found:
    """An outcome maps to a verdict a resumed gate may not take (retry, reconcile, gate ...)."""
    for element, gate, name in _outcomes(spec):
        verdict = gate.outcomes[name].verdict
        if verdict.type not in OUTCOME_VERDICTS:
            yield element, f"{element} resumes with {verdict}, which an outcome may not do."


@rule(
    "gates.no-timeout",
    "error",
    "SKILL Step 7",
    hint="Add timeout: {after: <duration>, outcome: <name>} or {after: ..., verdict: ...}.",
)
def no_timeout(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate has no timeout and the policy sets no ``per_chain.gate_timeout``.

    The run could stay parked forever.
    """
    if spec.policy.per_chain.gate_timeout is not None:
        return
    for gate in spec.gates:
        if gate.timeout is None:
            yield (
                ElementPath.gate(gate.id),
                f"{ElementPath.gate(gate.id)} has no timeout and no chain default.",
            )


@rule(
    "gates.default-timeout-only",
    "warning",
    "SPEC §2.6",
    hint="Give the gate its own timeout naming the outcome or verdict that fires.",
)
def default_timeout_only(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate relies on ``policy.per_chain.gate_timeout`` alone.

    The chain default bounds how long the run parks but declares no outcome,
    so what happens at expiry is left to the runtime.
    """
    default = spec.policy.per_chain.gate_timeout
    if default is None:
        return
    for gate in spec.gates:
        if gate.timeout is None:
            yield (
                ElementPath.gate(gate.id),
                f"{ElementPath.gate(gate.id)} has only the chain's {default} gate_timeout and "
                "no timeout "
                "outcome.",
            )


@rule(
    "gates.timeout-unresolved",
    "error",
    "SPEC §2.6",
    hint="Give the timeout exactly one of outcome: <declared name> or verdict: <verdict>.",
)
def timeout_unresolved(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate timeout names no outcome or verdict, both, or an outcome that needs an answer.

    Nobody answers at a timeout, so an outcome that carries ``params`` has no
    values to bind. A timeout naming an undeclared outcome is a dangling
    reference, reported by the structure rules.
    """
    for gate in spec.gates:
        timeout = gate.timeout
        if timeout is None:
            continue
        element = ElementPath.gate(gate.id).field("timeout")
        chosen = gate.outcomes.get(timeout.outcome or "")
        if timeout.outcome and timeout.verdict:
            yield element, f"{element} names both an outcome and a verdict."
        elif not timeout.outcome and not timeout.verdict:
            yield element, f"{element} names neither an outcome nor a verdict."
        elif chosen is not None and chosen.params:
            yield (
                element,
                f"{element} picks {timeout.outcome}, whose params only an answer carries.",
            )


@rule(
    "gates.timeout-not-duration",
    "error",
    "SPEC §2.6",
    hint="Give timeout.after a duration (30m, 12h) and move the payload's own deadline to "
    "payload_expiry: {field: <its path>, verdict: <verdict>}, which refuses an answer that "
    "arrives after it.",
)
def timeout_not_duration(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate's timeout ``after`` names a payload field instead of a duration.

    The runtime counts a parked gate's timeout from when it parked, so it
    needs a length of time. A deadline the gate's payload carries is what
    ``payload_expiry`` is for. (A duration that is neither is reported by
    ``values.duration-unparsed``.)
    """
    for gate in spec.gates:
        if gate.timeout is not None and names_payload_field(gate.timeout.after):
            element = ElementPath.gate(gate.id).field("timeout", "after")
            yield (
                element,
                f"{element} is {gate.timeout.after.text!r}, a payload field, not a duration: "
                "the timeout has no length of time to fire after.",
            )


@rule(
    "gates.model-answers-money-or-consent",
    "error",
    "SPEC §2.6",
    hint="Set audience: user (or operator); money and consent are never model-answerable.",
)
def model_answers_money_or_consent(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate about money or consent is answered by the model.

    A gate is about money or consent when it is some action's ``entry_gate``
    (pre-commit consent by construction) or when its id, description,
    payload or outcome names speak of consent, price, amount, money, payment,
    refund, charge, fee, approval, cost, spend, billing or purchase.
    """
    for gate in spec.gates:
        why = money_or_consent(spec, gate) if gate.audience == "model" else None
        if why:
            yield (
                ElementPath.gate(gate.id),
                f"{ElementPath.gate(gate.id)} is {why} but the model answers it.",
            )


@rule(
    "gates.consent-behind-unreadable-precondition",
    "warning",
    "SPEC §2.6",
    hint="Make the gate the entry_gate of the step it guards, so it is asked on every arrival, "
    "or write the precondition over fields the response carries.",
)
def consent_behind_unreadable_precondition(spec: ChainSpec, ctx: LintContext) -> Found:
    """A money or consent gate is raised only by preconditions no response can be read to match.

    Such a condition ("quote returned", "unwind in progress") is never true of a
    response the runtime reads, so the run goes on past the gate unasked: the
    consent the author meant to collect before the next step is skipped.
    """
    for gate in spec.gates:
        if money_or_consent(spec, gate) is None:
            continue  # an entry gate is money or consent, and always asked
        if any(a.entry_gate == gate.id for a in spec.actions):
            continue
        raisers = [path for path, v in verdicts(spec) if v.type == "gate" and v.gate == gate.id]
        pres = [
            (ElementPath.action(a.id).field("preconditions").item(n), pre.when)
            for a in spec.actions
            for n, pre in enumerate(a.preconditions, 1)
            if pre.verdict.type == "gate" and pre.verdict.gate == gate.id
        ]
        if not raisers or len(pres) < len(raisers):
            continue  # raised by a row or a route too: it is asked when those fire
        unread = [(where, when) for where, when in pres if not reads_a_response(when)]
        if len(unread) < len(pres):
            continue
        for element, when in unread:
            yield (
                element,
                f"{ElementPath.gate(gate.id)} decides money or consent, but only {element} "
                "raises it, "
                f"when {when!r}, which no response can be read to say: the run goes on "
                "past it unasked.",
            )


def raising_steps(spec: ChainSpec, gate_id: str) -> set[str]:
    """Ids of the actions that can park the run at ``gate_id``.

    An action raises a gate that is its ``entry_gate`` or that one of its own
    verdicts (precondition, empty route, business expiry, revocation, ladder)
    names; a verdict row raises it on every step of its scope. Gates raised
    only by other gates' outcomes, or by rows with a prose scope, add nothing.
    """
    out: set[str] = set()
    for action in spec.actions:
        own = action_verdicts(action)
        if action.entry_gate == gate_id or any(v.gate == gate_id for _, v in own):
            out.add(action.id)
    for row in spec.verdict_table:
        if row.verdict.type == "gate" and row.verdict.gate == gate_id:
            out |= scope_actions(row.scope, spec) or set()
    return out


def _readers_after(spec: ChainSpec, ctx: LintContext, steps: set[str]) -> set[str]:
    """Intent fields read by ``steps`` or by any action listed after the first of them."""
    known = [ctx.order[s] for s in steps if s in ctx.order]
    first = min(known) if known else 0
    return {f for a in spec.actions[first:] for f in a.input.intent}


@rule(
    "gates.bind-not-intent",
    "error",
    "SPEC §2.6",
    hint="Bind the answer into an intent field the raising step or a later step reads.",
)
def bind_not_intent(spec: ChainSpec, ctx: LintContext) -> Found:
    """An outcome binds into something that is not an intent field the run still reads.

    ``bind`` targets must be intent fields of a step that runs after the
    answer: the raising step or a later one in chain order (an answer picked
    at a read can feed the commit that follows, as in a cancel sub-chain),
    or, when the outcome rewinds, repairs or reselects, its target step and
    those after it. Binding a field only earlier steps read would change
    intent behind steps that already ran. When no raising step can be
    determined, any intent field of the chain is accepted. Handles are
    never a target: they are code-owned.
    """
    for element, gate, name in _outcomes(spec):
        outcome = gate.outcomes[name]
        if not outcome.bind:
            continue
        steps = raising_steps(spec, gate.id)
        target = {outcome.verdict.to} if outcome.verdict.to else set()
        allowed = _readers_after(spec, ctx, steps | target) if steps else ctx.intent_fields
        for field in outcome.bind:
            if field in ctx.handles:
                yield element, f"{element} binds {field}, which is a handle, not an intent field."
            elif field not in allowed:
                where = ", ".join(sorted(steps)) if steps else "the chain"
                yield (
                    element,
                    f"{element} binds {field}, which no step from {where} onward reads as intent.",
                )


@rule(
    "gates.set-without-repair",
    "error",
    "SPEC §2.6",
    hint="Make the outcome's verdict repair(to: <step>, fields: [<the set fields>]).",
)
def set_without_repair(spec: ChainSpec, ctx: LintContext) -> Found:
    """An outcome with ``set`` does not resume with a repair.

    Declared constant assignments are a config-proposed repair; any other
    verdict would change intent without invalidating what was derived from it.
    """
    for element, gate, name in _outcomes(spec):
        outcome = gate.outcomes[name]
        if outcome.set and outcome.verdict.type != "repair":
            yield (
                element,
                f"{element} sets {', '.join(outcome.set)} but resumes with {outcome.verdict}.",
            )


@rule(
    "gates.repair-fields-mismatch",
    "error",
    "SPEC §2.6",
    hint="List exactly the set and bound fields in the repair's fields.",
)
def repair_fields_mismatch(spec: ChainSpec, ctx: LintContext) -> Found:
    """An outcome's repair fields differ from the fields it sets and binds.

    With ``set``, the repair covers exactly the set and bound fields; with
    ``bind`` alone, every bound field must be among the repair's fields (a
    repair may touch only listed fields).
    """
    for element, gate, name in _outcomes(spec):
        outcome = gate.outcomes[name]
        verdict = outcome.verdict
        if verdict.type != "repair" or not (outcome.set or outcome.bind):
            continue
        written = set(outcome.set) | set(outcome.bind)
        fields = set(verdict.fields)
        if (outcome.set and fields != written) or not written <= fields:
            yield (
                element,
                f"{element} writes {', '.join(sorted(written))} but repairs "
                f"{', '.join(sorted(fields)) or 'nothing'}.",
            )


@rule(
    "gates.params-without-bind",
    "info",
    "SPEC §2.6",
    hint="Add bind: [<intent field>] so the answer's values reach the run.",
)
def params_without_bind(spec: ChainSpec, ctx: LintContext) -> Found:
    """An outcome declares params but binds them nowhere, so the answer's values are dropped."""
    for element, gate, name in _outcomes(spec):
        outcome = gate.outcomes[name]
        if outcome.params and not outcome.bind:
            yield element, f"{element} takes params {', '.join(outcome.params)} but binds none."


@rule(
    "gates.unreachable",
    "warning",
    "SPEC §2.6",
    hint="Raise the gate from a verdict row, precondition, empty route or entry_gate; or drop it.",
)
def unreachable(spec: ChainSpec, ctx: LintContext) -> Found:
    """A gate is never raised: no verdict anywhere names it and no action enters through it."""
    raised = {v.gate for _, v in verdicts(spec) if v.type == "gate"}
    raised |= {a.entry_gate for a in spec.actions if a.entry_gate}
    for gate in spec.gates:
        if gate.id not in raised:
            yield ElementPath.gate(gate.id), f"{ElementPath.gate(gate.id)} is never raised."


# Verdicts that move the cursor back onto a step, which then parks at its
# entry gate again (SPEC §3: "on EVERY arrival, including replays after
# rewind/repair/reselect").
_RE_ARRIVING = ("repair", "rewind", "reselect")


@rule(
    "gates.entry-outcome-loops",
    "error",
    "SPEC §3",
    hint="Let the approving outcome answer ok (with params and bind to carry the choice into "
    "intent before the dispatch); keep repair/rewind into the gated step only for answers "
    "that change what the gate asks next time. An entry gate parks the run on every arrival, "
    "so it is never 'already satisfied this pass'.",
)
def entry_outcome_loops(spec: ChainSpec, ctx: LintContext) -> Found:
    """An entry gate's outcome re-enters its own gated step, and no answer lets it dispatch.

    A repair back into the gated step is fine beside an ``ok`` answer (change
    the size, see the gate again, approve); without one, every answer that
    goes on arrives at the step again, parks at the gate again, and loops
    until the budget runs out.
    """
    for action in spec.actions:
        gate = ctx.gates.get(action.entry_gate or "")
        if gate is None or any(o.verdict.type == "ok" for o in gate.outcomes.values()):
            continue
        for name, outcome in gate.outcomes.items():
            verdict = outcome.verdict
            if verdict.type in _RE_ARRIVING and verdict.to == action.id:
                element = ElementPath.gate(gate.id).field("outcomes", name)
                yield (
                    element,
                    f"{element} answers {verdict.type}(to: {action.id}), the step this gate "
                    f"guards, and no answer of {ElementPath.gate(gate.id)} is ok: the cursor "
                    "arrives at "
                    f"{action.id} again and parks at the gate again (SPEC §3 parks it on every "
                    f"arrival, replays included), so this answer loops until the "
                    f"{verdict.type} budget runs out and {action.id} is never dispatched.",
                )
