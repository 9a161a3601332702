"""What each part of a run offers the others: one narrow interface per part.

A :class:`~.runtime.Run` is applied by collaborators, one per concern
(:mod:`.part` says how they share the run's state). They call each other, and
the calls go both ways: a verdict routes to a rewind, which arrives at a
step, which dispatches, whose response is a verdict again (SPEC §3 is one
transition system). So no part holds another part, nor the run: each is
given at construction the few collaborators it names in its own ``Needs``
protocol (``steps.Needs``, ``outcomes.Needs`` ...), and sees each of them
through the interface below, which lists only what other parts call. mypy
then refuses a part that reaches for a collaborator it did not declare, or
for a method its collaborator does not offer to other parts.

These are typing only; nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..model import Action
    from ..verdicts import Verdict
    from .classifier import Classification, ClassifyContext
    from .state import CorrelationRecord, Observation, Option

__all__ = [
    "Clock",
    "Cursor",
    "HandleBook",
    "Host",
    "Parking",
    "Probes",
    "Rewinds",
    "ShieldView",
    "Unwinds",
    "Verdicts",
]


class Host(Protocol):
    """The run itself, as far as its parts see it: the hooks set on it from outside.

    A fan-out group (:class:`~.fanout.Fanout`) coordinates whole runs, so its
    hooks are handed the run; the kill point is a test's crash.
    """

    @property
    def fanout(self) -> Any: ...

    @property
    def before_dispatch(self) -> Callable[[Any], None] | None: ...


class Cursor(Protocol):
    """:class:`~.steps.Steps`: which steps, which key, and moving the cursor."""

    def main(self) -> list[str]: ...
    def context(self, action: Action) -> ClassifyContext: ...
    def key(self, action: Action) -> str | None: ...
    def key_expired(self, action: Action) -> bool: ...
    def arrive(self, step_id: str) -> None: ...
    def dispatch(self, action: Action) -> None: ...
    def advance(self, action: Action) -> None: ...
    def finish_done(self) -> None: ...
    def select(self, option_id: str, who: str, given: dict[str, Any] | None = None) -> None: ...


class Verdicts(Protocol):
    """:class:`~.outcomes.Outcomes`: what a verdict does, and the run's ends."""

    def apply(self, action: Action, c: Classification, obs: Observation) -> None: ...
    def route(self, action: Action, v: Verdict, obs: Observation | None) -> None: ...
    def land(self, action: Action, obs: Observation | None) -> None: ...
    def on_ok(self, action: Action, obs: Observation, empty: bool) -> None: ...
    def escalate(self, v: Verdict, action: Action) -> None: ...
    def unknown_step(self, target: str, origin: Action) -> bool: ...
    def give_up(self, action: Action, reason: str, row: str, note: str | None = None) -> None: ...
    def dead_end(self, v: Verdict, action: Action | None) -> None: ...


class Rewinds(Protocol):
    """:class:`~.backtrack.Backtrack`: moving back, spending the run's budgets."""

    def rewind(self, target: str, origin: Action, in_process: bool = False) -> None: ...
    def repair(self, v: Verdict, origin: Action, values: dict[str, Any] | None) -> None: ...
    def apply_repair(self, v: Verdict, values: dict[str, Any]) -> None: ...
    def reselect(self, target: str, origin: Action) -> None: ...


class Parking(Protocol):
    """:class:`~.gates.Gates`: parking the run at a gate."""

    def park(
        self,
        gate_id: str,
        action: Action,
        kind: Literal["raised", "entry", "revocation"],
        obs: Observation | None = None,
        from_ok: bool = False,
    ) -> None: ...


class ShieldView(Protocol):
    """:class:`~.shield.Shield`, as a gate's answer sees it."""

    def resume_after_gate(self, go_on: bool) -> bool: ...


class Probes(Protocol):
    """:class:`~.reconcile.Reconcile`: correlation records, probes, revocations."""

    @property
    def shield(self) -> ShieldView: ...

    def persist(self, action: Action) -> CorrelationRecord: ...
    def open_record(self, step: str) -> CorrelationRecord: ...
    def pending(self, step: str) -> CorrelationRecord | None: ...
    def unresolved(self, action: Action) -> bool: ...
    def instead(self, action: Action, row: str, why: str) -> None: ...
    def start(self, action: Action) -> None: ...
    def lost(
        self,
        action: Action,
        row: str,
        note: str,
        given: dict[str, Any] | None,
        key: str | None = None,
    ) -> None: ...
    def not_landed(self, action: Action) -> None: ...
    def route_revocation(self, step: str, obs: Observation | None) -> None: ...


class Unwinds(Protocol):
    """:class:`~.compensation.Compensation`: the P5 unwind of landed commits."""

    def start(self, pending: list[int]) -> None: ...
    def next(self) -> None: ...
    def failed(self, why: str) -> None: ...


class HandleBook(Protocol):
    """:class:`~.handles.Handles`: minting, invalidating, refreshing handles."""

    def mint(self, action: Action, option: Option | None = None) -> list[str]: ...
    def options_key(self, action: Action, aliases: list[str]) -> str | None: ...
    def invalidate(self, handle_ids: list[str], including_roots: bool = True) -> None: ...
    def minted_by(self, step: str) -> list[str]: ...
    def refresh(self, handle_id: str) -> str | None: ...
    def is_fact(self, action_id: str) -> bool: ...
    def presented(self, action: Action) -> list[str]: ...
    def looks_like_handle(self, value: Any) -> bool: ...


class Clock(Protocol):
    """:class:`~.deadlines.Deadlines`: the wall clock and business deadlines."""

    def wall_exhausted(self) -> bool: ...
    def business_expiry(self) -> bool: ...
