"""CONFORMANCE C6: gates."""

from __future__ import annotations

import pytest

from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.state import Proposal

from ..builders import (
    OPTIONS,
    REFUNDS,
    altered,
    booking,
    chain,
    events,
    obs,
    start_booking,
    unwinding_cancel_flow,
)
from .test_c5_classification import flight_to


def at_consent(doc=None, **kw) -> Run:
    run = start_booking(doc, **kw)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.refundable == false"], payload={"price": 120}))
    assert run.snapshot.state == "at_gate"
    return run


def test_c6_1_park_survives_restart():
    run = at_consent()
    dispatches = dict(run.snapshot.dispatches)
    resumed = Run.resume(run.spec, run.snapshot.model_copy(deep=True), list(run.trace))
    assert resumed.snapshot.state == "at_gate"
    assert resumed.waiting() == run.waiting()
    assert resumed.waiting().payload == {"price": 120}
    assert resumed.trace == run.trace and resumed.snapshot.dispatches == dispatches
    resumed.answer("accept")
    assert resumed.waiting().step == "lock_price"
    assert resumed.snapshot.dispatches == dispatches


@pytest.mark.parametrize(("own", "waited", "fires"), [(True, 11, True), (False, 11, False)])
def test_c6_2_timeout_verdict_per_gate_over_per_chain(own, waited, fires):
    doc = booking()
    if not own:
        doc = altered(doc, "gates.0.timeout", None)  # per-chain gate_timeout (30m) applies
    run = at_consent(doc)
    run.wait(waited * 60)
    assert (run.snapshot.state == "dead_end") is fires
    if fires:
        timeout = events(run, "transition", "quote")[-1]
        assert timeout.row == "gate:nonrefundable_ok.timeout"
        assert run.snapshot.outcome["reason"] == "consent_timeout"
    else:
        run.wait(20 * 60)
        assert run.snapshot.outcome["reason"] == "gate_timeout_nonrefundable_ok"


def test_c6_2_a_timeout_outcome_runs_that_outcome():
    run = flight_to("initiate_hold")
    run.observe(obs("http:409", "SEAT_NOT_AVAILABLE"))
    run.wait(10 * 60)
    timed_out = events(run, "transition", "initiate_hold")[-1]
    assert timed_out.verdict == "repair(to: initiate_hold, fields: [seats])"
    assert run.snapshot.intent["seats"] is None
    assert run.waiting().step == "initiate_hold"


def test_c6_3_outcome_params_bind_only_declared_fields():
    run = flight_to("initiate_hold")
    run.observe(obs("http:409", "SEAT_NOT_AVAILABLE", payload={"alternatives": ["2C", "3D"]}))
    with pytest.raises(SimulationError, match="not a param"):
        run.answer("choose_other_seats", {"seats": ["2C"], "payment": "pm_other"})
    with pytest.raises(SimulationError, match="handle"):
        run.answer("choose_other_seats", {"seats": "quote_id#1"})
    rejected = [e for e in run.trace if (e.note or "").startswith("rejected answer")]
    assert len(rejected) == 2 and run.snapshot.state == "at_gate"
    run.answer("choose_other_seats", {"seats": ["2C"]})
    assert run.snapshot.intent["seats"] == ["2C"]
    assert "payment" not in run.snapshot.intent


def test_c6_3_a_fabricated_option_id_is_rejected():
    run = unwinding_cancel_flow()
    run.observe(obs(options=REFUNDS, predicates=["options.length > 0"]))
    assert run.waiting().gate == "pick_refund"
    with pytest.raises(SimulationError, match="not among the presented options"):
        run.answer("choose", {"option_id": "cash_bonus"})
    assert run.snapshot.state == "compensating" and run.waiting().gate == "pick_refund"
    run.answer("choose", {"option_id": "credit"})
    assert run.snapshot.intent["option_id"] == "credit"
    assert run.waiting().step == "cancel_order"


def test_c6_3_set_assignments_apply_before_the_verdict():
    run = flight_to("initiate_hold")
    run.observe(obs("http:409", "SEAT_NOT_AVAILABLE"))
    run.answer("continue_without_seats")
    answered = events(run, "transition", "initiate_hold")[-1]
    assert answered.verdict == "repair(to: initiate_hold, fields: [seats])"
    assert answered.proposal_source == "code"
    assert run.snapshot.intent["seats"] is None
    assert "hold_session#1" not in [h.alias for h in run.snapshot.handles.values()]
    assert run.waiting().step == "initiate_hold"


def test_c6_4_ok_outcome_never_re_executes_the_raising_step():
    run = flight_to("revalidate")
    run.observe(obs("http:409", "FARE_PRICE_CHANGED", payload={"final_price": 130}))
    assert run.snapshot.dispatches["revalidate"] == 1
    run.answer("accept")
    assert run.waiting().step == "book_trip"
    assert run.snapshot.dispatches["revalidate"] == 1
    assert run.snapshot.handles["price_lock"].alias == "price_lock#1"


# A keyed hold the provider may answer with a new price: the traveller accepts it, or
# asks an operator, whose approval lands the hold as the repriced response showed it.
REPRICED_HOLD = """
id: repriced_hold
handles:
  - {id: pnr, minted_by: hold_seat}
actions:
  - id: hold_seat
    effect: commit
    output:
      handles: [pnr]
      business_expiry: {field: pay_by, on_expiry: "dead_end(reason: hold_lapsed)"}
    idempotency: {mode: keyed}
    confirmation: {probe: read_pnr, signal: pnr exists}
    compensation: {action: none}
  - {id: issue_ticket, effect: read, input: {handles: [pnr]}}
  - {id: read_pnr, effect: read, probe_only: true}
gates:
  - id: price_ok
    audience: user
    outcomes: {accept: ok, ask_operator: "gate(operator_ok)"}
  - id: operator_ok
    audience: operator
    outcomes: {approve: ok}
verdict_table:
  - {id: R1, signal: [code:PRICE_CHANGED], scope: {steps: [hold_seat]}, verdict: "gate(price_ok)"}
"""


