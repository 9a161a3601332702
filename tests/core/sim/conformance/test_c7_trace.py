"""CONFORMANCE C7: trace and replay."""

from __future__ import annotations

import contextlib
import json
import re
import textwrap
from collections.abc import Callable

import pytest

from chains.core import formats
from chains.core.sim.audit import audit
from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.scenario import Scenario, simulate
from chains.core.sim.state import Option, Proposal

from ..builders import (
    OK,
    OPTIONS,
    REFUNDS,
    TWO_HANDLES,
    chain,
    drive_to_book,
    obs,
    start_booking,
    unwinding_cancel_flow,
)
from .test_c5_classification import flight_to


def happy() -> Run:
    run = drive_to_book(start_booking(seed=7))
    run.observe(OK)
    return run


def lost_response() -> Run:
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.wait(3600)
    run.probe("unknown")
    run.probe("not_landed", cause=obs("http:402", "CARD_DECLINED"))
    run.propose(Proposal(kind="retry"))
    run.propose(Proposal(kind="repair", fields={"card": "amex"}))
    run.observe(OK)
    run.observe(OK)
    return run


def retries_and_staleness() -> Run:
    run = Run.start(chain(TWO_HANDLES), seed=3)
    run.observe(obs("http:503"))
    run.observe(OK)
    run.observe(OK)
    run.observe(obs("http:410"))
    run.observe(OK)
    run.observe(obs("http:410"))
    run.observe(OK)
    run.observe(OK)
    run.observe(OK)
    return run


def gates_and_timeouts() -> Run:
    run = flight_to("initiate_hold")
    run.observe(obs("http:409", "SEAT_NOT_AVAILABLE"))
    run.wait(11 * 60)
    run.observe(OK)
    run.observe(obs("http:409", "FARE_PRICE_CHANGED"))
    run.answer("accept")
    run.observe(obs("http:429"))
    run.observe(OK)
    return run


def a_typed_gate_answer() -> Run:
    run = flight_to("initiate_hold")
    run.observe(obs("http:409", "SEAT_NOT_AVAILABLE"))
    run.answer("choose_other_seats", {"seats": TYPED_SEATS})
    while not run.finished:
        run.observe(OK)
    return run


TYPED_SEATS = "14C for Ada Lovelace, wheelchair"


def compensation() -> Run:
    run = unwinding_cancel_flow()
    run.observe(obs(options=REFUNDS, predicates=["options.length > 0"]))
    with contextlib.suppress(SimulationError):
        run.answer("choose", {"option_id": "nope"})
    run.answer("choose", {"option_id": "refund"})
    run.observe(obs("timeout"))
    run.probe("landed")
    return run


def crash_and_resume() -> Run:
    run = drive_to_book(start_booking())
    run = Run.resume(run.spec, run.snapshot, run.trace)
    run.probe("landed")
    return run


