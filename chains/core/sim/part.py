"""What every concern of a run shares: the run it belongs to, and small helpers.

A :class:`~.runtime.Run` is a thin facade over one collaborator per concern
(:mod:`.steps`, :mod:`.outcomes`, :mod:`.backtrack`, :mod:`.gates`,
:mod:`.reconcile`, :mod:`.compensation`, :mod:`.handles`, :mod:`.deadlines`,
and the event log :mod:`.events`). Each collaborator holds no state of its own: everything a
run knows is in its snapshot and trace, so copying the snapshot copies the
run. A collaborator reaches the others through the run (``self.run.steps``),
which keeps the modules free of import cycles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..errors import ChainError
from ..model import ChainSpec
from ..verdicts import Verdict
from .state import Observation, Snapshot

if TYPE_CHECKING:
    from .events import EventLog
    from .runtime import Run

__all__ = [
    "OK",
    "PLAIN_OBSERVATION",
    "RECONCILE",
    "Part",
    "SimulationError",
    "dead",
    "fields_of",
    "lookup",
]


# Verdicts and observations are frozen, so the runtime's plain ones are made once and
# shared (and a verdict's text, kept by identity, is written once).
OK = Verdict(type="ok")
RECONCILE = Verdict(type="reconcile")
PLAIN_OBSERVATION = Observation()


class SimulationError(ChainError):
    """Bad input to a run: the wrong kind of answer, an unknown outcome, invalid params."""


class Part:
    """One concern of a run; the run's state is the snapshot, never the part."""

    __slots__ = ("run", "chain", "snapshot")

    def __init__(self, run: Run, chain: ChainSpec, snapshot: Snapshot):
        # ``run`` is the run's weak proxy (see Run.__init__): no reference cycle. A run
        # never replaces its chain or snapshot, so each part holds them directly too
        # (read thousands of times a search, through the proxy they cost twice as much);
        # ``snapshot`` is the view :func:`fields_of` gives of the run's snapshot.
        self.run = run
        self.chain = chain
        self.snapshot = snapshot

    @property
    def log(self) -> EventLog:
        return self.run.log


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
