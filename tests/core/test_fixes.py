"""Quick fixes: each offered fix applies, and the finding it fixes is gone afterwards."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from chains.core import edit, fixes, formats
from chains.core.fixes import apply_fix, fixes_for
from chains.core.formats import to_document

from .lint.helpers import COUPLED_RETURNS, HOLD_FROM_TWO, chain, found

FLIGHT = Path(__file__).parents[2] / "fixtures" / "flight-roundtrip.yaml"

UNKEYED_BOOK = """
    id: c
    actions:
      - {id: find, effect: read}
      - {id: book, effect: commit, idempotency: {mode: none}, confirmation: {probe: find}}
    policy:
      per_step: {%s}
"""

PICK_WITHOUT_REMATCH = """
    id: c
    handles:
      - {id: results, minted_by: search, staleness: {detect: [http:410]}}
      - {id: pick, minted_by: choose, derived_from: [results]}
    actions:
      - {id: search, effect: read, output: {handles: [results]}}
      - {id: choose, effect: select, input: {handles: [results], intent: [carrier, departs]},
         output: {handles: [pick]}}
"""

GATE_WITHOUT_TIMEOUT = """
    id: c
    gates:
      - {id: consent, audience: user, outcomes: {accept: ok, decline: dead_end}}
"""

FRAGILE_ROW = """
    id: c
    actions:
      - {id: search, effect: read}
    verdict_table:
      - {id: R1, signal: ["code:INVALID && error.message contains 'date'"],
         fragile: prose-match, verdict: dead_end}
    known_unmatched: [code:RATE_LIMITED]
"""

PROSE_ROW = """
    id: c
    actions:
      - {id: search, effect: read}
    verdict_table:
      - {signal: ["error.message contains 'sold out'"], verdict: dead_end}
"""

REPAIRS_OVER_REWINDS = """
    id: c
    policy:
      per_chain: {max_rewinds: 1, max_repairs: 3}
"""

PROBE_BEFORE_BOOK = """
    id: c
    actions:
      - {id: find, effect: read, input: {intent: [reference]}}
      - {id: book, effect: commit, input: {intent: [reference]}, idempotency: {mode: none},
         confirmation: {probe: find}, compensation: {action: none}}
