"""CONFORMANCE C5: verdict classification."""

from __future__ import annotations

from chains.core.sim.runtime import Run
from chains.core.sim.state import Observation, Option

from ..builders import OK, OPTIONS, chain, drive_to_book, events, fixture, obs, start_booking

FLIGHT_INTENT = {"origin": "LHR", "destination": "JFK", "trip_reference": "r1", "seats": ["1A"]}


def flight_to(step: str) -> Run:
    run = Run.start(fixture("flight-roundtrip.yaml"), intent=FLIGHT_INTENT)
    run.observe(Observation(options=[Option(id="out", key={"marketing_carrier": "SK"})]))
    run.select("out")
    run.observe(Observation(options=[Option(id="ret", key={"marketing_carrier": "SK"})]))
    run.select("ret")
    while run.waiting().step != step:
        run.observe(OK)
    return run


def test_c5_1_valid_empty_is_not_an_error():
    run = flight_to("seat_map")
    run.observe(obs(predicates=["seat_maps.length == 0"]))
    attempt = events(run, "attempt", "seat_map")[-1]
    assert (attempt.verdict, attempt.row) == ("ok(empty)", "#2")
    routed = events(run, "transition", "seat_map")[-1]
    assert (routed.verdict, routed.row) == ("ok", "empty.route")
    assert run.waiting().step == "initiate_hold"
    assert run.snapshot.dispatches["seat_map"] == 1


def test_c5_1_an_empty_routes_where_the_config_says():
    run = start_booking()
    run.observe(obs(predicates=["results.length == 0"]))
    routed = events(run, "transition", "search")[-1]
    assert routed.verdict == "repair(to: search, fields: [dates])"
    assert run.waiting().kind == "repair" and run.waiting().fields == ["dates"]
    assert run.snapshot.dispatches["search"] == 1


def test_c5_2_preconditions_fire_on_success_payloads():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.refundable == false"]))
    fired = events(run, "transition", "quote")[-1]
    assert (fired.verdict, fired.row) == ("gate(nonrefundable_ok)", "precondition#1")
    assert run.waiting().gate == "nonrefundable_ok"
    assert run.snapshot.dispatches.get("lock_price", 0) == 0


def test_c5_2_an_ok_precondition_advances_degraded_and_is_traced():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.no_seats"]))
    fired = events(run, "transition", "quote")[-1]
    assert (fired.verdict, fired.row, fired.note) == (
        "ok",
        "precondition#2",
        "proceed without seats",
    )
    assert run.waiting().step == "lock_price"


def test_c5_3_fixed_defaults_for_unmatched_signals():
    run = drive_to_book(start_booking())
    run.observe(obs("http:400", "BRAND_NEW_CODE"))
    attempt = events(run, "attempt", "book")[-1]
    assert (attempt.verdict, attempt.verdict_source, attempt.row) == ("reconcile", "default", "#11")
    other = start_booking()
    other.observe(obs("http:400", "BRAND_NEW_CODE"))
    attempt = events(other, "attempt", "search")[-1]
    assert (attempt.verdict, attempt.verdict_source) == (
        "dead_end(reason: unmatched_signal)",
        "default",
    )
    assert other.snapshot.dispatches["search"] == 1 and other.snapshot.state == "dead_end"


def test_c5_4_deterministic_rejects_do_not_retry():
    run = drive_to_book(start_booking())
    run.observe(obs("http:402", "FRAUD"))
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "fraud" and run.snapshot.outcome["permanent"] is True
    assert run.snapshot.dispatches["book"] == 1
    assert run.waiting().kind == "nothing"


