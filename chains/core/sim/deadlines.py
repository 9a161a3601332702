"""Deadlines read from virtual time: the wall clock and business expiry (SPEC §2.1, C4).

Both are checked when the cursor arrives at a step and after backoff, never
while a commit is out (the P3 cancellation shield). A business expiry keeps
the commit landed (I5) and routes by the action's ``on_expiry`` verdict.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from .part import Part, dead

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Verdicts
    from .state import Snapshot

__all__ = ["EPOCH", "Deadlines", "virtual_time"]

# Virtual time 0: a deadline a provider returns as a datetime is placed on the
# run's clock as seconds after this instant.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def virtual_time(value: Any) -> float | None:
    """A payload deadline on the run's clock: seconds as given, an ISO datetime from EPOCH.

    A datetime without a zone is read as UTC; a date alone is its midnight.
    Anything else (a boolean, unparseable text) is no deadline: None.

    >>> virtual_time(90), virtual_time("2026-01-02T00:00:00Z"), virtual_time("2026-01-01")
    (90.0, 86400.0, 0.0)
    >>> virtual_time("soon") is None
    True
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - EPOCH).total_seconds()


class Needs(Protocol):
    """The parts :class:`Deadlines` calls, each through its interface in :mod:`.ports`."""

    @property
    def outcomes(self) -> Verdicts: ...


class Deadlines(Part):
    """The wall-clock budget and the landed commits' business deadlines."""

    __slots__ = ("peers",)

    def __init__(
        self,
        chain: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        peers: Needs,
    ):
        super().__init__(chain, snapshot, log)
        self.peers = peers

    def wall_exhausted(self) -> bool:
        """End the run when the wall clock is used up; True when it was."""
        s = self.snapshot
        b = s.budgets
        if b.wall_limit is None or b.wall_used <= b.wall_limit:
            return False
        verdict = dead("wall_clock_exhausted", False)
        self.log.transition(s.cursor, "wall_clock", verdict)
        self.peers.outcomes.dead_end(verdict, self.chain.action(s.cursor or ""))
        return True

    def business_expiry(self) -> bool:
        """Route the first landed commit whose business deadline passed; True when one did."""
        s = self.snapshot
        for lc in s.commits_landed:
            if lc.business_deadline is None or lc.business_expired or lc.compensated:
                continue
            if s.clock < lc.business_deadline:
                continue
            lc.business_expired = True
            action = self.action(lc.step)
            expiry = action.output.business_expiry
            assert expiry is not None
            self.log.transition(
                lc.step,
                "business_expiry",
                expiry.on_expiry,
                f"{lc.step}'s {expiry.field} passed; the commit stays landed (I5)",
            )
            s.gate_context = None
            s.pending_gate = None
            s.state = "running"
            self.peers.outcomes.route(action, expiry.on_expiry, None)
            return True
        return False
