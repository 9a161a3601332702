"""Verdict-table rules: row order, catch-alls, prose matching, retries on unkeyed commits."""

from __future__ import annotations

import pytest

from chains.core.lint import lint

from .helpers import chain, elements, found

# A read, a keyed commit and an unkeyed commit; each test adds its own rows.
BASE = """
id: shop
actions:
  - {id: search, effect: read, input: {intent: {dates: date}}, output: {handles: [search_id]}}
  - id: pay
    effect: commit
    input: {handles: [search_id]}
    idempotency: {mode: keyed, key_scope: run}
    confirmation: {by_key_replay: {note: keyed and synchronous}}
  - id: book
    effect: commit
    input: {handles: [search_id]}
    idempotency: {mode: none}
    confirmation: {probe: search, signal: booking listed}
handles:
  - {id: search_id, minted_by: search, staleness: {detect: [code:EXPIRED], refresh: search}}
"""


def with_rows(rows: str, extra: str = "") -> object:
    return chain(BASE + "verdict_table:\n" + rows + extra)


# --- table.shadowed-row -----------------------------------------------------


def test_a_row_repeating_an_earlier_code_for_the_same_step_is_shadowed():
    doc = with_rows("""
  - {id: R1, signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
  - {id: R2, signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: "rewind(to: search)"}
""")
    [finding] = found(doc, "table.shadowed-row")
    assert finding.element == "verdict_table[R2]"
    assert "R1" in finding.message


def test_a_status_class_row_shadows_a_later_row_for_one_status_in_it():
    doc = with_rows("""
  - {id: R1, signal: [http:5xx], scope: any, verdict: dead_end}
  - {id: R2, signal: [http:503], scope: {steps: [search]}, verdict: retry}
""")
    assert elements(doc, "table.shadowed-row") == ["verdict_table[R2]"]


def test_a_narrower_conjunction_after_its_plain_code_is_shadowed():
    doc = with_rows("""
  - {id: R1, signal: [code:FARE_GONE], scope: {steps: [book]}, verdict: dead_end}
  - {id: R2, signal: ["code:FARE_GONE && error.leg == 'return'"], scope: {steps: [book]},
     verdict: dead_end}
""")
    assert elements(doc, "table.shadowed-row") == ["verdict_table[R2]"]


def test_a_narrower_conjunction_before_its_plain_code_shadows_nothing():
    doc = with_rows("""
  - {id: R1, signal: ["code:FARE_GONE && error.leg == 'return'"], scope: {steps: [book]},
     verdict: dead_end}
  - {id: R2, signal: [code:FARE_GONE], scope: {steps: [book]}, verdict: dead_end}
""")
    assert found(doc, "table.shadowed-row") == []


def test_a_row_for_a_wider_scope_after_a_narrower_one_is_not_shadowed():
    doc = with_rows("""
  - {id: R1, signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
  - {id: R2, signal: [code:SOLD_OUT], scope: {steps: [book, pay]}, verdict: dead_end}
""")
    assert found(doc, "table.shadowed-row") == []


def test_a_row_is_not_shadowed_while_one_of_its_signals_is_still_new():
    doc = with_rows("""
  - {id: R1, signal: [timeout], scope: {steps: [book]}, verdict: reconcile}
  - {id: R2, signal: [timeout, conn_reset], scope: {steps: [book]}, verdict: reconcile}
""")
    assert found(doc, "table.shadowed-row") == []


def test_a_consumer_scope_covers_a_row_for_one_of_its_consumers():
    doc = with_rows("""
  - {id: R1, signal: [code:EXPIRED], scope: {consumers_of: [search_id]},
     verdict: "rewind(to: search)"}
  - {id: R2, signal: [code:EXPIRED], scope: {steps: [pay]}, verdict: dead_end}
""")
    assert elements(doc, "table.shadowed-row") == ["verdict_table[R2]"]


def test_a_row_for_one_variant_does_not_shadow_a_row_for_every_variant():
    doc = with_rows("""
  - {id: R1, signal: [code:SOLD_OUT], only: [NDC], scope: {steps: [book]}, verdict: dead_end}
  - {id: R2, signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
""")
    assert found(doc, "table.shadowed-row") == []


