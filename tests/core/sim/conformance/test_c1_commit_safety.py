"""CONFORMANCE C1: commit safety (the double-booking class)."""

from __future__ import annotations

import pytest

from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run
from chains.core.sim.scenario import load_scenario, simulate
from chains.core.sim.state import Observation

from ..builders import (
    KEYED,
    OK,
    OPTIONS,
    altered,
    booking,
    chain,
    drive_to_book,
    events,
    obs,
    start_booking,
)


def test_c1_1_exactly_one_dispatch_on_ambiguity():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    (attempt,) = events(run, "attempt", "book")
    assert attempt.verdict == "reconcile"
    assert run.snapshot.dispatches["book"] == 1
    assert run.waiting().kind == "probe"
    run.wait(3600)
    run.probe("unknown")
    assert run.waiting().kind == "probe"
    assert run.snapshot.dispatches["book"] == 1
    run.probe("landed")
    assert run.snapshot.dispatches["book"] == 1
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]
    assert run.snapshot.state == "done"


def test_c1_2_idempotent_replay_produces_one_booking():
    run = drive_to_book(start_booking())
    crashed = Run.resume(run.spec, run.snapshot.model_copy(deep=True), list(run.trace))
    assert crashed.waiting().kind == "probe"
    (lost,) = events(crashed, "attempt", "book")
    assert (lost.verdict, lost.signal) == ("reconcile", {"transport": "lost"})
    crashed.probe("landed")
    assert crashed.snapshot.dispatches["book"] == 1
    assert len(crashed.snapshot.commits_landed) == 1
    assert crashed.snapshot.state == "done"


def test_c1_3_keyed_retry_reuses_the_key_within_retention():
    run = Run.start(chain(KEYED))
    run.observe(obs("timeout"))
    run.observe(obs("http:503"))
    keys = [e.idempotency_key for e in events(run, "attempt", "pay")]
    assert keys[0] is not None and keys == [keys[0], keys[0]]
    run.observe(OK)
    assert len(run.snapshot.commits_landed) == 1


def test_c1_3_past_key_retention_the_old_key_is_never_redispatched():
    run = Run.start(chain(KEYED))
    run.observe(obs("timeout"))
    run.wait(25 * 3600)  # the retry's dispatch is out; the provider forgets the key meanwhile
    run.observe(obs("timeout"))
    assert run.waiting().kind == "probe"
    assert run.snapshot.dispatches["pay"] == 2
    assert events(run, "attempt", "pay")[-1].verdict == "reconcile"


def test_c1_4_correlation_record_precedes_dispatch():
    run = drive_to_book(start_booking())
    (record,) = run.snapshot.correlation
    assert (record.step, record.status) == ("book", "PENDING")
    persisted = [e for e in events(run, "transition", "book") if e.row == "P3:correlation"]
    assert persisted and persisted[0].seq == record.attempt_seq
    run.observe(obs("conn_drop"))
    attempt = events(run, "attempt", "book")[0]
    assert persisted[0].seq < attempt.seq
    assert run.snapshot.correlation[0].status == "RECONCILING"


def test_c1_5_cancellation_shield_keeps_the_in_flight_commit():
    run = drive_to_book(start_booking())
    run.wait(3600)  # far past wall_clock (10m) while book's dispatch is out
    assert run.waiting().step == "book" and run.snapshot.state == "running"
    run.observe(obs("timeout"))
    assert events(run, "attempt", "book")[-1].verdict == "reconcile"
    assert run.waiting().kind == "probe"


def test_c1_6_reconcile_deadline_escalates_and_the_sweep_keeps_probing():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.wait(24 * 3600)
    assert run.snapshot.state == "reconciling"
    assert events(run, "transition", "book")[-1].row == "async.deadline"
    assert events(run, "transition", "book")[-1].verdict == "escalate(operator)"
    for _ in range(3):
        run.wait(6 * 3600)
        run.probe("unknown")
        assert run.snapshot.state == "reconciling"
    run.wait(72 * 3600)
    assert run.snapshot.state == "escalated"
    assert run.snapshot.dispatches["book"] == 1
    assert not any((e.verdict or "").startswith("dead_end") for e in run.trace)


