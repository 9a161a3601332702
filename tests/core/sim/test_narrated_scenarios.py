"""The behaviours SPEC §6 and §7 narrate, as scenarios on our own fixtures.

``fixtures/flight-roundtrip.yaml`` mirrors example A (§6): its row F8 is the
SPEC's D4 (price change at revalidate), F17 its D10 (ambiguous failure of
the unkeyed booking). ``fixtures/card-payment.yaml`` mirrors example B (§7):
its empty route is the SPEC's P1 (an ordinary decline repairs the
instrument), its P1 the SPEC's P7 (a risk decline is a permanent dead end),
P2 the 3-D Secure gate on ``status == requires_action``, P4 the hold expiry,
P6/P7 the keyed retries and the cached-error replay. Each test plays one
narrated behaviour through :func:`~chains.core.sim.scenario.simulate` and
checks the states, verdicts, rows and dispatches the SPEC states for it.
"""

from __future__ import annotations

import textwrap

from chains.core.sim.scenario import SimulationResult, load_scenario, simulate
from chains.core.sim.state import Event, Observation

from .shapes import CARD_PREFIX, ours

FLIGHT_PREFIX = """
chain: flight_roundtrip
intent:
  origin: LHR
  destination: JFK
  dates: {outbound: "2026-06-01", return: "2026-06-14"}
  cabin: economy
  passenger_counts: {adults: 1}
  travellers: [{name: Traveller One}]
  contact: {phone: "0"}
  trip_reference: ref-0001
  payment: pm_test
events:
  - observe:                      # outbound_search: two outbounds
      options:
        - {id: out_1, key: {marketing_carrier: SK, flight_numbers: [SK101], fare_brand: light}}
        - {id: out_2, key: {marketing_carrier: SK, flight_numbers: [SK103], fare_brand: light}}
  - select: out_1
  - observe:                      # return_search, coupled to out_1
      options:
        - {id: ret_1, key: {marketing_carrier: SK, flight_numbers: [SK102], fare_brand: light}}
  - select: ret_1
  - observe: "http:200"           # price_quote
  - observe: "http:200"           # seat_map
  - observe: "http:200"           # initiate_hold
"""

# How the card fixture's rows are written; the simulator matches predicates by name.
DECLINE = "status == 402 && error.type == 'card_error'"
RISK = "status == 402 && error.decline_code in ['suspected_fraud', 'pickup_card', 'stolen_card']"
REQUIRES_ACTION = "status == 'requires_action'"
REPLAYED_5XX = "header:Idempotent-Replayed == 'true' && status >= 500"


def play(prefix: str, events: str | tuple[str, ...] = "", expect: str = "") -> SimulationResult:
    """Play ``prefix`` plus more ``events`` (blocks of them); every ``expect`` line must hold."""
    blocks = (events,) if isinstance(events, str) else events
    more = "".join(textwrap.dedent(block).lstrip("\n") for block in blocks)
    text = textwrap.dedent(prefix) + textwrap.indent(more, "  ")
    if expect:
        text += "expect:\n" + textwrap.indent(textwrap.dedent(expect), "  ")
    chain = ours("flight-roundtrip.yaml" if "flight_roundtrip" in prefix else "card-payment.yaml")
    result = simulate(chain, load_scenario(text))
    assert result.failed == [], [str(e) for e in result.failed]
    return result


def attempts(result: SimulationResult, step: str) -> list[Event]:
    return [e for e in result.run.trace if e.event_type == "attempt" and e.step_id == step]


def rows(result: SimulationResult) -> list[tuple[str | None, str | None]]:
    """(row, verdict) of every event that applied a verdict, in trace order."""
    return [(e.row, e.verdict) for e in result.run.trace if e.verdict is not None]


# --- §6 D4: the price-change gate -------------------------------------------------


def test_a_price_change_at_revalidate_parks_the_run_at_the_price_consent_gate():
    """SPEC §6.3 D4: FARE_PRICE_CHANGED at revalidate → gate(price_change_consent)."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe:                    # revalidate: the fare moved
            transport: "http:409"
            code: FARE_PRICE_CHANGED
            payload: {previous_price: 420, final_price: 455}
        """,
        """
        state: at_gate
        dispatches: {revalidate: 1, book_trip: 0}
        """,
    )
    (attempt,) = attempts(result, "revalidate")
    assert (attempt.row, attempt.verdict) == ("F8", "gate(price_change_consent)")
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.gate) == ("answer", "price_change_consent")
    assert waiting.outcomes == ["accept", "decline"]


