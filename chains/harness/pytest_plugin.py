"""The fault harness as a pytest fixture, for the common case: a team's own test suite puts
its client through the chain's failures and fails with the schedules it did not survive.

Installed with Chain Designer (the ``pytest11`` entry point), so any suite has
the fixture ``chain_harness``::

    def test_our_client_never_double_books(chain_harness, tmp_path):
        outcome = chain_harness(
            "chains/booking.yaml",
            client=["python", "-m", "ourapp.book"],
            provider=["python", "tests/stand_in.py", "--port", "0"],  # or upstream="http://..."
            max_faults=2,
        )
        outcome.assert_clean()

It runs what ``chain-designer harness`` runs (docs/harness.md) and keeps each
run's files under pytest's ``tmp_path``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chains.core import formats
from chains.core.errors import DocumentError, Problem
from chains.core.sim.schedules import schedules

from .faults import DEFAULT_ERROR_BODY
from .report import ScheduleResult
from .runner import Client, Target, provider_started, run_schedules

__all__ = ["HarnessOutcome", "chain_harness"]


@dataclass
class HarnessOutcome:
    """The runs of one harness call: every schedule's result."""

    chain: str
    results: list[ScheduleResult]

    @property
    def failed(self) -> list[ScheduleResult]:
        return [r for r in self.results if not r.clean]

    def assert_clean(self) -> None:
        """Fail the test with each schedule the client did not survive and why."""
        if self.failed:
            lines = [f"  {r.schedule.label}: {r.first} ({r.trace})" for r in self.failed]
            raise AssertionError(
                f"{len(self.failed)} of {len(self.results)} schedules of {self.chain} "
                "diverged:\n" + "\n".join(lines)
            )


@pytest.fixture
def chain_harness(tmp_path: Path) -> Callable[..., HarnessOutcome]:
    """A function that runs a client under every fault schedule of a chain (see the module)."""

    def run(
        chain: str | Path,
        *,
        client: Sequence[str],
        provider: Sequence[str] | None = None,
        upstream: str | None = None,
        max_faults: int = 1,
        sample: int | None = None,
        seed: int = 0,
        jobs: int = 4,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        hold_seconds: float = 5.0,
        error_body: Any = DEFAULT_ERROR_BODY,
    ) -> HarnessOutcome:
        if (provider is None) == (upstream is None):
            raise DocumentError([Problem("chain_harness: give provider or upstream, not both")])
        path = Path(chain)
        loaded = formats.load(path.read_bytes(), filename=path.name)
        if len(loaded.chains) != 1:
            raise DocumentError([Problem(f"{path}: expected one chain"), *loaded.problems])
        spec = loaded.chains[0]
        found = schedules(spec, max_faults, sample=sample, seed=seed)
        started = (
            provider_started(provider)
            if provider is not None
            else contextlib.nullcontext(str(upstream).rstrip("/"))
        )
        with started as url:
            results = run_schedules(
                spec,
                found,
                Client(list(client), dict(env or {}), timeout=timeout),
                Target(url, error_body, hold_seconds),
                tmp_path / "harness",
                jobs=jobs,
            )
        return HarnessOutcome(spec.id, results)

    return run
