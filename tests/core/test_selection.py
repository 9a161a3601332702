"""What a selection highlights, and where a finding points."""

from __future__ import annotations

import doctest

from chains.core import selection
from chains.core.selection import finding_key, select


def test_the_module_examples_hold():
    assert doctest.testmod(selection).failed == 0


def test_selecting_a_handle_marks_its_cascade_and_the_facts_that_survive(flight_spec):
    s = select(flight_spec, "handle:search_token")
    assert s.marks["handle:search_token"] == "selected"
    assert s.marks["handle:outbound_pick"] == "cascade"
    assert "outbound_pick" in s.invalidated
    assert all(s.marks[f"handle:{h}"] == "fact" for h in s.survives)


def test_selecting_an_intent_field_marks_its_repair_scope(flight_spec):
    s = select(flight_spec, "intent:travellers")
    assert s.step == "initiate_hold"
    assert s.marks["action:initiate_hold"] == "selected"
    assert "hold_session" in s.invalidated
    assert all(s.marks[f"handle:{h}"] == "repair-scope" for h in s.invalidated)


def test_an_intent_field_no_action_takes_is_a_problem_not_an_error(flight_spec):
    assert "no action takes" in (select(flight_spec, "intent:nope").problem or "")


def test_an_unknown_handle_is_a_problem_not_an_error(flight_spec):
    s = select(flight_spec, "handle:nope")
    assert s.problem and s.marks == {"handle:nope": "selected"}


def test_findings_point_at_actions_handles_gates_and_rows():
    assert finding_key("actions[book_trip].compensation") == "action:book_trip"
    assert finding_key("handles[seatmap_ref]") == "handle:seatmap_ref"
    assert finding_key("gates[price_change_consent].timeout") == "gate:price_change_consent"
    assert finding_key("verdict_table[F5]") == "row:F5"
    assert finding_key("policy.per_chain") is None
