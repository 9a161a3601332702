"""The patterns a new chain starts from are valid chains that explore clean."""

from __future__ import annotations

import doctest

import pytest

from chains.core import formats, patterns
from chains.core.lint import lint
from chains.core.patterns import PATTERNS, pattern_document
from chains.core.sim.explorer import Bounds, explore


def test_the_module_s_examples_hold():
    assert doctest.testmod(patterns).failed == 0


@pytest.mark.parametrize("pattern_id", sorted(PATTERNS))
def test_a_pattern_lints_valid(pattern_id):
    spec = formats.from_document(PATTERNS[pattern_id].document)
    report = lint(spec)
    assert (report.status, [f.rule for f in report.findings if f.severity != "info"]) == (
        "VALID",
        [],
    )


@pytest.mark.parametrize("pattern_id", sorted(PATTERNS))
def test_a_pattern_breaks_no_invariant_at_two_faults_and_reaches_every_step(pattern_id):
    result = explore(formats.from_document(PATTERNS[pattern_id].document), Bounds(max_faults=2))
    assert result.violations == []
    assert result.reach is not None and result.reach.missed()["steps"] == []


@pytest.mark.parametrize("pattern_id", sorted(PATTERNS))
def test_every_element_of_a_pattern_says_why_it_is_there(pattern_id):
    document = PATTERNS[pattern_id].document
    silent = [
        f"{section}[{item['id']}]"
        for section in ("actions", "handles", "gates")
        for item in document.get(section, [])
        if not item.get("description")
    ]
    assert document.get("description") and silent == []


def test_a_chain_started_from_a_pattern_has_its_own_id_and_title_and_shares_nothing():
    first = pattern_document("search_price_book", "hotel", "Hotel booking")
    first["actions"].clear()
    second = pattern_document("search_price_book", "hotel")
    assert (first["id"], first["title"]) == ("hotel", "Hotel booking")
    assert second["actions"]


def test_an_unknown_pattern_is_a_key_error():
    with pytest.raises(KeyError):
        pattern_document("no_such_pattern", "x")
