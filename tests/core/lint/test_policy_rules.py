"""Policy: budgets present and consistent, one attempt for unkeyed commits, sane numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))

BUDGETED = """
    id: c
    actions:
      - {id: book, effect: commit, idempotency: {mode: none}}
      - {id: pay, effect: commit, idempotency: {mode: keyed}}
    policy:
      per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 10m}
"""


def test_a_policy_without_rewind_and_repair_budgets_is_warned_about():
    doc = chain("""
        id: c
    """)
    messages = [f.message for f in found(doc, "policy.missing-budget")]
    assert len(messages) == 2
    assert any("max_rewinds" in m for m in messages)
    assert any("max_repairs" in m for m in messages)


def test_a_policy_with_both_budgets_passes():
    assert found(chain(BUDGETED), "policy.missing-budget") == []


def test_more_repairs_than_rewinds_is_invalid():
    doc = chain("""
        id: c
        policy:
          per_chain: {max_rewinds: 2, max_repairs: 3}
    """)
    assert elements(doc, "policy.repairs-exceed-rewinds") == ["policy.per_chain"]


def test_as_many_repairs_as_rewinds_is_allowed():
    doc = chain("""
        id: c
        policy:
          per_chain: {max_rewinds: 2, max_repairs: 2}
    """)
    assert found(doc, "policy.repairs-exceed-rewinds") == []


def test_a_policy_without_a_wall_clock_is_warned_about():
    doc = chain("""
        id: c
        policy:
          per_chain: {max_rewinds: 2, max_repairs: 1}
    """)
    assert elements(doc, "policy.missing-wall-clock") == ["policy.per_chain"]


def test_a_policy_with_a_wall_clock_passes():
    assert found(chain(BUDGETED), "policy.missing-wall-clock") == []


@pytest.mark.parametrize(
    ("per_step", "element"),
    [
        ("book: {attempts: 2}", "policy.per_step.book"),
        ("commit: {unkeyed: {attempts: 3}}", "policy.per_step.commit.unkeyed"),
        ("commit: {attempts: 3}", "policy.per_step.commit"),
    ],
    ids=["per-step override", "unkeyed bucket", "undivided commit bucket"],
)
def test_a_policy_that_gives_an_unkeyed_commit_more_than_one_attempt_is_invalid(per_step, element):
    doc = chain(BUDGETED + f"      per_step: {{{per_step}}}\n")
    assert elements(doc, "policy.unkeyed-commit-retried") == [element]


def test_the_unkeyed_compensate_bucket_is_held_to_one_attempt_too():
    doc = chain(BUDGETED + "      per_step: {compensate: {unkeyed: {attempts: 2}}}\n")
    assert elements(doc, "policy.unkeyed-commit-retried") == ["policy.per_step.compensate.unkeyed"]


def test_retrying_keyed_commits_and_reads_is_allowed():
    doc = chain(
        BUDGETED
        + "      per_step: {read: {attempts: 3}, pay: {attempts: 5},"
        + " commit: {attempts: 3, unkeyed: {attempts: 1}}}\n"
    )
    assert found(doc, "policy.unkeyed-commit-retried") == []


@pytest.mark.parametrize(
    ("per_step", "element"),
    [
        ("read: {safe_reject_redispatch: 2}", "policy.per_step.read"),
        ("commit: {keyed: {safe_reject_redispatch: 2}}", "policy.per_step.commit.keyed"),
        ("pay: {safe_reject_redispatch: 1}", "policy.per_step.pay"),
    ],
)
def test_safe_reject_redispatch_outside_the_unkeyed_buckets_is_warned_about(per_step, element):
    doc = chain(BUDGETED + f"      per_step: {{{per_step}}}\n")
    assert elements(doc, "policy.misplaced-safe-reject-redispatch") == [element]


@pytest.mark.parametrize(
    "per_step",
    ["commit: {unkeyed: {safe_reject_redispatch: 2}}", "book: {safe_reject_redispatch: 1}"],
)
def test_safe_reject_redispatch_for_unkeyed_commits_passes(per_step):
    doc = chain(BUDGETED + f"      per_step: {{{per_step}}}\n")
    assert found(doc, "policy.misplaced-safe-reject-redispatch") == []


def test_safe_reject_redispatch_on_a_whole_class_with_an_unkeyed_member_passes():
    """``commit: {...}`` without keyed/unkeyed speaks for every commit, the unkeyed book too."""
    doc = chain(BUDGETED + "      per_step: {commit: {attempts: 1, safe_reject_redispatch: 2}}\n")
    assert found(doc, "policy.misplaced-safe-reject-redispatch") == []


def test_safe_reject_redispatch_on_a_whole_class_with_no_unkeyed_member_is_warned_about():
    doc = chain(
        BUDGETED + "      per_step: {compensate: {attempts: 1, safe_reject_redispatch: 1}}\n"
    )
    assert elements(doc, "policy.misplaced-safe-reject-redispatch") == [
        "policy.per_step.compensate"
    ]


@pytest.mark.parametrize(
    ("policy", "element"),
    [
        ("per_chain: {max_rewinds: -1}", "policy.per_chain"),
        ("per_step: {read: {backoff: {factor: -2}}}", "policy.per_step.read.backoff"),
        ("per_step: {read: {attempts: 0}}", "policy.per_step.read"),
    ],
)
def test_negative_numbers_and_zero_attempts_are_invalid(policy, element):
    doc = chain(f"""
        id: c
        policy: {{{policy}}}
    """)
    assert elements(doc, "policy.value-out-of-range") == [element]


def test_zero_budgets_are_in_range():
    doc = chain("""
        id: c
        policy:
          per_step: {commit: {unkeyed: {attempts: 1, safe_reject_redispatch: 0}}}
          per_chain: {max_rewinds: 0, max_repairs: 0}
    """)
    assert found(doc, "policy.value-out-of-range") == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_sample_fixtures_have_no_policy_errors(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    errors = [f for f in lint(doc).findings if f.severity == "error"]
    assert [f for f in errors if f.rule.startswith("policy.")] == []
