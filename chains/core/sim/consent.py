"""Gates about money or consent, and whether a run passed one with an answer from its audience.

SPEC §2.6 and §5: a gate that decides money or consent is never the
model's to answer, and a commit behind one is dispatched only once its
audience answered. :class:`GateWatch` reads that from a trace, from what
any runtime writes (a park is a ``gate(...)`` verdict, an answer an
``answer`` input or a ``gate:<id>.<outcome>`` row, who answered its
proposal source), so another runtime's trace is audited as ours is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Action, ChainSpec, Gate, money_or_consent
from .state import Event

__all__ = ["GateWatch", "is_money_or_consent_gate"]


def is_money_or_consent_gate(spec: ChainSpec, gate: Gate) -> bool:
    """Whether ``gate`` decides money or consent (:func:`~chains.core.model.money_or_consent`)."""
    return money_or_consent(spec, gate) is not None


@dataclass
class GateWatch:
    """The step whose entry gate an allowed audience answered since the run last arrived
    there (``cleared``), and the gate the run waits at (``parked``)."""

    cleared: str | None = None
    parked: str | None = None

    def went_to(self, step: str) -> None:
        """A dispatch of ``step``: an answer holds for the retries of its own step only."""
        if self.cleared != step:
            self.cleared = None

    def see(self, spec: ChainSpec, event: Event) -> str | None:
        """Read a transition; what broke when the model answered a money or consent gate."""
        verdict = event.verdict or ""
        row = event.row or ""
        given = event.input or {}
        answered = given.get("kind") == "answer" or (
            row.startswith("gate:") and not row.endswith(".timeout")
        )
        if row.startswith("gate:") and row.endswith(".timeout"):
            return self._timed_out(spec, event, row.removeprefix("gate:").rsplit(".", 1)[0])
        if not answered:
            if verdict.startswith("gate("):
                self.parked = verdict.removeprefix("gate(").rstrip(")").strip()
                if row == "entry_gate" or self.cleared == event.step_id:
                    self.cleared = None  # arrived again: it must be asked again
            return None
        gate_id = row.removeprefix("gate:").rsplit(".", 1)[0] if row.startswith("gate:") else None
        gate = spec.gate(gate_id or given.get("gate") or self.parked or "")
        self.parked = None
        self.cleared = event.step_id
        model = event.proposal_source == "model" or given.get("by") == "model"
        if gate is None or not model or not is_money_or_consent_gate(spec, gate):
            return None
        return f"gate {gate.id} decides money or consent but was answered by the model"

    def _timed_out(self, spec: ChainSpec, event: Event, gate_id: str) -> str | None:
        """A gate left by its timeout: going on from a money or consent gate that way
        passes it with no answer (the dispatch it led to is this finding's, not another)."""
        self.parked = None
        gate = spec.gate(gate_id)
        if (event.verdict or "") != "ok" or gate is None:
            return None
        self.cleared = event.step_id
        if not is_money_or_consent_gate(spec, gate):
            return None
        return f"gate {gate.id} decides money or consent but its timeout went on (ok) unanswered"

    def ungated(self, spec: ChainSpec, action: Action) -> str | None:
        """What broke when ``action`` went out behind a money or consent entry gate unasked."""
        gate = spec.gate(action.entry_gate or "")
        if gate is None or self.cleared == action.id:
            return None
        if not is_money_or_consent_gate(spec, gate):
            return None
        return (
            f"{action.id} was dispatched without an answer to its entry gate {gate.id}, "
            "which decides money or consent"
        )
