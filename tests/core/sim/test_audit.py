"""Auditing a run's trace against its chain (``audit``): each divergence at its event."""

from __future__ import annotations

import json

import pytest

from chains.core.errors import DocumentError
from chains.core.sim.audit import audit, read_trace, scenario_until
from chains.core.sim.runtime import Run
from chains.core.sim.session import decode, encode, play
from chains.core.sim.state import Event, Observation

from .builders import OK, chain, double_booking, fixture, walked

ATTEMPT = '"event_type": "attempt"'


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
    assert audit(run.spec, run.trace).clean


def test_a_trace_without_recorded_inputs_is_followed_to_its_end():
    run = walked("flight-roundtrip.yaml")
    result = audit(run.spec, bare(run.trace))
    assert result.clean and result.followed


def test_a_verdict_other_than_the_deciding_rows_diverges_there():
    run = walked("flight-roundtrip.yaml", until="book_trip")
    run.observe(Observation(transport="timeout"))
    run.probe("landed")
    timeout = next(e for e in run.trace if e.signal == {"transport": "timeout"})
    told = [e.model_copy(update={"verdict": "retry"}) if e is timeout else e for e in run.trace]
    result = audit(run.spec, told)
    (wrong,) = [d for d in result.divergences if d.kind == "wrong_verdict"]
    assert (wrong.seq, wrong.step) == (timeout.seq, "book_trip")
    assert f"gives {timeout.verdict}" in wrong.message and not result.followed


def test_a_step_dispatched_out_of_order_diverges_there():
    run = walked("flight-roundtrip.yaml")
    skipped = [e for e in bare(run.trace) if e.step_id != "price_quote"]
    (parted,) = [d for d in audit(run.spec, skipped).divergences if d.kind == "out_of_order"]
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
    again = play(run.spec, scenario_until(run.trace, second.seq)).run
    assert again.snapshot.dispatches["book_room"] == 2
    assert again.snapshot.clock == pytest.approx(second.t)


@pytest.mark.parametrize(
    "t", ["1e308", "1e400", "NaN", "Infinity", "-1", "-1e308", "1" + "0" * 400]
)
def test_a_time_that_is_no_number_of_seconds_is_refused_naming_its_line_and_field(t):
    with pytest.raises(DocumentError) as caught:
        read_trace(f'{{"seq": 1, "event_type": "transition"}}\n{{"seq": 2, "t": {t}, {ATTEMPT}}}')
    assert [str(p).split(": ")[:2] for p in caught.value.problems] == [["line 2", "t"]]


@pytest.mark.parametrize("field", ["seq", "attempt"])
@pytest.mark.parametrize("count", ["-1", "9" * 30])
def test_a_count_out_of_range_is_refused_naming_its_line_and_field(field, count):
    event = {"seq": 1, "event_type": "attempt", field: count}
    with pytest.raises(DocumentError) as caught:
        read_trace(json.dumps(event).replace(f'"{count}"', count))
    assert [str(p).split(": ")[:2] for p in caught.value.problems] == [["line 1", field]]


def test_a_scenario_with_a_microsecond_between_events_is_one_the_simulator_reads():
    trace = [
        Event(seq=1, event_type="attempt", step_id="find_room", t=1.0),
        Event(seq=2, event_type="attempt", step_id="find_room", t=1.000001),
    ]
    scenario = scenario_until(trace, 2)
    assert decode(encode(scenario)) == scenario


@pytest.mark.parametrize(
    "given", [{"kind": "select"}, {"kind": "answer"}, {"kind": "probe", "result": 3}]
)
def test_an_input_the_simulator_cannot_take_is_refused_naming_its_line(given):
    trace = [
        Event(seq=1, event_type="attempt", step_id="find_room"),
        Event(seq=5, event_type="transition", step_id="find_room", input=given),
    ]
    with pytest.raises(DocumentError) as caught:
        scenario_until(trace, 5)
    assert [p.line for p in caught.value.problems] == [2]
    assert "input" in str(caught.value.problems[0])


