"""The run: SPEC §3's verdict → next-state transitions, driven by scripted inputs.

A :class:`Run` walks a chain's main steps (its actions in document order,
minus probe-only reads, compensators and steps another variant owns). It
never calls a provider: it *waits* (:meth:`Run.waiting`) for an observation
of the dispatched step, a pick at a selection step, a gate answer, a probe
result or a repair proposal, and applies exactly one transition per input.
Every state change is one event in the append-only trace (SPEC §2.5):
``attempt`` 1:1 with dispatches, ``transition`` for changes that dispatch
nothing, ``reconcile`` for probe and webhook observations. The snapshot plus
the trace resume a run (:meth:`Run.resume`), and the trace alone re-derives
it (:func:`~.replay.replay`).

Time is virtual: :meth:`Run.wait` advances it, and backoff, gate timeouts,
business deadlines, async deadlines and the wall clock are read from it.
Jitter is drawn from a RNG seeded by the run's seed and the event seq, so a
run is a pure function of its inputs. Handle values do not exist here; a
handle is an alias ``<handle>#<n>`` and its lineage.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
from typing import Any, Literal

from ..errors import ChainError
from ..graph import GraphError, cascade, repair_scope
from ..model import (
    Action,
    Chain,
    Gate,
    Outcome,
    compensators,
    is_commit_class,
    is_keyed,
    is_unkeyed_commit,
)
from ..policy import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_REWINDS, step_limits
from ..verdicts import Verdict, format_verdict
from .classifier import Classification, ClassifyContext, auto_repair_transform, classify, matches
from .state import (
    Budgets,
    CorrelationRecord,
    Event,
    GateContext,
    HandleState,
    LandedCommit,
    Observation,
    Option,
    Proposal,
    Snapshot,
    Unwind,
    Waiting,
)

__all__ = ["Run", "RunRegistry", "SimulationError"]

TERMINAL = ("done", "dead_end", "escalated", "restart_required")
# What a continuation run inherits from the run it continues (SPEC §2.3 external mode).
_CARRIED = (
    "handles",
    "commits_landed",
    "compensators_landed",
    "mint_counts",
    "results",
    "selections",
    "excluded",
    "fresh",
    "correlation",
    "auto_repairs_fired",
    "stale_recurrences",
    "clock",
)
_ALIAS = re.compile(r"^([A-Za-z_][\w.\-]*)#\d+$")


class SimulationError(ChainError):
    """Bad input to a run: the wrong kind of answer, an unknown outcome, invalid params."""


def _dead(reason: str, permanent: bool | None = None) -> Verdict:
    return Verdict(type="dead_end", reason=reason, permanent=permanent)


def _lookup(data: dict[str, Any], path: str) -> Any:
    if path in data:
        return data[path]
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _describe(w: Waiting) -> str:
    if w.kind == "observe":
        return f"an observation of step {w.step!r}"
    if w.kind == "select":
        return f"a pick at selection step {w.step!r} among {[o.id for o in w.options]}"
    if w.kind == "answer":
        return f"an answer to gate {w.gate!r} (outcomes: {', '.join(w.outcomes)})"
    if w.kind == "probe":
        return f"a probe result for step {w.step!r} (landed | not_landed | unknown)"
    if w.kind == "repair":
        return f"a repair proposal for {w.fields} at step {w.step!r}"
    return "nothing (the run is finished)"


def _signal(obs: Observation) -> dict[str, Any]:
    out: dict[str, Any] = {"transport": obs.transport}
    if obs.code:
        out["code"] = obs.code
    if obs.predicates:
        out["predicates"] = list(obs.predicates)
    if obs.events:
        out["events"] = list(obs.events)
    return out


class Run:
    """One execution of a chain. Build it with :meth:`start` or :meth:`resume`."""

    def __init__(self, chain: Chain, snapshot: Snapshot, trace: list[Event]):
        self.chain = chain
        self.snapshot = snapshot
        self.trace = trace
        self._draft: dict[str, Any] | None = None
        # Set by :class:`~.fanout.Fanout` on its branches; not part of the snapshot.
        self.fanout: Any = None

    # --- construction -----------------------------------------------------

    @classmethod
    def start(
        cls,
        chain: Chain,
        *,
        intent: dict | None = None,
        run_key: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        run_id: str | None = None,
        mode: Literal["internal", "external"] = "internal",
        continuation_of: Snapshot | None = None,
    ) -> Run:
        """Create a run and move it to its first step (or its first wait).

        ``mode="external"`` ends the run with ``restart_required`` on every
        rewind or repair instead of replaying in process; the caller then
        starts the continuation with ``continuation_of`` = the ended run's
        snapshot, which carries the budgets, handles and landed commits, and
        ``intent`` = the repaired fields (only those the restart listed).
        """
        if continuation_of is not None:
            return cls._continue(chain, continuation_of, intent, run_key, seed, run_id)
        intent = dict(intent or {})
        axis = chain.variants
        if variant is None and axis is not None and intent.get(axis.axis) is not None:
            variant = str(intent[axis.axis])
        if variant is not None:
            if axis is None:
                raise SimulationError(f"chain {chain.id!r} declares no variants; got {variant!r}")
            if variant not in axis.values:
                raise SimulationError(
                    f"variant must be one of {axis.values} ({axis.axis}); got {variant!r}"
                )
        if run_id is None:
            digest = hashlib.sha256(f"{chain.id}|{run_key}|{seed}".encode()).hexdigest()
            run_id = f"run-{digest[:12]}"
        pc = chain.policy.per_chain
        budgets = Budgets(
            rewinds_left=pc.max_rewinds if pc.max_rewinds is not None else DEFAULT_MAX_REWINDS,
            repairs_left=pc.max_repairs if pc.max_repairs is not None else DEFAULT_MAX_REPAIRS,
            wall_limit=pc.wall_clock.seconds if pc.wall_clock else None,
        )
        snap = Snapshot(
            run_id=run_id,
            chain_id=chain.id,
            run_key=run_key,
            variant=variant,
            mode=mode,
            intent=intent,
            budgets=budgets,
            seed=seed,
        )
        run = cls(chain, snap, [])
        given = {"intent": intent, "run_key": run_key, "variant": variant, "seed": seed}
        given |= {"run_id": run_id, "mode": mode}
        run._open("transition", note="start", input={"kind": "start", **given})
        steps = run._steps()
        if steps:
            run._arrive(steps[0])
        else:
            run._finish_done()
        run._flush()
        return run

    @classmethod
    def _continue(
        cls,
        chain: Chain,
        previous: Snapshot,
        intent: dict | None,
        run_key: str | None,
        seed: int,
        run_id: str | None,
    ) -> Run:
        """A continuation run: same budgets, same run_key, cursor at the restart target."""
        restart = previous.outcome.get("restart_required")
        if previous.state != "restart_required" or not isinstance(restart, dict):
            raise SimulationError(
                f"only a run in state restart_required can be continued; got {previous.state}"
            )
        if previous.chain_id != chain.id:
            raise SimulationError(
                f"snapshot belongs to chain {previous.chain_id!r}; got chain {chain.id!r}"
            )
        if run_key is not None and run_key != previous.run_key:
            raise SimulationError(
                f"a continuation reuses run_key {previous.run_key!r}; got {run_key!r}"
            )
        changes = dict(intent or {})
        allowed = set(restart.get("repair_fields") or [])
        extra = sorted(set(changes) - allowed)
        if extra:
            raise SimulationError(
                f"a continuation may change only the restart's repair fields {sorted(allowed)}; "
                f"got {extra}"
            )
        snap = Snapshot(
            run_id=run_id or f"{previous.run_id}.{len(previous.run_id.split('.'))}",
            chain_id=chain.id,
            run_key=previous.run_key,
            variant=previous.variant,
            mode="external",
            continuation_of=previous.run_id,
            intent={**previous.intent, **changes},
            budgets=previous.budgets.model_copy(),
            seed=seed,
            **{name: getattr(previous, name) for name in _CARRIED},
        )
        snap = Snapshot.model_validate(snap.model_dump())  # no object shared with ``previous``
        run = cls(chain, snap, [])
        given = {"intent": changes, "seed": seed, "run_id": snap.run_id}
        given["continuation_of"] = previous.model_dump(mode="json")
        run._open(
            "transition",
            note=f"continuation of {previous.run_id}",
            input={"kind": "start", **given},
        )
        run._arrive(restart["rewind_to"])
        run._flush()
        return run

    @classmethod
    def resume(cls, chain: Chain, snapshot: Snapshot, trace: list[Event]) -> Run:
        """Continue a run after a crash, from its snapshot and trace alone.

        A dispatch of an unkeyed commit that was out when the process died
        has an unknown outcome (P3): the run records the lost attempt and
        reconciles, it never re-dispatches.
        """
        if snapshot.chain_id != chain.id:
            raise SimulationError(
                f"snapshot belongs to chain {snapshot.chain_id!r}; got chain {chain.id!r}"
            )
        if trace and trace[-1].seq != snapshot.seq:
            raise SimulationError(
                f"snapshot is at seq {snapshot.seq} but the trace ends at seq {trace[-1].seq}"
            )
        run = cls(chain, snapshot.model_copy(deep=True), [e.model_copy() for e in trace])
        s = run.snapshot
        if s.in_flight and s.waiting.kind == "observe":
            action = run._action(s.in_flight)
            if is_unkeyed_commit(action):
                s.attempt += 1
                s.dispatches[action.id] = s.dispatches.get(action.id, 0) + 1
                s.budgets.step_attempts_left -= 1
                s.in_flight = None
                run._open(
                    "attempt",
                    step=action.id,
                    attempt=s.attempt,
                    signal={"transport": "lost"},
                    verdict=Verdict(type="reconcile"),
                    source="default",
                    row="#11",
                    note="process restarted mid-dispatch: the outcome is unknown; probe, "
                    "never re-dispatch",
                    input={"kind": "resume"},
                )
                run._set(handles_consumed=run._presented(action))  # I4: spent
                run._reconcile(action)
                run._flush()
        return run

    # --- what the run needs -------------------------------------------------

    def waiting(self) -> Waiting:
        return self.snapshot.waiting.model_copy(deep=True)

    @property
    def finished(self) -> bool:
        return self.snapshot.state in TERMINAL

    # --- inputs -------------------------------------------------------------

    def observe(self, obs: Observation) -> None:
        """The dispatched step's response (or a webhook a revocation watch listens for)."""
        s = self.snapshot
        if self._revocation(obs):
            self._flush()
            return
        if s.waiting.kind != "observe" or s.waiting.step is None:
            raise SimulationError(f"the run waits for {_describe(s.waiting)}; got an observation")
        action = self._action(s.waiting.step)
        s.attempt += 1
        s.dispatches[action.id] = s.dispatches.get(action.id, 0) + 1
        s.budgets.step_attempts_left -= 1
        s.in_flight = None
        s.last_observation = obs
        if s.variant is None and self.chain.variants is not None:
            bound = obs.payload.get(self.chain.variants.axis)
            if bound in self.chain.variants.values:
                s.variant = bound
        c = classify(self.chain, self._ctx(action), action, obs)
        self._open(
            "attempt",
            step=action.id,
            attempt=s.attempt,
            signal=_signal(obs),
            verdict=c.verdict,
            source=c.source,
            row=c.row,
            note=c.reason,
            input={"kind": "observe", "observation": obs.model_dump(exclude_defaults=True)},
            key=self._key(action),
        )
        self._set(handles_consumed=self._presented(action))
        if c.no_side_effect and is_unkeyed_commit(action):
            record = self._pending_record(action.id)
            if record is not None:  # the provider vouches this dispatch left nothing
                record.status = "NOT_LANDED"
        self._apply(action, c, obs)
        self._flush()

    def select(self, option_id: str) -> None:
        """Pick an option at the selection step the run waits at."""
        self._select(option_id, "user")
        self._flush()

    def answer(self, outcome: str, params: dict | None = None) -> None:
        """Answer the gate the run is parked at with one of its declared outcomes."""
        s = self.snapshot
        w = s.waiting
        if w.kind != "answer" or w.gate is None or s.gate_context is None:
            raise SimulationError(f"the run waits for {_describe(w)}; got a gate answer")
        gate = self._gate(w.gate)
        if outcome not in gate.outcomes:
            raise SimulationError(
                f"gate {gate.id!r} has outcomes {list(gate.outcomes)}; got {outcome!r}"
            )
        params = dict(params or {})
        spec = gate.outcomes[outcome]
        problems = self._check_params(spec, params, s.gate_context)
        given = {"kind": "answer", "outcome": outcome, "params": params}
        if problems:
            self._open(
                "transition",
                step=s.gate_context.step,
                note=f"rejected answer to gate {gate.id}: {'; '.join(problems)}",
                input=given,
            )
            self._flush()
            raise SimulationError(f"gate {gate.id!r}, outcome {outcome!r}: {'; '.join(problems)}")
        self._open(
            "transition",
            step=s.gate_context.step,
            verdict=spec.verdict,
            source="config",
            row=f"gate:{gate.id}.{outcome}",
            note=f"gate {gate.id} answered {outcome}",
            input=given,
            proposal_source="model" if gate.audience == "model" else "user",
        )
        self._resume_gate(gate, spec, params)
        self._flush()

    def probe(
        self,
        result: Literal["landed", "not_landed", "unknown"],
        cause: Observation | None = None,
    ) -> None:
        """The confirmation probe's finding for the commit being reconciled."""
        s = self.snapshot
        w = s.waiting
        if w.kind != "probe" or w.step is None:
            raise SimulationError(f"the run waits for {_describe(w)}; got a probe result")
        if result not in ("landed", "not_landed", "unknown"):
            raise SimulationError(
                f"probe result must be landed | not_landed | unknown; got {result!r}"
            )
        action = self._action(w.step)
        record = self._open_record(action.id)
        record.probes += 1
        probe_id = action.confirmation.probe if action.confirmation else None
        if probe_id:
            s.probes[probe_id] = s.probes.get(probe_id, 0) + 1
        signal: dict[str, Any] = {"probe": result}
        if cause is not None:
            signal["cause"] = _signal(cause)
        given: dict[str, Any] = {"kind": "probe", "result": result}
        if cause is not None:
            given["cause"] = cause.model_dump(exclude_defaults=True)
        self._open(
            "reconcile", step=action.id, signal=signal, note=f"probe {probe_id}", input=given
        )
        if result == "landed":
            record.status = "LANDED"
            self._set(verdict=Verdict(type="ok"), source="config", row="reconcile:landed")
            s.state = "compensating" if s.compensation else "running"
            self._on_ok(action, cause or Observation(), empty=False)
        elif result == "not_landed":
            record.status = "NOT_LANDED"
            s.state = "compensating" if s.compensation else "running"
            if record.before_redispatch:
                self._set(row="reconcile:not_landed", note="not landed: dispatching afresh")
                self._dispatch(action)
                self._flush()
                return
            if cause is not None and not record.refed:
                record.refed = True
                c = classify(self.chain, self._ctx(action), action, cause)
                if c.verdict.type in (
                    "repair",
                    "gate",
                    "dead_end",
                    "rewind",
                    "reselect",
                    "escalate",
                ):
                    self._set(
                        verdict=c.verdict,
                        source=c.source,
                        row=c.row,
                        note=f"cause re-fed: {c.reason}",
                    )
                    self._route(action, c.verdict, cause)
                    self._flush()
                    return
                self._set(note=f"cause re-fed once: {format_verdict(c.verdict)} does not apply")
            self._not_landed(action)
        else:
            self._set(verdict=Verdict(type="reconcile"), source="config", row="reconcile:unknown")
        self._flush()

    def wait(self, seconds: float) -> None:
        """Let virtual time pass; fires gate timeouts, deadlines and the wall clock."""
        if seconds < 0:
            raise SimulationError(f"wait needs a duration of 0 seconds or more; got {seconds}")
        s = self.snapshot
        s.clock += seconds
        if s.state == "running":
            s.budgets.wall_used += seconds
        if s.state == "reconciling" and s.waiting.kind == "probe":
            self._reconcile_deadlines()
        elif s.waiting.kind == "answer" and s.gate_context is not None:
            self._gate_timeout()
        elif s.state == "running" and s.waiting.kind in ("observe", "select", "repair"):
            in_flight = s.waiting.kind == "observe" and s.waiting.step is not None
            shielded = in_flight and is_commit_class(self._action(s.waiting.step or ""))
            if not shielded:  # P3 cancellation shield: an out commit runs to completion
                self._wall_exhausted()
        self._flush()

    def propose(self, proposal: Proposal) -> bool:
        """Offer a model's proposal; invalid ones are traced and change nothing (C4.2)."""
        s = self.snapshot
        w = s.waiting
        problem = self._proposal_problem(proposal)
        given = {"kind": "propose", "proposal": proposal.model_dump(exclude_defaults=True)}
        if problem:
            self._open(
                "transition",
                step=w.step,
                note=f"rejected {proposal.kind} proposal: {problem}",
                input=given,
                proposal_source="model",
            )
            self._flush()
            return False
        if proposal.kind == "repair":
            verdict = Verdict(type="repair", to=w.step, fields=list(w.fields))
            self._open(
                "transition",
                step=w.step,
                verdict=verdict,
                source="config",
                row="repair:proposal",
                note=f"repair proposal applied: {sorted(proposal.fields)}",
                input=given,
                proposal_source="user" if w.audience == "user" else "model",
            )
            self._apply_repair(verdict, dict(proposal.fields))
        elif proposal.kind == "select":
            self._select(str(proposal.value), "model", given)
        elif proposal.kind == "answer":
            gate = self._gate(w.gate or "")
            spec = gate.outcomes[str(proposal.value)]
            self._open(
                "transition",
                step=s.gate_context.step if s.gate_context else None,
                verdict=spec.verdict,
                source="config",
                row=f"gate:{gate.id}.{proposal.value}",
                input=given,
                proposal_source="model",
            )
            self._resume_gate(gate, spec, dict(proposal.fields))
        self._flush()
        return True

    # --- the event log --------------------------------------------------------

    def _open(
        self,
        event_type: Literal["attempt", "transition", "reconcile"],
        *,
        step: str | None = None,
        attempt: int | None = None,
        signal: dict[str, Any] | None = None,
        verdict: Verdict | None = None,
        source: str | None = None,
        row: str | None = None,
        note: str | None = None,
        input: dict[str, Any] | None = None,
        proposal_source: str | None = None,
        key: str | None = None,
    ) -> None:
        """Start the next event; the previous one is finished first."""
        self._flush()
        self.snapshot.seq += 1
        self._draft = {
            "seq": self.snapshot.seq,
            "event_type": event_type,
            "step_id": step,
            "attempt": attempt,
            "t": self.snapshot.clock,
            "signal": signal,
            "verdict": format_verdict(verdict) if verdict is not None else None,
            "verdict_source": source,
            "row": row,
            "handles_consumed": [],
            "handles_minted": [],
            "handles_invalidated": [],
            "note": note,
            "input": input,
            "proposal_source": proposal_source,
            "idempotency_key": key,
        }

    def _set(self, **fields: Any) -> None:
        if self._draft is None:
            return
        if "verdict" in fields and isinstance(fields["verdict"], Verdict):
            fields["verdict"] = format_verdict(fields["verdict"])
        if "source" in fields:
            fields["verdict_source"] = fields.pop("source")
        if "note" in fields and self._draft.get("note") and fields["note"]:
            fields["note"] = f"{self._draft['note']}; {fields['note']}"
        self._draft.update(fields)

    def _flush(self) -> None:
        if self._draft is None:
            return
        draft, self._draft = self._draft, None
        b = self.snapshot.budgets
        draft["budget_after"] = {
            "step_attempts_left": b.step_attempts_left,
            "safe_rejects_left": b.safe_rejects_left,
            "rewinds_left": b.rewinds_left,
            "repairs_left": b.repairs_left,
            "wall_used": round(b.wall_used, 6),
            "wall_left": None if b.wall_limit is None else round(b.wall_limit - b.wall_used, 6),
        }
        draft["state"] = self.snapshot.state
        self.trace.append(Event(**draft))

    # --- lookups --------------------------------------------------------------

    def _action(self, action_id: str) -> Action:
        action = self.chain.action(action_id)
        if action is None:
            raise SimulationError(f"chain {self.chain.id!r} has no action {action_id!r}")
        return action

    def _gate(self, gate_id: str) -> Gate:
        gate = self.chain.gate(gate_id)
        if gate is None:
            raise SimulationError(f"chain {self.chain.id!r} has no gate {gate_id!r}")
        return gate

    def _in_variant(self, only: list[str]) -> bool:
        return not only or (self.snapshot.variant is not None and self.snapshot.variant in only)

    def _steps(self) -> list[str]:
        """The main steps: not probes, not compensators, in this run's variant."""
        auxiliary: set[str] = set()
        for a in self.chain.actions:
            if a.confirmation and a.confirmation.probe:
                auxiliary.add(a.confirmation.probe)
            auxiliary.update(compensators(a))
        return [
            a.id
            for a in self.chain.actions
            if not a.probe_only and a.id not in auxiliary and self._in_variant(a.only)
        ]

    def _ctx(self, action: Action) -> ClassifyContext:
        s = self.snapshot
        return ClassifyContext(
            variant=s.variant,
            commit_in_flight=is_commit_class(action),
            key_expired=self._key_expired(action),
            live={h: st.minted_seq for h, st in s.handles.items()},
            stale_recurrences=dict(s.stale_recurrences),
            auto_repairs_fired=tuple(s.auto_repairs_fired),
        )

    def _key(self, action: Action) -> str | None:
        if not (is_commit_class(action) and is_keyed(action)):
            return None
        arrival = self.snapshot.arrivals.get(action.id, 0)
        return f"{self.snapshot.run_id}:{action.id}:{arrival}"

    def _key_expired(self, action: Action) -> bool:
        key = self._key(action)
        idem = action.idempotency
        if key is None or idem is None or idem.key_retention is None:
            return False
        retention = idem.key_retention.seconds
        since = self.snapshot.key_since.get(key)
        return (
            retention is not None and since is not None and self.snapshot.clock - since >= retention
        )

    def _open_record(self, step: str) -> CorrelationRecord:
        for record in reversed(self.snapshot.correlation):
            if record.step == step:
                return record
        record = CorrelationRecord(
            step=step, attempt_seq=self.snapshot.seq, created_at=self.snapshot.clock
        )
        self.snapshot.correlation.append(record)
        return record

    def _unresolved(self, action: Action) -> bool:
        """Probe before dispatching ``action`` again if its last dispatch may have landed.

        SPEC §3: only a response declared ``no_side_effect`` permits a fresh
        dispatch of an unkeyed commit. Any other answer that sent the run
        elsewhere (a staleness rewind, a gate, a repair) leaves the record
        PENDING, and the replay that comes back here reconciles first.
        """
        record = self._pending_record(action.id)
        if record is None or record.status != "PENDING":
            return False
        record.before_redispatch = True
        self._reconcile_instead(
            action,
            "P3:unresolved",
            "the last dispatch was never shown not to have landed: probe before dispatching again",
        )
        return True

    def _reconcile_instead(self, action: Action, row: str, why: str) -> None:
        """Trace why ``action`` is probed rather than dispatched, then reconcile it."""
        self._open(
            "transition",
            step=action.id,
            verdict=Verdict(type="reconcile"),
            source="config",
            row=row,
            note=why,
        )
        self._reconcile(action)

    def _presented(self, action: Action) -> list[str]:
        """Aliases a dispatch of ``action`` presents.

        Live handles, except during an unwind: a compensator acts on what the
        landed commit it undoes presented and minted (I5: facts), even where
        a rewind has re-minted those handles since.
        """
        s = self.snapshot
        facts: dict[str, str] = {}
        if s.compensation is not None and s.compensation.queue:
            landed = s.commits_landed[s.compensation.queue[0]]
            facts = {alias.split("#")[0]: alias for alias in [*landed.consumed, *landed.handles]}
        return [
            facts[h] if h in facts else s.handles[h].alias
            for h in action.input.handles
            if h in facts or h in s.handles
        ]

    def _pending_record(self, step: str) -> CorrelationRecord | None:
        for record in reversed(self.snapshot.correlation):
            if record.step == step and record.status in ("PENDING", "RECONCILING"):
                return record
        return None

    # --- handles (I1, I2, I4) -------------------------------------------------

    def _mint(self, action: Action, option: Option | None = None) -> list[str]:
        s = self.snapshot
        minted = []
        for hid in action.output.handles:
            if hid in s.handles:  # a live handle re-minted: I1 before I2
                self._invalidate([hid], including_roots=False)
            handle = self.chain.handle(hid)
            parents = handle.derived_from if handle else []
            count = s.mint_counts.get(hid, 0) + 1
            if self.fanout is not None:  # aliases of shared handles are unique across branches
                count = self.fanout.claim(hid, count)
            s.mint_counts[hid] = count
            alias = f"{hid}#{count}"
            s.handles[hid] = HandleState(
                alias=alias,
                lineage=[s.handles[p].alias for p in parents if p in s.handles],
                minted_by=action.id,
                minted_seq=s.seq,
                minted_at=s.clock,
                option=option,
            )
            minted.append(alias)
            if self._draft is not None:
                self._draft["handles_minted"].append(alias)
        return minted

    def _invalidate(self, handle_ids: list[str], including_roots: bool = True) -> None:
        """Kill handles and their derivation descendants, atomically (I1); never facts (I5)."""
        s = self.snapshot
        dead: list[str] = []
        for hid in handle_ids:
            if including_roots:
                dead.append(hid)
            try:
                dead += cascade(self.chain, hid).invalidated
            except GraphError:
                continue
        for hid in dict.fromkeys(dead):
            state = s.handles.pop(hid, None)
            if state is None:
                continue
            s.results.pop(state.alias, None)
            if self._draft is not None:
                self._draft["handles_invalidated"].append(state.alias)

    def _minted_by(self, step: str) -> list[str]:
        action = self._action(step)
        return list(action.output.handles)

    def _refresh(self, handle_id: str) -> str | None:
        handle = self.chain.handle(handle_id)
        if handle is None:
            return None
        if handle.staleness and handle.staleness.refresh and handle.staleness.refresh != "n/a":
            return handle.staleness.refresh
        return handle.minted_by

    # --- moving the cursor ------------------------------------------------------

    def _arrive(self, step_id: str) -> None:
        s = self.snapshot
        action = self._action(step_id)
        s.cursor = step_id
        s.arrived_seq = s.seq
        s.arrivals[step_id] = s.arrivals.get(step_id, 0) + 1
        s.attempt = 0
        limits = step_limits(self.chain, action)
        s.budgets.step_attempts_left = 1 if is_unkeyed_commit(action) else limits.attempts
        s.budgets.safe_rejects_left = limits.safe_reject_redispatch
        if s.compensation is None and (self._business_expiry() or self._wall_exhausted()):
            return
        if s.compensation is None and self.fanout is not None and self.fanout.sync(self, action):
            return
        spent = [h for h in action.input.handles if h in s.handles and s.handles[h].spent]
        if spent:
            target = self._refresh(spent[0])
            self._open(
                "transition",
                step=step_id,
                verdict=Verdict(type="rewind", to=target) if target else _dead("spent_handle"),
                source="config",
                row="I4:spent",
                note=f"{s.handles[spent[0]].alias} is spent; never re-presented",
            )
            if target:
                self._rewind(target, action, in_process=True)
            else:
                self._dead_end(_dead(f"spent_{spent[0]}"), action)
            return
        if action.effect == "select":
            self._present_selection(action)
            return
        if action.entry_gate:
            verdict = Verdict(type="gate", gate=action.entry_gate)
            self._open(
                "transition", step=step_id, verdict=verdict, source="config", row="entry_gate"
            )
            self._park(action.entry_gate, action, "entry")
            return
        self._dispatch(action)

    def _dispatch(self, action: Action) -> None:
        s = self.snapshot
        s.state = "compensating" if s.compensation else "running"
        if is_unkeyed_commit(action) and self._unresolved(action):
            return
        if is_unkeyed_commit(action):
            # P3: the record is durable before the request leaves.
            self._open(
                "transition",
                step=action.id,
                source="config",
                row="P3:correlation",
                note="correlation record persisted (PENDING) before dispatch",
            )
            s.correlation.append(
                CorrelationRecord(step=action.id, attempt_seq=s.seq, created_at=s.clock)
            )
        if is_commit_class(action):
            for hid in action.input.handles:
                handle = self.chain.handle(hid)
                if handle is not None and handle.single_use and hid in s.handles:
                    s.handles[hid].spent = True  # I4: spent even if the outcome is unknown
        key = self._key(action)
        if key is not None:
            s.key_since.setdefault(key, s.clock)
        s.in_flight = action.id
        s.waiting = Waiting(kind="observe", step=action.id)

    def _advance(self, action: Action) -> None:
        s = self.snapshot
        if s.compensation is not None:
            unwind = s.compensation
            unwind.pos += 1
            if unwind.pos < len(unwind.steps):
                self._arrive(unwind.steps[unwind.pos])
            else:
                s.commits_landed[unwind.queue.pop(0)].compensated = True
                self._next_unwind()
            return
        steps = self._steps()
        here = steps.index(action.id) if action.id in steps else len(steps)
        if here + 1 < len(steps):
            self._arrive(steps[here + 1])
        else:
            self._finish_done()

    def _finish_done(self) -> None:
        s = self.snapshot
        s.state = "done"
        s.cursor = None
        s.waiting = Waiting(kind="nothing")
        s.outcome = {"result": "done"}

    # --- applying verdicts --------------------------------------------------------

    def _apply(self, action: Action, c: Classification, obs: Observation) -> None:
        s = self.snapshot
        v = c.verdict
        if c.stale_key is not None and v.type == "rewind":
            s.stale_recurrences[c.stale_key] = s.stale_recurrences.get(c.stale_key, 0) + 1
        if c.auto_repair is not None:
            s.auto_repairs_fired.append(c.auto_repair)
            n = int(c.auto_repair.rsplit("#", 1)[1])
            values = auto_repair_transform(action.auto_repairs[n - 1], len(s.auto_repairs_fired))
            self._open(
                "transition",
                step=action.id,
                verdict=v,
                source="config",
                row=c.row,
                note=f"auto_repair applied: {sorted(values)}",
                proposal_source="code",
            )
            self._repair(v, action, values)
            return
        if v.type == "ok":
            self._on_ok(action, obs, empty=v.empty)
        elif v.type == "retry":
            self._retry(action, c)
        else:
            self._route(action, v, obs)

    def _route(self, action: Action, v: Verdict, obs: Observation | None) -> None:
        """Apply a verdict that is not the classifier's ok/retry."""
        s = self.snapshot
        if s.compensation is not None and v.type in (
            "rewind",
            "repair",
            "reselect",
            "escalate",
            "dead_end",
            "retry",
        ):
            self._compensation_failed(f"{action.id}: {format_verdict(v)}")
            return
        if v.type == "ok":
            self._land(action, obs)
            self._advance(action)
        elif v.type == "gate" and v.gate:
            self._park(v.gate, action, "raised", obs)
        elif v.type == "rewind" and v.to:
            self._rewind(v.to, action)
        elif v.type == "repair":
            self._repair(v, action, None)
        elif v.type == "reselect" and v.to:
            self._reselect(v.to, action)
        elif v.type == "reconcile":
            self._reconcile(action)
        elif v.type == "escalate":
            self._escalate(v, action)
        elif v.type == "retry" and is_unkeyed_commit(action):
            self._reconcile(action)  # never a fresh dispatch of an unkeyed commit
        elif v.type == "retry":
            self._dispatch(action)
        else:
            self._dead_end(v, action)

    def _land(self, action: Action, obs: Observation | None) -> None:
        """Mint the step's handles if this arrival has not, and record a landed commit.

        A gate outcome ``ok`` keeps the raising step's success path: its
        output counts as produced, the step is never dispatched again.
        """
        s = self.snapshot
        since = s.arrived_seq
        if any(
            h not in s.handles or s.handles[h].minted_seq < since for h in action.output.handles
        ):
            self._mint(action)
        if is_commit_class(action) and not any(
            lc.step == action.id and lc.attempt_seq >= since
            for lc in [*s.commits_landed, *s.compensators_landed]
        ):
            self._record_landing(action, obs or Observation())

    def _on_ok(self, action: Action, obs: Observation, empty: bool) -> None:
        s = self.snapshot
        declined = empty and is_commit_class(action)  # a valid empty commit landed nothing
        aliases = [] if declined else self._mint(action)
        if obs.options:
            key = aliases[0] if aliases else f"{action.id}@{s.seq}"
            s.results[key] = list(obs.options)
        if self.fanout is not None:
            self.fanout.publish(self, action)
        if declined:
            record = self._pending_record(action.id)
            if record is not None:
                record.status = "NOT_LANDED"
        elif is_commit_class(action):
            self._record_landing(action, obs, aliases)
        for k in [k for k in s.stale_recurrences if k.startswith(f"{action.id}|")]:
            del s.stale_recurrences[k]
        if empty:
            route = (action.output.empty.route if action.output.empty else None) or Verdict(
                type="ok"
            )
            self._open(
                "transition", step=action.id, verdict=route, source="config", row="empty.route"
            )
            if route.type == "ok":
                self._advance(action)
            else:
                self._route(action, route, obs)
            return
        for n, pre in enumerate(action.preconditions, 1):
            if matches(pre.when, obs):
                self._open(
                    "transition",
                    step=action.id,
                    verdict=pre.verdict,
                    source="config",
                    row=f"precondition#{n}",
                    note=pre.reason,
                )
                if pre.verdict.type == "ok":
                    self._advance(action)
                elif pre.verdict.type == "gate" and pre.verdict.gate:
                    self._park(pre.verdict.gate, action, "raised", obs, from_ok=True)
                else:
                    self._route(action, pre.verdict, obs)
                return
        self._advance(action)

    def _record_landing(
        self, action: Action, obs: Observation, aliases: list[str] | None = None
    ) -> None:
        s = self.snapshot
        if aliases is None:
            aliases = [s.handles[h].alias for h in action.output.handles if h in s.handles]
        deadline = None
        expiry = action.output.business_expiry
        if expiry is not None:
            found = _lookup(obs.payload, expiry.field)
            if isinstance(found, (int, float)) and not isinstance(found, bool):
                deadline = float(found)
        landed = LandedCommit(
            step=action.id,
            attempt_seq=s.seq,
            handles=aliases,
            consumed=self._presented(action),
            at=s.clock,
            business_deadline=deadline,
            predicates=list(obs.predicates),
        )
        if s.compensation is not None or action.effect == "compensate":
            s.compensators_landed.append(landed)
        else:
            s.commits_landed.append(landed)
        record = self._pending_record(action.id)
        if record is not None:
            record.status = "LANDED"

    def _retry(self, action: Action, c: Classification) -> None:
        s = self.snapshot
        if is_commit_class(action) and is_keyed(action) and self._key_expired(action):
            self._reconcile_instead(
                action,
                "key_retention",
                "idempotency key past key_retention: effectively unkeyed, probe instead",
            )
            return
        if is_unkeyed_commit(action):
            # observe() has already marked a declared no-side-effect answer NOT_LANDED.
            if c.no_side_effect and s.budgets.safe_rejects_left > 0:
                # A documented no-side-effect rejection does not use the single attempt.
                s.budgets.safe_rejects_left -= 1
                s.budgets.step_attempts_left += 1
                for hid in action.input.handles:  # it never executed: nothing was spent
                    if hid in s.handles:
                        s.handles[hid].spent = False
                self._backoff_and_dispatch(action)
            elif c.no_side_effect:
                verdict = _dead("safe_reject_redispatch_exhausted", False)
                self._open(
                    "transition", step=action.id, verdict=verdict, source="config", row="budget"
                )
                self._dead_end(verdict, action)
            else:
                self._reconcile_instead(
                    action, "P3:never_retry_unkeyed", "an unkeyed commit is never retried"
                )
            return
        if s.budgets.step_attempts_left > 0:
            self._backoff_and_dispatch(action)
            return
        # Exhausted: escalate per effect class (SPEC §3; the threshold is OPEN, §8).
        if action.effect in ("read", "mint"):
            consumed = [h for h in action.input.handles if h in s.handles]
            newest = max(consumed, key=lambda h: s.handles[h].minted_seq, default=None)
            target = self._refresh(newest) if newest else None
            if target and s.budgets.rewinds_left > 0:
                verdict = Verdict(type="rewind", to=target)
                self._open(
                    "transition",
                    step=action.id,
                    verdict=verdict,
                    source="config",
                    row="retry_exhausted",
                    note=f"attempts exhausted; re-mint the newest input {newest}",
                )
                self._rewind(target, action)
                return
        verdict = _dead("step_attempts_exhausted", False)
        self._open(
            "transition",
            step=action.id,
            verdict=verdict,
            source="config",
            row="retry_exhausted",
            note=f"{action.id} used all {s.attempt} attempts",
        )
        self._dead_end(verdict, action)

    def _backoff_and_dispatch(self, action: Action) -> None:
        s = self.snapshot
        backoff = step_limits(self.chain, action).backoff
        # Seeded by what the run's state holds (not by the event count), so two
        # runs in the same state draw the same jitter: the explorer merges them.
        budgets = s.budgets
        seed = f"{s.seed}:{action.id}:{s.attempt}:{budgets.rewinds_left}:{budgets.repairs_left}"
        draw = random.Random(seed).random()
        delay = backoff.delay(max(s.attempt, 1), draw)
        s.clock += delay
        if s.state == "running":
            s.budgets.wall_used += delay
        self._set(note=f"backoff {delay:.3f}s")
        if s.compensation is None and self._wall_exhausted():
            return
        self._dispatch(action)

    def _rewind(self, target: str, origin: Action, in_process: bool = False) -> None:
        """Rewind to ``target``; ``in_process`` even in external mode (an I4 re-mint)."""
        s = self.snapshot
        if s.compensation is not None:
            self._compensation_failed(f"{origin.id}: rewind(to: {target})")
            return
        if s.budgets.rewinds_left <= 0:
            verdict = _dead("max_rewinds_exhausted", False)
            self._open("transition", step=origin.id, verdict=verdict, source="config", row="budget")
            self._dead_end(verdict, origin)
            return
        s.budgets.rewinds_left -= 1
        to = self._action(target)
        minted = self._minted_by(target)
        if self.fanout is not None:
            self.fanout.discovered_dead(self, minted)
        self._invalidate(minted, including_roots=not is_commit_class(to))
        if s.mode == "external" and not in_process:
            self._restart(target, None, f"rewind(to: {target}) from {origin.id}")
            return
        self._arrive(target)

    def _repair(self, v: Verdict, origin: Action, values: dict[str, Any] | None) -> None:
        s = self.snapshot
        if s.compensation is not None:
            self._compensation_failed(f"{origin.id}: {format_verdict(v)}")
            return
        for left, name in (
            (s.budgets.rewinds_left, "rewinds"),
            (s.budgets.repairs_left, "repairs"),
        ):
            if left <= 0:
                verdict = _dead(f"max_{name}_exhausted", False)
                self._open(
                    "transition", step=origin.id, verdict=verdict, source="config", row="budget"
                )
                self._dead_end(verdict, origin)
                return
        s.budgets.rewinds_left -= 1
        s.budgets.repairs_left -= 1
        if s.mode == "external":
            s.intent.update(values or {})
            self._invalidate_for_repair(v)
            self._restart(v.to or "", list(v.fields), f"{format_verdict(v)} from {origin.id}")
            return
        if values is not None and set(v.fields) <= set(values):
            self._apply_repair(v, values)
            return
        if values:
            s.intent.update(values)
        s.state = "running"
        s.waiting = Waiting(
            kind="repair", step=v.to, fields=list(v.fields), audience=self._repair_audience()
        )

    def _repair_audience(self) -> str:
        for step in self.chain.policy.escalation:
            if any("repair" in m.lower() for m in step.may):
                return step.audience
        return "model"

    def _apply_repair(self, v: Verdict, values: dict[str, Any]) -> None:
        self.snapshot.intent.update(values)
        self._invalidate_for_repair(v)
        self._arrive(v.to or "")

    def _invalidate_for_repair(self, v: Verdict) -> None:
        """I6: what the repaired fields fed, and everything derived from it; never facts."""
        target = v.to or ""
        try:
            dead = repair_scope(self.chain, target, v.fields).invalidated
        except GraphError:
            dead = self._minted_by(target)
        facts = {
            h
            for h in dead
            if (m := self.chain.handle(h)) and m.minted_by and self._is_fact(m.minted_by)
        }
        self._invalidate([h for h in dead if h not in facts])

    def _restart(self, target: str, fields: list[str] | None, reason: str) -> None:
        """External mode: end the run with a typed restart the planner acts on (SPEC §2.3)."""
        s = self.snapshot
        b = s.budgets
        s.state = "restart_required"
        s.waiting = Waiting(kind="nothing")
        s.outcome = {
            "restart_required": {
                "rewind_to": target,
                "repair_fields": fields,
                "reason": reason,
                "budgets_remaining": {"rewinds": b.rewinds_left, "repairs": b.repairs_left},
            }
        }

    def _is_fact(self, action_id: str) -> bool:
        action = self.chain.action(action_id)
        return action is not None and is_commit_class(action)

    def _reselect(self, target: str, origin: Action) -> None:
        s = self.snapshot
        if s.budgets.rewinds_left <= 0:
            verdict = _dead("max_rewinds_exhausted", False)
            self._open("transition", step=origin.id, verdict=verdict, source="config", row="budget")
            self._dead_end(verdict, origin)
            return
        s.budgets.rewinds_left -= 1
        for hid in self._minted_by(target):
            state = s.handles.get(hid)
            if state is not None and state.option is not None:
                s.excluded.setdefault(target, []).append(state.option.id)
        self._invalidate(self._minted_by(target))
        if target not in s.fresh:
            s.fresh.append(target)
        self._arrive(target)

    def _escalate(self, v: Verdict, action: Action) -> None:
        s = self.snapshot
        s.state = "escalated"
        s.waiting = Waiting(kind="nothing")
        s.outcome = {"escalated": v.audience or "operator", "step": action.id}

    def _dead_end(self, v: Verdict, action: Action | None) -> None:
        s = self.snapshot
        if s.compensation is not None:
            self._compensation_failed(f"{action.id if action else '?'}: {format_verdict(v)}")
            return
        if action is not None:
            record = self._pending_record(action.id)
            if record is not None and record.status == "PENDING":
                record.status = "NOT_LANDED"  # a table dead_end is a deterministic reject
        s.outcome = {
            "verdict": format_verdict(v),
            "reason": v.reason or "dead_end",
            "permanent": v.permanent,
            "retry_after_hint": v.retry_after_hint,
            "step": action.id if action else None,
        }
        pending = [i for i, lc in enumerate(s.commits_landed) if not lc.compensated]
        if pending:
            self._start_unwind(pending)
            return
        s.state = "dead_end"
        s.waiting = Waiting(kind="nothing")

    # --- selection (I3) -------------------------------------------------------------

    def _present_selection(self, action: Action) -> None:
        s = self.snapshot
        options: list[Option] = []
        for hid in action.input.handles:
            if hid in s.handles:
                options = s.results.get(s.handles[hid].alias, [])
                break
        excluded = set(s.excluded.get(action.id, []))
        offered = [o for o in options if o.id not in excluded]
        previous = s.selections.get(action.id)
        rematch = None
        for hid in action.output.handles:
            handle = self.chain.handle(hid)
            if handle is not None and handle.rematch is not None:
                rematch = handle.rematch
        audience = "model"
        if previous is not None and action.id not in s.fresh and rematch is not None:
            keys = rematch.key
            found = [
                o
                for o in offered
                if keys and all(o.key.get(k) == previous.key.get(k) for k in keys)
            ]
            if len(found) == 1:
                self._open(
                    "transition",
                    step=action.id,
                    verdict=Verdict(type="ok"),
                    source="config",
                    row="rematch",
                    note="rematch: exact key match, code re-selects",
                    proposal_source="code",
                )
                self._pick(action, found[0])
                return
            audience = "model" if rematch.on_ambiguous == "model" else "user"
            self._open(
                "transition",
                step=action.id,
                source="config",
                row="rematch",
                note=f"rematch: {len(found)} matches; on_ambiguous → {rematch.on_ambiguous}",
            )
        if not offered:
            verdict = _dead("no_options_to_select", False)
            self._open("transition", step=action.id, verdict=verdict, source="config", row="select")
            self._dead_end(verdict, action)
            return
        s.waiting = Waiting(kind="select", step=action.id, options=offered, audience=audience)

    def _select(self, option_id: str, who: str, given: dict[str, Any] | None = None) -> None:
        s = self.snapshot
        w = s.waiting
        if w.kind != "select" or w.step is None:
            raise SimulationError(f"the run waits for {_describe(w)}; got a selection")
        chosen = next((o for o in w.options if o.id == option_id), None)
        if chosen is None:
            why = " (excluded by reselect)" if option_id in s.excluded.get(w.step, []) else ""
            raise SimulationError(
                f"step {w.step!r} offers {[o.id for o in w.options]}; got {option_id!r}{why}"
            )
        action = self._action(w.step)
        self._open(
            "transition",
            step=action.id,
            source="config",
            row="select",
            note=f"selection collected ({who})",
            input=given or {"kind": "select", "option": option_id},
            proposal_source="model" if who == "model" else "user",
        )
        self._pick(action, chosen)

    def _pick(self, action: Action, option: Option) -> None:
        s = self.snapshot
        self._mint(action, option)
        s.selections[action.id] = option
        if action.id in s.fresh:
            s.fresh.remove(action.id)
        self._advance(action)

    # --- gates ------------------------------------------------------------------------

    def _park(
        self,
        gate_id: str,
        action: Action,
        kind: Literal["raised", "entry", "revocation"],
        obs: Observation | None = None,
        from_ok: bool = False,
    ) -> None:
        s = self.snapshot
        gate = self.chain.gate(gate_id)
        if gate is None:
            self._dead_end(_dead(f"unknown_gate_{gate_id}", True), action)
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

    def _check_params(self, spec: Outcome, params: dict[str, Any], ctx: GateContext) -> list[str]:
        problems = []
        for name in params:
            if name not in spec.params:
                problems.append(f"{name!r} is not a param of this outcome ({list(spec.params)})")
        for name in spec.params:
            if name not in params:
                problems.append(f"param {name!r} is missing")
        ids = [o.id for o in ctx.options]
        for name, value in params.items():
            if self._looks_like_handle(value):
                problems.append(f"{name!r} carries a handle; handles are code-owned")
            elif ids and isinstance(value, str) and value not in ids:
                problems.append(f"{name}={value!r} was not among the presented options {ids}")
            elif isinstance(ctx.payload.get(name), list) and value not in ctx.payload[name]:
                problems.append(f"{name}={value!r} was not in the presented payload")
        return problems

    def _looks_like_handle(self, value: Any) -> bool:
        if not isinstance(value, str):
            return False
        m = _ALIAS.match(value)
        live = {st.alias for st in self.snapshot.handles.values()}
        return value in live or bool(m and self.chain.handle(m[1]) is not None)

    def _resume_gate(self, gate: Gate, spec: Outcome, params: dict[str, Any]) -> None:
        s = self.snapshot
        ctx = s.gate_context
        assert ctx is not None
        action = self._action(ctx.step or "")
        s.pending_gate = None
        s.gate_context = None
        s.state = "compensating" if s.compensation else "running"
        if gate.payload_expiry is not None:
            deadline = _lookup(ctx.payload, gate.payload_expiry.field)
            if isinstance(deadline, (int, float)) and s.clock > float(deadline):
                self._set(
                    verdict=gate.payload_expiry.verdict,
                    note="answer arrived after the payload's own deadline",
                )
                self._route(action, gate.payload_expiry.verdict, None)
                return
        if ctx.kind == "revocation":
            if spec.verdict.type == "ok":
                s.state = ctx.prior_state or "done"  # type: ignore[assignment]
                s.waiting = Waiting(kind="nothing")
                return
        elif s.compensation is None and self._business_expiry():
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
                self._set(proposal_source="code")
            self._repair(v, action, values)
            return
        s.intent.update(values)
        if v.type == "ok":
            if ctx.kind == "entry":
                self._dispatch(action)
            else:
                if not ctx.from_ok:
                    self._land(action, s.last_observation)
                self._advance(action)
            return
        self._route(action, v, None)

    def _gate_timeout(self) -> None:
        s = self.snapshot
        ctx = s.gate_context
        assert ctx is not None
        gate = self._gate(ctx.gate)
        after = gate.timeout.after.seconds if gate.timeout else None
        if after is None and self.chain.policy.per_chain.gate_timeout is not None:
            after = self.chain.policy.per_chain.gate_timeout.seconds
        if after is None or s.clock - ctx.raised_at < after:
            return
        timeout = gate.timeout
        if timeout is not None and timeout.outcome and timeout.outcome in gate.outcomes:
            spec = gate.outcomes[timeout.outcome]
            self._open(
                "transition",
                step=ctx.step,
                verdict=spec.verdict,
                source="config",
                row=f"gate:{gate.id}.timeout",
                note=f"gate timed out after {after:g}s → outcome {timeout.outcome}",
            )
            self._resume_gate(gate, spec, {})
            return
        verdict = (timeout.verdict if timeout else None) or _dead(f"gate_timeout_{gate.id}", False)
        self._open(
            "transition",
            step=ctx.step,
            verdict=verdict,
            source="config",
            row=f"gate:{gate.id}.timeout",
            note=f"gate timed out after {after:g}s",
        )
        action = self._action(ctx.step or "")
        s.pending_gate = None
        s.gate_context = None
        s.state = "compensating" if s.compensation else "running"
        self._route(action, verdict, None)

    # --- reconcile (P3) -------------------------------------------------------------

    def _reconcile(self, action: Action) -> None:
        s = self.snapshot
        probe = action.confirmation.probe if action.confirmation else None
        if not probe:
            verdict = Verdict(type="escalate", audience="operator")
            self._open(
                "transition",
                step=action.id,
                verdict=verdict,
                source="config",
                row="reconcile:no_probe",
                note=f"{action.id} declares no confirmation probe",
            )
            if s.compensation is not None:
                self._compensation_failed(f"{action.id}: outcome unknown, no probe")
            else:
                self._escalate(verdict, action)
            return
        record = self._pending_record(action.id)
        if record is None:
            record = CorrelationRecord(step=action.id, attempt_seq=s.seq, created_at=s.clock)
            s.correlation.append(record)
        record.status = "RECONCILING"
        s.in_flight = None
        s.state = "reconciling"
        s.waiting = Waiting(kind="probe", step=action.id)

    def _not_landed(self, action: Action) -> None:
        s = self.snapshot
        candidates = [h for h in action.input.handles if h in s.handles]
        spent = [h for h in candidates if s.handles[h].spent]
        ordered = spent or sorted(candidates, key=lambda h: -s.handles[h].minted_seq)
        target = self._refresh(ordered[0]) if ordered else action.id
        if target and s.budgets.rewinds_left > 0 and s.compensation is None:
            self._set(
                verdict=Verdict(type="rewind", to=target),
                source="config",
                row="reconcile:not_landed",
            )
            self._rewind(target, action)
            return
        verdict = _dead("commit_not_landed", False)
        self._set(verdict=verdict, source="config", row="reconcile:not_landed")
        self._dead_end(verdict, action)

    def _reconcile_deadlines(self) -> None:
        s = self.snapshot
        step = s.waiting.step or ""
        action = self._action(step)
        conf = action.confirmation
        record = self._pending_record(step) or next(
            (r for r in reversed(s.correlation) if r.step == step), None
        )
        if conf is None or record is None:
            return
        age = s.clock - record.created_at
        deadline = conf.async_.deadline.seconds if conf.async_ and conf.async_.deadline else None
        if deadline is not None and age >= deadline and record.status != "ESCALATED":
            record.status = "ESCALATED"
            self._open(
                "transition",
                step=step,
                verdict=Verdict(type="escalate", audience="operator"),
                source="config",
                row="async.deadline",
                note="still unknown at async.deadline: operator asked; the sweep keeps probing",
            )
        limit = (
            conf.sweep.escalate_after.seconds if conf.sweep and conf.sweep.escalate_after else None
        )
        if limit is not None and age >= limit:
            self._open(
                "transition",
                step=step,
                verdict=Verdict(type="escalate", audience="operator"),
                source="config",
                row="sweep.escalate_after",
                note="sweep gave up: the operator owns the pending commit",
            )
            if s.compensation is not None:
                self._compensation_failed(f"{step}: outcome still unknown after the sweep")
                return
            s.state = "escalated"
            s.waiting = Waiting(kind="nothing")
            s.outcome = {"escalated": "operator", "step": step, "reason": "reconcile_unresolved"}

    # --- budgets and deadlines ----------------------------------------------------------

    def _wall_exhausted(self) -> bool:
        s = self.snapshot
        b = s.budgets
        if b.wall_limit is None or b.wall_used <= b.wall_limit:
            return False
        verdict = _dead("wall_clock_exhausted", False)
        self._open("transition", step=s.cursor, verdict=verdict, source="config", row="wall_clock")
        self._dead_end(verdict, self.chain.action(s.cursor or ""))
        return True

    def _business_expiry(self) -> bool:
        s = self.snapshot
        for lc in s.commits_landed:
            if lc.business_deadline is None or lc.business_expired or lc.compensated:
                continue
            if s.clock < lc.business_deadline:
                continue
            lc.business_expired = True
            action = self._action(lc.step)
            expiry = action.output.business_expiry
            assert expiry is not None
            self._open(
                "transition",
                step=lc.step,
                verdict=expiry.on_expiry,
                source="config",
                row="business_expiry",
                note=f"{lc.step}'s {expiry.field} passed; the commit stays landed (I5)",
            )
            s.gate_context = None
            s.pending_gate = None
            s.state = "running"
            self._route(action, expiry.on_expiry, None)
            return True
        return False

    # --- revocation ---------------------------------------------------------------------

    def _revocation(self, obs: Observation) -> bool:
        s = self.snapshot
        for lc in [*s.commits_landed, *s.compensators_landed]:
            action = self.chain.action(lc.step)
            rev = action.revocation if action else None
            if action is None or rev is None or lc.revoked:
                continue
            window = rev.window.seconds if rev.window else None
            if window is not None and s.clock - lc.at > window:
                continue
            hit = next((w for w in rev.watch if matches(w, obs)), None)
            if hit is None:
                continue
            lc.revoked = hit
            route = rev.route or Verdict(type="escalate", audience="operator")
            self._open(
                "reconcile",
                step=lc.step,
                signal=_signal(obs),
                verdict=route,
                source="config",
                row=f"revocation:{lc.step}",
                note=f"landed {lc.step} revoked by {hit}",
                input={"kind": "observe", "observation": obs.model_dump(exclude_defaults=True)},
            )
            if route.type == "gate" and route.gate:
                self._park(route.gate, action, "revocation", obs)
            else:
                s.state = "escalated"
                s.waiting = Waiting(kind="nothing")
                s.outcome = {**s.outcome, "escalated": "operator", "revoked": lc.step}
            return True
        return False

    # --- compensation (P5) --------------------------------------------------------------

    def _start_unwind(self, pending: list[int]) -> None:
        s = self.snapshot
        order = self.chain.policy.per_chain.compensation_order
        landed = s.commits_landed
        queue = list(reversed(pending))
        if isinstance(order, list):

            def rank(i: int) -> int:
                names = [landed[i].step, *compensators(self._action(landed[i].step))]
                hits = [order.index(n) for n in names if n in order]
                return min(hits) if hits else len(order)

            queue.sort(key=rank)  # stable: unnamed ones keep reverse landing order
        s.compensation = Unwind(reason=dict(s.outcome), queue=queue)
        s.state = "compensating"
        self._open(
            "transition",
            source="config",
            row="compensation_order",
            note=f"dead_end with landed commits: unwinding {[landed[i].step for i in queue]}",
        )
        self._next_unwind()

    def _next_unwind(self) -> None:
        s = self.snapshot
        unwind = s.compensation
        assert unwind is not None
        while unwind.queue:
            lc = s.commits_landed[unwind.queue[0]]
            action = self._action(lc.step)
            comp = action.compensation
            steps: list[str] = []
            if comp is None:
                self._compensation_failed(f"{lc.step} declares no compensation")
                return
            if comp.action and comp.action != "none":
                steps = [comp.action]
            elif comp.chain:
                steps = list(comp.chain)
            elif comp.ladder:
                facts = Observation(predicates=lc.predicates)
                for rung in comp.ladder:
                    if rung.when is None or matches(rung.when, facts):
                        if rung.else_ is not None and not (rung.chain or rung.action):
                            self._compensation_failed(
                                f"{lc.step}: ladder fell to {format_verdict(rung.else_)}"
                            )
                            return
                        steps = list(rung.chain) or ([rung.action] if rung.action else [])
                        break
            if not steps:
                unwind.reason.setdefault("not_compensable", []).append(lc.step)
                unwind.queue.pop(0)
                continue
            unwind.steps = steps
            unwind.pos = 0
            self._arrive(steps[0])
            return
        s.outcome = {
            **unwind.reason,
            "compensated": [lc.step for lc in s.commits_landed if lc.compensated],
        }
        s.compensation = None
        s.state = "dead_end"
        s.cursor = None
        s.waiting = Waiting(kind="nothing")

    def _compensation_failed(self, why: str) -> None:
        s = self.snapshot
        unwind = s.compensation
        left = [s.commits_landed[i].step for i in unwind.queue] if unwind else []
        verdict = Verdict(type="escalate", audience="operator")
        self._open(
            "transition",
            step=s.cursor,
            verdict=verdict,
            source="config",
            row="compensation_failed",
            note=f"compensation failed ({why}); uncompensated: {left}",
        )
        s.outcome = {
            **(unwind.reason if unwind else s.outcome),
            "escalated": "operator",
            "uncompensated": left,
            "compensation_failure": why,
        }
        s.compensation = None
        s.state = "escalated"
        s.waiting = Waiting(kind="nothing")

    # --- proposals (C4.2) -------------------------------------------------------------------

    def _proposal_problem(self, p: Proposal) -> str | None:
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
                return f"no repair is pending (the run waits for {_describe(w)})"
            if not p.fields:
                return "a repair proposal must change at least one field"
            extra = sorted(set(p.fields) - set(w.fields))
            if extra:
                return f"fields {extra} are not listed for this repair (allowed: {w.fields})"
            if any(self._looks_like_handle(v) for v in p.fields.values()):
                return "a repair value carries a handle; handles are code-owned"
            return None
        if p.kind == "select":
            if w.kind != "select":
                return f"no selection is pending (the run waits for {_describe(w)})"
            if str(p.value) not in [o.id for o in w.options]:
                return f"{p.value!r} is not among the offered options"
            return None
        if p.kind == "answer":
            if w.kind != "answer" or w.gate is None:
                return f"no gate is pending (the run waits for {_describe(w)})"
            gate = self._gate(w.gate)
            if gate.audience != "model":
                return f"gate {gate.id} is for the {gate.audience}; a model may not answer it"
            if str(p.value) not in gate.outcomes:
                return f"{p.value!r} is not an outcome of gate {gate.id}"
            ctx = s.gate_context
            problems = (
                self._check_params(gate.outcomes[str(p.value)], dict(p.fields), ctx) if ctx else []
            )
            return "; ".join(problems) or None
        return f"unknown proposal kind {p.kind!r}"


class RunRegistry:
    """Runs by caller-supplied ``run_key`` (SPEC §2.8): the same key is the same run."""

    def __init__(self) -> None:
        self._runs: dict[str, Run] = {}
        self._lock = threading.Lock()

    def create(self, chain: Chain, *, run_key: str, **kwargs: Any) -> Run:
        """Start a run for ``run_key``, or return the one that already exists."""
        if not run_key:
            raise SimulationError("run creation needs a run_key derived from the user's task")
        with self._lock:
            existing = self._runs.get(run_key)
            if existing is not None:
                return existing
            run = Run.start(chain, run_key=run_key, **kwargs)
            self._runs[run_key] = run
            return run

    def get(self, run_key: str) -> Run | None:
        return self._runs.get(run_key)

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, run_key: object) -> bool:
        return run_key in self._runs
