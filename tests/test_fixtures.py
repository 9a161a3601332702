"""The sample chain documents in ``fixtures/`` load cleanly and lint without errors.

``unsafe-retry-booking.yaml`` is the explorer's known-bad example: it loads
cleanly, but is INVALID on purpose (see ``tests/test_lint_command.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint
from chains.core.model import ChainSpec

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
YAML_FIXTURES = sorted(FIXTURES.glob("*.yaml"))
SAFE_FIXTURES = [p for p in YAML_FIXTURES if p.name != "unsafe-retry-booking.yaml"]
COMPILE_FIXTURE = FIXTURES / "hotel-compile.md"


def load(path: Path) -> formats.ImportResult:
    return formats.load(path.read_bytes(), filename=str(path))


def lint_errors(chain: ChainSpec) -> list[str]:
    return [
        f"{f.element}: {f.message} [{f.rule}]"
        for f in lint(chain).findings
        if f.severity == "error"
    ]


@pytest.mark.parametrize("path", YAML_FIXTURES, ids=lambda p: p.name)
def test_every_yaml_fixture_loads_with_no_errors_and_no_unknown_keys(path):
    result = load(path)
    assert [str(p) for p in result.problems] == []
    assert len(result.chains) == 1


@pytest.mark.parametrize("path", SAFE_FIXTURES, ids=lambda p: p.name)
def test_every_safe_yaml_fixture_lints_without_errors(path):
    (chain,) = load(path).chains
    assert lint_errors(chain) == []


@pytest.mark.parametrize("path", YAML_FIXTURES, ids=lambda p: p.name)
def test_every_verdict_row_and_provider_fact_in_a_yaml_fixture_carries_evidence(path):
    (chain,) = load(path).chains
    unsourced = [row.id for row in chain.verdict_table if row.source is None]
    unsourced += [f"action {a.id}" for a in chain.actions if a.effect != "select" and not a.source]
    assert unsourced == []


def test_there_are_at_least_three_yaml_fixtures():
    assert len(YAML_FIXTURES) >= 3


def test_the_compile_fixture_imports_two_chains_with_the_expected_ids():
    result = load(COMPILE_FIXTURE)
    assert [c.id for c in result.chains] == ["hotel_stay_booking", "hotel_stay_modify"]
    assert result.errors == []
    assert [str(p) for p in result.problems if "unknown key" in p.message] == []


def test_the_compile_fixture_chains_lint_without_errors():
    result = load(COMPILE_FIXTURE)
    assert result.chains
    for chain in result.chains:
        assert lint_errors(chain) == []


def test_the_compile_fixture_keeps_every_backticked_signal_of_a_table_row():
    booking = next(c for c in load(COMPILE_FIXTURE).chains if c.id == "hotel_stay_booking")
    row = next(r for r in booking.verdict_table if r.id == "H8")
    assert set(row.signal) >= {"timeout", "conn_reset", "http:5xx"}