def test_c1_7_reconcile_routes_probe_observed_causes():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.probe("not_landed", cause=obs("http:402", "CARD_DECLINED"))
    refed = events(run, "reconcile", "book")[-1]
    assert (refed.verdict, refed.row) == ("repair(to: book, fields: [card])", "B3")
    assert run.snapshot.correlation[0].refed
    assert run.snapshot.dispatches["book"] == 1
    assert run.waiting().kind == "repair"


def test_c1_7_a_cause_that_would_retry_the_commit_is_not_applied():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.probe("not_landed", cause=obs("http:429"))
    event = events(run, "reconcile", "book")[-1]
    assert event.verdict == "rewind(to: lock_price)"
    assert run.snapshot.dispatches["book"] == 1


def test_c1_7_a_second_reconcile_of_the_same_attempt_cannot_refeed():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    record = run.snapshot.correlation[0]
    record.refed = True  # already re-fed once
    run.probe("not_landed", cause=obs("http:402", "CARD_DECLINED"))
    assert events(run, "reconcile", "book")[-1].verdict == "rewind(to: lock_price)"


@pytest.mark.parametrize("safe_rejects", [0, 1, 2, 3])
def test_c1_8_safe_rejects_do_not_consume_the_exactly_once_attempt(safe_rejects):
    doc = altered(booking(), "policy.per_step.commit.unkeyed.safe_reject_redispatch", safe_rejects)
    run = drive_to_book(start_booking(doc))
    for _ in range(safe_rejects):
        run.observe(obs("http:429"))
        assert run.waiting().step == "book" and run.waiting().kind == "observe"
        assert run.snapshot.budgets.step_attempts_left == 1
    assert run.snapshot.dispatches.get("book", 0) == safe_rejects
    run.observe(obs("timeout"))  # the single uncertain dispatch is still there
    assert run.waiting().kind == "probe"
    assert run.snapshot.dispatches["book"] == safe_rejects + 1


def test_c1_8_a_safe_reject_past_the_allowance_does_not_redispatch():
    doc = altered(booking(), "policy.per_step.commit.unkeyed.safe_reject_redispatch", 1)
    run = drive_to_book(start_booking(doc))
    run.observe(obs("http:429"))
    run.observe(obs("http:429"))
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "safe_reject_redispatch_exhausted"
    assert run.snapshot.dispatches["book"] == 2


def test_c1_8_an_undeclared_signal_still_consumes_the_attempt():
    run = drive_to_book(start_booking())
    run.observe(Observation(transport="http:503"))
    assert run.waiting().kind == "probe"
    assert run.snapshot.budgets.step_attempts_left == 0


def test_c1_4_no_path_dispatches_an_unkeyed_commit_without_a_prior_record():
    run = drive_to_book(start_booking())
    run.observe(obs("http:429"))  # safe reject: a second dispatch, a second record
    run.observe(obs("http:429"))
    run.observe(obs("timeout"))
    run.probe("not_landed")
    run.observe(OK)  # lock_price again
    run.observe(OK)  # book again
    recorded = False
    for event in run.trace:
        if event.step_id != "book":
            continue
        if event.row == "P3:correlation":
            recorded = True
        elif event.event_type == "attempt":
            assert recorded, f"attempt seq {event.seq} had no correlation record before it"
            recorded = False
    assert len(run.snapshot.correlation) == run.snapshot.dispatches["book"] == 4


def test_c1_1_a_rewind_on_an_undeclared_signal_probes_before_the_commit_goes_out_again():
    run = drive_to_book(start_booking())
    run.observe(obs("http:410", "LOCK_EXPIRED"))  # staleness row: rewind(to: lock_price)
    run.observe(OK)  # lock_price re-mints the lock
    assert run.waiting().kind == "probe" and run.waiting().step == "book"
    assert run.snapshot.dispatches["book"] == 1
    assert events(run, "transition", "book")[-1].row == "P3:unresolved"


def test_c1_1_a_probe_that_finds_the_earlier_dispatch_landed_books_nothing_more():
    run = drive_to_book(start_booking())
    run.observe(obs("http:410", "LOCK_EXPIRED"))
    run.observe(OK)
    run.probe("landed")
    assert run.snapshot.dispatches["book"] == 1
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]
    assert run.snapshot.state == "done"