def test_rows_written_only_as_prose_are_never_called_shadowed():
    doc = with_rows("""
  - {id: R1, description: fraud check declined, scope: {steps: [book]}, verdict: dead_end}
  - {id: R2, description: fraud check declined, scope: {steps: [book]}, verdict: dead_end}
""")
    assert found(doc, "table.shadowed-row") == []


def test_a_row_without_an_id_is_named_by_its_position():
    doc = with_rows("""
  - {signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
  - {signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
""")
    assert elements(doc, "table.shadowed-row") == ["verdict_table[#2]"]


# --- table.repair-without-fields ---------------------------------------------


def test_a_row_repairing_no_fields_is_an_error():
    doc = with_rows("""
  - {id: R1, signal: [code:BAD_DATES], scope: {steps: [search]}, verdict: "repair(to: search)"}
""")
    assert elements(doc, "table.repair-without-fields") == ["verdict_table[R1]"]


def test_an_empty_route_repairing_no_fields_is_an_error():
    doc = chain("""
id: c
actions:
  - id: search
    effect: read
    input: {intent: {dates: date}}
    output: {empty: {valid: true, detect: results == 0, route: "repair(to: search)"}}
""")
    assert elements(doc, "table.repair-without-fields") == ["actions[search].output.empty.route"]


def test_a_gate_outcome_repairing_no_fields_is_an_error():
    doc = chain("""
id: c
actions: [{id: search, effect: read, input: {intent: {dates: date}}}]
gates:
  - id: ask
    audience: user
    outcomes: {change: "repair(to: search)"}
""")
    assert elements(doc, "table.repair-without-fields") == ["gates[ask].outcomes.change"]


def test_a_repair_naming_its_fields_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [code:BAD_DATES], scope: {steps: [search]},
     verdict: "repair(to: search, fields: [dates])"}
""")
    assert found(doc, "table.repair-without-fields") == []


# --- table.catch-all-row -------------------------------------------------------


@pytest.mark.parametrize("signal", ["'*'", "unmatched", "any other error", "code:*"])
def test_a_catch_all_row_routed_to_retry_is_an_error(signal):
    doc = with_rows(f"""
  - {{id: R1, signal: [{signal}], scope: {{steps: [search]}}, verdict: retry}}
""")
    assert elements(doc, "table.catch-all-row") == ["verdict_table[R1]"]


def test_a_catch_all_written_as_prose_and_routed_to_repair_is_an_error():
    doc = with_rows("""
  - {id: R1, description: any other error, scope: any,
     verdict: "repair(to: search, fields: [dates])"}
""")
    assert elements(doc, "table.catch-all-row") == ["verdict_table[R1]"]


def test_a_catch_all_dead_end_over_a_commit_is_an_error():
    doc = with_rows("""
  - {id: R1, signal: [unmatched], scope: {steps: [book]}, verdict: dead_end}
""")
    assert "book" in found(doc, "table.catch-all-row")[0].message


def test_a_catch_all_dead_end_over_reads_only_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [unmatched], scope: {steps: [search]}, verdict: dead_end}
""")
    assert found(doc, "table.catch-all-row") == []


def test_a_catch_all_routed_to_reconcile_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [unmatched], scope: {steps: [book]}, verdict: reconcile}
""")
    assert found(doc, "table.catch-all-row") == []


# --- table.model-classifies --------------------------------------------------


def test_a_row_raising_a_gate_the_model_answers_is_an_error():
    doc = with_rows(
        """
  - {id: R1, signal: [code:AMBIGUOUS], scope: {steps: [search]}, verdict: gate(guess)}
""",
        """
gates:
  - id: guess
    audience: model
    outcomes: {fine: ok, broken: dead_end}
    timeout: {after: 1m, verdict: dead_end}
""",
    )
    assert elements(doc, "table.model-classifies") == ["verdict_table[R1]"]


def test_a_row_whose_description_lets_the_model_decide_is_an_error():
    doc = with_rows("""
  - {id: R1, signal: [code:WEIRD], description: the model decides whether this is transient,
     scope: {steps: [search]}, verdict: dead_end}
