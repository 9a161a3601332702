"""Starting a kept run: one run per ``run_key`` and chain, in the database (SPEC §2.8, C4.5).

:class:`DatabaseRuns` is the core's ``RunStore`` over :class:`~chains.models.KeptRun`:
a start looks the key's row up, and when there is none builds the run and
inserts it; the unique (chain, run_key) constraint refuses the second of two
inserts at the same moment, and that caller returns the first one's run. The
API and the command line start kept runs through :func:`start_run`.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import IntegrityError, transaction
from pydantic import TypeAdapter

from chains.core.model import ChainSpec
from chains.core.sim.runs import rebuild
from chains.core.sim.runtime import Run
from chains.core.sim.scenario import Scenario, SimulationResult, simulate
from chains.core.sim.state import Event, Snapshot
from chains.models import Chain, KeptRun

__all__ = ["DatabaseRuns", "start_run"]

_TRACE = TypeAdapter(list[Event])


class DatabaseRuns:
    """The runs kept with ``chain`` (a stored chain), by run_key."""

    def __init__(self, chain: Chain) -> None:
        self.chain = chain

    def get_or_create(
        self, spec: ChainSpec, run_key: str, make: Callable[[], Run]
    ) -> tuple[Run, bool]:
        kept = KeptRun.objects.filter(chain=self.chain, run_key=run_key).first()
        if kept is not None:
            return _run_of(spec, kept), False
        run = make()
        try:
            with transaction.atomic():
                KeptRun.objects.create(chain=self.chain, run_key=run_key, **_fields(run))
        except IntegrityError:
            kept = KeptRun.objects.get(chain=self.chain, run_key=run_key)
            return _run_of(spec, kept), False
        return run, True

    def save(self, run: Run) -> None:
        key = run.snapshot.run_key
        if not key:
            raise ValueError("only a run with a run_key is kept")
        KeptRun.objects.update_or_create(chain=self.chain, run_key=key, defaults=_fields(run))


def start_run(chain: Chain, spec: ChainSpec, scenario: Scenario) -> SimulationResult:
    """Start ``scenario``'s run on ``chain`` (``document`` is the revision it runs on), or
    return the run its ``run_key`` already started, applying none of its events.

    Raises ``ScenarioMismatch`` when the scenario has no run_key or does not fit.
    """
    return simulate(spec, scenario, runs=DatabaseRuns(chain))


def _fields(run: Run) -> dict:
    return {
        "run_id": run.snapshot.run_id,
        "snapshot": run.snapshot.model_dump(mode="json"),
        "trace": _TRACE.dump_python(run.trace, mode="json"),
    }


def _run_of(spec: ChainSpec, kept: KeptRun) -> Run:
    snapshot = Snapshot.model_validate(kept.snapshot)
    return rebuild(spec, snapshot, _TRACE.validate_python(kept.trace))
