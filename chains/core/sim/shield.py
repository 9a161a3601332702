"""The cancellation shield (SPEC P3 (b)): what arrives while a commit is out waits for it.

A caller's cancel, or a revocation webhook of a landed commit, may arrive
while another commit's request is out. Neither abandons that commit: its
dispatch is recorded with an unknown outcome and reconciled (a probe), and
what arrived is kept on its correlation record (``shielded_by``) and applied
once the probe says landed or not landed. A cancel then ends the run
``dead_end(cancelled)``, unwinding what landed (P5); a revocation takes its
route, and a revocation gate answered ``ok`` takes up the settled commit's
path. :mod:`.reconcile` owns the probes; this module only decides what
waits for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..model import Action, is_commit_class
from ..verdicts import Verdict
from .part import RECONCILE, TERMINAL, Part, SimulationError, dead
from .state import CorrelationRecord

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Cursor, Probes, Verdicts
    from .state import Snapshot

__all__ = ["Shield"]


class Needs(Protocol):
    """The parts :class:`Shield` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...

    @property
    def outcomes(self) -> Verdicts: ...


class Shield(Part):
    """A cancel or a revocation that arrives while a commit is out, held until it settles."""

    __slots__ = ("peers", "reconcile")

    def __init__(
        self,
        spec: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        peers: Needs,
        reconcile: Probes,
    ):
        super().__init__(spec, snapshot, log)
        self.peers = peers
        self.reconcile = reconcile

    def out(self) -> Action | None:
        """The commit-class step whose request is out now, if any."""
        s = self.snapshot
        step = s.in_flight
        if step is None or s.waiting.kind != "observe" or s.waiting.step != step:
            return None
        action = self.action(step)
        return action if is_commit_class(action) else None

    def hold(self, action: Action, by: str, given: dict[str, Any] | None) -> None:
        """``by`` (cancel, revocation:<step>) arrived while ``action`` was out: reconcile it.

        The dispatch is recorded with its outcome unknown, the way a lost
        process records it, and the run probes; what arrived applies once
        the probe says landed or not landed (:meth:`release`).
        """
        s = self.snapshot
        why = "the caller cancelled" if by == "cancel" else f"{by.split(':', 1)[1]} was revoked"
        note = f"{why} while this dispatch was out: its outcome is unknown; probe, never abandon it"
        self.reconcile.lost(action, "P3:shield", note, given, self.peers.steps.key(action))
        record = self.reconcile.pending(action.id)
        if s.waiting.kind == "probe" and record is not None:
            record.shielded_by = by
        elif by == "cancel":  # no probe: the operator owns the commit and the run
            s.outcome = {**s.outcome, "cancelled": True}
        else:
            s.outcome = {**s.outcome, "revoked": by.split(":", 1)[1]}

    def release(self, action: Action, record: CorrelationRecord) -> None:
        """The shielded ``action`` is settled (landed or not): apply what waited for it."""
        by = record.shielded_by or ""
        if by.startswith("revocation:"):
            step = by.split(":", 1)[1]
            rev = self.action(step).revocation
            route = (rev.route if rev else None) or Verdict(type="escalate", audience="operator")
            self.log.transition(
                step,
                f"revocation:{step}",
                route,
                f"{action.id} is settled ({record.status}): the revocation of {step} is routed",
            )
            if route.type != "gate":
                record.shielded_by = None
            # A gate keeps the mark: its ok answer takes up action's path (resume_after_gate).
            self.reconcile.route_revocation(step, None)
            return
        record.shielded_by = None
        verdict = dead("cancelled", True)
        self.log.transition(
            action.id,
            "cancel",
            verdict,
            f"{action.id} is settled ({record.status}): the caller's cancel ends the run",
        )
        self.cancelled()

    def resume_after_gate(self, go_on: bool) -> bool:
        """A revocation gate held after a shielded commit was answered; True when it took
        up that commit's path (``go_on``: the answer was ok): past it when it landed,
        the not-landed path when it did not."""
        s = self.snapshot
        for record in reversed(s.correlation):
            by = record.shielded_by or ""
            if not by.startswith("revocation:") or record.status not in ("LANDED", "NOT_LANDED"):
                continue
            record.shielded_by = None
            if not go_on:
                return False
            action = self.action(record.step)
            s.state = "compensating" if s.compensation else "running"
            self.log.transition(
                action.id,
                "P3:shield",
                note=f"{action.id} was settled ({record.status}) before the gate: its path goes on",
            )
            if record.status == "LANDED":
                self.peers.steps.advance(action)
            else:
                self.reconcile.not_landed(action)
            return True
        return False

    def cancel(self) -> None:
        """The caller cancels the run: nothing out is abandoned, then it ends (SPEC P3 (b)).

        A commit whose request is out, or whose outcome is being probed, or
        an earlier dispatch never shown not to have landed, is reconciled
        first; the run then ends ``dead_end(cancelled)`` and unwinds what
        landed (P5). An unwind under way goes on.
        """
        s = self.snapshot
        given = {"kind": "cancel"}
        if s.state in TERMINAL and s.waiting.kind == "nothing":  # the run has finished
            raise SimulationError(f"the run has finished (state {s.state}); nothing to cancel")
        if s.compensation is not None:
            self.log.transition(
                s.cursor,
                "cancel",
                note="the caller cancelled while the run unwinds its landed commits: "
                "the unwind goes on",
                input=given,
            )
            return
        out = self.out()
        if out is not None:
            self.hold(out, "cancel", given)
            return
        w = s.waiting
        record = None
        if w.kind == "probe" and w.step:
            record = self.reconcile.open_record(w.step)
        else:
            record = next((r for r in reversed(s.correlation) if r.status == "PENDING"), None)
        if record is None:
            verdict = dead("cancelled", True)
            self.log.transition(s.cursor, "cancel", verdict, "the caller cancelled", input=given)
            self.cancelled()
            return
        self.log.transition(
            record.step,
            "cancel",
            RECONCILE,
            f"the caller cancelled while {record.step}'s outcome is unknown: "
            "its probe decides first (P3 shield)",
            input=given,
        )
        if w.kind != "probe":
            s.gate_context = None
            s.pending_gate = None
            s.in_flight = None
            self.reconcile.start(self.action(record.step))
        if s.waiting.kind == "probe" and not record.shielded_by:
            record.shielded_by = "cancel"

    def cancelled(self) -> None:
        """End the run on the caller's cancel: a dead end, unwinding what landed (P5)."""
        s = self.snapshot
        s.gate_context = None
        s.pending_gate = None
        s.in_flight = None
        self.peers.outcomes.dead_end(dead("cancelled", True), None)
