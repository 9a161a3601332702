"""Auditing a run's trace against its chain (``audit``): each divergence at its event."""

from __future__ import annotations

import pytest

from chains.core.errors import DocumentError
from chains.core.sim.audit import audit, read_trace, scenario_until
from chains.core.sim.session import play
from chains.core.sim.state import Event, Observation

from .builders import double_booking, fixture, walked


def bare(trace: list[Event]) -> list[Event]:
    """The trace as another runtime writes it: no recorded inputs."""
    return [e.model_copy(update={"input": None}) for e in trace]


def test_a_redispatched_unkeyed_booking_diverges_at_the_second_dispatch():
    trace = double_booking().trace
    found = audit(fixture("unsafe-retry-booking.yaml"), trace).divergences
    books = [e.seq for e in trace if e.event_type == "attempt" and e.step_id == "book_room"]
    assert [(d.seq, d.kind, d.step) for d in found] == [
        (books[1], "forbidden_dispatch", "book_room")
    ]
    assert "re-dispatched unkeyed commit book_room" in found[0].message


def test_the_trace_of_a_correct_run_has_no_divergence():
    assert audit(fixture("flight-roundtrip.yaml"), walked("flight-roundtrip.yaml").trace).clean


def test_a_timeout_reconciled_by_the_probe_has_no_divergence():
    run = walked("flight-roundtrip.yaml", until="book_trip")
    run.observe(Observation(transport="timeout"))
    run.probe("landed")
    assert run.snapshot.state == "done"
    assert audit(run.chain, run.trace).clean


def test_a_trace_without_recorded_inputs_is_followed_to_its_end():
    run = walked("flight-roundtrip.yaml")
    result = audit(run.chain, bare(run.trace))
    assert result.clean and result.followed


def test_a_verdict_other_than_the_deciding_rows_diverges_there():
    run = walked("flight-roundtrip.yaml", until="book_trip")
    run.observe(Observation(transport="timeout"))
    run.probe("landed")
    timeout = next(e for e in run.trace if e.signal == {"transport": "timeout"})
    told = [e.model_copy(update={"verdict": "retry"}) if e is timeout else e for e in run.trace]
    result = audit(run.chain, told)
    (wrong,) = [d for d in result.divergences if d.kind == "wrong_verdict"]
    assert (wrong.seq, wrong.step) == (timeout.seq, "book_trip")
    assert f"gives {timeout.verdict}" in wrong.message and not result.followed


def test_a_step_dispatched_out_of_order_diverges_there():
    run = walked("flight-roundtrip.yaml")
    skipped = [e for e in bare(run.trace) if e.step_id != "price_quote"]
    (parted,) = [d for d in audit(run.chain, skipped).divergences if d.kind == "out_of_order"]
    assert parted.step == "seat_map" and "waits for observe at price_quote" in parted.message


def test_an_alias_presented_after_it_was_invalidated_diverges():
    trace = [
        Event(seq=1, event_type="transition", handles_invalidated=["offer_id#1"]),
        Event(seq=2, event_type="attempt", step_id="book_room", handles_consumed=["offer_id#1"]),
    ]
    kinds = {d.kind for d in audit(fixture("unsafe-retry-booking.yaml"), trace).divergences}
    assert "invalidated_handle" in kinds


def test_a_trace_line_that_is_not_an_event_is_named_by_its_number():
    with pytest.raises(DocumentError) as caught:
        read_trace('{"seq": 1, "event_type": "attempt"}\n\n{"seq": 2, "event_type": "x"}\n')
    assert [p.line for p in caught.value.problems] == [3]


@pytest.mark.parametrize(
    "text", ["", '{"seq": 2, "event_type": "attempt"}\n{"seq": 1, "event_type": "attempt"}']
)
def test_an_empty_or_unordered_trace_is_refused(text):
    with pytest.raises(DocumentError):
        read_trace(text)


def test_the_simulator_scenario_of_a_trace_keeps_its_times():
    # the runtime's own backoff already moved the clock: only the waits between events count
    run = double_booking()
    second = [e for e in run.trace if e.step_id == "book_room" and e.event_type == "attempt"][1]
    again = play(run.chain, scenario_until(run.trace, second.seq)).run
    assert again.snapshot.dispatches["book_room"] == 2
    assert again.snapshot.clock == pytest.approx(second.t)
