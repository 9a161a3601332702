"""CONFORMANCE C7: trace and replay."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable

import pytest

from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.state import Proposal

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
    run = Run.resume(run.chain, run.snapshot, run.trace)
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
    assert check_replay(run.chain, run.trace) == []


def test_c7_2_a_tampered_trace_does_not_re_derive():
    run = happy()
    trace = [e.model_copy() for e in run.trace]
    trace[3] = trace[3].model_copy(update={"verdict": "retry"})
    assert check_replay(run.chain, trace)


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
    assert check_replay(run.chain, run.trace, run.snapshot.sealed) == []
    assert check_replay(run.chain, run.trace) == []


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
                run.chain, Snapshot.model_validate(saved), [Event.model_validate(e) for e in trace]
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
    resumed = Run.resume(run.chain, saved, list(run.trace))
    resumed.probe("landed")
    assert resumed.snapshot.state == "done"
    assert saved.model_dump_json() == before
