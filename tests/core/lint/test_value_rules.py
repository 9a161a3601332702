"""Values: placeholders and durations that no code can use (SPEC §3, §2.4, §2.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint
from chains.core.lint.values import is_placeholder, placeholders

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_yaml_fixtures_have_no_value_findings(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    assert [f for f in lint(doc).findings if f.rule.startswith("values.")] == []


# --- placeholders -----------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["TODO", "TBD later", "???", "<the cart's refresh step>", "fixme: real code"]
)
def test_markers_left_where_a_value_should_be_are_placeholders(text):
    assert placeholders(text)


@pytest.mark.parametrize(
    "text",
    [
        "expires_at < now and amount > 0",
        "a<b",
        "409 'product <id> is sold out'",
        "<correlation_ref(run_id)>",
        "status == 'todos_done'",
    ],
)
def test_comparisons_quoted_messages_and_templates_are_not_placeholders(text):
    assert placeholders(text) == []


def test_a_placeholder_in_a_request_invariant_is_an_error():
    """SPEC §2.1: request_invariants are declared constants baked into every dispatch;
    a page size left as ``<set>`` is no constant."""
    doc = chain("""
        id: c
        actions:
          - {id: search, effect: read, request_invariants: {page_size: <set>}}
    """)
    (finding,) = found(doc, "values.placeholder")
    assert finding.element == "actions[search].request_invariants"
    assert "'<set>'" in finding.message
    assert lint(doc).status == "INVALID"


def test_a_placeholder_rewind_target_is_an_error_once():
    doc = chain("""
        id: c
        actions:
          - {id: open_cart, effect: mint}
        handles:
          - id: cart
            minted_by: open_cart
            staleness: {detect: [code:GONE], refresh: <the cart's refresh>}
    """)
    assert elements(doc, "values.placeholder") == ["handles[cart].staleness.refresh"]


def test_a_todo_in_a_signal_is_an_error():
    doc = chain("""
        id: c
        actions: [{id: search, effect: read}]
        verdict_table:
          - {id: R1, signal: [TODO], scope: [search], verdict: retry}
    """)
    assert elements(doc, "values.placeholder") == ["verdict_table[R1].signal"]


def test_a_placeholder_in_a_description_is_a_warning():
    doc = chain("""
        id: c
        actions:
          - {id: search, effect: read, description: Finds stays. TBD which filters.}
    """)
    assert found(doc, "values.placeholder") == []
    assert elements(doc, "values.placeholder-in-prose") == ["actions[search].description"]


def test_notes_and_evidence_may_mention_open_questions():
    doc = chain("""
        id: c
        actions:
          - id: search
            effect: read
            notes: [TODO ask the provider about paging]
            source: {tag: assumed, note: TBD with the provider}
    """)
    assert found(doc, "values.placeholder") == []
    assert found(doc, "values.placeholder-in-prose") == []


def test_a_rematch_key_that_is_only_a_placeholder_is_reported_by_the_rematch_rule_alone():
    """SPEC §2.2: the key is intent-level fields; ``<intent fields>`` names none."""
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search}
          - {id: pick, minted_by: choose, derived_from: [results],
             rematch: {key: ["<intent fields>"]}}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
    """)
    assert elements(doc, "handles.rematch-key-placeholder") == ["handles[pick].rematch"]
    assert found(doc, "values.placeholder") == []


@pytest.mark.parametrize("key", ["[TBD]", "[]", "['???', '<fields>']"])
def test_an_empty_or_placeholder_rematch_key_is_invalid(key):
    doc = chain(f"""
        id: c
        handles:
          - {{id: results, minted_by: search}}
          - {{id: pick, minted_by: choose, derived_from: [results], rematch: {{key: {key}}}}}
        actions:
          - {{id: search, effect: read, output: {{handles: [results]}}}}
          - {{id: choose, effect: select, input: {{handles: [results]}},
             output: {{handles: [pick]}}}}
    """)
    assert elements(doc, "handles.rematch-key-placeholder") == ["handles[pick].rematch"]


def test_a_rematch_key_of_intent_fields_passes():
    assert not is_placeholder("carrier")
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search}
          - {id: pick, minted_by: choose, derived_from: [results],
             rematch: {key: [carrier, flight_numbers, departure]}}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
    """)
    assert found(doc, "handles.rematch-key-placeholder") == []


# --- durations --------------------------------------------------------------


def test_a_timeout_in_words_is_an_error():
    """``timeout: forty seconds`` used to save and lint VALID; the runtime cannot enforce it."""
    doc = chain("""
        id: c
        actions:
          - {id: search, effect: read, timeout: forty seconds}
    """)
    (finding,) = found(doc, "values.duration-unparsed")
    assert finding.element == "actions[search].timeout"
    assert "'forty seconds'" in finding.message
    assert lint(doc).status == "INVALID"


@pytest.mark.parametrize(
    "field", ["confirmation: {probe: find, async: {deadline: a week}}", "timeout: soon"]
)
def test_deadlines_and_timeouts_that_do_not_parse_are_errors(field):
    doc = chain(f"""
        id: c
        actions:
          - {{id: find, effect: read}}
          - {{id: book, effect: commit, {field}}}
    """)
    assert len(found(doc, "values.duration-unparsed")) == 1


@pytest.mark.parametrize(
    "value", ["40s", "~5m", "10-15m", "unknown", "unlimited", "n/a", "per-payment"]
)
def test_durations_and_the_words_the_grammar_allows_pass(value):
    doc = chain(f"""
        id: c
        actions:
          - {{id: book, effect: commit, idempotency: {{mode: keyed, key_retention: {value}}}}}
    """)
    assert found(doc, "values.duration-unparsed") == []


def test_a_gate_timeout_at_a_deadline_the_response_names_passes():
    """SPEC §2.1: provider-returned deadlines may be evaluated."""
    doc = chain("""
        id: c
        gates:
          - id: bank_details
            audience: user
            outcomes: {given: ok}
            timeout: {after: next_action.details.expires_at, verdict: dead_end}
    """)
    assert found(doc, "values.duration-unparsed") == []


def test_a_ttl_hint_in_words_is_a_warning_and_one_with_numbers_passes():
    doc = chain("""
        id: c
        handles:
          - {id: a, staleness: {ttl_hint: about a quarter hour}}
          - {id: b, staleness: {ttl_hint: 12m (rail one) / 30m (rail two)}}
    """)
    assert elements(doc, "values.hint-unparsed") == ["handles[a].staleness.ttl_hint"]
    assert found(doc, "values.duration-unparsed") == []
