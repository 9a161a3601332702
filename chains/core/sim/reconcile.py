"""Reconcile: an outcome that may have landed is probed, never re-dispatched (SPEC P3, §3).

The correlation record of an unkeyed commit is persisted before dispatch;
an unknown outcome (a timeout, a lost process, a retry verdict on an
unkeyed commit) moves the run to ``reconciling``, where it waits for the
confirmation probe's finding. Landed continues the success path; not landed
rewinds to re-mint what the commit presented, or dispatches afresh when the
probe was made before a re-dispatch. While it waits, the sweep re-probes
each ``sweep.interval`` of virtual time until ``escalate_after``, and the
deadlines escalate to the operator. Revocations of a landed commit (a
webhook on a watch) and a caller's cancel are handled here too, behind the
cancellation shield (P3 (b)): a commit whose request is out when either
arrives is reconciled first, and what arrived applies once the probe says
whether it landed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..model import Action, is_unkeyed_commit
from ..verdicts import Verdict, format_verdict
from .classifier import classify, matches
from .events import describe, observed_input, signal_of
from .part import OK, PLAIN_OBSERVATION, RECONCILE, Part, SimulationError, dead
from .sealed import seal
from .shield import Shield
from .state import NOT_WAITING, CorrelationRecord, Observation, Waiting

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Cursor, HandleBook, Parking, Rewinds, Unwinds, Verdicts
    from .state import Snapshot

__all__ = ["Reconcile"]


class Needs(Protocol):
    """The parts :class:`Reconcile` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...

    @property
    def outcomes(self) -> Verdicts: ...

    @property
    def backtrack(self) -> Rewinds: ...

    @property
    def gates(self) -> Parking: ...

    @property
    def compensation(self) -> Unwinds: ...

    @property
    def handles(self) -> HandleBook: ...