SCENARIOS: list[Callable[[], Run]] = [
    happy,
    lost_response,
    retries_and_staleness,
    gates_and_timeouts,
    a_typed_gate_answer,
    compensation,
    crash_and_resume,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_c7_1_event_log_cardinality(scenario):
    run = scenario()
    attempts = [e for e in run.trace if e.event_type == "attempt"]
    assert len(attempts) == sum(run.snapshot.dispatches.values())
    assert [e.seq for e in run.trace] == list(range(1, len(run.trace) + 1))
    assert {e.verdict_source for e in attempts} <= {"table", "default"}
    assert all(e.verdict_source != "model" for e in run.trace)
    parks = [e for e in run.trace if (e.verdict or "").startswith("gate(")]
    resumes = [e for e in run.trace if (e.row or "").startswith("gate:")]
    assert all(e.event_type == "transition" for e in resumes)
    assert len(resumes) <= len(parks) + 1


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_c7_2_deterministic_re_derivation(scenario):
    run = scenario()
    assert run.finished
    assert check_replay(run.spec, run.trace) == []


def test_c7_2_a_tampered_trace_does_not_re_derive():
    run = happy()
    trace = [e.model_copy() for e in run.trace]
    trace[3] = trace[3].model_copy(update={"verdict": "retry"})
    assert check_replay(run.spec, trace)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_c7_3_handles_appear_in_the_trace_only_as_aliases(scenario):
    run = scenario()
    alias = re.compile(r"^[a-z_]+#\d+$")
    for event in run.trace:
        for name in (*event.handles_consumed, *event.handles_minted, *event.handles_invalidated):
            assert alias.match(name), name
    text = json.dumps([e.model_dump() for e in run.trace])
    assert "raw" not in text


def test_c7_3_a_value_typed_at_a_gate_is_sealed_not_traced():
    """A gate answer's param that binds an intent field is intent (SPEC §2.6) and may be PII:
    the trace holds a reference, the snapshot's sealed part the value (C7.3, SPEC §2.5)."""
    run = a_typed_gate_answer()
    text = json.dumps([e.model_dump(mode="json") for e in run.trace])
    assert TYPED_SEATS not in text
    assert TYPED_SEATS in run.snapshot.sealed.values()


def test_c7_3_an_answer_naming_a_presented_option_stays_readable():
    """An option id the gate presented was shown, not typed: it stays as it is, so a
    replay without the sealed store still checks it against the options."""
    run = compensation()
    answers = [e.input for e in run.trace if (e.input or {}).get("kind") == "answer"]
    assert answers[-1]["params"] == {"option_id": "refund"}


def test_c7_2_a_sealed_answer_re_derives_with_and_without_the_store():
    run = a_typed_gate_answer()
    assert check_replay(run.spec, run.trace, run.snapshot.sealed) == []
    assert check_replay(run.spec, run.trace) == []


@pytest.mark.parametrize("state", ["at_gate", "reconciling"])
def test_c7_4_snapshot_suffices_for_resume(state):
    def drive(crash: bool) -> Run:
        run = start_booking()
        run.observe(obs(options=OPTIONS))
        run.select("o1")
        if state == "at_gate":
            run.observe(obs(predicates=["fare.refundable == false"]))
        else:
            run.observe(OK)
            run.observe(OK)
            run.observe(obs("timeout"))
        assert run.snapshot.state == state
        if crash:
            saved = json.loads(run.snapshot.model_dump_json())
            trace = [json.loads(e.model_dump_json()) for e in run.trace]
            from chains.core.sim.state import Event, Snapshot

            run = Run.resume(
                run.spec, Snapshot.model_validate(saved), [Event.model_validate(e) for e in trace]
            )
        if state == "at_gate":
            run.answer("accept")
            run.observe(OK)
            run.observe(OK)
        else:
            run.wait(60)
            run.probe("landed")
        return run

    plain, resumed = drive(False), drive(True)
    assert resumed.snapshot == plain.snapshot
    assert resumed.trace == plain.trace


# --- C7.3: provider payloads reach the trace sealed, except the fields a chain declares safe ---

# A flight booked for a named passenger, then paid with a saved card: the booking's
# response names the passenger, the wallet's options and the payment's response carry
# the card. Only the statuses and the fare are declared safe to show.
CARD_BOOKING = """
id: card_booking
handles:
  - {id: offers, minted_by: search}
  - {id: offer, minted_by: choose, derived_from: [offers]}
  - {id: order_id, minted_by: book, derived_from: [offer]}
  - {id: wallet, minted_by: list_cards}
  - {id: card, minted_by: choose_card, derived_from: [wallet]}
  - {id: payment_id, minted_by: pay, derived_from: [order_id, card]}
actions:
  - {id: search, effect: read, input: {intent: [dates]}, output: {handles: [offers]}}
  - {id: choose, effect: select, input: {handles: [offers]}, output: {handles: [offer]}}
  - id: book
    effect: commit
    input: {intent: [passenger_name], handles: [offer]}
    output:
      handles: [order_id]
      safe_to_show: [status, total_amount]
      business_expiry:
        field: pay_by
        on_expiry: "dead_end(reason: hold_expired, permanent: false)"
    idempotency: {mode: keyed, key_scope: run}
    confirmation: {probe: find_order, signal: order exists}
    compensation: {action: cancel_order}
  - {id: list_cards, effect: read, output: {handles: [wallet]}}
  - {id: choose_card, effect: select, input: {handles: [wallet]}, output: {handles: [card]}}
  - id: pay
    effect: commit
    input: {handles: [order_id, card]}
    output: {handles: [payment_id], safe_to_show: [status, card.brand]}
    idempotency: {mode: none}
    confirmation: {probe: find_payment, signal: payment exists}
  - {id: find_order, effect: read, probe_only: true, input: {intent: [passenger_name]}}
  - {id: find_payment, effect: read, probe_only: true, input: {handles: [order_id]}}
  - id: cancel_order
    effect: compensate
    input: {handles: [order_id]}
    idempotency: {mode: keyed}
    confirmation: {probe: find_order, signal: order cancelled}
"""

PASSENGER = "Grace Hopper"
CARD_NUMBER = "4242 4242 4242 4242"
OTHER_CARD = "5555 5555 5555 4444"
BOOKING_REFERENCE = "QX7Z2K"
SECRETS = (PASSENGER, CARD_NUMBER, OTHER_CARD, BOOKING_REFERENCE, "1906-12-09")

BOOKED = obs(
    payload={
        "passengers": [{"name": PASSENGER, "born": "1906-12-09"}],
        "booking_reference": BOOKING_REFERENCE,
        "status": "held",
        "total_amount": "412.00",
        "pay_by": 600,
    }
)
WALLET = obs(
    options=[
        Option(id="pm_1", key={"number": CARD_NUMBER, "holder": PASSENGER}),
        Option(id="pm_2", key={"number": OTHER_CARD, "holder": PASSENGER}),
    ]
)
PAID = obs(
    payload={
        "card": {"number": CARD_NUMBER, "holder": PASSENGER, "brand": "visa"},
        "status": "succeeded",
    }
)


def booked_for_a_passenger() -> Run:
    run = Run.start(
        chain(CARD_BOOKING), intent={"dates": "2026-12-01", "passenger_name": PASSENGER}
    )
    run.observe(obs(options=[Option(id="off_1", key={"carrier": "XA", "flight": "101"})]))
    run.select("off_1")
    run.observe(BOOKED)
    return run


def paid_with_a_saved_card() -> Run:
    run = booked_for_a_passenger()
    run.observe(WALLET)
    run.select("pm_1")
    run.observe(PAID)
    return run


def payment_found_by_its_probe() -> Run:
    run = booked_for_a_passenger()
    run.observe(WALLET)
    run.select("pm_1")
    run.observe(obs("timeout"))
    run.probe("landed", cause=PAID)
    return run


def hold_expired_before_payment() -> Run:
    run = booked_for_a_passenger()
    run.wait(700)
    run.observe(WALLET)  # the deadline is read when the run next moves
    while not run.finished:
        run.observe(BOOKED if run.waiting().step == "cancel_order" else OK)
    return run


def crashed_while_paying() -> Run:
    """The simulator page's own path: a scenario with a crash, resumed from JSON copies."""
    events = [
        {"observe": {"options": [{"id": "off_1", "key": {"carrier": "XA"}}]}},
        {"select": "off_1"},
        {"observe": BOOKED.model_dump(exclude_defaults=True)},
        {"observe": WALLET.model_dump(exclude_defaults=True)},
        {"select": "pm_1"},
        {"crash": True},
        {"probe": "landed"},
    ]
    intent = {"dates": "2026-12-01", "passenger_name": PASSENGER}
    return simulate(chain(CARD_BOOKING), Scenario(intent=intent, events=events)).run


PAYLOAD_RUNS: list[Callable[[], Run]] = [
    paid_with_a_saved_card,
    payment_found_by_its_probe,
    hold_expired_before_payment,
    crashed_while_paying,
]


def traced_text(run: Run) -> str:
    return json.dumps([e.model_dump(mode="json") for e in run.trace])


def observations(run: Run, step: str) -> list[dict]:
    """What the trace says ``step``'s responses (and probe causes) carried."""
    found = []
    for event in run.trace:
        given = event.input or {}
        if event.step_id == step:
            found += [given[k] for k in ("observation", "cause") if k in given]
    return found


@pytest.mark.parametrize("scenario", PAYLOAD_RUNS, ids=lambda f: f.__name__)
def test_c7_3_no_passenger_or_card_value_of_a_provider_response_is_in_any_trace_record(scenario):
    run = scenario()
    assert run.finished
    text = traced_text(run)
    assert [secret for secret in SECRETS if secret in text] == []


def test_c7_3_only_the_payload_fields_a_chain_declares_safe_stay_readable():
    run = paid_with_a_saved_card()
    (booked,) = observations(run, "book")
    assert booked["payload"]["status"] == "held"
    assert booked["payload"]["total_amount"] == "412.00"
    assert booked["payload"]["booking_reference"].startswith("sealed:booking_reference:")


def test_c7_3_a_dotted_safe_name_shows_one_field_inside_a_sealed_one():
    run = paid_with_a_saved_card()
    (paid,) = observations(run, "pay")
    assert paid["payload"]["card"]["brand"] == "visa"
    assert paid["payload"]["card"]["number"].startswith("sealed:card.number:")


def test_c7_3_an_option_keeps_its_id_and_seals_its_key_values():
    run = paid_with_a_saved_card()
    (wallet,) = observations(run, "list_cards")
    assert [o["id"] for o in wallet["options"]] == ["pm_1", "pm_2"]
    assert all(v.startswith("sealed:") for o in wallet["options"] for v in o["key"].values())


@pytest.mark.parametrize("scenario", PAYLOAD_RUNS, ids=lambda f: f.__name__)
def test_c7_3_every_sealed_reference_resolves_through_the_snapshot_sealed_store(scenario):
    run = scenario()
    refs = set(re.findall(r"sealed:[\w.\-]+:[0-9a-f]+", traced_text(run)))
    assert refs and refs <= set(run.snapshot.sealed)
    kept = json.dumps(list(run.snapshot.sealed.values()))
    assert CARD_NUMBER in kept and PASSENGER in kept


def test_c7_2_a_deadline_the_chain_reads_from_a_response_is_shown_so_the_trace_alone_re_derives():
    """A business deadline decides: the chain naming it is its declaration (no PII, no card)."""
    run = hold_expired_before_payment()
    assert run.snapshot.outcome["reason"] == "hold_expired"
    (booked, *_) = observations(run, "book")
    assert booked["payload"]["pay_by"] == 600
    assert check_replay(run.spec, run.trace) == []


@pytest.mark.parametrize("scenario", PAYLOAD_RUNS, ids=lambda f: f.__name__)
def test_c7_2_the_trace_audit_follows_runs_with_sealed_responses_with_no_store(scenario):
    run = scenario()
    result = audit(run.spec, run.trace)
    assert result.followed and result.clean, [d.message for d in result.divergences]


# A seat map whose response lists the seats a person picks from (and names the passenger).
SEAT_CHOICE = """
id: seat_choice
actions:
  - id: seat_map
    effect: read
    input: {intent: [passenger_name]}
    preconditions:
      - {when: seat_needed, verdict: "gate(pick_seat)", reason: the passenger picks a seat}
gates:
  - id: pick_seat
    audience: user
    outcomes:
      chosen: {params: {seats: string}, verdict: ok}
"""


def test_c7_2_a_gate_answer_checked_against_a_sealed_list_re_derives_through_the_store():
    """The list of seats shown is sealed with the response; replaying the answer checks it
    against that list, which only the store can give back."""
    run = Run.start(chain(SEAT_CHOICE), intent={"passenger_name": PASSENGER})
    run.observe(
        obs(predicates=["seat_needed"], payload={"seats": ["14C", "15D"], "name": PASSENGER})
    )
    run.answer("chosen", {"seats": "14C"})
    assert run.snapshot.state == "done"
    assert PASSENGER not in traced_text(run)
    assert check_replay(run.spec, run.trace, run.snapshot.sealed) == []


@pytest.mark.parametrize("scenario", PAYLOAD_RUNS, ids=lambda f: f.__name__)
def test_c7_2_runs_with_sealed_payloads_re_derive_with_their_store(scenario):
    run = scenario()
    assert check_replay(run.spec, run.trace, run.snapshot.sealed) == []


def offers_for_the_passenger(n: int) -> list[Option]:
    key = {"carrier": "XA", "flight": "101", "passenger": PASSENGER}
    return [Option(id=f"o{n}", key=key), Option(id=f"p{n}", key={**key, "flight": "202"})]


def declined_then_continued() -> list[Run]:
    """External mode: a declined card ends the run; its continuation finds the search expired
    and ends too; the next one searches again, rematches the pick by key and books."""
    run = start_booking(mode="external")
    drive_to_book(run, offers_for_the_passenger(1))
    declined = {"card_number": CARD_NUMBER, "holder": PASSENGER}
    run.observe(obs("http:402", "CARD_DECLINED", payload=declined))
    second = Run.start(run.spec, continuation_of=run.snapshot, intent={"card": "amex"})
    second.observe(obs("http:410", "SEARCH_EXPIRED"))
    third = Run.start(run.spec, continuation_of=second.snapshot)
    third.observe(obs(options=offers_for_the_passenger(2)))
    while not third.finished:  # quote, lock, probe the declined booking, book again
        if third.waiting().kind == "probe":
            third.probe("not_landed")
        else:
            third.observe(OK)
    assert [e.row for e in third.trace if e.step_id == "choose"] == ["rematch"]
    assert third.snapshot.state == "done"
    return [run, second, third]


def test_c7_3_a_continuation_carries_the_ended_runs_responses_sealed():
    for run in declined_then_continued():
        assert [secret for secret in SECRETS if secret in traced_text(run)] == []


def test_c7_2_a_continuation_rematching_a_sealed_pick_re_derives_with_and_without_the_store():
    *_, third = declined_then_continued()
    assert check_replay(third.spec, third.trace, third.snapshot.sealed) == []
    assert check_replay(third.spec, third.trace) == []


@pytest.mark.parametrize(
    ("declared", "where"),
    [
        ("safe_to_show: 5", "safe_to_show"),
        ("safe_to_show: [status, '']", "safe_to_show[#2]"),
        ("safe_to_show: [order..status]", "safe_to_show[#1]"),
    ],
)
def test_c7_3_a_malformed_safe_field_declaration_is_refused_at_its_path(declared, where):
    text = f"""
    id: c
    actions:
      - id: pay
        effect: read
        output: {{{declared}}}
    """
    result = formats.load(textwrap.dedent(text), format="yaml")
    assert result.chains == []
    assert any(f"actions[pay].output.{where}" in str(p) for p in result.problems), [
        str(p) for p in result.problems
    ]


# --- C7.1: one event per state change; attempts counted against the provider's side ---

# A card payment that the issuer may challenge (3-D Secure): the challenge is a gate
# the card holder answers, raised by the charge attempt's own response.
CHALLENGED_PAYMENT = """
id: challenged_payment
actions:
  - {id: create_intent, effect: mint}
  - {id: charge, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_charge, signal: charged}}
  - {id: get_charge, effect: read, probe_only: true}
gates:
  - {id: card_challenge, audience: user,
     outcomes: {passed: retry, failed: "dead_end(reason: challenge_failed, permanent: true)"}}
verdict_table:
  - {id: P1, signal: [code:AUTHENTICATION_REQUIRED], scope: {steps: [charge]},
     verdict: "gate(card_challenge)", no_side_effect: true}
"""


class Provider:
    """The provider's side of a run: every response it sends is one dispatch it served."""

    def __init__(self) -> None:
        self.served = 0

    def respond(self, run: Run, response=OK) -> None:
        self.served += 1
        run.observe(response)


def test_c7_1_a_gate_raised_by_the_charge_attempt_parks_in_a_transition_of_its_own():
    run = Run.start(chain(CHALLENGED_PAYMENT))
    run.observe(OK)
    run.observe(obs("http:402", "AUTHENTICATION_REQUIRED"))
    attempt, park = run.trace[-2:]
    assert (attempt.event_type, attempt.verdict, attempt.state) == (
        "attempt",
        "gate(card_challenge)",
        "running",
    )
    assert (park.event_type, park.step_id, park.state) == ("transition", "charge", "at_gate")


def test_c7_1_no_attempt_event_itself_parks_the_challenged_payment():
    run = Run.start(chain(CHALLENGED_PAYMENT))
    provider = Provider()
    provider.respond(run)
    provider.respond(run, obs("http:402", "AUTHENTICATION_REQUIRED"))
    run.answer("passed")
    provider.respond(run)
    assert run.snapshot.state == "done"
    previous = "running"
    for event in run.trace:
        if event.state != previous and event.state == "at_gate":
            assert event.event_type != "attempt", f"seq {event.seq} parks inside its attempt"
        previous = event.state


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_c7_1_no_attempt_event_itself_parks_the_run(scenario):
    run = scenario()
    previous = "running"
    for event in run.trace:
        if event.state != previous and event.state == "at_gate":
            assert event.event_type != "attempt", f"seq {event.seq} parks inside its attempt"
        previous = event.state


def test_c7_1_attempt_events_match_the_responses_the_provider_sent_one_for_one():
    run = Run.start(chain(CHALLENGED_PAYMENT))
    provider = Provider()
    provider.respond(run)
    provider.respond(run, obs("timeout"))  # keyed: retried with the same key
    provider.respond(run, obs("http:402", "AUTHENTICATION_REQUIRED"))
    run.answer("passed")
    provider.respond(run)
    attempts = [e for e in run.trace if e.event_type == "attempt"]
    assert len(attempts) == provider.served == 4


def test_c7_1_verdict_sources_are_table_or_default_on_attempts_and_never_a_model_s():
    """Our deviation (docs/glossary.md): a transition the run takes from the chain's other
    settings (gate outcomes, preconditions, P3/I4 rules, budgets) says ``config``."""
    run = Run.start(chain(CHALLENGED_PAYMENT))
    run.observe(OK)
    run.observe(obs("http:402", "AUTHENTICATION_REQUIRED"))
    assert run.propose(Proposal(kind="answer", value="passed")) is False
    run.answer("passed")
    run.observe(OK)
    attempts = {e.verdict_source for e in run.trace if e.event_type == "attempt"}
    assert attempts == {"table"}
    assert {e.verdict_source for e in run.trace} <= {"table", "default", "config", None}


def test_c7_4_a_run_resumed_from_a_snapshot_leaves_that_snapshot_as_it_was():
    run = drive_to_book(start_booking())
    saved = run.snapshot
    before = saved.model_dump_json()
    resumed = Run.resume(run.spec, saved, list(run.trace))
    resumed.probe("landed")
    assert resumed.snapshot.state == "done"
    assert saved.model_dump_json() == before


def test_c7_1_a_booking_lost_in_a_crash_is_recorded_as_its_first_attempt():
    run = drive_to_book(start_booking())
    resumed = Run.resume(run.spec, run.snapshot.model_copy(deep=True), list(run.trace))
    (lost,) = [e for e in resumed.trace if e.event_type == "attempt" and e.step_id == "book"]
    assert (lost.attempt, lost.signal) == (1, {"transport": "lost"})
