"""Evidence: assumed, search-snippet and SPEC-example claims and compensation none are UNKNOWNs."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))


def test_an_assumed_claim_is_an_unknown_phrased_as_a_question_to_confirm():
    doc = chain("""
        id: c
        actions:
          - id: book
            effect: commit
            idempotency:
              mode: none
              source: {tag: assumed, note: no idempotency key is documented.}
    """)
    report = lint(doc)
    (finding,) = [f for f in report.unknowns if f.rule == "evidence.assumed"]
    assert finding.element == "actions[book].idempotency"
    assert finding.severity == "info"
    assert finding.message.startswith("Assumed: no idempotency key is documented (")
    assert "confirm against the provider's docs or observe it" in finding.message


def test_assumed_claims_are_found_however_deeply_nested():
    doc = chain("""
        id: c
        source: assumed
        gates:
          - id: consent
            audience: user
            outcomes:
              approve: {verdict: ok, source: {tag: assumed}}
            timeout: {after: 10m, verdict: "dead_end(reason: t)", source: {tag: assumed}}
        actions:
          - id: book
            effect: commit
            confirmation:
              probe: find
              async: {channel: webhook, deadline: 24h, source: {tag: assumed}}
        verdict_table:
          - {signal: [http:429], verdict: retry, source: {tag: assumed}}
        policy:
          per_step:
            book: {attempts: 1, source: {tag: assumed}}
    """)
    assert set(elements(doc, "evidence.assumed")) == {
        "chain",
        "gates[consent].outcomes.approve",
        "gates[consent].timeout",
        "actions[book].confirmation.async",
        "verdict_table[#1]",
        "policy.per_step.book",
    }


def test_a_search_snippet_claim_is_an_unknown():
    doc = chain("""
        id: c
        handles:
          - {id: h, source: "documented(search-snippet) https://example.com/errors"}
    """)
    (finding,) = found(doc, "evidence.assumed")
    assert finding.element == "handles[h]"
    assert "search snippet" in finding.message


def test_documented_and_observed_claims_are_not_unknowns():
    doc = chain("""
        id: c
        handles:
          - {id: h, source: {tag: documented, urls: [https://example.com/h]}}
          - {id: g, source: {tag: observed, note: sandbox logs}}
          - {id: f, source: {tag: documented-by-omission}}
    """)
    assert found(doc, "evidence.assumed") == []
    assert found(doc, "evidence.spec-example") == []


def test_a_claim_taken_from_a_spec_example_is_an_unknown():
    doc = chain("""
        id: c
        known_unmatched:
          - {signal: "http:424", source: {tag: spec-example, note: only in the SPEC}}
    """)
    (finding,) = found(doc, "evidence.spec-example")
    assert finding.element == "known_unmatched[#1]"
    assert "never evidence" in finding.message


def test_a_commit_with_compensation_none_is_an_unknown_asking_who_accepts_it():
    doc = chain("""
        id: c
        actions:
          - {id: grow, effect: commit, compensation: {action: none, ordering_note: consent}}
    """)
    (finding,) = [f for f in lint(doc).unknowns if f.rule == "evidence.no-compensation"]
    assert finding.element == "actions[grow].compensation"
    assert "who accepts" in finding.message


def test_a_commit_with_a_compensator_is_not_an_unknown():
    doc = chain("""
        id: c
        actions:
          - {id: pay, effect: commit, compensation: refund}
          - {id: refund, effect: compensate}
    """)
    assert found(doc, "evidence.no-compensation") == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_sample_fixtures_have_no_evidence_errors(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    errors = [f for f in lint(doc).findings if f.severity == "error"]
    assert [f for f in errors if f.rule.startswith("evidence.")] == []
