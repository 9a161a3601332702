"""Scenarios as regression tests of a chain, and conformance test vectors.

A scenario saved with a chain is replayed on every new revision. This module
turns the outcome of a run into the ``expect`` to save (:func:`expect_from`),
replays saved scenarios and says, in one sentence per change, what the new
revision does differently (:func:`check_scenario`, :func:`check_all`), and
writes the replays as a JSON test-vector file that another runtime can be
tested against (:func:`test_vectors`). It assumes the scenarios were read
with :func:`~.scenario.load_scenario` (or built from its models); bad
scenario content is reported in the result, never raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ChainError
from ..model import ChainSpec
from ..verdicts import format_verdict, parse_verdict
from .runtime import Run
from .scenario import (
    ExpectationResult,
    Expectations,
    Scenario,
    ScenarioMismatch,
    _verdict_matches,
    check_expectations,
    simulate,
)

__all__ = [
    "TEST_VECTOR_FORMAT",
    "TEST_VECTOR_VERSION",
    "VECTOR_RUN_ID",
    "ScenarioCheck",
    "check_all",
    "check_scenario",
    "events_to_verdict",
    "expect_from",
    "recorded",
    "test_vectors",
]

TEST_VECTOR_FORMAT = "chain-designer/test-vectors"
TEST_VECTOR_VERSION = 1
# Every vector runs under this id, so idempotency keys and the snapshot do not
# depend on the run key or the seed, and two exports of one design are equal.
VECTOR_RUN_ID = "run-test-vector"


def expect_from(run: Run) -> Expectations:
    """The outcome of ``run`` (finished or stopped), as a scenario's ``expect``.

    The final state, the dispatch count of every step dispatched, every
    verdict of the trace in order (canonical spelling) and the landed commits
    in landing order.
    """
    snapshot = run.snapshot
    return Expectations(
        state=snapshot.state,
        dispatches={step: n for step, n in snapshot.dispatches.items() if n > 0},
        verdicts=[_canonical(e.verdict) for e in run.trace if e.verdict],
        commits_landed=[c.step for c in snapshot.commits_landed],
    )


def recorded(spec: ChainSpec, scenario: Scenario) -> Scenario:
    """``scenario`` with the outcome it has on ``chain`` as its ``expect``, ready to save.

    Raises :class:`~.scenario.ScenarioMismatch` when it does not replay.
    """
    run = simulate(spec, scenario.model_copy(update={"expect": None})).run
    return scenario.model_copy(update={"expect": expect_from(run)})


@dataclass(frozen=True)
class ScenarioCheck:
    """How one saved scenario fared against a revision of its chain.

    ``held`` is false when the scenario no longer replays (``error`` says
    why) or when any expectation changed (``changes``, one sentence each).
    ``replays`` counts the events that still apply when a later one no
    longer does (where to open it to see why); None when every event does.
    ``differs_at`` is the index of the first verdict that differs from the
    expected ones (:func:`events_to_verdict` finds where the run reaches it);
    None when the verdicts hold.
    """

    name: str
    held: bool
    changes: tuple[str, ...]
    error: str | None = None
    replays: int | None = None
    differs_at: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "held": self.held,
            "changes": list(self.changes),
            "error": self.error,
        }


def check_scenario(spec: ChainSpec, name: str, scenario: Scenario) -> ScenarioCheck:
    """Replay ``scenario`` against ``chain`` and describe what changed.

    A scenario without ``expect`` holds as long as it replays.
    """
    try:
        result = simulate(spec, scenario)
    except ScenarioMismatch as exc:
        if exc.run is not None and exc.run.finished and exc.index and scenario.expect is not None:
            return _ended_early(name, scenario, exc.run, exc.index - 1)
        replays = exc.index - 1 if exc.index else None
        return ScenarioCheck(name, False, (), _no_longer_replays(name, exc), replays)
    except (ChainError, ValueError) as exc:
        return ScenarioCheck(name, False, (), _no_longer_replays(name, exc))
    failed = [e for e in result.expectations if not e.held]
    changes = tuple(_sentence(name, e) for e in failed)
    verdicts = next((e for e in failed if e.check == "verdicts"), None)
    differs = _first_different(verdicts.expected, verdicts.actual) if verdicts else None
    return ScenarioCheck(name, not changes, changes, differs_at=differs)


def events_to_verdict(spec: ChainSpec, scenario: Scenario, index: int) -> int | None:
    """How many of ``scenario``'s events it takes for its run to give verdict ``index``.

    The run is replayed one event longer each time (a scenario is tens of
    events, each a few hundred microseconds), so only a page that opens the
    scenario there asks, not every check; None if the run never gets there.
    """
    for count in range(1, len(scenario.events) + 1):
        prefix = scenario.model_copy(update={"events": scenario.events[:count], "expect": None})
        try:
            run = simulate(spec, prefix).run
        except (ChainError, ValueError):
            return None
        if sum(1 for e in run.trace if e.verdict) > index:
            return count
    return None


def _ended_early(name: str, scenario: Scenario, run: Run, applied: int) -> ScenarioCheck:
    """The run finished before the scenario's last event: compare the outcome it reached."""
    assert scenario.expect is not None
    changes = [_sentence(name, e) for e in check_expectations(run, scenario.expect) if not e.held]
    changes.append(
        f"scenario '{name}' now ends after event {applied} of {len(scenario.events)}; "
        "the later events no longer apply"
    )
    return ScenarioCheck(name, False, tuple(changes), replays=applied)


