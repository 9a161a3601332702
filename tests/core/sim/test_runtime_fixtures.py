"""The fixture chains end to end: card payment and cloud provisioning."""

from __future__ import annotations

from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run
from chains.core.sim.state import Observation, Proposal

from .builders import OK, events, fixture, obs

DECLINE = "status == 402 && error.type == 'card_error'"
LADDER_RUNNING = "instance.state in ['pending', 'running', 'stopped']"


def card_at_consent() -> Run:
    run = Run.start(fixture("card-payment.yaml"), intent={"instrument": "pm_1"})
    run.observe(OK)  # create_customer
    run.observe(OK)  # create_intent
    assert run.waiting().gate == "payment_consent"
    return run


def test_card_payment_happy_path():
    run = card_at_consent()
    run.answer("approve")
    run.observe(Observation(payload={"authorization": {"capture_before": 86400}}))
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert [lc.step for lc in run.snapshot.commits_landed] == [
        "create_customer",
        "confirm_intent",
        "capture",
    ]
    assert run.snapshot.commits_landed[1].business_deadline == 86400
    assert check_replay(run.spec, run.trace) == []


def test_a_card_decline_repairs_the_instrument_and_re_asks_consent():
    run = card_at_consent()
    run.answer("approve")
    run.observe(obs("http:402", predicates=[DECLINE]))
    assert [lc.step for lc in run.snapshot.commits_landed] == ["create_customer"]
    assert run.waiting().kind == "repair" and run.waiting().fields == ["instrument"]
    assert run.propose(Proposal(kind="repair", fields={"instrument": "pm_2"}))
    assert run.waiting().gate == "payment_consent"  # entry gate on the replay


def test_an_expired_hold_rewinds_to_intent_creation_and_re_consents():
    run = card_at_consent()
    run.answer("approve")
    run.observe(OK)
    run.observe(obs("http:400", "authorization_expired"))
    assert events(run, "attempt", "capture")[-1].verdict == "rewind(to: create_intent)"
    run.observe(OK)
    assert run.waiting().gate == "payment_consent"
    assert [e.row for e in run.trace].count("entry_gate") == 2


def test_an_sca_challenge_parks_and_its_ok_keeps_the_confirmation():
    run = card_at_consent()
    run.answer("approve")
    run.observe(obs(predicates=["status == 'requires_action'"]))
    assert run.waiting().gate == "sca_challenge"
    run.answer("completed")
    assert run.waiting().step == "capture"
    assert run.snapshot.dispatches["confirm_intent"] == 1
    assert [lc.step for lc in run.snapshot.commits_landed][-1] == "confirm_intent"


def cloud_with_two_commits(ladder_fact: bool = True) -> Run:
    run = Run.start(fixture("cloud-provisioning.yaml"), variant="standard")
    run.observe(OK)  # check_quota
    run.observe(OK)  # reserve_capacity
    run.observe(Observation(predicates=[LADDER_RUNNING] if ladder_fact else []))
    run.observe(OK)  # allocate_address
    assert run.waiting().gate == "volume_growth_consent"
    run.answer("decline")
    return run


def test_cloud_compensates_in_the_configured_order_with_a_ladder():
    run = cloud_with_two_commits()
    assert run.snapshot.state == "compensating"
    ran = []
    while run.waiting().kind == "observe":
        ran.append(run.waiting().step)
        run.observe(OK)
    assert ran == ["release_address", "terminate_instance"]
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "volume_growth_declined"


def test_a_ladder_that_falls_to_else_escalates():
    run = cloud_with_two_commits(ladder_fact=False)
    run.observe(OK)  # release_address
    assert run.snapshot.state == "escalated"
    assert run.snapshot.outcome["uncompensated"] == ["create_instance"]


def test_a_spent_reservation_is_re_minted_before_a_repaired_create():
    run = Run.start(fixture("cloud-provisioning.yaml"), variant="standard")
    run.observe(OK)
    run.observe(OK)
    run.observe(obs("http:400", "IMAGE_NOT_FOUND"))  # repair(reserve_capacity, [image])
    assert run.snapshot.handles["capacity_hold"].spent
    assert run.waiting().kind == "repair"
    assert run.propose(Proposal(kind="repair", fields={"image": "img-2"}))
    assert "capacity_hold" not in run.snapshot.handles
    assert run.waiting().step == "reserve_capacity"
    run.observe(OK)
    run.observe(OK)
    consumed = events(run, "attempt", "create_instance")[-1].handles_consumed
    assert consumed == ["capacity_hold#2"]


def test_an_answer_after_the_payloads_own_deadline_fires_payload_expiry():
    run = Run.start(fixture("cloud-provisioning.yaml"), variant="dedicated")
    run.observe(OK)
    over = "quote.monthly_price > intent.monthly_budget"
    run.observe(Observation(predicates=[over], payload={"quote": {"valid_until": 100}}))
    assert run.waiting().gate == "dedicated_spend_approval"
    run.wait(200)
    run.answer("approve")
    assert run.trace[-1].verdict == "rewind(to: check_host_capacity)"
    assert run.waiting().step == "check_host_capacity"


def test_a_compensator_acts_on_the_intent_its_commit_confirmed_not_a_re_minted_one():
    run = card_at_consent()
    run.answer("approve")
    run.observe(OK)  # confirm_intent: the hold landed on intent_ref#1
    run.observe(obs("http:400", "authorization_expired"))  # capture: rewind(to: create_intent)
    run.observe(OK)  # create_intent re-mints
    assert run.snapshot.handles["intent_ref"].alias == "intent_ref#2"
    run.answer("decline")  # consent refused on the replay: dead_end unwinds what landed
    while run.waiting().step != "cancel_intent":
        run.observe(OK)
    run.observe(OK)
    (cancel,) = events(run, "attempt", "cancel_intent")
    assert cancel.handles_consumed == ["intent_ref#1"]