class Reconcile(Part):
    """Correlation records, probes and their findings."""

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

    @property
    def shield(self) -> Shield:
        """What waits for a commit that was out when a cancel or revocation came (P3 (b))."""
        return Shield(self.spec, self.snapshot, self.log, self.peers, self)

    # --- correlation records -------------------------------------------------------------

    def persist(self, action: Action) -> CorrelationRecord:
        """A new PENDING record for ``action`` with what P3 asks it to carry."""
        s = self.snapshot
        probe = self.spec.action(action.confirmation.probe or "") if action.confirmation else None
        arrival = s.arrivals.get(action.id, 0)
        lookup: dict[str, Any] = {"correlation_label": f"{s.run_id}:{action.id}:{arrival}"}
        if probe is not None:
            for hid in probe.input.handles:
                if hid in s.handles:
                    lookup[hid] = s.handles[hid].alias
            given = {f: s.intent[f] for f in probe.input.intent if f in s.intent}
            lookup.update(seal(s.sealed, s.run_id, given))
        record = CorrelationRecord(
            step=action.id,
            attempt_seq=s.seq,
            created_at=s.clock,
            run_id=s.run_id,
            intent_ref=seal(s.sealed, s.run_id, {"intent": dict(s.intent)})["intent"],
            lookup=lookup,
        )
        s.correlation.append(record)
        return record

    def open_record(self, step: str) -> CorrelationRecord:
        """The latest record for ``step``, made now if there is none."""
        for record in reversed(self.snapshot.correlation):
            if record.step == step:
                return record
        return self.persist(self.action(step))

    def pending(self, step: str) -> CorrelationRecord | None:
        """The record of ``step`` whose outcome is still open, if any."""
        for record in reversed(self.snapshot.correlation):
            if record.step == step and record.status in ("PENDING", "RECONCILING"):
                return record
        return None

    def unresolved(self, action: Action) -> bool:
        """Probe before dispatching ``action`` again if its last dispatch may have landed.

        SPEC §3: only a response declared ``no_side_effect`` permits a fresh
        dispatch of an unkeyed commit. Any other answer that sent the run
        elsewhere (a staleness rewind, a gate, a repair) leaves the record
        PENDING, and the replay that comes back here reconciles first.
        """
        record = self.pending(action.id)
        if record is None or record.status != "PENDING":
            return False
        record.before_redispatch = True
        self.instead(
            action,
            "P3:unresolved",
            "the last dispatch was never shown not to have landed: probe before dispatching again",
        )
        return True

    def instead(self, action: Action, row: str, why: str) -> None:
        """Trace why ``action`` is probed rather than dispatched, then reconcile it."""
        self.log.transition(action.id, row, RECONCILE, why)
        self.start(action)

    # --- a restart ------------------------------------------------------------------------

    def after_restart(self) -> None:
        """The process died and the run was restored: settle an unkeyed commit it left open.

        Its dispatch was out (C1.4's second kill point): the outcome is
        unknown, so the lost attempt is recorded and reconciled, never
        re-dispatched. Its record was persisted but the dispatch had not
        left (the first kill point): whether the request went is just as
        unknown, so the record is probed before any dispatch.
        """
        s = self.snapshot
        if s.waiting.kind != "observe" or not s.waiting.step:
            return
        action = self.action(s.waiting.step)
        if not is_unkeyed_commit(action):
            return
        if s.in_flight:
            note = (
                "process restarted mid-dispatch: the outcome is unknown; probe, never re-dispatch"
            )
            self.lost(action, "#11", note, {"kind": "resume"})
            return
        record = self.pending(action.id)
        if record is not None and record.status == "PENDING":
            record.before_redispatch = True
            self.log.transition(
                action.id,
                "P3:unresolved",
                RECONCILE,
                "process restarted between persisting the correlation record and "
                "dispatch: probe before dispatching",
                input={"kind": "resume", "point": "before_dispatch"},
            )
            self.start(action)

    # --- probing ----------------------------------------------------------------------------

    def start(self, action: Action) -> None:
        """Wait for the probe of ``action``; escalate when it declares none."""
        s = self.snapshot
        probe = action.confirmation.probe if action.confirmation else None
        if not probe:
            verdict = Verdict(type="escalate", audience="operator")
            self.log.transition(
                action.id,
                "reconcile:no_probe",
                verdict,
                f"{action.id} declares no confirmation probe",
            )
            if s.compensation is not None:
                self.peers.compensation.failed(f"{action.id}: outcome unknown, no probe")
            else:
                self.peers.outcomes.escalate(verdict, action)
            return
        record = self.pending(action.id) or self.persist(action)
        record.status = "RECONCILING"
        s.in_flight = None
        s.state = "reconciling"
        s.waiting = Waiting(kind="probe", step=action.id)

    def result(
        self, result: Literal["landed", "not_landed", "unknown"], cause: Observation | None
    ) -> None:
        """The probe's finding for the commit being reconciled."""
        s = self.snapshot
        peers = self.peers
        w = s.waiting
        if w.kind != "probe" or w.step is None:
            raise SimulationError(f"the run waits for {describe(w)}; got a probe result")
        if result not in ("landed", "not_landed", "unknown"):
            raise SimulationError(
                f"probe result must be landed | not_landed | unknown; got {result!r}"
            )
        action = self.action(w.step)
        record = self.open_record(action.id)
        record.probes += 1
        probe_id = action.confirmation.probe if action.confirmation else None
        if probe_id:
            s.probes[probe_id] = s.probes.get(probe_id, 0) + 1
        signal: dict[str, Any] = {"probe": result}
        if cause is not None:
            signal["cause"] = signal_of(cause)
        given: dict[str, Any] = {"kind": "probe", "result": result}
        if cause is not None:
            given["cause"] = cause.model_dump(exclude_defaults=True)
        self.log.open(
            "reconcile", step=action.id, signal=signal, note=f"probe {probe_id}", input=given
        )
        if result == "landed":
            record.status = "LANDED"
            self.log.set(verdict=OK, source="config", row="reconcile:landed")
            s.state = "compensating" if s.compensation else "running"
            if record.shielded_by:
                peers.outcomes.land(action, cause or PLAIN_OBSERVATION)
                self.shield.release(action, record)
                return
            peers.outcomes.on_ok(action, cause or PLAIN_OBSERVATION, empty=False)
        elif result == "not_landed":
            record.status = "NOT_LANDED"
            s.state = "compensating" if s.compensation else "running"
            if record.shielded_by:
                self.log.set(verdict=OK, source="config", row="reconcile:not_landed")
                self.shield.release(action, record)
                return
            if record.before_redispatch:
                self.log.set(row="reconcile:not_landed", note="not landed: dispatching afresh")
                peers.steps.dispatch(action)
                return
            if cause is not None and not record.refed and self.refeed(action, record, cause):
                return
            self.not_landed(action)
        else:
            self.log.set(verdict=RECONCILE, source="config", row="reconcile:unknown")

    def lost(
        self,
        action: Action,
        row: str,
        note: str,
        given: dict[str, Any] | None,
        key: str | None = None,
    ) -> None:
        """Record ``action``'s dispatch that was out as an attempt with an unknown outcome, and
        reconcile it (a process that died mid-dispatch, a caller's cancel, a revocation)."""
        s = self.snapshot
        s.attempt += 1
        s.dispatches[action.id] = s.dispatches.get(action.id, 0) + 1
        s.budgets.step_attempts_left -= 1
        s.in_flight = None
        self.log.open(
            "attempt",
            step=action.id,
            attempt=s.attempt,
            signal={"transport": "lost"},
            verdict=RECONCILE,
            source="default",
            row=row,
            note=note,
            input=given,
            key=key,
            consumed=self.peers.handles.presented(action),  # I4: spent
        )
        self.start(action)

    def refeed(self, action: Action, record: CorrelationRecord, cause: Observation) -> bool:
        """Classify the cause a not-landed probe observed, once (C1.7); True when it routed."""
        record.refed = True
        c = classify(self.spec, self.peers.steps.context(action), action, cause)
        if c.verdict.type in ("repair", "gate", "dead_end", "rewind", "reselect", "escalate"):
            self.log.set(
                verdict=c.verdict, source=c.source, row=c.row, note=f"cause re-fed: {c.reason}"
            )
            self.peers.outcomes.route(action, c.verdict, cause)
            return True
        self.log.set(note=f"cause re-fed once: {format_verdict(c.verdict)} does not apply")
        return False

    def not_landed(self, action: Action) -> None:
        """Rewind to re-mint what the commit presented (spent inputs first), else dead end."""
        s = self.snapshot
        peers = self.peers
        candidates = [h for h in action.input.handles if h in s.handles]
        spent = [h for h in candidates if s.handles[h].spent]
        ordered = spent or sorted(candidates, key=lambda h: -s.handles[h].minted_seq)
        target = peers.handles.refresh(ordered[0]) if ordered else action.id
        if target and s.budgets.rewinds_left > 0 and s.compensation is None:
            self.log.set(
                verdict=Verdict(type="rewind", to=target),
                source="config",
                row="reconcile:not_landed",
            )
            peers.backtrack.rewind(target, action)
            return
        verdict = dead("commit_not_landed", False)
        self.log.set(verdict=verdict, source="config", row="reconcile:not_landed")
        if not target:
            self.log.set(note=f"{ordered[0]} has no refresh step to re-mint it")
        peers.outcomes.dead_end(verdict, action)

    def deadlines(self) -> None:
        """Time passed while reconciling: the async deadline, then the sweep's limit."""
        s = self.snapshot
        step = s.waiting.step or ""
        action = self.action(step)
        conf = action.confirmation
        record = self.pending(step) or next(
            (r for r in reversed(s.correlation) if r.step == step), None
        )
        if conf is None or record is None:
            return
        age = s.clock - record.created_at
        deadline = conf.async_.deadline.seconds if conf.async_ and conf.async_.deadline else None
        if deadline is not None and age >= deadline and record.status != "ESCALATED":
            record.status = "ESCALATED"
            self.log.transition(
                step,
                "async.deadline",
                Verdict(type="escalate", audience="operator"),
                "still unknown at async.deadline: operator asked; the sweep keeps probing",
            )
        limit = (
            conf.sweep.escalate_after.seconds if conf.sweep and conf.sweep.escalate_after else None
        )
        self.sweep(action, record, age, limit)
        if limit is not None and age >= limit:
            self.log.transition(
                step,
                "sweep.escalate_after",
                Verdict(type="escalate", audience="operator"),
                "sweep gave up: the operator owns the pending commit",
            )
            if s.compensation is not None:
                self.peers.compensation.failed(f"{step}: outcome still unknown after the sweep")
                return
            # The operator owns it now, but the run stays open to their finding:
            # landed or not landed still resolves it (SPEC §3 reconcile).
            s.state = "escalated"
            s.waiting = Waiting(kind="probe", step=step, audience="operator")
            s.outcome = {"escalated": "operator", "step": step, "reason": "reconcile_unresolved"}

    def sweep(
        self, action: Action, record: CorrelationRecord, age: float, limit: float | None
    ) -> None:
        """Re-probe each ``sweep.interval`` since dispatch, never at or past ``escalate_after``.

        The sweep's re-probes are the runtime's own: each found the outcome
        still unknown, or a ``probe`` input would have said otherwise. They
        never dead-end and never re-dispatch (C1.6); one event records those
        one wait fired.
        """
        conf = action.confirmation
        sweep = conf.sweep if conf else None
        every = sweep.interval.seconds if sweep and sweep.interval else None
        if conf is None or not every or every <= 0:
            return
        due = int(age // every)
        if limit is not None:
            due = min(due, math.ceil(limit / every) - 1)
        fired = due - record.sweeps
        if fired <= 0:
            return
        s = self.snapshot
        record.sweeps = due
        record.probes += fired
        if conf.probe:
            s.probes[conf.probe] = s.probes.get(conf.probe, 0) + fired
        self.log.open(
            "reconcile",
            step=action.id,
            signal={"probe": "unknown", "sweeps": fired},
            verdict=RECONCILE,
            source="config",
            row="sweep",
            note=f"the sweep re-probed {action.id} {fired} time(s), one each {every:g}s: "
            "still unknown",
        )

    # --- revocation ---------------------------------------------------------------------

    def revocation(self, obs: Observation) -> bool:
        """A webhook that revokes a landed commit within its window; True when one did."""
        s = self.snapshot
        for lc in [*s.commits_landed, *s.compensators_landed]:
            action = self.spec.action(lc.step)
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
            out = self.shield.out()
            held = f"; {out.id} is out: reconciled first, then routed (P3 shield)" if out else ""
            self.log.open(
                "reconcile",
                step=lc.step,
                signal=signal_of(obs),
                verdict=route,
                source="config",
                row=f"revocation:{lc.step}",
                note=f"landed {lc.step} revoked by {hit}{held}",
                input=observed_input(obs),
            )
            if out is not None:
                self.shield.hold(out, f"revocation:{lc.step}", None)
                return True
            self.route_revocation(lc.step, obs)
            return True
        return False

    def route_revocation(self, step: str, obs: Observation | None) -> None:
        """Send the revocation of landed ``step`` where its config says: a gate or the operator."""
        s = self.snapshot
        action = self.action(step)
        rev = action.revocation
        route = (rev.route if rev else None) or Verdict(type="escalate", audience="operator")
        if route.type == "gate" and route.gate:
            self.peers.gates.park(route.gate, action, "revocation", obs)
        else:
            s.state = "escalated"
            s.waiting = NOT_WAITING
            s.outcome = {**s.outcome, "escalated": "operator", "revoked": step}