def test_accepting_a_price_change_books_on_the_lock_revalidate_already_minted():
    """SPEC §6.3 gate price_change_consent ``accept: ok`` and §2.6: an ``ok`` outcome
    advances past the raising step with its output; it never re-executes it."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe: {transport: "http:409", code: FARE_PRICE_CHANGED}
        - answer: {gate: price_change_consent, outcome: accept}
        - observe: "http:200"         # book_trip
        """,
        """
        state: done
        dispatches: {revalidate: 1, book_trip: 1}
        commits_landed: [book_trip]
        """,
    )
    assert ("gate:price_change_consent.accept", "ok") in rows(result)
    (book,) = attempts(result, "book_trip")
    assert book.handles_consumed == ["price_lock#1"]


def test_declining_a_price_change_reselects_another_outbound():
    """SPEC §6.3 gate price_change_consent ``decline: reselect(to: select)`` and §3
    reselect: the declined option is excluded and a fresh pick is collected."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe: {transport: "http:409", code: FARE_PRICE_CHANGED}
        - answer: {gate: price_change_consent, outcome: decline}
        """,
        """
        state: running
        dispatches: {revalidate: 1, book_trip: 0}
        """,
    )
    assert ("gate:price_change_consent.decline", "reselect(to: select_outbound)") in rows(result)
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.step) == ("select", "select_outbound")
    assert [o.id for o in waiting.options] == ["out_2"]
    assert result.run.snapshot.excluded == {"select_outbound": ["out_1"]}


# --- §6 D10: a booking timeout followed by a probe --------------------------------------


def test_a_booking_timeout_reconciles_and_never_dispatches_the_booking_again():
    """SPEC §6.3 D10 and §3 row 7: an unkeyed commit's timeout → reconcile (NEVER retry)."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe: "http:200"         # revalidate
        - observe: timeout            # book_trip: the response is lost
        - wait: 30m
        """,
        """
        state: reconciling
        dispatches: {book_trip: 1}
        commits_landed: []
        """,
    )
    (book,) = attempts(result, "book_trip")
    assert (book.row, book.verdict) == ("F17", "reconcile")
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.step) == ("probe", "book_trip")
    assert [r.status for r in result.run.snapshot.correlation] == ["RECONCILING"]


def test_a_probe_that_finds_the_timed_out_booking_finishes_with_one_dispatch():
    """SPEC §3 reconcile: landed → treat the original attempt as ok, advance."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe: "http:200"         # revalidate
        - observe: timeout            # book_trip
        - probe: landed
        """,
        """
        state: done
        dispatches: {book_trip: 1}
        commits_landed: [book_trip]
        """,
    )
    assert rows(result)[-1] == ("reconcile:landed", "ok")
    assert result.run.snapshot.handles["trip_locator"].alias == "trip_locator#1"


def test_a_probe_that_finds_no_booking_rewinds_to_re_mint_the_spent_price_lock():
    """SPEC §3 reconcile: not-landed with no cause → rewind(refresh of the consumed
    handle); §4 I4: the lock the lost attempt presented is spent, so it is re-minted
    and the booking goes out again only under the new lock."""
    result = play(
        FLIGHT_PREFIX,
        """
        - observe: "http:200"         # revalidate
        - observe: timeout            # book_trip
        - probe: not_landed
        - observe: "http:200"         # revalidate again
        - observe: "http:200"         # book_trip, dispatched afresh
        """,
        """
        state: done
        dispatches: {revalidate: 2, book_trip: 2}
        commits_landed: [book_trip]
        """,
    )
    not_landed = next(e for e in result.run.trace if e.row == "reconcile:not_landed")
    assert not_landed.verdict == "rewind(to: revalidate)"
    assert not_landed.handles_invalidated == ["price_lock#1"]
    assert [e.handles_consumed for e in attempts(result, "book_trip")] == [
        ["price_lock#1"],
        ["price_lock#2"],
    ]


# --- §7 P4: a hold expiry that rewinds with re-consent ----------------------------------


HOLD_EXPIRES = """
- observe: "http:200"             # confirm_intent: the hold is placed
- observe: {transport: "http:400", code: authorization_expired}   # capture
"""


def test_a_hold_that_expired_before_capture_rewinds_to_intent_creation():
    """SPEC §7.3 P4: charge_expired_for_capture at capture → rewind(to: create_intent);
    the expiry cancelled the intent, so re-confirming the old one is not an option."""
    result = play(CARD_PREFIX, HOLD_EXPIRES, "state: running\n")
    (capture,) = attempts(result, "capture")
    assert (capture.row, capture.verdict) == ("P4", "rewind(to: create_intent)")
    assert "intent_ref#1" in capture.handles_invalidated
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.step) == ("observe", "create_intent")


