"""CONFORMANCE C8: compensation."""

from __future__ import annotations

import pytest

from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.state import Observation, Proposal

from ..builders import (
    GROW,
    OK,
    REFUNDS,
    TWO_COMMITS,
    altered,
    chain,
    events,
    obs,
    unwinding_cancel_flow,
)

REBOOK = """
id: rebook
actions:
  - {id: book_new, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_booking, signal: booked}, compensation: {action: cancel_new}}
  - {id: cancel_old, effect: compensate, input: {intent: [old_ref]}, idempotency: {mode: keyed},
     confirmation: {probe: get_booking, signal: cancelled}}
  - {id: cancel_new, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_booking, signal: cancelled}}
  - {id: get_booking, effect: read, probe_only: true}
verdict_table:
  - {id: R1, signal: [code:SOLD_OUT], verdict: "dead_end(reason: sold_out, permanent: false)"}
"""

# Secure a standard room, then try to trade it for a suite: the standard room is given
# up only once the suite is booked (compensation.replaced_by), never by a dead end before.
UPGRADE = """
id: room_upgrade
actions:
  - {id: book_standard, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_stay, signal: booked},
     compensation: {action: cancel_standard, replaced_by: book_suite,
                    ordering_note: book the suite before giving up the standard room}}
  - {id: charge_upgrade_fee, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_payment, signal: captured}, compensation: {action: refund_fee}}
  - {id: book_suite, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_stay, signal: booked}, compensation: SUITE_UNDO}
  - {id: send_itinerary, effect: read}
  - {id: cancel_standard, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_stay, signal: cancelled}}
  - {id: refund_fee, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_payment, signal: refunded}}
  - {id: cancel_suite, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_stay, signal: cancelled}}
  - {id: get_stay, effect: read, probe_only: true}
  - {id: get_payment, effect: read, probe_only: true}
verdict_table:
  - {id: U1, signal: [code:SUITE_SOLD_OUT], scope: {steps: [book_suite]},
     verdict: "dead_end(reason: sold_out, permanent: false)"}
  - {id: U2, signal: [code:MAILBOX_GONE], scope: {steps: [send_itinerary]},
     verdict: "dead_end(reason: no_mailbox, permanent: true)"}
"""
REFUNDABLE_SUITE = "{action: cancel_suite}"
NON_REFUNDABLE_SUITE = "{action: none, ordering_note: a non-refundable rate}"


def upgrade(suite_undo: str = REFUNDABLE_SUITE) -> Run:
    run = Run.start(chain(UPGRADE.replace("SUITE_UNDO", suite_undo)))
    run.observe(OK)  # book_standard
    run.observe(OK)  # charge_upgrade_fee
    return run


def unwind(run: Run) -> list[str]:
    """Let every compensator land, and name them in the order they ran."""
    ran = []
    while run.snapshot.state == "compensating" and run.waiting().kind == "observe":
        ran.append(run.waiting().step)
        run.observe(OK)
    return ran


REVOCABLE = """
id: ticketing
actions:
  - id: ticket
    effect: commit
    idempotency: {mode: keyed}
    confirmation: {probe: get_ticket, signal: issued}
    compensation: {action: none, ordering_note: tickets are voided by the airline only}
    revocation: {watch: [webhook:ticket.changed], window: 30d, route: ROUTE}
  - {id: get_ticket, effect: read, probe_only: true}
gates:
  - {id: review_change, audience: user, outcomes: {keep: ok, abandon: "dead_end(reason: x)"}}
"""


def two_landed(order=None) -> Run:
    doc = altered(chain(TWO_COMMITS), "policy.per_chain.compensation_order", order)
    run = Run.start(doc)
    run.observe(OK)
    run.observe(OK)
    run.observe(obs("http:410", "GONE"))
    return run


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (None, ["cancel_car", "cancel_hotel"]),
        ("reverse", ["cancel_car", "cancel_hotel"]),
        (["cancel_hotel", "cancel_car"], ["cancel_hotel", "cancel_car"]),
        (["book_hotel"], ["cancel_hotel", "cancel_car"]),
    ],
)
def test_c8_1_dead_end_with_landed_commits_compensates_in_declared_order(order, expected):
    run = two_landed(order)
    assert run.snapshot.state == "compensating"
    ran = []
    while run.waiting().kind == "observe":
        ran.append(run.waiting().step)
        run.observe(obs("http:400", "ODD"))  # ambiguous: the compensator's own probe decides
        assert run.waiting().kind == "probe"
        run.probe("landed")
    assert ran == expected
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "gone"
    assert all(lc.compensated for lc in run.snapshot.commits_landed)
    assert [lc.step for lc in run.snapshot.compensators_landed] == expected


