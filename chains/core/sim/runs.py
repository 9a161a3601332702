"""Where runs are kept by their caller's ``run_key``: one run per key (SPEC §2.8, C4.5).

A caller that starts a chain twice for one task (a planner's retry storm, a
user's double submit) must get the run it already has, never a sibling run
that books again. :meth:`~.runtime.Run.start` asks a :class:`RunStore` for
the run kept under the key and starts one only when there is none; the store
decides atomically, so of two starts at the same moment one makes the run
and the other gets it. The store is the caller's: :class:`MemoryRuns` lives
as long as the process (tests, one script), :class:`FileRuns` keeps each run
in a JSON file (the command line), and the app keeps them in its database
(``chains.services.runs``).

Starting a run is pure here (the simulator calls no provider), so a store may
build the new run before it knows it wins: a loser's run is thrown away
unseen, and nothing it recorded is ever returned or written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import TypeAdapter

from ..model import ChainSpec
from .state import Event, Snapshot

if TYPE_CHECKING:
    from .runtime import Run

__all__ = ["FileRuns", "MemoryRuns", "RunStore", "rebuild"]

_TRACE = TypeAdapter(list[Event])


class RunStore(Protocol):
    """Runs kept by chain id and ``run_key``."""

    def get_or_create(
        self, spec: ChainSpec, run_key: str, make: Callable[[], Run]
    ) -> tuple[Run, bool]:
        """The run kept under ``(chain.id, run_key)``, or the one ``make`` builds, kept
        in one atomic step; and whether it was made now."""
        ...

    def save(self, run: Run) -> None:
        """Keep ``run``'s snapshot and trace as they are now (it must have a run_key)."""
        ...


def rebuild(spec: ChainSpec, snapshot: Snapshot, trace: list[Event]) -> Run:
    """The kept run as it was saved: nothing is replayed, resumed or dispatched."""
    from .runtime import Run

    return Run(spec, snapshot, trace)


class MemoryRuns:
    """Runs kept in this process, by chain id and run_key (the same object each time)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], Run] = {}
        self._lock = threading.Lock()

    def get_or_create(
        self, spec: ChainSpec, run_key: str, make: Callable[[], Run]
    ) -> tuple[Run, bool]:
        with self._lock:
            existing = self._runs.get((spec.id, run_key))
            if existing is not None:
                return existing, False
            run = self._runs[spec.id, run_key] = make()
            return run, True

    def save(self, run: Run) -> None:
        key = run.snapshot.run_key
        if not key:
            raise ValueError("only a run with a run_key is kept")
        with self._lock:
            self._runs[run.spec.id, key] = run

    def __len__(self) -> int:
        return len(self._runs)


class FileRuns:
    """Runs kept as JSON files in ``folder``, one per chain id and run_key.

    A new run's file is written under a temporary name and linked to its own
    name, which fails when the name exists: two processes starting one key
    make one file, and a reader never sees half of one. A later :meth:`save`
    replaces the file whole.
    """

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    def path(self, chain_id: str, run_key: str) -> Path:
        digest = hashlib.sha256(f"{chain_id}\0{run_key}".encode()).hexdigest()[:24]
        return self.folder / f"run-{digest}.json"

    def get_or_create(
        self, spec: ChainSpec, run_key: str, make: Callable[[], Run]
    ) -> tuple[Run, bool]:
        path = self.path(spec.id, run_key)
        if path.exists():
            return self._load(spec, path), False
        run = make()
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self._write(run)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return self._load(spec, path), False
        finally:
            temporary.unlink()
        return run, True

    def save(self, run: Run) -> None:
        key = run.snapshot.run_key
        if not key:
            raise ValueError("only a run with a run_key is kept in run files")
        temporary = self._write(run)
        os.replace(temporary, self.path(run.spec.id, key))

    def _write(self, run: Run) -> Path:
        data = {
            "chain_id": run.spec.id,
            "run_key": run.snapshot.run_key,
            "snapshot": run.snapshot.model_dump(mode="json"),
            "trace": _TRACE.dump_python(run.trace, mode="json"),
        }
        handle, name = tempfile.mkstemp(dir=self.folder, prefix=".run-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        return Path(name)

    def _load(self, spec: ChainSpec, path: Path) -> Run:
        data = json.loads(path.read_text(encoding="utf-8"))
        snapshot = Snapshot.model_validate(data["snapshot"])
        return rebuild(spec, snapshot, _TRACE.validate_python(data["trace"]))