def test_the_replay_after_a_hold_expiry_asks_for_payment_consent_again():
    """SPEC §3: an entry gate parks the cursor on EVERY arrival, replays included;
    §7.2 confirm: "re-fires on every arrival — incl. the replay after a hold-expiry
    rewind"."""
    result = play(
        CARD_PREFIX,
        (
            HOLD_EXPIRES,
            """
            - observe: "http:200"         # create_intent: a new intent
            """,
        ),
        """
        state: at_gate
        dispatches: {create_intent: 2, confirm_intent: 1, capture: 1}
        """,
    )
    assert [e.row for e in result.run.trace].count("entry_gate") == 2
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.gate) == ("answer", "payment_consent")


def test_after_re_consent_the_new_hold_is_captured_on_the_new_intent():
    """SPEC §7.2/§7.3 P4 end to end: create_intent → consent → confirm → capture again."""
    result = play(
        CARD_PREFIX,
        (
            HOLD_EXPIRES,
            """
            - observe: "http:200"         # create_intent
            - answer: {gate: payment_consent, outcome: approve}
            - observe: "http:200"         # confirm_intent: a new hold
            - observe: "http:200"         # capture
            """,
        ),
        """
        state: done
        dispatches: {create_intent: 2, confirm_intent: 2, capture: 2}
        commits_landed: [create_customer, confirm_intent, confirm_intent, capture]
        """,
    )
    assert attempts(result, "capture")[-1].handles_consumed == ["intent_ref#2", "authorization#2"]


def test_a_hold_expiry_invalidates_the_old_hold_with_its_intent():
    """SPEC §4 I1: re-minting intent_ref invalidates everything derived from it, and
    the hold (``authorization``, derived_from [intent_ref]) is; I5 keeps the landed
    confirm in commits_landed for compensation, but its handle is no longer live."""
    result = play(CARD_PREFIX, HOLD_EXPIRES)
    (capture,) = attempts(result, "capture")
    assert set(capture.handles_invalidated) >= {"intent_ref#1", "authorization#1"}
    assert "authorization" not in result.run.snapshot.handles
    landed = result.run.snapshot.commits_landed
    assert [lc.step for lc in landed] == ["create_customer", "confirm_intent"]


# --- §7 P2: the 3-D Secure gate on status == requires_action ---------------------------


def test_a_confirmation_that_requires_action_parks_at_the_sca_challenge():
    """SPEC §7.3 P2: ``status == requires_action`` at confirm → gate(sca_challenge),
    matched by that predicate (row P2), before any capture."""
    result = play(
        CARD_PREFIX,
        f"""
        - observe: {{predicates: ["{REQUIRES_ACTION}"], payload: {{status: requires_action}}}}
        """,
        """
        state: at_gate
        dispatches: {confirm_intent: 1, capture: 0}
        """,
    )
    (confirm,) = attempts(result, "confirm_intent")
    assert (confirm.row, confirm.verdict) == ("P2", "gate(sca_challenge)")
    assert result.run.waiting().gate == "sca_challenge"


def test_a_completed_sca_challenge_goes_on_to_capture_without_confirming_again():
    """SPEC §7.3 gate sca_challenge ``completed: ok`` and §2.6: confirm's output stands."""
    result = play(
        CARD_PREFIX,
        f"""
        - observe: {{predicates: ["{REQUIRES_ACTION}"]}}
        - answer: {{gate: sca_challenge, outcome: completed}}
        - observe: "http:200"         # capture
        """,
        """
        state: done
        dispatches: {confirm_intent: 1, capture: 1}
        commits_landed: [create_customer, confirm_intent, capture]
        """,
    )
    assert ("gate:sca_challenge.completed", "ok") in rows(result)


def test_a_confirmation_without_requires_action_is_never_challenged():
    """The predicate is what raises the gate: a plain success goes straight to capture."""
    result = play(
        CARD_PREFIX,
        """
        - observe: {payload: {status: requires_capture}}
        """,
        "dispatches: {confirm_intent: 1}\n",
    )
    assert all("sca_challenge" not in (e.verdict or "") for e in result.run.trace)
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.step) == ("observe", "capture")


# --- §7 P1 and P7: a decline that repairs the instrument, a risk decline that does not ---


INSUFFICIENT_FUNDS = f"""
- observe:                        # confirm_intent: an ordinary decline
    transport: "http:402"
    code: card_declined
    predicates: ["{DECLINE}"]
    payload: {{error: {{type: card_error, decline_code: insufficient_funds}}}}
"""


