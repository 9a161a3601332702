"""SPEC §2.5's event shape (its example's fields, our values) read and audited."""

from __future__ import annotations

import json

import pytest

from chains.core import traces
from chains.core.errors import DocumentError
from chains.core.sim.audit import audit

from .traced import audited, flight, text

TRACE = "flight-price-change.spec.jsonl"

# The SPEC's example attempt, written with our own values against the flight fixture.
EXAMPLE = {
    "run_id": "run-0b7c",
    "chain_id": "flight_roundtrip",
    "seq": 17,
    "event_type": "attempt",
    "step_id": "revalidate",
    "attempt": 1,
    "t_start": "2026-03-03T14:03:43.000Z",
    "t_end": "2026-03-03T14:03:46.100Z",
    "input": {"intent_snapshot_hash": "sha256:5d1e", "handles": {"hold_session": "hsn_5Q"}},
    "signal": {
        "transport": "http:409",
        "provider_code": "FARE_PRICE_CHANGED",
        "payload_predicates": ["empty:false"],
    },
    "verdict": {"type": "gate", "arg": "price_change_consent"},
    "verdict_source": "table",
    "handles_minted": [],
    "handles_invalidated": [],
    "budget_after": {"step_attempts_left": 0, "rewinds_left": 2, "wall_ms_left": 412000},
}


def lines(*events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_a_run_written_in_the_spec_shape_audits_clean():
    result = audited(TRACE, spec=flight())
    assert result.clean and result.followed and result.format == "spec"


def test_the_spec_example_event_is_read_with_its_verdict_object_as_a_verdict():
    (event,) = traces.read(lines(EXAMPLE), flight()).events
    assert (event.step_id, event.verdict, event.handles_consumed) == (
        "revalidate",
        "gate(price_change_consent)",
        ["hold_session#1"],
    )


def test_the_spec_example_event_alone_audits_as_a_run_that_started_mid_chain():
    result = audited(json.loads(json.dumps(EXAMPLE)), spec=flight())
    (parted,) = result.divergences
    assert (parted.kind, parted.at) == ("out_of_order", "line 1")
    assert "waits for observe at outbound_search" in parted.message


def test_a_verdict_object_other_than_the_rows_is_a_wrong_verdict():
    events = [json.loads(line) for line in text(TRACE).splitlines()]
    events[7]["verdict"] = {"type": "rewind", "to": "price_quote"}
    (wrong,) = audit(flight(), traces.read(lines(*events), flight())).divergences
    assert (wrong.kind, wrong.at) == ("wrong_verdict", "line 8")
    assert "rewind(to: price_quote), but row F8 gives gate(price_change_consent)" in wrong.message


def test_iso_times_become_seconds_since_the_first_event():
    reading = traces.read(text(TRACE), flight())
    assert [round(e.t, 1) for e in reading.events][:3] == [0.0, 72.5, 73.0]


def test_a_time_without_a_zone_is_refused_naming_its_line():
    events = [dict(EXAMPLE, seq=1), dict(EXAMPLE, seq=2, t_start="2026-03-03T14:05:00")]
    with pytest.raises(DocumentError) as caught:
        traces.read(lines(*events), flight())
    assert str(caught.value.problems[0]).startswith("line 2: t_start: the ISO-8601 time")


def test_events_out_of_seq_order_are_named_with_the_line():
    with pytest.raises(DocumentError) as caught:
        traces.read(lines(dict(EXAMPLE, seq=5), dict(EXAMPLE, seq=3)), flight())
    assert str(caught.value.problems[0]).startswith("line 2: seq: events must be in increasing")


def test_a_verdict_object_of_no_known_type_is_named_with_its_line():
    with pytest.raises(DocumentError) as caught:
        traces.read(lines(dict(EXAMPLE, verdict={"type": "maybe"})), flight())
    assert str(caught.value.problems[0]).startswith("line 1: verdict:")


def test_a_file_of_two_runs_is_audited_one_run_at_a_time():
    other = dict(EXAMPLE, run_id="run-9f00", seq=1)
    both = lines(EXAMPLE, other)
    with pytest.raises(DocumentError) as caught:
        traces.read(both, flight())
    assert "2 runs (run-0b7c, run-9f00)" in str(caught.value)
    assert traces.read(both, flight(), run="run-9f00").run_id == "run-9f00"