def check_all(spec: ChainSpec, scenarios: Mapping[str, Scenario]) -> list[ScenarioCheck]:
    """:func:`check_scenario` for every scenario, in name order."""
    return [check_scenario(spec, name, scenarios[name]) for name in sorted(scenarios)]


def test_vectors(spec: ChainSpec, scenarios: Mapping[str, Scenario]) -> dict[str, Any]:
    """A JSON-ready conformance test-vector file of ``scenarios`` replayed on ``chain``.

    One vector per scenario, sorted by name: where the run starts, the events
    (as a scenario file writes them), the ``expect`` (the scenario's own, or
    :func:`expect_from` the replay when it has none), the full trace and the
    final snapshot. A scenario that no longer replays has an ``error`` instead
    of a trace. Equal input gives equal output: every run has the id
    :data:`VECTOR_RUN_ID` and nothing reads the clock.
    """
    vectors = []
    for name in sorted(scenarios):
        scenario = scenarios[name]
        vector: dict[str, Any] = {
            "name": name,
            **scenario.model_dump(mode="json", include={"intent", "run_key", "variant", "seed"}),
            "events": [e.model_dump(mode="json", exclude_unset=True) for e in scenario.events],
        }
        try:
            run = simulate(spec, scenario, run_id=VECTOR_RUN_ID).run
        except (ChainError, ValueError) as exc:
            if scenario.expect is not None:
                vector["expect"] = _expect_json(scenario.expect)
            vector["error"] = _no_longer_replays(name, exc)
        else:
            vector["expect"] = _expect_json(scenario.expect or expect_from(run))
            vector["trace"] = [e.model_dump(mode="json", exclude_defaults=True) for e in run.trace]
            vector["snapshot"] = run.snapshot.model_dump(mode="json")
        vectors.append(vector)
    return {
        "format": TEST_VECTOR_FORMAT,
        "version": TEST_VECTOR_VERSION,
        "chain": spec.id,
        "vectors": vectors,
    }


# Pytest would otherwise collect ``test_vectors`` from any test module that imports it.
test_vectors.__test__ = False  # type: ignore[attr-defined]


# --- sentences ---------------------------------------------------------------


def _no_longer_replays(name: str, exc: Exception) -> str:
    # A ValueError from bad scenario content may be a long pydantic report; its first line will do.
    reason = str(exc) if isinstance(exc, ChainError) else _first_line(exc)
    return f"scenario '{name}' no longer replays: {reason}"


def _sentence(name: str, result: ExpectationResult) -> str:
    """One sentence for a reviewer about one failed expectation."""
    who = f"scenario '{name}'"
    if result.check == "state":
        return f"{who} now ends in {result.actual} instead of {result.expected}"
    if result.check.startswith("dispatches."):
        step = result.check.removeprefix("dispatches.")
        return f"{who} now dispatches {step} {_times(result.actual)} instead of {result.expected}"
    if result.check == "verdicts":
        return f"{who} verdicts differ {_first_difference(result.expected, result.actual)}"
    if result.check == "commits_landed":
        return f"{who} now lands {_steps(result.actual)} instead of {_steps(result.expected)}"
    return f"{who} {result}"  # a check added to expect later reads as the result itself


def _first_different(expected: Sequence[str], actual: Sequence[str]) -> int:
    """The index of the first verdict that differs (or that one list lacks)."""
    n = 0
    while n < min(len(expected), len(actual)) and _verdict_matches(expected[n], actual[n]):
        n += 1
    return n


def _first_difference(expected: Sequence[str], actual: Sequence[str]) -> str:
    n = _first_different(expected, actual)
    want = expected[n] if n < len(expected) else "the end of the trace"
    got = actual[n] if n < len(actual) else "the end of the trace"
    return f"from verdict {n + 1} on: expected {want}, got {got}"


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


def _steps(steps: Sequence[str] | None) -> str:
    return "[" + ", ".join(steps) + "]" if steps else "nothing"


# --- helpers -------------------------------------------------------------------


def _canonical(verdict: str) -> str:
    try:
        return format_verdict(parse_verdict(verdict))
    except ValueError:
        return verdict


def _expect_json(expect: Expectations) -> dict[str, Any]:
    return expect.model_dump(mode="json", exclude_none=True)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