def test_an_ordinary_decline_at_confirm_asks_for_another_instrument():
    """SPEC §7.3 P1: a 402 card_error is the domain's valid-empty on an error transport
    → repair(to: confirm, fields: [instrument])."""
    result = play(CARD_PREFIX, INSUFFICIENT_FUNDS, "state: running\n")
    assert rows(result)[-2:] == [
        ("#2", "ok(empty)"),
        ("empty.route", "repair(to: confirm_intent, fields: [instrument])"),
    ]
    waiting = result.run.waiting()
    assert (waiting.kind, waiting.step, waiting.fields) == (
        "repair",
        "confirm_intent",
        ["instrument"],
    )
    assert [lc.step for lc in result.run.snapshot.commits_landed] == ["create_customer"]


def test_a_repaired_instrument_replays_confirm_on_the_same_intent():
    """SPEC §7.3 P1: "replay CONFIRM with a new instrument, never re-create the intent";
    the consent entry gate asks again on the replay (§3)."""
    result = play(
        CARD_PREFIX,
        (
            INSUFFICIENT_FUNDS,
            """
            - propose: {kind: repair, fields: {instrument: pm_second_card}}
            - answer: {gate: payment_consent, outcome: approve}
            - observe: "http:200"         # confirm_intent with the new card
            - observe: "http:200"         # capture
            """,
        ),
        """
        state: done
        dispatches: {create_intent: 1, confirm_intent: 2, capture: 1}
        commits_landed: [create_customer, confirm_intent, capture]
        """,
    )
    assert [accepted for _, accepted in result.proposals] == [True]
    assert [e.handles_consumed for e in attempts(result, "confirm_intent")] == [
        ["intent_ref#1"],
        ["intent_ref#1"],
    ]
    assert result.run.snapshot.intent["instrument"] == "pm_second_card"


def test_a_stolen_card_decline_is_a_permanent_dead_end_and_never_a_repair():
    """SPEC §7.3 P7: a fraud/risk decline → dead_end; "do not route to instrument
    repair loops". The risk row comes first, so it outranks the valid-empty decline."""
    result = play(
        CARD_PREFIX,
        f"""
        - observe:
            transport: "http:402"
            code: card_declined
            predicates: ["{DECLINE}", "{RISK}"]
            payload: {{error: {{type: card_error, decline_code: stolen_card}}}}
        """,
        """
        state: dead_end
        dispatches: {confirm_intent: 1}
        """,
    )
    (confirm,) = attempts(result, "confirm_intent")
    assert (confirm.row, confirm.verdict) == (
        "P1",
        "dead_end(reason: risk_decline, permanent: true)",
    )
    assert all(not (e.verdict or "").startswith("repair") for e in result.run.trace)
    assert result.run.snapshot.outcome["permanent"] is True


# --- §2.1 / §7.2: a persistently cached 5xx that reconciles ----------------------------


def test_a_server_error_the_provider_flags_as_replayed_reconciles_through_the_probe():
    """SPEC §7.2 idempotency notes and the fixture's row P6: a replayed key serving a
    stored 5xx is not a fresh attempt; the run probes instead of retrying again."""
    result = play(
        CARD_PREFIX,
        f"""
        - observe: "http:200"         # confirm_intent
        - observe: "http:500"         # capture: a fresh server error, retried on the same key
        - observe: {{transport: "http:500", predicates: ["{REPLAYED_5XX}"]}}
        - probe: landed
        """,
        """
        state: done
        dispatches: {capture: 2}
        verdicts: [ok, ok, gate(payment_consent), ok, ok, retry, reconcile, ok]
        commits_landed: [create_customer, confirm_intent, capture]
        """,
    )
    keys = {e.idempotency_key for e in attempts(result, "capture")}
    assert len(keys) == 1
    assert [(e.row, e.verdict) for e in attempts(result, "capture")] == [
        ("P7", "retry"),
        ("P6", "reconcile"),
    ]


def test_server_errors_that_persist_on_a_returns_cached_capture_reconcile_not_dead_end():
    """SPEC §2.1 replay_semantics returns_cached: "a persistently replayed error routes to
    reconcile, not more retries"; §7.2: cached-error replay keeps reconcile load-bearing
    on a keyed provider. The capture probe (get_intent) decides; nothing is unwound."""
    result = play(CARD_PREFIX, '- observe: "http:200"         # confirm_intent\n')
    run = result.run
    while run.waiting().kind == "observe" and run.snapshot.dispatches.get("capture", 0) < 3:
        run.observe(Observation(transport="http:500"))  # the same key: the stored 500 again
    assert all(not (e.verdict or "").startswith("dead_end") for e in run.trace)
    assert run.snapshot.compensation is None
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("probe", "capture")
    run.probe("landed")
    assert run.snapshot.state == "done"
    assert [lc.step for lc in run.snapshot.commits_landed][-1] == "capture"
    assert run.snapshot.dispatches["capture"] <= 3
