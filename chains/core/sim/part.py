"""What every concern of a run shares: the chain, the snapshot, the log, small helpers.

A :class:`~.runtime.Run` is a thin facade over one collaborator per concern
(:mod:`.steps`, :mod:`.outcomes`, :mod:`.backtrack`, :mod:`.gates`,
:mod:`.reconcile`, :mod:`.compensation`, :mod:`.handles`, and the event log
:mod:`.events`). Each collaborator holds no state of its own: everything a
run knows is in its snapshot and trace, so copying the snapshot copies the
run. A collaborator never holds the run: it is given the few others it calls
(its module's ``Needs`` protocol, each seen through :mod:`.ports`), which also
keeps the modules free of import cycles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..errors import ChainError
from ..model import Action, ChainSpec, Gate
from ..verdicts import Verdict
from .state import Observation, Snapshot

if TYPE_CHECKING:
    from .events import EventLog

__all__ = [
    "OK",
    "PLAIN_OBSERVATION",
    "RECONCILE",
    "Part",
    "SimulationError",
    "TERMINAL",
    "dead",
    "fields_of",
    "lookup",
]


# Verdicts and observations are frozen, so the runtime's plain ones are made once and
# shared (and a verdict's text, kept by identity, is written once).
OK = Verdict(type="ok")
RECONCILE = Verdict(type="reconcile")
PLAIN_OBSERVATION = Observation()
TERMINAL = ("done", "dead_end", "escalated", "restart_required")


class SimulationError(ChainError):
    """Bad input to a run: the wrong kind of answer, an unknown outcome, invalid params."""


class Part:
    """One concern of a run; the run's state is the snapshot, never the part.

    A subclass that calls other parts adds a ``peers`` slot, typed as its
    module's ``Needs`` protocol and filled at construction (:mod:`.ports`).
    """

    __slots__ = ("spec", "snapshot", "log")

    def __init__(self, spec: ChainSpec, snapshot: Snapshot, log: EventLog):
        # A run never replaces its chain, snapshot or log, so each part holds them
        # directly (read thousands of times a search); ``snapshot`` is the view
        # :func:`fields_of` gives of the run's snapshot.
        self.spec = spec
        self.snapshot = snapshot
        self.log = log

    def action(self, action_id: str) -> Action:
        """The chain's action ``action_id``; a :class:`SimulationError` when there is none."""
        action = self.spec.action(action_id)
        if action is None:
            raise SimulationError(f"chain {self.spec.id!r} has no action {action_id!r}")
        return action

    def gate(self, gate_id: str) -> Gate:
        """The chain's gate ``gate_id``; a :class:`SimulationError` when there is none."""
        gate = self.spec.gate(gate_id)
        if gate is None:
            raise SimulationError(f"chain {self.spec.id!r} has no gate {gate_id!r}")
        return gate


class _Fields:
    """A snapshot's fields as plain attributes: the same fields, read and written faster.

    It holds the snapshot model's own ``__dict__``, so reading or writing a
    field here reads or writes the model's. A run reads and writes its
    snapshot's fields a hundred times an input, and Python 3.11 cannot
    specialise attribute access on a pydantic model (``BaseModel`` defines
    ``__getattr__``); on a plain object it can (the explorer executes about 4%
    fewer instructions). The parts only read and write fields through it; the
    model's methods stay on the run's own snapshot (``run.snapshot``). A
    field written here is not in the model's ``model_fields_set``, which
    nothing reads for run state.
    """


def fields_of(snapshot: Snapshot) -> Snapshot:
    """The parts' view of ``snapshot`` (:class:`_Fields`), typed as what it stands for."""
    fields = object.__new__(_Fields)
    fields.__dict__ = snapshot.__dict__
    return cast(Snapshot, fields)


def dead(reason: str, permanent: bool | None = None) -> Verdict:
    """A ``dead_end`` verdict the runtime decides itself (budgets, deadlines, missing data)."""
    return Verdict(type="dead_end", reason=reason, permanent=permanent)


def lookup(data: dict[str, Any], path: str) -> Any:
    """``data[path]``, or the value at the dotted ``path``; None when absent."""
    if path in data:
        return data[path]
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