def test_c8_2_a_rebook_cancels_the_earlier_booking_only_after_the_new_one_lands():
    run = Run.start(chain(REBOOK), intent={"old_ref": "ABC123"})
    run.observe(obs("http:409", "SOLD_OUT"))
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.dispatches == {"book_new": 1}  # the original is never cancelled
    run = Run.start(chain(REBOOK), intent={"old_ref": "ABC123"})
    run.observe(OK)
    run.observe(OK)
    assert run.snapshot.dispatches == {"book_new": 1, "cancel_old": 1}


def test_c8_2_a_failed_replacement_leaves_the_original_booking_standing():
    run = upgrade()
    run.observe(obs("http:409", "SUITE_SOLD_OUT"))
    unwind(run)
    assert run.snapshot.state == "dead_end"
    assert "cancel_standard" not in run.snapshot.dispatches
    standard = run.snapshot.commits_landed[0]
    assert standard.step == "book_standard" and not standard.compensated


def test_c8_2_the_outcome_says_the_original_was_kept_and_why():
    run = upgrade()
    run.observe(obs("http:409", "SUITE_SOLD_OUT"))
    unwind(run)
    assert run.snapshot.outcome["reason"] == "sold_out"
    assert run.snapshot.outcome["kept"] == {"book_standard": "book_suite did not land"}


def test_c8_2_a_failed_replacement_still_unwinds_the_other_commits():
    run = upgrade()
    run.observe(obs("http:409", "SUITE_SOLD_OUT"))
    assert unwind(run) == ["refund_fee"]
    assert run.snapshot.outcome["compensated"] == ["charge_upgrade_fee"]


def test_c8_2_a_later_dead_end_that_undoes_the_replacement_keeps_the_original():
    run = upgrade()
    run.observe(OK)  # book_suite
    run.observe(obs("http:410", "MAILBOX_GONE"))
    assert unwind(run) == ["cancel_suite", "refund_fee"]
    assert run.snapshot.outcome["kept"] == {"book_standard": "book_suite was compensated"}


def test_c8_2_an_order_that_unwinds_the_original_first_keeps_it_while_its_replacement_waits():
    doc = chain(UPGRADE.replace("SUITE_UNDO", REFUNDABLE_SUITE))
    doc = altered(doc, "policy.per_chain.compensation_order", ["book_standard", "book_suite"])
    run = Run.start(doc)
    for _ in range(3):  # book_standard, charge_upgrade_fee, book_suite
        run.observe(OK)
    run.observe(obs("http:410", "MAILBOX_GONE"))
    assert unwind(run) == ["cancel_suite", "refund_fee"]
    assert run.snapshot.outcome["kept"] == {
        "book_standard": "book_suite is still to be compensated in this unwind"
    }


def test_c8_2_the_original_is_compensated_once_its_replacement_stands():
    run = upgrade(NON_REFUNDABLE_SUITE)
    run.observe(OK)  # book_suite, which nothing can undo
    run.observe(obs("http:410", "MAILBOX_GONE"))
    assert unwind(run) == ["refund_fee", "cancel_standard"]
    assert "kept" not in run.snapshot.outcome
    assert run.snapshot.outcome["not_compensable"] == ["book_suite"]


def test_c8_3_compensator_failure_escalates():
    run = two_landed()
    run.observe(obs("http:409", "CANNOT_CANCEL"))
    assert run.snapshot.state == "escalated"
    assert run.snapshot.outcome["uncompensated"] == ["book_car", "book_hotel"]
    failed = run.trace[-1]
    assert failed.row == "compensation_failed" and failed.verdict == "escalate(operator)"
    assert "book_car" in (failed.note or "")
    assert not any(lc.compensated for lc in run.snapshot.commits_landed)


