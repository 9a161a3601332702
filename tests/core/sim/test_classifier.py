"""The classifier: domain rows first, then SPEC §3's generic rows; rows 11–12 fixed."""

from __future__ import annotations

import pytest

from chains.core.sim.classifier import ClassifyContext, classify, matches, row_label
from chains.core.sim.state import Observation

from .builders import BOOKING, KEYED, TWO_HANDLES, chain, fixture, obs

FLIGHT = fixture("flight-roundtrip.yaml")
CARD = fixture("card-payment.yaml")
CLOUD = fixture("cloud-provisioning.yaml")


def run_classify(doc, step, observation, **ctx):
    return classify(doc, ClassifyContext(**ctx), doc.action(step), observation)


def test_domain_rows_match_in_order_and_name_their_row():
    c = run_classify(FLIGHT, "price_quote", obs("http:409", "FARE_UNAVAILABLE"))
    assert (str(c.verdict), c.source, c.row) == ("reselect(to: select_outbound)", "table", "F7")


def test_a_conjunction_row_needs_every_part():
    observation = obs("http:409", "FARE_UNAVAILABLE", predicates=["error.leg == 'return'"])
    c = run_classify(FLIGHT, "price_quote", observation)
    assert c.row == "F6"


def test_rows_out_of_scope_do_not_match():
    c = run_classify(FLIGHT, "outbound_search", obs("http:409", "FARE_PRICE_CHANGED"))
    assert (c.row, c.source) == ("#12", "default")


def test_variant_scoped_rows_apply_only_in_their_variant():
    exhausted = obs("http:409", "ZONE_CAPACITY_EXHAUSTED")
    assert run_classify(CLOUD, "reserve_capacity", exhausted, variant="standard").row == "C2"
    assert run_classify(CLOUD, "reserve_capacity", exhausted, variant="dedicated").row == "#12"


def test_a_status_class_covers_its_statuses():
    assert matches("http:5xx", Observation(transport="http:503"))
    assert not matches("http:5xx", Observation(transport="http:429"))


def test_payload_predicates_match_by_name():
    decline = "status == 402 && error.type == 'card_error'"
    c = run_classify(CARD, "confirm_intent", obs("http:402", predicates=[decline]))
    assert (str(c.verdict), c.row) == ("ok(empty)", "#2")


def test_empty_outranks_transport_success():
    doc = chain(BOOKING)
    c = run_classify(doc, "search", obs(predicates=["results.length == 0"]))
    assert str(c.verdict) == "ok(empty)"


def test_staleness_in_a_success_payload_outranks_transport_success():
    doc = chain(BOOKING)
    c = run_classify(doc, "lock_price", obs("http:200", "QUOTE_EXPIRED"), live={"quote_id": 3})
    assert (str(c.verdict), c.row) == ("rewind(to: quote)", "#1")


def test_a_success_carrying_an_error_code_never_reaches_ok():
    doc = chain(BOOKING)
    c = run_classify(doc, "quote", obs("http:200", "SOMETHING_ODD"))
    assert (str(c.verdict), c.row) == ("dead_end(reason: unmatched_signal)", "#12")


def test_bare_shared_staleness_signal_blames_the_deepest_candidate_first():
    doc = chain(TWO_HANDLES)
    live = {"a": 2, "b": 3}
    first = run_classify(doc, "use", obs("http:410"), live=live)
    assert str(first.verdict) == "rewind(to: mint_b)"
    again = run_classify(
        doc, "use", obs("http:410"), live=live, stale_recurrences={first.stale_key: 1}
    )
    assert str(again.verdict) == "rewind(to: mint_a)"


def test_an_attributed_staleness_signal_names_its_handle():
    doc = chain(TWO_HANDLES)
    c = run_classify(doc, "use", obs("http:410", "A_EXPIRED"), live={"a": 2, "b": 3})
    assert str(c.verdict) == "rewind(to: mint_a)"


def test_several_handles_reporting_stale_rewind_to_the_shallowest():
    doc = chain(TWO_HANDLES)
    both = obs("http:410", "B_EXPIRED", predicates=["code:A_EXPIRED"])
    c = run_classify(doc, "use", both, live={"a": 2, "b": 3})
    assert str(c.verdict) == "rewind(to: mint_a)"


@pytest.mark.parametrize(
    ("transport", "row", "verdict"),
    [("http:429", "#4", "retry"), ("http:503", "#6", "retry"), ("timeout", "#6", "retry")],
)
def test_transient_faults_retry_reads(transport, row, verdict):
    doc = chain(BOOKING)
    c = run_classify(doc, "search", obs(transport))
    assert (c.row, str(c.verdict)) == (row, verdict)


@pytest.mark.parametrize("transport", ["timeout", "conn_drop", "http:502"])
def test_transport_faults_on_an_unkeyed_commit_reconcile(transport):
    doc = chain(BOOKING)
    c = run_classify(doc, "book", obs(transport), commit_in_flight=True)
    assert (c.row, str(c.verdict)) == ("#7", "reconcile")


def test_faults_on_a_keyed_commit_retry_until_the_key_expires():
    doc = chain(KEYED)
    assert str(run_classify(doc, "pay", obs("timeout"), commit_in_flight=True).verdict) == "retry"
    expired = run_classify(doc, "pay", obs("timeout"), commit_in_flight=True, key_expired=True)
    assert (str(expired.verdict), expired.row) == ("reconcile", "#7")