@pytest.mark.parametrize(
    "start", [{"seed": "x"}, {"mode": "sideways"}, {"run_key": {}}, {"variant": "nowhere"}]
)
def test_a_start_the_chain_cannot_take_diverges_at_the_first_event(start):
    trace = [
        Event(seq=3, event_type="attempt", step_id="find_room", input={"kind": "start", **start})
    ]
    result = audit(fixture("unsafe-retry-booking.yaml"), trace)
    assert [(d.seq, d.kind) for d in result.divergences] == [(3, "out_of_order")]
    assert "cannot start this run" in result.divergences[0].message
    assert (result.followed, result.stopped_at) == (False, 3)


# A card payment held, then captured, each call keyed (a manual-capture shape).
CARD_HOLD = """
id: card_hold_capture
handles:
  - {id: intent_ref, minted_by: open_intent, staleness: {detect: [], ttl_hint: n/a}}
actions:
  - {id: open_intent, effect: mint, output: {handles: [intent_ref]}}
  - id: confirm_intent
    effect: commit
    input: {handles: [intent_ref]}
    idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {probe: read_intent, signal: "status == requires_capture"}
    compensation: {action: void_intent}
  - id: capture_funds
    effect: commit
    input: {handles: [intent_ref]}
    idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {probe: read_intent, signal: "status == succeeded"}
    compensation: {action: none, ordering_note: refunds are another chain}
  - {id: read_intent, effect: read, probe_only: true, input: {handles: [intent_ref]}}
  - id: void_intent
    effect: compensate
    input: {handles: [intent_ref]}
    idempotency: {mode: keyed, replay_semantics: returns_cached}
    confirmation: {probe: read_intent, signal: "status == canceled"}
"""


def confirm_retried(new_key: bool) -> tuple[list[Event], int]:
    """A run whose confirm times out and is retried; the retry's key is new when asked."""
    run = Run.start(chain(CARD_HOLD))
    for seen in (OK, Observation(transport="timeout"), OK, OK):
        run.observe(seen)
    assert run.snapshot.state == "done"
    confirms = [e for e in run.trace if e.event_type == "attempt" and e.step_id == "confirm_intent"]
    retry = confirms[1]
    if new_key:
        retry = retry.model_copy(update={"idempotency_key": "a-fresh-key"})
    return [retry if e.seq == retry.seq else e for e in run.trace], retry.seq


def test_a_confirm_retried_with_a_new_idempotency_key_audits_as_a_double_commit():
    trace, retry = confirm_retried(new_key=True)
    (found,) = audit(chain(CARD_HOLD), trace).divergences
    assert (found.seq, found.kind, found.step) == (retry, "forbidden_dispatch", "confirm_intent")
    assert found.message.startswith("[double_commit] commit confirm_intent was dispatched again")
    assert "with a new idempotency key" in found.message


def test_a_confirm_retried_with_the_same_idempotency_key_audits_clean():
    trace, _ = confirm_retried(new_key=False)
    assert audit(chain(CARD_HOLD), trace).clean


def test_a_trace_that_ends_the_run_with_a_capture_unanswered_audits_as_outcome_abandoned():
    run = Run.start(chain(CARD_HOLD))
    for seen in (OK, OK, Observation(transport="timeout")):
        run.observe(seen)
    trace = list(run.trace)
    last = trace[-1]
    # the client gave up: it wrote the run done without a probe or another try
    trace.append(Event(seq=last.seq + 1, event_type="transition", state="done", t=last.t))
    (found,) = audit(chain(CARD_HOLD), trace).divergences
    assert (found.seq, found.kind) == (last.seq + 1, "forbidden_dispatch")
    assert found.message.startswith(
        "[outcome_abandoned] the run ended done although the outcome of capture_funds"
    )


def test_a_trace_that_escalates_its_unknown_capture_to_an_operator_audits_clean_of_it():
    run = Run.start(chain(CARD_HOLD))
    for seen in (OK, OK, Observation(transport="timeout")):
        run.observe(seen)
    last = run.trace[-1]
    ended = Event(seq=last.seq + 1, event_type="transition", state="escalated", t=last.t)
    found = audit(chain(CARD_HOLD), [*run.trace, ended]).divergences
    assert [d for d in found if "outcome_abandoned" in d.message] == []