def test_c8_4_explicit_no_compensator_commits_are_pre_gated():
    run = Run.start(chain(GROW), intent={"size": 10})
    run.observe(OK)  # make_vol
    parks = lambda: [e for e in run.trace if e.row == "entry_gate"]  # noqa: E731
    assert run.snapshot.state == "at_gate" and len(parks()) == 1
    assert run.snapshot.dispatches.get("grow", 0) == 0
    run.answer("approve")
    run.observe(obs("http:404", "VOL_GONE"))  # staleness → rewind(make_vol)
    run.observe(OK)
    assert run.snapshot.state == "at_gate" and len(parks()) == 2
    assert run.snapshot.dispatches["grow"] == 1
    run.answer("approve")
    run.observe(obs("http:400", "TOO_SMALL"))  # repair(grow, [size]) via a proposal
    assert run.propose(Proposal(kind="repair", fields={"size": 20}))
    assert run.snapshot.state == "at_gate" and len(parks()) == 3
    assert run.snapshot.dispatches["grow"] == 2
    run.answer("change", {"size": 30})  # repair from the gate itself
    assert run.snapshot.state == "at_gate" and len(parks()) == 4
    assert run.snapshot.dispatches["grow"] == 2


def test_c8_5_compensation_sub_chains_park_correctly():
    run = unwinding_cancel_flow()
    run.observe(obs(options=REFUNDS, predicates=["options.length > 0"]))
    assert run.snapshot.state == "compensating"
    assert run.waiting().kind == "answer" and run.waiting().gate == "pick_refund"
    run.wait(72 * 3600)
    assert run.snapshot.state == "escalated"
    assert run.snapshot.outcome["uncompensated"] == ["order"]
    assert run.trace[-1].row == "compensation_failed"


def test_c8_5_sub_chain_commit_steps_honor_their_confirmation():
    run = unwinding_cancel_flow()
    run.observe(obs(options=REFUNDS, predicates=["options.length > 0"]))
    run.answer("choose", {"option_id": "refund"})
    run.observe(obs("timeout"))  # an unkeyed compensator: probe, never re-dispatch
    assert run.waiting().kind == "probe" and run.waiting().step == "cancel_order"
    run.probe("landed")
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.commits_landed[0].compensated
    assert run.snapshot.dispatches["cancel_order"] == 1


@pytest.mark.parametrize("route", ["escalate(operator)", "gate(review_change)"])
def test_c8_6_revocation_events_are_never_dropped(route):
    run = Run.start(chain(REVOCABLE.replace("ROUTE", route)))
    run.observe(OK)
    assert run.snapshot.state == "done"
    run.wait(3 * 86400)
    run.observe(Observation(events=["webhook:ticket.changed"]))
    revoked = run.trace[-1]
    assert (revoked.event_type, revoked.row, revoked.verdict) == (
        "reconcile",
        "revocation:ticket",
        route,
    )
    assert run.snapshot.commits_landed[0].revoked == "webhook:ticket.changed"
    if route.startswith("gate"):
        assert run.snapshot.state == "at_gate"
        run.answer("keep")
        assert run.snapshot.state == "done"
    else:
        assert run.snapshot.state == "escalated"


def test_c8_6_an_event_outside_the_window_is_refused_loudly():
    run = Run.start(chain(REVOCABLE.replace("ROUTE", "escalate(operator)")))
    run.observe(OK)
    run.wait(31 * 86400)
    with pytest.raises(SimulationError):
        run.observe(Observation(events=["webhook:ticket.changed"]))
    assert events(run, "reconcile") == []


# A ticket that an airline can change later, then an unkeyed bag purchase on it.
TICKET_AND_BAG = """
id: ticket_and_bag
actions:
  - id: ticket
    effect: commit
    idempotency: {mode: keyed}
    confirmation: {probe: get_ticket, signal: issued}
    compensation: {action: none, ordering_note: tickets are voided by the airline only}
    revocation: {watch: [webhook:ticket.changed], window: 30d, route: ROUTE}
  - id: buy_bag
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: get_bags, signal: bag on the booking}
    compensation: {action: none, ordering_note: bag fees are refunded at the desk}
  - {id: send_itinerary, effect: read}
  - {id: get_ticket, effect: read, probe_only: true}
  - {id: get_bags, effect: read, probe_only: true}
gates:
  - {id: review_change, audience: user, outcomes: {keep: ok, abandon: "dead_end(reason: x)"}}
"""


