"""The decisions of a run that explain a violation: which row, precondition or budget sent it where.

A violation's message says what broke; its cause says what the chain did to
get there, in the chain's own terms, so the reader can change it: the
decisions a run took off its good path (a row's retry or rewind, a
precondition's reselect, a gate's answer, a spent budget), each with the
step, the signal that step got, and the element of the chain document that
decided, as an :class:`~chains.core.paths.ElementPath` (``verdict_table[F3]``,
``actions[get_order].preconditions[#1]``, ``gates[price_ok].outcomes.decline``),
the spelling lint findings use.

A run's decisions are kept as a shared linked list (:data:`Line`) of the
events that took them: copies of a run in the explorer share their common
past, a finding takes the part of it since the event that set the violation
up (an earlier dispatch, say), and only then are they put in words.
Nothing here numbers aliases or events, so the same decision reached by two
routes reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..paths import ElementPath
from .state import Event

__all__ = ["Cause", "Line", "decides", "decision", "since"]


@dataclass(frozen=True, order=True)
class Cause:
    """One decision: at ``step``, on ``signal``, ``rule`` answered ``verdict``."""

    step: str
    signal: str
    rule: str
    verdict: str
    element: str | None = None

    @property
    def text(self) -> str:
        """``get_order on http:200 paid: precondition #1 -> reselect(to: pick)``."""
        on = f" on {self.signal}" if self.signal else ""
        return f"{self.step}{on}: {self.rule} -> {self.verdict}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "signal": self.signal,
            "rule": self.rule,
            "verdict": self.verdict,
            "element": self.element,
            "text": self.text,
        }


# The decisions so far, newest first: ((the event that took the last one, the attempt it
# read), the line before it), or None.
Line = tuple[tuple[Event, Event | None], "Line"] | None

# Rows of the trace that record the good path, not a choice to leave it.
_ROUTINE = frozenset({"start", "select", "entry_gate", "P3:correlation", "I7:shared"})


def decides(event: Event) -> bool:
    """Whether ``event`` records a decision, not only going on (an ok, a dispatch, a park
    at an entry gate)."""
    verdict = event.verdict
    if not verdict or verdict == "ok" or verdict.startswith("ok("):
        return False
    return (event.row or "") not in _ROUTINE


def decision(event: Event, read: Event | None) -> Cause:
    """The decision ``event`` records (one that :func:`decides`) in the chain's terms.

    ``read`` is the last attempt before it: a precondition or an empty
    result's route decides on that attempt's signal.
    """
    verdict = event.verdict or ""
    row = event.row or ""
    step = event.step_id or ""
    said = event if event.event_type == "attempt" else read
    signal = _signal(said) if said is not None and said.step_id == step else ""
    rule, element = _rule(step, row)
    return Cause(step, signal, rule, verdict, element)


def since(line: Line, anchor: Line) -> tuple[Cause, ...]:
    """The decisions of ``line`` taken after ``anchor`` (a point of the same line), oldest first."""
    found: list[Cause] = []
    while line is not None and line is not anchor:
        found.append(decision(*line[0]))
        line = line[1]
    return tuple(reversed(found))


def _signal(event: Event) -> str:
    signal = event.signal or {}
    parts = [str(signal[k]) for k in ("transport", "code") if signal.get(k)]
    parts += [str(p) for p in signal.get("predicates") or []]
    return " ".join(parts)


def _rule(step: str, row: str) -> tuple[str, str | None]:
    """How a trace's row reads in a cause, and the element of the chain it points at."""
    rule, place = _rule_and_place(step, row)
    return rule, str(place) if place is not None else None


def _rule_and_place(step: str, row: str) -> tuple[str, ElementPath | None]:
    if row.startswith("domain#"):
        n = row.removeprefix("domain#")
        return f"row #{n}", ElementPath.row(f"#{n}")
    if row.startswith("#"):
        return f"generic row {row}", None  # SPEC §3's own rows: nothing in the chain to change
    if row.startswith("precondition#"):
        n = row.removeprefix("precondition#")
        return f"precondition #{n}", ElementPath.action(step).field("preconditions").item(f"#{n}")
    if row.startswith("gate:"):
        gate, _, outcome = row.removeprefix("gate:").rpartition(".")
        where = ElementPath.gate(gate)
        place = where.field("timeout") if outcome == "timeout" else where.field("outcomes", outcome)
        return f"gate {gate}: {outcome}", place
    if row.startswith("revocation:"):
        target = row.removeprefix("revocation:")
        return f"revocation of {target}", ElementPath.action(target).field("revocation")
    if row.startswith("reconcile:") or row == "P3:unresolved":
        rule = row.replace(":", " ", 1).replace("_", " ")
        return rule, ElementPath.action(step).field("confirmation")
    if row in _PLACES:
        rule, fields = _PLACES[row]
        if fields is None:
            return rule, None
        if fields.startswith("policy."):
            return rule, ElementPath.root(fields)
        return rule, ElementPath.action(step).field(fields)
    if row and ":" not in row and "." not in row:
        return f"row {row}", ElementPath.row(row)
    return row or "the runtime", None


# A runtime rule and the field it comes from: under ``policy``, or else under the step's action.
_PLACES: dict[str, tuple[str, str | None]] = {
    "empty.route": ("empty result's route", "output.empty"),
    "retry_exhausted": ("attempt budget spent", "policy.per_step"),
    "business_expiry": ("business expiry", "output.business_expiry"),
    "wall_clock": ("wall-clock budget spent", "policy.per_chain.wall_clock"),
    "async.deadline": ("confirmation deadline", "confirmation.async"),
    "sweep.escalate_after": ("sweep escalation", "confirmation.sweep"),
    "I4:spent": ("spent handle (I4)", None),
    "rematch": ("rematch", None),
    "repair:proposal": ("repair proposal", None),
    "compensation_failed": ("compensation failed", "compensation"),
}