def test_a_rate_limit_on_an_unkeyed_commit_reconciles_unless_declared_safe():
    doc = chain(BOOKING)
    doc = doc.model_copy(update={"verdict_table": [r for r in doc.verdict_table if r.id != "B2"]})
    c = run_classify(doc, "book", obs("http:429"), commit_in_flight=True)
    assert (str(c.verdict), c.row) == ("reconcile", "#5")
    safe = run_classify(chain(BOOKING), "book", obs("http:429"), commit_in_flight=True)
    assert (str(safe.verdict), safe.no_side_effect) == ("retry", True)


def test_unmatched_signals_reconcile_while_a_commit_is_in_flight_else_dead_end():
    doc = chain(BOOKING)
    c = run_classify(doc, "book", obs("http:400", "WHO_KNOWS"), commit_in_flight=True)
    assert (str(c.verdict), c.source, c.row) == ("reconcile", "default", "#11")
    c = run_classify(doc, "search", obs("http:400", "WHO_KNOWS"))
    assert (str(c.verdict), c.source, c.row) == (
        "dead_end(reason: unmatched_signal)",
        "default",
        "#12",
    )


def test_auto_repairs_fire_before_the_table_and_once():
    trigger = obs("http:409", "TRIP_REFERENCE_CLOSED")
    c = run_classify(FLIGHT, "revalidate", trigger)
    assert (str(c.verdict), c.auto_repair) == (
        "repair(to: revalidate, fields: [trip_reference])",
        "revalidate#1",
    )
    spent = run_classify(FLIGHT, "revalidate", trigger, auto_repairs_fired=["revalidate#1"])
    assert (spent.row, spent.auto_repair) == ("F11", None)


def test_a_domain_retry_on_an_unkeyed_commit_without_no_side_effect_reconciles():
    doc = chain(BOOKING.replace("no_side_effect: true", "no_side_effect: false"))
    c = run_classify(doc, "book", obs("http:429"), commit_in_flight=True)
    assert (str(c.verdict), c.row) == ("reconcile", "B2")


def test_a_domain_retry_on_a_keyed_commit_past_key_retention_reconciles():
    c = run_classify(CARD, "capture", obs("timeout"), commit_in_flight=True, key_expired=True)
    assert (str(c.verdict), c.row) == ("reconcile", "P7")


# The memo: classify answers a repeated question from memory, never a different one.


def test_the_memo_sees_the_mint_order_of_the_live_handles():
    doc = chain(TWO_HANDLES)
    b_younger = run_classify(doc, "use", obs("http:410"), live={"a": 2, "b": 3})
    a_younger = run_classify(doc, "use", obs("http:410"), live={"a": 5, "b": 4})
    assert str(b_younger.verdict) == "rewind(to: mint_b)"
    assert str(a_younger.verdict) == "rewind(to: mint_a)"


def test_the_memo_sees_which_handles_are_live():
    doc = chain(TWO_HANDLES)
    both = run_classify(doc, "use", obs("http:410", "A_EXPIRED"), live={"a": 2, "b": 3})
    without_a = run_classify(doc, "use", obs("http:410", "A_EXPIRED"), live={"b": 3})
    assert str(both.verdict) == "rewind(to: mint_a)"
    assert str(without_a.verdict) == "rewind(to: mint_b)"


def test_the_memo_of_one_chain_never_answers_for_an_edited_copy():
    doc = chain(TWO_HANDLES)
    assert run_classify(doc, "use", obs("http:409", "LOCKED")).row == "#12"
    table = chain(
        TWO_HANDLES + "verdict_table:\n  - {id: L1, signal: [code:LOCKED], verdict: retry}\n"
    ).verdict_table
    edited = doc.model_copy(update={"verdict_table": table})
    assert run_classify(edited, "use", obs("http:409", "LOCKED")).row == "L1"


def test_a_commit_in_flight_is_part_of_the_question():
    doc = chain(TWO_HANDLES)
    idle = run_classify(doc, "use", obs("http:409", "ODD"))
    in_flight = run_classify(doc, "use", obs("http:409", "ODD"), commit_in_flight=True)
    assert (idle.row, in_flight.row) == ("#12", "#11")


def test_two_unnamed_rows_written_alike_are_labelled_by_their_own_places():
    doc = chain(
        TWO_HANDLES + "verdict_table:\n" + "  - {signal: [code:LOCKED], verdict: retry}\n" * 2
    )
    first, second = doc.verdict_table
    assert first == second and first is not second
    assert (row_label(doc, first), row_label(doc, second)) == ("domain#1", "domain#2")


SHARED_STALENESS = chain(
    """
id: shared_staleness
handles:
  - {id: offer, minted_by: search, staleness: {detect: [http:410]}}
  - {id: quote, minted_by: price, staleness: {detect: [http:410]}}
actions:
  - {id: search, effect: read, output: {handles: [offer]}}
  - {id: price, effect: read, input: {handles: [offer]}, output: {handles: [quote]}}
  - {id: book, effect: read, input: {handles: [offer, quote]}}
"""
)


def test_unattributable_staleness_past_the_last_candidate_picks_the_last_as_the_key_assumes():
    # the state key caps these counts at the candidates less one (classifier.repeats_read)
    def rewound_to(tried: int) -> str:
        c = run_classify(
            SHARED_STALENESS, "book", obs("http:410"), live={"offer": 1, "quote": 2},
            stale_recurrences={"book|http:410": tried},
        )  # fmt: skip
        assert c.stale_key == "book|http:410"
        return str(c.verdict)

    assert [rewound_to(n) for n in (0, 1, 2, 5)] == [
        "rewind(to: price)",
        "rewind(to: search)",
        "rewind(to: search)",
        "rewind(to: search)",
    ]