def changed_while_the_bag_is_out(route: str) -> Run:
    run = Run.start(chain(TICKET_AND_BAG.replace("ROUTE", route)))
    run.observe(OK)  # the ticket lands
    assert run.waiting().step == "buy_bag" and run.snapshot.in_flight == "buy_bag"
    run.observe(Observation(events=["webhook:ticket.changed"]))
    return run


@pytest.mark.parametrize("route", ["escalate(operator)", "gate(review_change)"])
def test_c8_6_a_revocation_while_a_commit_is_out_reconciles_that_commit_first(route):
    run = changed_while_the_bag_is_out(route)
    revoked = events(run, "reconcile", "ticket")[-1]
    assert (revoked.row, revoked.verdict) == ("revocation:ticket", route)
    assert run.snapshot.commits_landed[0].revoked == "webhook:ticket.changed"
    assert (run.snapshot.state, run.waiting().kind, run.waiting().step) == (
        "reconciling",
        "probe",
        "buy_bag",
    )
    assert events(run, "attempt", "buy_bag")[-1].verdict == "reconcile"
    assert run.snapshot.correlation[-1].status == "RECONCILING"


def test_c8_6_escalated_after_the_reconcile_the_run_ends_with_no_commit_left_pending():
    run = changed_while_the_bag_is_out("escalate(operator)")
    run.probe("landed")
    assert run.snapshot.state == "escalated" and run.finished
    assert run.snapshot.outcome["revoked"] == "ticket"
    assert [lc.step for lc in run.snapshot.commits_landed] == ["ticket", "buy_bag"]
    assert [r.status for r in run.snapshot.correlation] == ["LANDED"]


def test_c8_6_kept_at_the_gate_the_run_goes_on_past_the_bag_that_landed():
    run = changed_while_the_bag_is_out("gate(review_change)")
    run.probe("landed")
    assert run.snapshot.state == "at_gate" and run.waiting().gate == "review_change"
    run.answer("keep")
    assert run.waiting().kind == "observe" and run.waiting().step == "send_itinerary"
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert run.snapshot.dispatches == {"ticket": 1, "buy_bag": 1, "send_itinerary": 1}


def test_c8_6_kept_at_the_gate_a_bag_that_did_not_land_is_bought_again_only_once():
    run = changed_while_the_bag_is_out("gate(review_change)")
    run.probe("not_landed")
    assert run.snapshot.state == "at_gate"
    run.answer("keep")
    assert run.waiting().kind == "observe" and run.waiting().step == "buy_bag"
    assert run.snapshot.dispatches["buy_bag"] == 1
    run.observe(OK)
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert [lc.step for lc in run.snapshot.commits_landed] == ["ticket", "buy_bag"]


# A server is started, then its address is assigned; the unwind picks the server's undo by what
# it was found doing: stopped and terminated when running, otherwise only terminated.
LADDER = """
id: server
actions:
  - {id: start_server, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_server, signal: created},
     compensation: {ladder: [{when: "server.state == 'running'", chain: [stop_server, terminate]},
                             {action: terminate}]}}
  - {id: assign_address, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_server, signal: assigned}, compensation: {action: none}}
  - {id: stop_server, effect: compensate, idempotency: {mode: keyed}}
  - {id: terminate, effect: compensate, idempotency: {mode: keyed}}
  - {id: get_server, effect: read, probe_only: true}
verdict_table:
  - {id: A1, signal: [code:NO_ADDRESS], verdict: "dead_end(reason: no_address, permanent: false)"}
"""


@pytest.mark.parametrize(
    "found, first_undo",
    [(["server.state == 'running'"], "stop_server"), ([], "terminate")],
)
def test_c8_1_a_compensation_ladder_takes_the_first_rung_whose_condition_holds(found, first_undo):
    run = Run.start(chain(LADDER))
    run.observe(Observation(predicates=found))
    run.observe(obs("http:409", "NO_ADDRESS"))
    assert (run.snapshot.state, run.waiting().step) == ("compensating", first_undo)