def test_c1_1_a_probe_that_finds_nothing_landed_dispatches_afresh():
    run = drive_to_book(start_booking())
    run.observe(obs("http:410", "LOCK_EXPIRED"))
    run.observe(OK)
    run.probe("not_landed")
    assert run.waiting().kind == "observe" and run.waiting().step == "book"
    assert run.snapshot.handles["lock"].alias == "lock#2"  # the fresh lock, never the spent one


def test_c1_8_a_rewind_on_a_declared_signal_dispatches_afresh_without_a_probe():
    doc = booking()
    doc = doc.model_copy(
        update={
            "verdict_table": [
                *doc.verdict_table,
                *chain("""
                    id: extra
                    verdict_table:
                      - {id: R1, signal: [code:LOCK_EXPIRED], scope: {steps: [book]},
                         verdict: "rewind(to: lock_price)", no_side_effect: true}
                """).verdict_table,
            ]
        }
    )
    run = drive_to_book(start_booking(doc))
    run.observe(obs("http:410", "LOCK_EXPIRED"))
    run.observe(OK)
    assert run.waiting().kind == "observe" and run.waiting().step == "book"
    assert not [e for e in run.trace if e.row == "P3:unresolved"]


# --- C1.5 the cancellation shield, C1.6 the sweep (a caller's cancel, sweeps on the clock) ---


def cancelled_while_booking_is_out() -> Run:
    run = drive_to_book(start_booking())
    run.cancel()  # the caller gives up while book's request is out
    return run


def test_c1_5_a_callers_cancel_while_the_booking_is_out_reconciles_it_instead_of_abandoning_it():
    run = cancelled_while_booking_is_out()
    assert (run.snapshot.state, run.waiting().kind, run.waiting().step) == (
        "reconciling",
        "probe",
        "book",
    )
    (attempt,) = events(run, "attempt", "book")
    assert (attempt.verdict, attempt.row, attempt.input) == (
        "reconcile",
        "P3:shield",
        {"kind": "cancel"},
    )
    assert run.snapshot.correlation[-1].status == "RECONCILING"
    assert run.snapshot.dispatches["book"] == 1


def test_c1_5_a_cancelled_booking_the_probe_finds_landed_is_recorded_then_unwound():
    run = cancelled_while_booking_is_out()
    run.probe("landed")
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]
    assert run.snapshot.correlation[0].status == "LANDED"
    assert run.snapshot.outcome["reason"] == "cancelled"
    assert run.snapshot.state == "compensating" and run.waiting().step == "cancel"


def test_c1_5_a_cancelled_booking_the_probe_finds_not_landed_ends_without_a_second_dispatch():
    run = cancelled_while_booking_is_out()
    run.probe("not_landed")
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "cancelled"
    assert run.snapshot.dispatches["book"] == 1
    assert run.finished


def test_c1_5_a_cancel_with_no_commit_out_ends_the_run_at_once():
    run = start_booking()
    run.observe(Observation(options=list(OPTIONS)))
    run.cancel()  # waiting at the pick: nothing is out
    assert (run.snapshot.state, run.snapshot.outcome["reason"]) == ("dead_end", "cancelled")
    assert events(run)[-1].input == {"kind": "cancel"}


def test_c1_5_a_cancel_while_reconciling_waits_for_the_probe_before_ending():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.cancel()
    assert run.waiting().kind == "probe" and run.snapshot.state == "reconciling"
    run.probe("landed")
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]
    assert run.snapshot.outcome["reason"] == "cancelled"


def test_c1_5_a_scenario_cancel_event_is_the_callers_cancel():
    scenario = load_scenario(
        "intent: {dates: '2026-12-01', card: visa}\n"
        "events:\n"
        "  - observe: {options: [{id: o1, key: {carrier: XA, flight: '101'}}]}\n"
        "  - select: o1\n"
        "  - observe: {}\n"
        "  - observe: {}\n"
        "  - cancel: true\n"
        "  - probe: not_landed\n"
        "expect: {state: dead_end, dispatches: {book: 1}}\n"
    )
    result = simulate(booking(), scenario)
    assert result.held, [str(e) for e in result.failed]


def reconciling_booking() -> Run:
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))  # book: 6h sweep, 24h async deadline, 72h escalate_after
    return run


def sweep_probes(run: Run) -> int:
    return sum(e.signal["sweeps"] for e in events(run, "reconcile", "book") if e.row == "sweep")


