"""Gates and proposals: where the run asks a user or a model (SPEC §3 gates, C4.2, C6).

A run parks at a gate raised by a verdict, by a precondition after an ok,
at a step's entry gate on every arrival, or on a revocation of a landed
commit. An answer is one of the gate's declared outcomes, with params
checked against what the audience was shown (never a handle). A model's
proposal is validated here before it can change anything; retries,
classification and handles are code-owned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..model import Action, ChainSpec, Gate, Outcome, money_or_consent
from ..verdicts import Verdict
from .deadlines import virtual_time
from .events import describe
from .part import Part, SimulationError, dead, lookup
from .sealed import seal
from .state import NOT_WAITING, GateContext, Observation, Proposal, Waiting

if TYPE_CHECKING:
    from .events import EventLog
    from .ports import Cursor, HandleBook, Probes, Rewinds, Verdicts
    from .state import Snapshot

__all__ = ["Gates", "audience_problem"]

Answerer = Literal["user", "operator", "model"]


def audience_problem(spec: ChainSpec, gate: Gate, by: Answerer | None) -> str | None:
    """Why ``by`` may not answer ``gate``; None when it may (SPEC §2.6, C6.5).

    A model answers only a gate whose audience is the model, and never one
    about money or consent, whatever its audience says. A person's answer
    (``by`` user or operator) must come from the gate's own audience. An
    answer that names nobody is the gate's audience answering.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "gates": [
    ...     {"id": "fare_ok", "audience": "user", "outcomes": {"ok": "ok"}}]})
    >>> audience_problem(doc, doc.gates[0], "model")
    'gate fare_ok is for the user; a model may not answer it'
    """
    if by is None:
        return None
    if by == "model" and gate.audience != "model":
        return f"gate {gate.id} is for the {gate.audience}; a model may not answer it"
    if by == "model":
        why = money_or_consent(spec, gate)
        if why:
            return f"gate {gate.id} decides money or consent ({why}); a model may not answer it"
    if by != gate.audience:
        return f"gate {gate.id} is for the {gate.audience}; the {by} may not answer it"
    return None


class Needs(Protocol):
    """The parts :class:`Gates` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...

    @property
    def outcomes(self) -> Verdicts: ...

    @property
    def backtrack(self) -> Rewinds: ...

    @property
    def reconcile(self) -> Probes: ...

    @property
    def handles(self) -> HandleBook: ...


