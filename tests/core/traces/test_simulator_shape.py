"""The simulator's own JSON lines: strict as before, ISO-8601 times accepted."""

from __future__ import annotations

import pytest

from chains.core import traces
from chains.core.errors import DocumentError

from .traced import flight

ATTEMPT = '"event_type": "attempt", "step_id": "outbound_search"'


def test_iso_times_on_every_line_become_seconds_since_the_first():
    text = (
        f'{{"seq": 1, "t": "2026-03-03T14:00:00Z", {ATTEMPT}}}\n'
        f'{{"seq": 2, "t": "2026-03-03T14:00:05.5+00:00", {ATTEMPT}}}\n'
    )
    assert [e.t for e in traces.read(text, flight()).events] == [0.0, 5.5]


def test_a_trace_mixing_iso_times_and_seconds_is_refused_naming_the_line():
    text = (
        f'{{"seq": 1, "t": "2026-03-03T14:00:00Z", {ATTEMPT}}}\n{{"seq": 2, "t": 4, {ATTEMPT}}}\n'
    )
    with pytest.raises(DocumentError) as caught:
        traces.read(text, flight())
    assert str(caught.value.problems[0]).startswith("line 2: t: this trace writes ISO-8601")


def test_an_unknown_field_is_still_refused_by_name_with_its_line():
    text = f'{{"seq": 1, {ATTEMPT}}}\n{{"seq": 2, "colour": "red", {ATTEMPT}}}\n'
    with pytest.raises(DocumentError) as caught:
        traces.read(text, flight(), "simulator")
    assert str(caught.value.problems[0]).startswith("line 2: not a trace event: colour")


def test_events_out_of_seq_order_are_named_with_the_line_of_the_later_one():
    text = f'{{"seq": 1, {ATTEMPT}}}\n\n{{"seq": 4, {ATTEMPT}}}\n{{"seq": 2, {ATTEMPT}}}\n'
    with pytest.raises(DocumentError) as caught:
        traces.read(text, flight())
    assert str(caught.value.problems[0]) == (
        "line 4: seq: events must be in increasing seq order; seq 2 comes after seq 4"
    )


def test_a_run_cannot_be_picked_in_a_simulator_trace():
    with pytest.raises(DocumentError):
        traces.read(f'{{"seq": 1, {ATTEMPT}}}\n', flight(), run="r1")