""")
    assert elements(doc, "table.model-classifies") == ["verdict_table[R1]"]


def test_a_description_saying_the_model_never_decides_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [code:WEIRD], description: never let the model decide; fail closed,
     scope: {steps: [search]}, verdict: dead_end}
""")
    assert found(doc, "table.model-classifies") == []


def test_a_row_raising_a_user_gate_is_fine():
    doc = with_rows(
        """
  - {id: R1, signal: [code:PRICE_CHANGED], scope: {steps: [search]}, verdict: gate(consent)}
""",
        """
gates:
  - id: consent
    audience: user
    outcomes: {accept: ok, decline: dead_end}
    timeout: {after: 1m, verdict: dead_end}
""",
    )
    assert found(doc, "table.model-classifies") == []


# --- table.prose-match-not-fragile / table.fragile-without-fallback --------------


def test_a_row_matching_message_text_without_fragile_is_a_warning():
    doc = with_rows("""
  - {id: R1, signal: ["code:INVALID && error.message contains 'date'"], scope: {steps: [search]},
     verdict: "repair(to: search, fields: [dates])"}
""")
    assert elements(doc, "table.prose-match-not-fragile") == ["verdict_table[R1]"]


def test_a_description_quoting_a_message_without_fragile_is_a_warning():
    doc = with_rows("""
  - {id: R1, signal: [code:INVALID], description: 'INVALID with "return date precedes"',
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""")
    assert elements(doc, "table.prose-match-not-fragile") == ["verdict_table[R1]"]


def test_a_row_comparing_a_structured_field_is_not_prose_matched():
    doc = with_rows("""
  - {id: R1, signal: ["code:FARE_GONE && error.leg == 'return'"], scope: {steps: [search]},
     verdict: dead_end}
""")
    assert found(doc, "table.prose-match-not-fragile") == []


def test_a_quoted_status_value_in_a_written_predicate_is_not_message_text():
    """A status or list value compared in a predicate is a machine-readable field (SPEC §3)."""
    doc = with_rows("""
  - {id: R1, signal: ["order.status == 'failed'"], description: '`order.status == "failed"`',
     scope: {steps: [search]}, verdict: dead_end}
  - {id: R2, signal: ["'cancel' not in actions"], description: 'when `"cancel" ∉ actions`',
     scope: {steps: [search]}, verdict: dead_end}
""")
    assert found(doc, "table.prose-match-not-fragile") == []


def test_a_quotation_in_parentheses_after_a_predicate_cites_the_docs_and_is_not_matched():
    doc = with_rows("""
  - {id: R1, signal: [amount > remaining],
     description: 'amount > remaining ("cannot refund more than was charged")',
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""")
    assert found(doc, "table.prose-match-not-fragile") == []


def test_a_row_without_any_signal_matches_no_message_text():
    """Such a row matches nothing at all; table.row-without-signal says so, once."""
    doc = with_rows("""
  - {id: R1, description: 'cancel twice ("already cancelled")', scope: {steps: [search]},
     verdict: reconcile}
""")
    assert found(doc, "table.prose-match-not-fragile") == []
    assert elements(doc, "table.row-without-signal") == ["verdict_table[R1]"]


def test_a_message_quoted_next_to_the_code_it_discriminates_is_still_prose_matched():
    doc = with_rows("""
  - {id: R1, signal: [code:INVALID], description: '`INVALID` "return date precedes" (date check)',
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""")
    assert elements(doc, "table.prose-match-not-fragile") == ["verdict_table[R1]"]


def test_a_fragile_row_with_its_code_in_known_unmatched_is_fine():
    doc = with_rows(
        """
  - {id: R1, signal: ["code:INVALID && error.message contains 'date'"], fragile: prose-match,
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""",
        "known_unmatched: [code:INVALID]\n",
    )
    assert found(doc, "table.prose-match-not-fragile") == []
    assert found(doc, "table.fragile-without-fallback") == []


def test_a_fragile_row_without_a_known_unmatched_fallback_is_a_warning():
    doc = with_rows("""
  - {id: R1, signal: ["code:INVALID && error.message contains 'date'"], fragile: prose-match,
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""")
    assert elements(doc, "table.fragile-without-fallback") == ["verdict_table[R1]"]