"""

CASES = [
    (HOLD_FROM_TWO, "edges.missing-derivation"),
    (COUPLED_RETURNS, "edges.selection-coupling"),
    (UNKEYED_BOOK % "book: {attempts: 3}", "commit.unkeyed-retried"),
    (UNKEYED_BOOK % "commit: {attempts: 3}", "commit.unkeyed-retried"),
    (UNKEYED_BOOK % "commit: {unkeyed: {attempts: 2}}", "commit.unkeyed-retried"),
    (UNKEYED_BOOK % "book: {attempts: 3}", "policy.unkeyed-commit-retried"),
    (UNKEYED_BOOK % "commit: {attempts: 3}", "policy.unkeyed-commit-retried"),
    (UNKEYED_BOOK % "compensate: {unkeyed: {attempts: 2}}", "policy.unkeyed-commit-retried"),
    (PICK_WITHOUT_REMATCH, "handles.selection-without-rematch"),
    (GATE_WITHOUT_TIMEOUT, "gates.no-timeout"),
    (FRAGILE_ROW, "table.fragile-without-fallback"),
    (PROSE_ROW, "table.prose-match-not-fragile"),
    (REPAIRS_OVER_REWINDS, "policy.repairs-exceed-rewinds"),
    (PROBE_BEFORE_BOOK, "commit.probe-before-commit"),
]
CASE_IDS = [
    "missing-derivation",
    "selection-coupling",
    "unkeyed-retried/override",
    "unkeyed-retried/commit-bucket",
    "unkeyed-retried/unkeyed-bucket",
    "policy-unkeyed/override",
    "policy-unkeyed/commit-bucket",
    "policy-unkeyed/compensate-unkeyed",
    "selection-without-rematch",
    "gate-no-timeout",
    "fragile-without-fallback",
    "prose-match-not-fragile",
    "repairs-exceed-rewinds",
    "probe-before-commit",
]


def test_the_module_doctests_pass():
    assert doctest.testmod(fixes).failed == 0


@pytest.mark.parametrize(("text", "rule"), CASES, ids=CASE_IDS)
def test_every_finding_of_a_fixable_rule_gets_a_fix(text, rule):
    doc = chain(text)
    findings = found(doc, rule)
    assert findings
    assert all(fixes_for(doc, finding) for finding in findings)


@pytest.mark.parametrize(("text", "rule"), CASES, ids=CASE_IDS)
def test_applying_a_fix_removes_the_finding_it_fixes(text, rule):
    doc = chain(text)
    finding = found(doc, rule)[0]
    (fix,) = fixes_for(doc, finding)
    assert finding not in found(apply_fix(doc, fix), rule)


@pytest.mark.parametrize(("text", "rule"), CASES, ids=CASE_IDS)
def test_a_fix_is_a_json_ready_edit_naming_its_finding(text, rule):
    doc = chain(text)
    finding = found(doc, rule)[0]
    (fix,) = fixes_for(doc, finding)
    assert (fix.rule, fix.element) == (rule, finding.element)
    assert fix.op in edit.OPS
    assert json.loads(json.dumps(fix.args)) == fix.args


def test_the_missing_derivation_fix_restores_exactly_the_removed_flight_edge():
    (flight,) = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains
    broken = edit.remove_edge(flight, "derived_from", "hold_session", "seatmap_ref")
    (finding,) = found(broken, "edges.missing-derivation")
    (fix,) = fixes_for(broken, finding)
    assert fix.title == "Add edge seatmap_ref → hold_session"
    assert to_document(apply_fix(broken, fix)) == to_document(flight)


def test_a_handle_missing_two_edges_gets_one_fix_per_finding():
    doc = chain("""
        id: c
        handles:
          - {id: a, minted_by: one}
          - {id: b, minted_by: two}
          - {id: c, minted_by: three}
        actions:
          - {id: one, effect: mint, output: {handles: [a]}}
          - {id: two, effect: mint, output: {handles: [b]}}
          - {id: three, effect: mint, input: {handles: [a, b]}, output: {handles: [c]}}
    """)
    titles = [
        fix.title for f in found(doc, "edges.missing-derivation") for fix in fixes_for(doc, f)
    ]
    assert sorted(titles) == ["Add edge a → c", "Add edge b → c"]


def test_no_fix_is_offered_for_an_edge_that_would_close_a_cycle():
    doc = chain("""
        id: c
        handles:
          - {id: parent, minted_by: make}
          - {id: child, minted_by: make, derived_from: [parent]}
        actions:
          - {id: make, effect: mint, input: {handles: [child]}, output: {handles: [parent]}}
    """)
    (finding,) = found(doc, "edges.missing-derivation")
    assert fixes_for(doc, finding) == []


def test_an_unkeyed_commit_override_is_set_to_one_attempt():
    doc = chain(UNKEYED_BOOK % "book: {attempts: 3}")
    (fix,) = fixes_for(doc, found(doc, "commit.unkeyed-retried")[0])
    assert fix.args == {"fields": {"per_step": {"book": {"attempts": 1}}}}


def test_a_commit_bucket_fix_leaves_keyed_commits_their_retries():
    doc = chain(UNKEYED_BOOK % "commit: {attempts: 3}")
    fixed = apply_fix(doc, fixes_for(doc, found(doc, "policy.unkeyed-commit-retried")[0])[0])
    assert fixed.policy.per_step["commit"].attempts == 3
    assert fixed.policy.per_step["commit"].unkeyed.attempts == 1


def test_the_rematch_stub_starts_from_the_selection_intent_and_asks_to_be_filled_in():
    doc = chain(PICK_WITHOUT_REMATCH)
    (fix,) = fixes_for(doc, found(doc, "handles.selection-without-rematch")[0])
    pick = apply_fix(doc, fix).handle("pick")
    assert pick.rematch.key == ["carrier", "departs"]
    assert pick.rematch.on_ambiguous == "gate"
    assert "placeholder" in pick.notes[-1]


def test_the_gate_timeout_fix_dead_ends_after_fifteen_minutes():
    doc = chain(GATE_WITHOUT_TIMEOUT)
    (fix,) = fixes_for(doc, found(doc, "gates.no-timeout")[0])
    timeout = apply_fix(doc, fix).gate("consent").timeout
    assert (str(timeout.after), str(timeout.verdict)) == ("15m", "dead_end")


def test_the_fallback_fix_lists_the_fragile_row_code_and_keeps_other_entries():
    doc = chain(FRAGILE_ROW)
    (fix,) = fixes_for(doc, found(doc, "table.fragile-without-fallback")[0])
    known = apply_fix(doc, fix).known_unmatched
    assert [k.signal for k in known] == ["code:RATE_LIMITED", "code:INVALID"]


def test_a_rule_without_a_mechanical_fix_gets_none():
    doc = chain(REPAIRS_OVER_REWINDS)
    (finding,) = found(doc, "policy.missing-wall-clock")
    assert fixes_for(doc, finding) == []


def test_a_stale_fix_is_refused_when_applied():
    doc = chain(GATE_WITHOUT_TIMEOUT)
    fix = fixes_for(doc, found(doc, "gates.no-timeout")[0])[0]
    doc = edit.delete_gate(doc, "consent")
    with pytest.raises(edit.EditError):
        apply_fix(doc, fix)


def test_the_probe_before_its_commit_is_marked_probe_only_by_its_fix():
    doc = chain(PROBE_BEFORE_BOOK)
    (fix,) = fixes_for(doc, found(doc, "commit.probe-before-commit")[0])
    assert fix.title == "Mark find probe_only (it runs only to confirm book)"
    assert apply_fix(doc, fix).action("find").probe_only is True