def test_c5_5_auto_repairs_are_code_paced_and_bounded():
    run = flight_to("revalidate")
    repairs = run.snapshot.budgets.repairs_left
    run.observe(obs("http:409", "TRIP_REFERENCE_CLOSED"))
    applied = events(run, "transition", "revalidate")[-1]
    assert applied.proposal_source == "code"
    assert applied.verdict == "repair(to: revalidate, fields: [trip_reference])"
    assert run.snapshot.intent["trip_reference"].startswith("auto:trip_reference")
    assert run.snapshot.budgets.repairs_left == repairs - 1
    assert run.waiting().kind == "observe" and run.waiting().step == "revalidate"  # no round-trip
    run.observe(obs("http:409", "TRIP_REFERENCE_CLOSED"))  # once: the table row answers now
    second = events(run, "attempt", "revalidate")[-1]
    assert second.row == "F11"
    assert run.waiting().kind == "repair"
    assert run.snapshot.auto_repairs_fired == ["revalidate#1"]


def test_c5_row_1_a_200_carrying_the_quote_s_expiry_code_rewinds_to_the_quote():
    """SPEC §3 row 1: staleness "whether carried as an HTTP status OR inside a 2xx
    payload"; it outranks transport success."""
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)  # quote
    run.observe(obs("http:200", "QUOTE_EXPIRED"))  # lock_price answers 200, the quote is gone
    attempt = events(run, "attempt", "lock_price")[-1]
    assert (attempt.row, attempt.verdict) == ("#1", "rewind(to: quote)")
    assert run.waiting().step == "quote"


# A hotel booking whose rate check presents both a search session and a rate key.
HOTEL = """
id: hotel_rate_check
handles:
  - {id: session, minted_by: open_session,
     staleness: {detect: [code:SESSION_GONE, "session.expired"], refresh: open_session}}
  - {id: rate_key, minted_by: find_rates,
     staleness: {detect: [code:RATE_GONE, "rate.expired"], refresh: find_rates}}
actions:
  - {id: open_session, effect: mint, output: {handles: [session]}}
  - {id: find_rates, effect: read, output: {handles: [rate_key]}}
  - {id: check_rate, effect: read, input: {handles: [session, rate_key]}}
policy: {per_chain: {max_rewinds: 3}}
"""


def test_c5_row_1_when_two_handles_each_report_stale_the_shallowest_one_is_re_minted():
    """SPEC §3 row 1: "rewind(to: handle.refresh) — shallowest dead handle wins"."""
    run = Run.start(chain(HOTEL))
    run.observe(OK)  # open_session: session#1, minted first
    run.observe(OK)  # find_rates: rate_key#1
    run.observe(obs(predicates=["rate.expired", "session.expired"]))
    attempt = events(run, "attempt", "check_rate")[-1]
    assert (attempt.row, attempt.verdict) == ("#1", "rewind(to: open_session)")
    assert run.waiting().step == "open_session"


# A card capture with no key and no domain rows: only SPEC §3's generic rows classify it.
BARE_CAPTURE = """
id: bare_capture
actions:
  - {id: authorize, effect: read}
  - {id: capture, effect: commit, idempotency: {mode: none},
     confirmation: {probe: get_capture, signal: captured}}
  - {id: get_capture, effect: read, probe_only: true}
"""


def test_c5_row_5_a_rate_limit_on_an_unkeyed_capture_reconciles_instead_of_retrying():
    """SPEC §3 row 5: a 429 on an unkeyed commit is reconciled unless the chain declares
    that rejection no_side_effect."""
    run = Run.start(chain(BARE_CAPTURE))
    run.observe(OK)
    run.observe(obs("http:429"))
    attempt = events(run, "attempt", "capture")[-1]
    assert (attempt.row, attempt.verdict) == ("#5", "reconcile")
    assert run.waiting().kind == "probe" and run.snapshot.dispatches["capture"] == 1


def test_c5_row_4_a_rate_limit_on_the_authorization_read_retries():
    run = Run.start(chain(BARE_CAPTURE))
    run.observe(obs("http:429"))
    attempt = events(run, "attempt", "authorize")[-1]
    assert (attempt.row, attempt.verdict) == ("#4", "retry")
