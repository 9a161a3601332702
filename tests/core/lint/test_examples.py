"""Every lint rule has a bad and a good example, and each says what it claims."""

from __future__ import annotations

import pytest

from chains.core import formats
from chains.core.lint import RULES, lint
from chains.core.lint.examples import EXAMPLES, Example, changed_lines


def _rules_found(text: str) -> set[str]:
    result = formats.load(text, format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return {f.rule for f in lint(result.chains[0]).findings}


def test_every_rule_has_an_example():
    assert sorted(set(RULES) - set(EXAMPLES)) == []


def test_every_example_is_of_a_rule():
    assert sorted(set(EXAMPLES) - set(RULES)) == []


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_the_bad_example_makes_its_rule_fire(rule_id):
    assert rule_id in _rules_found(EXAMPLES[rule_id].bad)


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_the_good_example_keeps_its_rule_quiet(rule_id):
    assert rule_id not in _rules_found(EXAMPLES[rule_id].good)


@pytest.mark.parametrize("rule_id", sorted(EXAMPLES))
def test_an_example_says_why_and_changes_a_few_lines(rule_id):
    example = EXAMPLES[rule_id]
    removed, added = changed_lines(example)
    assert example.why.strip()
    assert removed or added
    assert len(removed | added) <= 12


def test_changed_lines_mark_only_the_lines_that_differ():
    example = Example(bad="id: c\na: 1\nb: 2\n", good="id: c\na: 1\nb: 3\nc: 4\n", why="x")
    assert changed_lines(example) == ({2}, {2, 3})