def test_c1_6_the_sweep_reprobes_each_interval_as_time_passes():
    run = reconciling_booking()
    run.wait(13 * 3600)
    assert run.snapshot.correlation[-1].sweeps == 2  # at 6h and 12h
    assert sweep_probes(run) == 2
    assert run.snapshot.probes["find_booking"] == 2
    assert run.snapshot.state == "reconciling" and run.waiting().kind == "probe"


def test_c1_6_the_sweep_reprobes_until_escalate_after_then_hands_the_commit_to_the_operator():
    run = reconciling_booking()
    run.wait(24 * 3600)
    assert run.snapshot.state == "reconciling"  # async.deadline asked the operator; sweeps go on
    run.wait(48 * 3600)
    assert run.snapshot.correlation[-1].sweeps == 11  # 6h, 12h, ... 66h: none at or past 72h
    assert run.snapshot.state == "escalated"
    run.wait(30 * 24 * 3600)
    assert run.snapshot.correlation[-1].sweeps == 11
    assert run.snapshot.dispatches["book"] == 1
    assert not any((e.verdict or "").startswith("dead_end") for e in run.trace)


def _kill_at_each_unkeyed_dispatch(run: Run) -> list[tuple[str, list]]:
    """Die (in effect) at C1.4's first kill point: keep what is durable there, as JSON."""
    killed: list[tuple[str, list]] = []

    def kill(at: Run) -> None:
        killed.append((at.snapshot.model_dump_json(), [e.model_copy() for e in at.trace]))

    run.before_dispatch = kill
    return killed


def test_c1_4_a_kill_after_the_record_and_before_the_booking_leaves_finds_a_pending_record():
    run = start_booking()
    killed = _kill_at_each_unkeyed_dispatch(run)
    drive_to_book(run)
    durable = type(run.snapshot).model_validate_json(killed[0][0])
    assert [(r.step, r.status) for r in durable.correlation] == [("book", "PENDING")]


def test_c1_4_a_booking_resumed_from_the_first_kill_point_probes_before_any_dispatch():
    run = start_booking()
    killed = _kill_at_each_unkeyed_dispatch(run)
    drive_to_book(run)
    snapshot, trace = killed[0]
    resumed = Run.resume(run.spec, type(run.snapshot).model_validate_json(snapshot), trace)
    assert (resumed.waiting().kind, resumed.waiting().step) == ("probe", "book")
    assert resumed.snapshot.dispatches.get("book", 0) == 0
    assert [r.status for r in resumed.snapshot.correlation] == ["RECONCILING"]


def test_c1_4_every_redispatch_of_the_booking_has_its_own_record_durable_at_the_kill_point():
    run = start_booking()
    killed = _kill_at_each_unkeyed_dispatch(run)
    drive_to_book(run)
    run.observe(obs("http:429"))  # a declared safe reject: the booking goes out again
    run.observe(obs("http:429"))
    pending = [
        [r.status for r in type(run.snapshot).model_validate_json(s).correlation] for s, _ in killed
    ]
    assert pending == [
        ["PENDING"],
        ["NOT_LANDED", "PENDING"],
        ["NOT_LANDED", "NOT_LANDED", "PENDING"],
    ]


def test_c1_5_a_cancelled_run_and_its_sweeps_replay_from_the_trace_alone():
    run = cancelled_while_booking_is_out()
    run.wait(13 * 3600)  # two sweeps of book before its probe says
    run.probe("not_landed")
    assert check_replay(run.spec, run.trace, run.snapshot.sealed) == []


def not_landed_rewind(single_use: bool) -> str | None:
    """Where a booking the probe found not landed sends the run (its lock spent or not)."""
    doc = booking()
    lock = [h.id for h in doc.handles].index("lock")
    doc = altered(doc, f"handles.{lock}.single_use", single_use)
    run = drive_to_book(start_booking(doc))
    run.observe(obs("timeout"))
    run.probe("not_landed")
    (settled,) = [e for e in run.trace if e.row == "reconcile:not_landed" and e.verdict]
    return settled.verdict


@pytest.mark.parametrize("single_use", [True, False])
def test_c1_7_a_booking_found_not_landed_with_no_cause_re_mints_its_inputs_never_itself(
    single_use,
):
    assert not_landed_rewind(single_use) == "rewind(to: lock_price)"