class Gates(Part):
    """Parking at gates, answering them, and checking proposals."""

    __slots__ = ("peers",)

    def __init__(
        self,
        spec: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        peers: Needs,
    ):
        super().__init__(spec, snapshot, log)
        self.peers = peers

    def park(
        self,
        gate_id: str,
        action: Action,
        kind: Literal["raised", "entry", "revocation"],
        obs: Observation | None = None,
        from_ok: bool = False,
    ) -> None:
        """Wait for an answer to ``gate_id``, showing the audience what ``obs`` carried.

        A raised gate answered ``ok`` lands its step with the response that
        raised it, ``obs``, kept as the run's last observation; a gate raised
        by a deadline has no response of its own and lands with none.
        """
        s = self.snapshot
        if kind == "raised":
            s.last_observation = obs
            draft = self.log.draft
            if draft is not None and draft["event_type"] == "attempt":
                # C7.1: the attempt records the dispatch and its verdict; parking is a
                # state change that dispatches nothing, so it is a transition of its own.
                self.log.transition(action.id, "raised_gate", note=f"parked at gate {gate_id}")
        gate = self.spec.gate(gate_id)
        if gate is None:
            self.peers.outcomes.dead_end(dead(f"unknown_gate_{gate_id}", True), action)
            return
        prior = s.state
        s.state = "compensating" if s.compensation else "at_gate"
        s.pending_gate = gate_id
        s.gate_context = GateContext(
            gate=gate_id,
            step=action.id,
            kind=kind,
            from_ok=from_ok,
            prior_state=prior if kind == "revocation" else None,
            raised_at=s.clock,
            options=list(obs.options) if obs else [],
            payload=dict(obs.payload) if obs else {},
        )
        s.waiting = Waiting(
            kind="answer",
            step=action.id,
            gate=gate_id,
            outcomes=list(gate.outcomes),
            options=list(obs.options) if obs else [],
            payload=dict(obs.payload) if obs else {},
            audience=gate.audience,
        )

    def answer(self, outcome: str, params: dict[str, Any], by: Answerer | None = None) -> None:
        """The answer of ``by`` (the gate's audience when None).

        A model's answer is applied as its proposal (:meth:`propose`), refused
        and traced unless the gate is the model's. A person who is not the
        gate's audience is refused before anything is recorded; wrong params
        are refused and traced.
        """
        s = self.snapshot
        w = s.waiting
        if w.kind != "answer" or w.gate is None or s.gate_context is None:
            raise SimulationError(f"the run waits for {describe(w)}; got a gate answer")
        gate = self.gate(w.gate)
        if outcome not in gate.outcomes:
            raise SimulationError(
                f"gate {gate.id!r} has outcomes {list(gate.outcomes)}; got {outcome!r}"
            )
        if by == "model":
            # C6.5: a model's answer, however it arrives, is a model's proposal: checked,
            # traced and replayed as one (refused at every gate that is not the model's).
            proposal = Proposal(kind="answer", value=outcome, fields=params)
            refused = self.proposal_problem(proposal)
            self.propose(proposal)
            if refused:
                self.log.flush()
                raise SimulationError(refused)
            return
        refused = audience_problem(self.spec, gate, by)
        if refused:  # a person of the wrong audience: refused before anything is recorded
            raise SimulationError(refused)
        spec = gate.outcomes[outcome]
        traced = self.traced(params)
        given = {"kind": "answer", "outcome": outcome, "params": traced}
        problems = self.check_params(spec, params, s.gate_context)
        if problems:
            # The trace words the refusal with the sealed references; the person who
            # typed the answer is told in their own words.
            in_trace = self.check_params(spec, params, s.gate_context, shown_as=traced)
            self.log.transition(
                s.gate_context.step,
                None,
                note=f"rejected answer to gate {gate.id}: {'; '.join(in_trace)}",
                source=None,
                input=given,
            )
            self.log.flush()
            raise SimulationError(f"gate {gate.id!r}, outcome {outcome!r}: {'; '.join(problems)}")
        self.log.transition(
            s.gate_context.step,
            f"gate:{gate.id}.{outcome}",
            spec.verdict,
            f"gate {gate.id} answered {outcome}",
            input=given,
            proposal_source="model" if gate.audience == "model" else "user",
        )
        self.resume(gate, spec, params)

    def traced(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` as the trace holds them (C7.3): what the audience typed is sealed.

        A value the gate presented (an option id, an item of the payload's
        list for that param) was shown, not typed, and stays readable, so a
        replay without the sealed store still checks it against what was shown.
        """
        s = self.snapshot
        ctx = s.gate_context
        shown = {o.id for o in ctx.options} if ctx else set()

        def presented(name: str, value: Any) -> bool:
            listed = ctx.payload.get(name) if ctx else None
            return (isinstance(value, str) and value in shown) or (
                isinstance(listed, list) and value in listed
            )

        typed = {k: v for k, v in params.items() if not presented(k, v)}
        return {**params, **seal(s.sealed, s.run_id, typed)}

    def check_params(
        self,
        spec: Outcome,
        params: dict[str, Any],
        ctx: GateContext,
        shown_as: dict[str, Any] | None = None,
    ) -> list[str]:
        """What is wrong with ``params`` for this outcome; empty when nothing is.

        ``shown_as`` gives each value as the message may show it (the trace's
        sealed reference for a typed value, C7.3).
        """
        shown_as = shown_as or {}
        problems = []
        for name in params:
            if name not in spec.params:
                problems.append(f"{name!r} is not a param of this outcome ({list(spec.params)})")
        for name in spec.params:
            if name not in params:
                problems.append(f"param {name!r} is missing")
        ids = [o.id for o in ctx.options]
        for name, value in params.items():
            said = shown_as.get(name, value)
            if self.peers.handles.looks_like_handle(value):
                problems.append(f"{name!r} carries a handle; handles are code-owned")
            elif ids and isinstance(value, str) and value not in ids:
                problems.append(f"{name}={said!r} was not among the presented options {ids}")
            elif isinstance(ctx.payload.get(name), list) and value not in ctx.payload[name]:
                problems.append(f"{name}={said!r} was not in the presented payload")
        return problems

    def resume(self, gate: Gate, spec: Outcome, params: dict[str, Any]) -> None:
        """Leave the gate by outcome ``spec``: bind its params, then apply its verdict."""
        s = self.snapshot
        peers = self.peers
        ctx = s.gate_context
        assert ctx is not None
        action = self.action(ctx.step or "")
        s.pending_gate = None
        s.gate_context = None
        s.state = "compensating" if s.compensation else "running"
        if gate.payload_expiry is not None:
            deadline = virtual_time(lookup(ctx.payload, gate.payload_expiry.field))
            if deadline is not None and s.clock > deadline:
                self.log.set(
                    verdict=gate.payload_expiry.verdict,
                    note="answer arrived after the payload's own deadline",
                )
                peers.outcomes.route(action, gate.payload_expiry.verdict, None)
                return
        if ctx.kind == "revocation":
            # P3 shield: a commit reconciled before this gate takes up its path on ok.
            if peers.reconcile.shield.resume_after_gate(spec.verdict.type == "ok"):
                return
            if spec.verdict.type == "ok":
                s.state = ctx.prior_state or "done"  # type: ignore[assignment]
                s.waiting = NOT_WAITING
                return
        elif s.compensation is None and peers.outcomes.business_expiry():
            return
        values: dict[str, Any] = {}
        if spec.params:
            if len(spec.bind) == 1 and len(params) == 1:
                values[spec.bind[0]] = next(iter(params.values()))
            else:
                for name, value in params.items():
                    if name in spec.bind:
                        values[name] = value
        values.update(spec.set)
        v = spec.verdict
        if v.type == "repair":
            if spec.set:
                self.log.set(proposal_source="code")
            peers.backtrack.repair(v, action, values)
            return
        s.intent.update(values)
        if v.type == "ok":
            if ctx.kind == "entry":
                peers.steps.dispatch(action)
            else:
                if not ctx.from_ok:
                    peers.outcomes.land(action, s.last_observation)
                peers.steps.advance(action)
            return
        peers.outcomes.route(action, v, self.raised_by(ctx))

    def timeout(self) -> None:
        """Virtual time passed while parked: take the gate's timeout outcome once it is due."""
        s = self.snapshot
        ctx = s.gate_context
        assert ctx is not None
        gate = self.gate(ctx.gate)
        after = gate.timeout.after.seconds if gate.timeout else None
        if after is None and self.spec.policy.per_chain.gate_timeout is not None:
            after = self.spec.policy.per_chain.gate_timeout.seconds
        if after is None or s.clock - ctx.raised_at < after:
            return
        timeout = gate.timeout
        if timeout is not None and timeout.outcome and timeout.outcome in gate.outcomes:
            spec = gate.outcomes[timeout.outcome]
            self.log.transition(
                ctx.step,
                f"gate:{gate.id}.timeout",
                spec.verdict,
                f"gate timed out after {after:g}s → outcome {timeout.outcome}",
            )
            self.resume(gate, spec, {})
            return
        verdict = (timeout.verdict if timeout else None) or dead(f"gate_timeout_{gate.id}", False)
        self.log.transition(
            ctx.step, f"gate:{gate.id}.timeout", verdict, f"gate timed out after {after:g}s"
        )
        action = self.action(ctx.step or "")
        s.pending_gate = None
        s.gate_context = None
        s.state = "compensating" if s.compensation else "running"
        self.peers.outcomes.route(action, verdict, self.raised_by(ctx))

    def raised_by(self, ctx: GateContext) -> Observation | None:
        """The response a raised gate was raised with: a gate its answer raises shows it too."""
        return self.snapshot.last_observation if ctx.kind == "raised" else None

    # --- proposals (C4.2) -------------------------------------------------------------

    def proposal_problem(self, p: Proposal) -> str | None:
        """Why a model's proposal may not be applied; None when it may."""
        s = self.snapshot
        w = s.waiting
        if p.kind == "retry":
            return "attempts and backoff are code-owned; a model cannot ask for a retry"
        if p.kind == "classify":
            return "classification is code-owned; the verdict table is not re-decided"
        if p.kind == "handle":
            return "handles are code-owned; a model never supplies one"
        if p.kind == "repair":
            if w.kind != "repair":
                return f"no repair is pending (the run waits for {describe(w)})"
            if not p.fields:
                return "a repair proposal must change at least one field"
            extra = sorted(set(p.fields) - set(w.fields))
            if extra:
                return f"fields {extra} are not listed for this repair (allowed: {w.fields})"
            if any(self.peers.handles.looks_like_handle(v) for v in p.fields.values()):
                return "a repair value carries a handle; handles are code-owned"
            return None
        if p.kind == "select":
            if w.kind != "select":
                return f"no selection is pending (the run waits for {describe(w)})"
            if w.audience not in (None, "model"):
                return (
                    f"the pick at {w.step} is gated to the {w.audience} (rematch on_ambiguous: "
                    "gate); a model may not make it"
                )
            if str(p.value) not in [o.id for o in w.options]:
                return f"{p.value!r} is not among the offered options"
            return None
        if p.kind == "answer":
            if w.kind != "answer" or w.gate is None:
                return f"no gate is pending (the run waits for {describe(w)})"
            gate = self.gate(w.gate)
            refused = audience_problem(self.spec, gate, "model")
            if refused:
                return refused
            if str(p.value) not in gate.outcomes:
                return f"{p.value!r} is not an outcome of gate {gate.id}"
            ctx = s.gate_context
            problems = (
                self.check_params(gate.outcomes[str(p.value)], dict(p.fields), ctx) if ctx else []
            )
            return "; ".join(problems) or None
        return f"unknown proposal kind {p.kind!r}"

    def propose(self, p: Proposal) -> bool:
        """Apply a model's proposal, or trace why it was refused and change nothing."""
        s = self.snapshot
        w = s.waiting
        peers = self.peers
        problem = self.proposal_problem(p)
        shown = p
        if p.kind == "repair":  # C7.3: repaired intent values are sealed, referenced
            shown = p.model_copy(update={"fields": seal(s.sealed, s.run_id, p.fields)})
        given = {"kind": "propose", "proposal": shown.model_dump(exclude_defaults=True)}
        if problem:
            self.log.transition(
                w.step,
                None,
                note=f"rejected {p.kind} proposal: {problem}",
                source=None,
                input=given,
                proposal_source="model",
            )
            return False
        if p.kind == "repair":
            verdict = Verdict(type="repair", to=w.step, fields=list(w.fields))
            self.log.transition(
                w.step,
                "repair:proposal",
                verdict,
                f"repair proposal applied: {sorted(p.fields)}",
                input=given,
                proposal_source="user" if w.audience == "user" else "model",
            )
            peers.backtrack.apply_repair(verdict, dict(p.fields))
        elif p.kind == "select":
            peers.steps.select(str(p.value), "model", given)
        elif p.kind == "answer":
            gate = self.gate(w.gate or "")
            spec = gate.outcomes[str(p.value)]
            self.log.transition(
                s.gate_context.step if s.gate_context else None,
                f"gate:{gate.id}.{p.value}",
                spec.verdict,
                input=given,
                proposal_source="model",
            )
            self.resume(gate, spec, dict(p.fields))
        return True
