"""``gate_skipped``: a money or consent gate is passed only with an answer from its audience.

Read from what any runtime's trace carries (a park is a ``gate(...)``
verdict, an answer an ``answer`` input), so a trace from another runtime
audits the same as ours.
"""

from __future__ import annotations

from chains.core.sim.audit import audit
from chains.core.sim.invariants import Monitor
from chains.core.sim.runtime import Run
from chains.core.sim.state import Event

from .builders import OK, chain

PAY = chain(
    """
    id: gated_payment
    actions:
      - {id: quote, effect: mint}
      - {id: pay, effect: commit, idempotency: {mode: keyed}, entry_gate: pay_ok,
         compensation: {action: refund}}
      - {id: refund, effect: compensate, idempotency: {mode: keyed}, entry_gate: refund_ok}
    gates:
      - {id: pay_ok, audience: user, payload: {amount: money}, outcomes: {approve: ok}}
      - {id: refund_ok, audience: user, description: consent to refund,
         outcomes: {approve: ok}}
    """
)


def park(seq: int, step: str, gate: str) -> Event:
    return Event(seq=seq, event_type="transition", step_id=step, verdict=f"gate({gate})")


def answer(seq: int, step: str, by: str = "user") -> Event:
    given = {"kind": "answer", "outcome": "approve"}
    return Event(seq=seq, event_type="transition", step_id=step, input=given, proposal_source=by)


def dispatch(seq: int, step: str) -> Event:
    return Event(
        seq=seq, event_type="attempt", step_id=step, signal={"transport": "http:200"}, verdict="ok"
    )


def skipped(trace: list[Event]) -> list[str]:
    return [f.message for f in Monitor(PAY).feed(trace) if f.invariant == "gate_skipped"]


def test_a_payment_dispatched_after_its_gate_was_answered_passes():
    assert skipped([park(1, "pay", "pay_ok"), answer(2, "pay"), dispatch(3, "pay")]) == []


def test_a_payment_dispatched_without_asking_its_money_gate_is_gate_skipped():
    assert skipped([dispatch(1, "quote"), dispatch(2, "pay")]) == [
        "pay was dispatched without an answer to its entry gate pay_ok, "
        "which decides money or consent"
    ]


def test_a_model_answer_to_a_money_gate_is_gate_skipped_without_any_row_names():
    found = skipped([park(1, "pay", "pay_ok"), answer(2, "pay", by="model"), dispatch(3, "pay")])
    assert found == ["gate pay_ok decides money or consent but was answered by the model"]


def test_an_answer_counts_for_retries_of_the_same_arrival():
    trace = [park(1, "pay", "pay_ok"), answer(2, "pay"), dispatch(3, "pay"), dispatch(4, "pay")]
    assert skipped(trace) == []


def test_arriving_at_the_gated_step_again_needs_a_new_answer():
    trace = [park(1, "pay", "pay_ok"), answer(2, "pay"), dispatch(3, "pay"), dispatch(4, "quote")]
    assert skipped([*trace, dispatch(5, "pay")]) != []


def test_an_undo_behind_a_consent_gate_is_checked_on_the_way_back_too():
    trace = [park(1, "pay", "pay_ok"), answer(2, "pay"), dispatch(3, "pay"), dispatch(4, "refund")]
    assert skipped(trace) == [
        "refund was dispatched without an answer to its entry gate refund_ok, "
        "which decides money or consent"
    ]


def test_our_runtime_asks_every_entry_gate_so_its_runs_never_skip_one():
    run = Run.start(PAY)
    run.observe(OK)
    run.answer("approve")
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert skipped(run.trace) == []


def test_an_audited_trace_whose_model_answered_the_money_gate_shows_gate_skipped_there():
    trace = [
        dispatch(1, "quote"),
        park(2, "pay", "pay_ok"),
        answer(3, "pay", by="model"),
        dispatch(4, "pay"),
    ]
    found = [d for d in audit(PAY, trace).divergences if "gate_skipped" in d.message]
    assert [(d.seq, d.kind) for d in found] == [(3, "forbidden_dispatch")]


def test_a_money_gate_whose_timeout_goes_on_unanswered_is_gate_skipped_once():
    timed_out = Event(
        seq=2, event_type="transition", step_id="pay", row="gate:pay_ok.timeout", verdict="ok"
    )
    found = skipped([park(1, "pay", "pay_ok"), timed_out, dispatch(3, "pay")])
    assert found == ["gate pay_ok decides money or consent but its timeout went on (ok) unanswered"]


def test_a_money_gate_whose_timeout_ends_the_run_skips_nothing():
    timed_out = Event(
        seq=2,
        event_type="transition",
        step_id="pay",
        row="gate:pay_ok.timeout",
        verdict="dead_end(reason: no_answer)",
    )
    assert skipped([park(1, "pay", "pay_ok"), timed_out]) == []