def test_a_fallback_for_another_code_does_not_count():
    doc = with_rows(
        """
  - {id: R1, signal: ["code:INVALID && error.message contains 'date'"], fragile: prose-match,
     scope: {steps: [search]}, verdict: "repair(to: search, fields: [dates])"}
""",
        "known_unmatched: [code:OTHER]\n",
    )
    assert elements(doc, "table.fragile-without-fallback") == ["verdict_table[R1]"]


# --- table.payload-row-after-success -----------------------------------------


def test_a_staleness_row_after_an_unconditional_success_row_is_an_error():
    doc = with_rows("""
  - {id: R1, signal: [http:200], scope: any, verdict: ok}
  - {id: R2, signal: [code:EXPIRED], scope: {consumers_of: [search_id]},
     verdict: "rewind(to: search)"}
""")
    [finding] = found(doc, "table.payload-row-after-success")
    assert finding.element == "verdict_table[R2]"
    assert "R1" in finding.message


def test_a_staleness_row_before_the_success_row_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [code:EXPIRED], scope: {consumers_of: [search_id]},
     verdict: "rewind(to: search)"}
  - {id: R2, signal: [http:2xx], scope: any, verdict: ok}
""")
    assert found(doc, "table.payload-row-after-success") == []


def test_a_transport_fault_row_after_the_success_row_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [http:200], scope: any, verdict: ok}
  - {id: R2, signal: [timeout, http:503], scope: {steps: [search]}, verdict: retry}
""")
    assert found(doc, "table.payload-row-after-success") == []


def test_a_success_row_for_other_steps_does_not_hide_a_payload_row():
    doc = with_rows("""
  - {id: R1, signal: [http:200], scope: {steps: [search]}, verdict: ok}
  - {id: R2, signal: [code:SOLD_OUT], scope: {steps: [book]}, verdict: dead_end}
""")
    assert found(doc, "table.payload-row-after-success") == []


# --- table.retry-on-unkeyed-commit ---------------------------------------------


def test_a_chain_whose_unkeyed_commit_routes_timeouts_to_retry_is_invalid():
    doc = with_rows("""
  - {id: R1, signal: [timeout], scope: {steps: [book]}, verdict: retry}
""")
    assert elements(doc, "table.retry-on-unkeyed-commit") == ["verdict_table[R1]"]
    assert lint(doc).status == "INVALID"


def test_a_retry_scoped_by_effect_class_to_unkeyed_commits_is_an_error():
    doc = with_rows("""
  - {id: R1, signal: [http:503], scope: unkeyed commit, verdict: retry}
""")
    assert elements(doc, "table.retry-on-unkeyed-commit") == ["verdict_table[R1]"]


def test_a_no_side_effect_retry_on_an_unkeyed_commit_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [http:429], scope: {steps: [book]}, verdict: retry, no_side_effect: true}
""")
    assert found(doc, "table.retry-on-unkeyed-commit") == []


def test_a_retry_on_a_keyed_commit_is_fine():
    doc = with_rows("""
  - {id: R1, signal: [timeout], scope: {steps: [pay]}, verdict: retry}
""")
    assert found(doc, "table.retry-on-unkeyed-commit") == []


# --- table.no-domain-rows ------------------------------------------------------


def test_a_chain_with_a_commit_and_no_verdict_rows_is_a_warning():
    doc = chain(BASE)
    assert elements(doc, "table.no-domain-rows") == ["verdict_table"]


def test_a_read_only_chain_needs_no_verdict_rows():
    doc = chain("""
id: c
actions: [{id: search, effect: read}]
""")
    assert found(doc, "table.no-domain-rows") == []


NO_SIDE_EFFECT_ROW = """
    id: c
    actions:
      - {id: book, effect: commit, idempotency: {mode: none}}
    verdict_table:
      - {id: U1, signal: [SIGNAL], scope: {steps: [book]}, verdict: retry, no_side_effect: true}
