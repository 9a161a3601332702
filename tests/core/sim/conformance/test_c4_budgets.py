"""CONFORMANCE C4: budgets and stop conditions."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from chains.core.sim.replay import check_replay
from chains.core.sim.runs import FileRuns, MemoryRuns
from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.scenario import Scenario, simulate
from chains.core.sim.state import Proposal

from ..builders import (
    OK,
    OPTIONS,
    TWO_COMMITS,
    altered,
    booking,
    chain,
    drive_to_book,
    events,
    obs,
    start_booking,
)


@pytest.mark.parametrize("attempts", [1, 2, 3, 5])
def test_c4_1_step_attempts_exhaustion_dead_ends_with_every_attempt_traced(attempts):
    doc = altered(booking(), "policy.per_step.read.attempts", attempts)
    run = start_booking(doc)
    for _ in range(attempts):
        run.observe(obs("http:503"))
    assert len(events(run, "attempt", "search")) == attempts == run.snapshot.dispatches["search"]
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "step_attempts_exhausted"
    exhausted = events(run, "transition", "search")[-1]
    assert exhausted.verdict == "dead_end(reason: step_attempts_exhausted, permanent: false)"


@pytest.mark.parametrize("max_rewinds", [0, 1, 2, 4])
def test_c4_1_max_rewinds_exhaustion_names_the_budget(max_rewinds):
    doc = altered(booking(), "policy.per_chain.max_rewinds", max_rewinds)
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    for _ in range(max_rewinds):
        run.observe(obs("http:410", "QUOTE_EXPIRED"))  # lock_price → rewind(quote)
        run.observe(OK)
    run.observe(obs("http:410", "QUOTE_EXPIRED"))
    assert run.snapshot.outcome["reason"] == "max_rewinds_exhausted"
    assert run.snapshot.budgets.rewinds_left == 0
    assert len(events(run, "attempt")) == sum(run.snapshot.dispatches.values())


def test_c4_1_wall_clock_exhaustion_dead_ends():
    run = start_booking()
    run.wait(11 * 60)
    assert run.snapshot.outcome["reason"] == "wall_clock_exhausted"
    assert run.snapshot.state == "dead_end"


def test_c4_1_budget_exhaustion_compensates_iff_commits_landed():
    run = Run.start(chain(TWO_COMMITS))
    run.observe(OK)
    run.observe(OK)
    for _ in range(3):
        run.observe(obs("timeout"))
    assert run.snapshot.outcome["reason"] == "step_attempts_exhausted"
    assert run.snapshot.state == "compensating"
    assert run.waiting().step == "cancel_car"


def test_c4_2_the_model_cannot_move_the_fence():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.probe("not_landed", cause=obs("http:402", "CARD_DECLINED"))
    assert run.waiting().kind == "repair"
    before = run.snapshot.model_copy(deep=True)
    rejected = [
        Proposal(kind="retry"),
        Proposal(kind="classify", verdict="retry"),
        Proposal(kind="handle", handle="lock", value="lock#1"),
        Proposal(kind="repair", fields={"dates": "2027-01-01"}),
        Proposal(kind="repair", fields={"card": "lock#1"}),
    ]
    for proposal in rejected:
        assert run.propose(proposal) is False
    after = run.snapshot
    assert after.budgets == before.budgets
    assert after.intent == before.intent and after.handles == before.handles
    assert after.waiting == before.waiting
    notes = [e.note or "" for e in run.trace[-len(rejected) :]]
    assert all(n.startswith("rejected") for n in notes)
    assert all(e.verdict is None for e in run.trace[-len(rejected) :])
    assert run.propose(Proposal(kind="repair", fields={"card": "amex"}))
    assert run.snapshot.intent["card"] == "amex"


def test_c4_3_wall_clock_excludes_parked_states():
    doc = altered(booking(), "gates.0.timeout", None)  # the chain default (30m) governs
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.refundable == false"]))
    run.wait(20 * 60)  # past wall_clock (10m), inside gate_timeout (30m)
    assert run.snapshot.state == "at_gate"
    run.wait(11 * 60)
    assert run.snapshot.outcome["reason"] == "gate_timeout_nonrefundable_ok"


def test_c4_3_wall_clock_excludes_reconciling():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.wait(5 * 3600)
    assert run.snapshot.state == "reconciling"
    assert run.snapshot.budgets.wall_used < 10 * 60
    run.probe("landed")
    assert run.snapshot.state == "done"


TRIP = {"dates": "2026-12-01", "card": "visa"}


def test_c4_5_starting_a_booking_again_with_its_run_key_returns_that_run_and_dispatches_nothing():
    runs = MemoryRuns()
    first = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=runs)
    first.observe(obs(options=OPTIONS))
    seq, dispatches = first.snapshot.seq, dict(first.snapshot.dispatches)
    again = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=runs)
    assert again.snapshot.run_id == first.snapshot.run_id
    assert (again.snapshot.seq, again.snapshot.dispatches) == (seq, dispatches)


def test_c4_5_a_second_start_of_a_finished_booking_returns_its_outcome_without_booking_again():
    runs = MemoryRuns()
    run = drive_to_book(Run.start(booking(), run_key="trip-42", intent=TRIP, runs=runs))
    run.observe(OK)
    again = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=runs)
    assert again.finished and again.snapshot.state == "done"
    assert again.snapshot.dispatches["book"] == 1


def test_c4_5_a_distinct_run_key_starts_a_distinct_run():
    runs = MemoryRuns()
    first = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=runs)
    first.observe(obs(options=OPTIONS))
    other = Run.start(booking(), run_key="trip-43", intent=TRIP, runs=runs)
    assert other.snapshot.run_id != first.snapshot.run_id
    assert other.waiting().step == "search" and len(runs) == 2


def test_c4_5_concurrent_starts_of_one_booking_make_one_run():
    runs = MemoryRuns()
    made = []
    start = partial(Run.start, booking(), run_key="trip-42", intent=TRIP, runs=runs)
    threads = [threading.Thread(target=lambda: made.append(start())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(run) for run in made}) == 1 and len(runs) == 1


def test_c4_5_a_booking_kept_in_run_files_is_the_same_run_after_a_restart(tmp_path):
    run = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=FileRuns(tmp_path))
    drive_to_book(run)
    run.observe(OK)
    FileRuns(tmp_path).save(run)
    again = Run.start(booking(), run_key="trip-42", intent=TRIP, runs=FileRuns(tmp_path))
    assert again.snapshot == run.snapshot and again.trace == run.trace


def test_c4_5_a_payment_another_process_started_meanwhile_is_returned_not_overwritten(tmp_path):
    theirs = []

    def build_while_another_process_starts_the_same_payment() -> Run:
        their_run = Run.start(booking(), run_key="pay-7", intent=TRIP, runs=FileRuns(tmp_path))
        their_run.observe(obs(options=OPTIONS))
        FileRuns(tmp_path).save(their_run)
        theirs.append(their_run)
        return Run.start(booking(), run_key="pay-7", intent=TRIP)

    mine, made = FileRuns(tmp_path).get_or_create(
        booking(), "pay-7", build_while_another_process_starts_the_same_payment
    )
    assert not made and mine.snapshot == theirs[0].snapshot
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_c4_5_a_start_with_a_store_but_no_run_key_is_refused():
    with pytest.raises(SimulationError, match="run_key"):
        Run.start(booking(), intent=TRIP, runs=MemoryRuns())


def external_at_lock_price(max_rewinds: int = 3) -> Run:
    doc = altered(booking(), "policy.per_chain.max_rewinds", max_rewinds)
    run = start_booking(doc, mode="external", run_key="trip-7")
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    return run


@pytest.mark.parametrize("max_rewinds", [1, 2, 3])
def test_c4_4_external_mode_budget_carryover(max_rewinds):
    run = external_at_lock_price(max_rewinds)
    runs = [run]
    for n in range(max_rewinds):
        run.observe(obs("http:410", "QUOTE_EXPIRED"))
        assert run.snapshot.state == "restart_required"
        restart = run.snapshot.outcome["restart_required"]
        assert restart["rewind_to"] == "quote" and restart["repair_fields"] is None
        assert restart["budgets_remaining"]["rewinds"] == max_rewinds - n - 1
        run = Run.start(run.spec, continuation_of=run.snapshot)
        runs.append(run)
        assert run.snapshot.continuation_of == runs[-2].snapshot.run_id
        assert run.snapshot.run_key == "trip-7"
        assert run.waiting().step == "quote"  # the cursor resumes at the restart target
        assert run.snapshot.handles["pick"].alias == "pick#1"  # upstream handles carry over
        run.observe(OK)
    run.observe(obs("http:410", "QUOTE_EXPIRED"))  # one restart too many
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "max_rewinds_exhausted"
    for r in runs:
        assert check_replay(r.spec, r.trace) == []


def test_c4_4_a_repair_restart_accepts_only_the_listed_fields():
    doc = booking()
    run = drive_to_book(start_booking(doc, mode="external"))
    run.observe(obs("http:402", "CARD_DECLINED"))
    restart = run.snapshot.outcome["restart_required"]
    assert (restart["rewind_to"], restart["repair_fields"]) == ("book", ["card"])
    assert restart["budgets_remaining"] == {"rewinds": 2, "repairs": 1}
    with pytest.raises(SimulationError, match=r"repair fields \['card'\]; got \['dates'\]"):
        Run.start(doc, continuation_of=run.snapshot, intent={"dates": "2027-01-01"})
    with pytest.raises(SimulationError, match="reuses run_key"):
        Run.start(doc, continuation_of=run.snapshot, run_key="another")
    again = Run.start(doc, continuation_of=run.snapshot, intent={"card": "amex"})
    assert again.snapshot.intent["card"] == "amex"
    carried = ("repairs_left", "wall_used", "wall_limit")
    assert [getattr(again.snapshot.budgets, k) for k in carried] == [
        getattr(run.snapshot.budgets, k) for k in carried
    ]
    # the declined dispatch spent the lock (I4): re-minting it is a rewind, in process
    assert again.snapshot.budgets.rewinds_left == run.snapshot.budgets.rewinds_left - 1
    assert again.waiting().step == "lock_price" and again.snapshot.state == "running"


def test_c4_4_only_a_restart_can_be_continued():
    run = start_booking()
    with pytest.raises(SimulationError, match="restart_required"):
        Run.start(run.spec, continuation_of=run.snapshot)


def test_c4_5_an_external_continuation_takes_over_its_trips_run_key():
    runs = MemoryRuns()
    doc = booking()
    run = Run.start(doc, mode="external", run_key="trip-7", intent=TRIP, runs=runs)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    run.observe(obs("http:410", "QUOTE_EXPIRED"))
    assert run.snapshot.state == "restart_required"
    continued = Run.start(doc, continuation_of=run.snapshot, runs=runs)
    again = Run.start(doc, run_key="trip-7", intent=TRIP, runs=runs)
    assert again.snapshot.run_id == continued.snapshot.run_id != run.snapshot.run_id


def test_c4_3_a_booking_answered_after_a_park_longer_than_wall_clock_goes_on_to_book():
    # the chain's gate_timeout (30m) governs, not wall_clock (10m)
    doc = altered(booking(), "gates.0.timeout", None)
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.refundable == false"]))
    run.wait(20 * 60)
    run.answer("accept")
    assert run.snapshot.budgets.wall_used == 0
    assert run.waiting().step == "lock_price" and run.snapshot.state == "running"
    run.observe(OK)
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]


def test_c4_3_a_booking_reconciled_after_a_hold_longer_than_wall_clock_goes_on_to_book_again():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.wait(2 * 3600)  # the probe answers two hours later, inside async.deadline (24h)
    run.probe("not_landed")
    assert run.snapshot.budgets.wall_used == 0
    assert run.snapshot.state == "running" and run.waiting().step == "lock_price"


BOOK_TRIP_42 = Scenario.model_validate(
    {
        "run_key": "trip-42",
        "intent": TRIP,
        "events": [
            {"observe": {"options": [o.model_dump() for o in OPTIONS]}},
            {"select": "o1"},
            {"observe": "http:200"},
            {"observe": "http:200"},
            {"observe": "http:200"},
        ],
    }
)


def test_c4_5_a_booking_scenario_submitted_twice_with_its_run_key_books_once(tmp_path):
    first = simulate(booking(), BOOK_TRIP_42, runs=FileRuns(tmp_path))
    again = simulate(booking(), BOOK_TRIP_42, runs=FileRuns(tmp_path))
    assert (first.created, again.created) == (True, False)
    assert again.run.snapshot.state == "done" and again.run.snapshot.dispatches["book"] == 1
    assert again.run.trace == first.run.trace
