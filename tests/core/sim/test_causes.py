"""A violation's cause: the run's decisions that led there, in the chain's own terms."""

from __future__ import annotations

from chains.core.sim.causes import Cause, decides, decision, since
from chains.core.sim.invariants import check
from chains.core.sim.state import Event

from .builders import booking
from .test_invariants import attempt, booked, snapshot


def transition(seq, step, row, verdict) -> Event:
    return Event(seq=seq, event_type="transition", step_id=step, row=row, verdict=verdict)


def test_a_second_booking_is_explained_by_the_precondition_that_sent_the_run_back():
    read = attempt(2, "quote")
    read.signal["predicates"] = ["fare.refundable == false"]
    trace = [
        booked(1, "lock#1", "booking_ref#1"),
        read,
        transition(3, "quote", "precondition#1", "reselect(to: choose)"),
        booked(4, "lock#2", "booking_ref#2"),
    ]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert finding.invariant == "double_commit"
    assert finding.cause == (
        Cause(
            "quote",
            "http:200 fare.refundable == false",
            "precondition #1",
            "reselect(to: choose)",
            "actions[quote].preconditions[#1]",
        ),
    )


def test_decisions_before_the_first_booking_are_not_its_second_ones_cause():
    trace = [
        attempt(1, "search", "timeout", "retry", "#7"),
        booked(2, "lock#1", "booking_ref#1"),
        transition(3, "book", "B9", "rewind(to: search)"),
        booked(4, "lock#2", "booking_ref#2"),
    ]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert [c.rule for c in finding.cause] == ["row B9"]
    assert finding.cause[0].element == "verdict_table[B9]"


def test_a_generic_row_is_named_but_points_at_nothing_to_change():
    cause = decision(attempt(1, "book", "timeout", "retry", "#7"), None)
    assert (cause.rule, cause.element, cause.signal) == ("generic row #7", None, "timeout")


def test_a_gate_answer_points_at_its_outcome():
    event = transition(1, "quote", "gate:nonrefundable_ok.decline", "reselect(to: choose)")
    assert decision(event, None).element == "gates[nonrefundable_ok].outcomes.decline"


def test_going_on_is_no_decision():
    assert not decides(attempt(1, "book"))
    assert not decides(transition(2, "book", "entry_gate", "gate(pay_ok)"))


def test_since_keeps_the_decisions_after_the_anchor_oldest_first():
    a, b, c = ((transition(n, "s", f"R{n}", "retry"), None) for n in (1, 2, 3))
    anchor = (a, None)
    line = (c, (b, anchor))
    assert [x.rule for x in since(line, anchor)] == ["row R2", "row R3"]
    assert [x.rule for x in since(line, None)] == ["row R1", "row R2", "row R3"]


def test_two_routes_to_one_second_booking_are_two_findings_and_a_retry_on_the_way_is_not_one():
    b9 = transition(3, "book", "B9", "rewind(to: search)")
    b10 = transition(3, "book", "B10", "rewind(to: search)")
    retry = attempt(3, "search", "timeout", "retry", "#7")
    first = booked(1, "lock#1", "booking_ref#1")
    again = booked(4, "lock#2", "booking_ref#2")
    routes = [[first, b9, again], [first, b10, again], [first, b9, retry, again]]
    found = {f.identity() for r in routes for f in check(booking(), snapshot(state="done"), r)}
    assert sorted(turn[0].rule for _, _, turn in found) == ["row B10", "row B9"]


def test_a_dispatch_without_a_repaired_away_handle_is_explained_by_what_asked_for_the_repair():
    asked = transition(3, "quote", "precondition#1", "repair(to: search, fields: [dates])")
    applied = transition(4, "search", "repair:proposal", "repair(to: search, fields: [dates])")
    applied.handles_invalidated = ["lock#1"]
    trace = [
        attempt(1, "search", handles_minted=["search_id#1"]),
        attempt(2, "lock_price", handles_minted=["lock#1"]),
        asked,
        applied,
        attempt(5, "book", consumed=[]),
    ]
    stale = [f for f in check(booking(), snapshot(state="done"), trace) if "live lock" in f.message]
    assert [c.rule for c in stale[0].cause] == ["precondition #1", "repair proposal"]