"""


@pytest.mark.parametrize("signal", ["timeout", "conn_reset", "http:5xx", "http:502"])
def test_no_side_effect_on_a_lost_or_ambiguous_response_is_invalid(signal):
    doc = chain(NO_SIDE_EFFECT_ROW.replace("SIGNAL", signal))
    assert elements(doc, "table.no-side-effect-on-ambiguous-signal") == ["verdict_table[U1]"]


def test_no_side_effect_on_a_documented_rejection_passes():
    doc = chain(NO_SIDE_EFFECT_ROW.replace("SIGNAL", "http:503"))
    assert found(doc, "table.no-side-effect-on-ambiguous-signal") == []


def test_a_row_with_only_a_prose_signal_is_a_warning_that_it_never_fires():
    """SPEC §3: the classifier is "evaluated by deterministic code"; prose never matches.

    What the row meant to catch falls to the fixed rows 11-12, which fail closed.
    """
    doc = chain("""
        id: c
        actions: [{id: pay, effect: read}]
        verdict_table:
          - {id: P2, description: "the payment still waits for the customer's bank",
             scope: [pay], verdict: gate(bank_check)}
          - {id: P3, signal: [http:402], scope: [pay], verdict: dead_end}
    """)
    (finding,) = found(doc, "table.row-without-signal")
    assert finding.element == "verdict_table[P2]"
    assert finding.severity == "warning"
    assert "customer's bank" in finding.message
    assert "rows 11-12" in finding.message


# A prose row beside the step's own declaration of the same recovery: the
# declaration fires, so the row documents it rather than dying unmatched.
RESTATED = """
id: c
handles:
  - {id: quote, minted_by: make_quote, staleness: {detect: [code:QUOTE_STALE], refresh: make_quote}}
actions:
  - id: make_quote
    effect: mint
    input: {intent: {rooms: int}}
    output:
      handles: [quote]
      empty: {valid: true, detect: "offers.length == 0",
              route: "repair(to: make_quote, fields: [rooms])"}
    preconditions:
      - {when: "total != agreed_total", verdict: gate(price_review), reason: price moved}
  - {id: accept, effect: read, input: {handles: [quote]}}
gates:
  - {id: price_review, audience: user, outcomes: {accept: ok, decline: dead_end},
     timeout: {after: 10m, verdict: dead_end}}
verdict_table:
  - ROW
"""


def test_a_prose_row_restating_a_steps_precondition_is_not_said_never_to_fire():
    row = (
        "{id: R1, description: the total drifted, scope: [make_quote], verdict: gate(price_review)}"
    )
    doc = chain(RESTATED.replace("ROW", row))
    assert found(doc, "table.row-without-signal") == []


def test_a_prose_row_restating_a_steps_empty_route_is_not_said_never_to_fire():
    row = (
        "{id: R1, description: no offers came back, scope: [make_quote], "
        "verdict: 'repair(to: make_quote, fields: [rooms])'}"
    )
    doc = chain(RESTATED.replace("ROW", row))
    assert found(doc, "table.row-without-signal") == []


def test_a_prose_row_restating_the_staleness_rewind_of_a_consumed_handle_is_not_called_dead():
    row = (
        "{id: R1, description: the quote lapsed (seen as stale), scope: [accept], "
        "verdict: 'rewind(to: make_quote)'}"
    )
    doc = chain(RESTATED.replace("ROW", row))
    assert found(doc, "table.row-without-signal") == []


def test_a_prose_row_whose_verdict_its_steps_do_not_declare_still_never_fires():
    row = "{id: R1, description: the total drifted, scope: [make_quote], verdict: dead_end}"
    doc = chain(RESTATED.replace("ROW", row))
    assert elements(doc, "table.row-without-signal") == ["verdict_table[R1]"]


def test_a_prose_row_restating_a_staleness_rewind_whose_detect_is_no_signal_still_never_fires():
    """The handle's detect names no signal either, so nothing recognises the stale quote."""
    row = (
        "{id: R1, description: the quote lapsed (seen as stale), scope: [accept], "
        "verdict: 'rewind(to: make_quote)'}"
    )
    doc = chain(RESTATED.replace("ROW", row).replace("[code:QUOTE_STALE]", "[error_naming_quote]"))
    assert elements(doc, "table.row-without-signal") == ["verdict_table[R1]"]