def repriced() -> Run:
    run = Run.start(chain(REPRICED_HOLD))
    run.observe(obs("http:409", "PRICE_CHANGED", payload={"pay_by": 7200, "price": 130}))
    assert run.waiting().gate == "price_ok"
    return run


def test_c6_4_an_ok_outcome_lands_the_step_with_the_response_that_raised_the_gate():
    run = repriced()
    run.answer("accept")
    assert [lc.business_deadline for lc in run.snapshot.commits_landed] == [7200.0]
    assert run.waiting().step == "issue_ticket"


def test_c6_4_a_gate_raised_by_an_answer_shows_and_lands_the_first_gates_response():
    run = repriced()
    run.answer("ask_operator")
    assert (run.waiting().gate, run.waiting().payload) == (
        "operator_ok",
        {"pay_by": 7200, "price": 130},
    )
    run.answer("approve")
    assert [lc.business_deadline for lc in run.snapshot.commits_landed] == [7200.0]


def test_c6_4_a_gate_a_business_deadline_raises_has_no_response_to_land_with():
    doc = chain(
        REPRICED_HOLD.replace('"dead_end(reason: hold_lapsed)"', '"gate(operator_ok)"').replace(
            "  - {id: issue_ticket",
            "  - {id: price_pnr, effect: read, input: {handles: [pnr]}}\n  - {id: issue_ticket",
        )
    )
    run = Run.start(doc)
    run.observe(obs(payload={"pay_by": 60}))  # hold_seat lands, due at 60 s
    run.wait(120)
    run.observe(obs())  # price_pnr; arriving at issue_ticket finds the deadline passed
    assert run.waiting().gate == "operator_ok"
    assert run.snapshot.last_observation is None


def test_c6_5_money_gates_reach_a_human():
    run = at_consent()
    assert run.waiting().audience == "user"
    assert run.propose(Proposal(kind="answer", value="accept")) is False
    assert run.snapshot.state == "at_gate"
    assert "may not answer" in (run.trace[-1].note or "")


def test_c6_5_a_model_answer_relayed_through_answer_is_refused_at_the_consent_gate():
    run = at_consent()
    with pytest.raises(SimulationError, match="a model may not answer it"):
        run.answer("accept", by="model")
    assert run.snapshot.state == "at_gate" and run.waiting().gate == "nonrefundable_ok"
    refused = run.trace[-1]
    assert (refused.event_type, refused.verdict, refused.proposal_source) == (
        "transition",
        None,
        "model",
    )
    assert refused.input == {"kind": "propose", "proposal": {"kind": "answer", "value": "accept"}}
    assert check_replay(run.spec, run.trace) == []


@pytest.mark.parametrize("relay", ["answer", "propose"])
def test_c6_5_in_external_mode_the_planner_cannot_answer_the_consent_gate(relay):
    run = at_consent(mode="external")
    if relay == "answer":
        with pytest.raises(SimulationError, match="a model may not answer it"):
            run.answer("accept", by="model")
    else:
        assert run.propose(Proposal(kind="answer", value="accept")) is False
    assert run.snapshot.state == "at_gate" and "lock_price" not in run.snapshot.dispatches
    run.answer("accept", by="user")
    assert run.waiting().step == "lock_price"


# A card charge whose entry gate a (wrong) config hands to the model: a gate before a
# commit is consent, so it is never the model's whatever its audience says (SPEC §2.6).
CHARGE = """
id: card_charge
actions:
  - {id: charge, effect: commit, idempotency: {mode: keyed}, entry_gate: charge_ok,
     confirmation: {probe: get_charge, signal: charged}}
  - {id: get_charge, effect: read, probe_only: true}
gates:
  - {id: charge_ok, audience: model, outcomes: {go: ok, stop: "dead_end(reason: stopped)"}}
"""


@pytest.mark.parametrize("relay", ["answer", "propose"])
def test_c6_5_a_consent_gate_configured_for_the_model_is_still_refused_to_it(relay):
    run = Run.start(chain(CHARGE))
    assert run.waiting().gate == "charge_ok"
    if relay == "answer":
        with pytest.raises(SimulationError, match="money or consent"):
            run.answer("go", by="model")
    else:
        assert run.propose(Proposal(kind="answer", value="go")) is False
        assert "money or consent" in (run.trace[-1].note or "")
    assert run.snapshot.dispatches == {}


def test_c6_5_an_operator_s_gate_is_not_answered_by_the_user():
    doc = altered(booking(), "gates.0.audience", "operator")
    run = at_consent(doc)
    with pytest.raises(SimulationError, match="the user may not answer it"):
        run.answer("accept", by="user")
    run.answer("accept", by="operator")
    assert run.waiting().step == "lock_price"


def test_c6_5_a_person_s_answer_is_traced_as_the_user_s_not_a_model_s():
    run = at_consent()
    run.answer("accept", by="user")
    answered = next(e for e in run.trace if (e.row or "") == "gate:nonrefundable_ok.accept")
    assert answered.proposal_source == "user"
