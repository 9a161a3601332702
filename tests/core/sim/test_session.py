"""A simulation stepped through by hand: replayed from its events, branched, carried in a token."""

from __future__ import annotations

import base64
import zlib

import pytest

from chains.core.sim.scenario import Scenario, ScenarioMismatch
from chains.core.sim.session import (
    MAX_TOKEN,
    SessionError,
    checkpoint_tokens,
    decode,
    encode,
    gauges,
    play,
    run_marks,
)

from .builders import booking

INTENT = {"dates": "2026-12-01", "card": "visa"}
TO_BOOK = [
    {"observe": {"options": [{"id": "o1", "key": {"carrier": "XA", "flight": "101"}}]}},
    {"select": "o1"},
    {"observe": "http:200"},
    {"observe": "http:200"},
]


def scenario(*events: dict) -> Scenario:
    return Scenario(chain="booking", intent=INTENT, events=list(events))


def test_each_applied_event_owns_the_trace_events_it_wrote_in_order():
    session = play(booking(), scenario(*TO_BOOK))
    assert [s.number for s in session.steps] == [1, 2, 3, 4]
    assert session.steps[0].first == 1  # after the start event
    assert all(a.last == b.first for a, b in zip(session.steps, session.steps[1:], strict=False))
    assert session.steps[-1].last == len(session.run.trace)


def test_owner_maps_a_trace_event_to_the_number_of_events_applied_when_it_was_written():
    session = play(booking(), scenario(*TO_BOOK))
    assert session.owner(0) == 0
    assert session.owner(session.steps[2].first) == 3


def test_owners_name_for_every_trace_event_the_events_applied_when_it_was_written():
    session = play(booking(), scenario(*TO_BOOK))
    assert session.owners() == [session.owner(i) for i in range(len(session.run.trace))]


def test_checkpoint_tokens_decode_to_each_prefix_of_the_scenario():
    session = play(booking(), scenario(*TO_BOOK, {"wait": 5}))
    tokens = checkpoint_tokens(session.scenario)
    assert len(tokens) == len(session.scenario.events) + 1
    for n, token in enumerate(tokens):
        assert decode(token) == session.prefix(n)


def test_a_token_of_ten_thousand_events_decodes_to_all_of_them():
    long = scenario(*TO_BOOK, *[{"wait": 0}] * 9_996)
    assert len(decode(encode(long)).events) == 10_000


def test_an_event_the_run_does_not_wait_for_stops_the_replay_and_says_why():
    session = play(booking(), scenario(*TO_BOOK[:2], {"probe": "landed"}, TO_BOOK[2]))
    assert len(session.steps) == 2
    assert len(session.scenario.events) == 2
    assert session.refused == (
        "event 3 reports the probe result landed, but the run waits for an observation of quote"
    )


def test_a_scenario_for_another_chain_cannot_start():
    with pytest.raises(ScenarioMismatch):
        play(booking(), Scenario(chain="elsewhere"))


def test_branching_at_a_checkpoint_keeps_the_events_before_it_and_adds_the_new_one():
    session = play(booking(), scenario(*TO_BOOK))
    branched = session.branch({"observe": {"transport": "http:400", "code": "SOLD_OUT"}}, at=2)
    assert len(branched.events) == 3
    run = play(booking(), branched).run
    # B1 reselects, and with the only option excluded there is nothing left to pick
    assert run.snapshot.outcome["reason"] == "no_options_to_select"


def test_branching_refuses_an_input_that_is_not_an_event_naming_where():
    session = play(booking(), scenario())
    with pytest.raises(SessionError, match=r"events\[0\].probe.result"):
        session.branch({"probe": "maybe"})


def test_a_token_round_trips_the_intent_and_the_events():
    original = scenario(*TO_BOOK, {"wait": "15m"}, {"crash": True})
    again = decode(encode(original))
    assert again.intent == INTENT
    assert [e.kind for e in again.events] == [
        "observe",
        "select",
        "observe",
        "observe",
        "wait",
        "crash",
    ]
    assert again.events[4].wait == 900.0


def test_a_token_is_url_safe():
    token = encode(scenario(*TO_BOOK))
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("not a token!", "not one this app wrote"),
        ("A" * (MAX_TOKEN + 1), "longer than"),
        (base64.urlsafe_b64encode(zlib.compress(b"[1, 2]")).decode(), "a scenario is a mapping"),
        (
            base64.urlsafe_b64encode(zlib.compress(b'{"events": [{"dance": 1}]}')).decode(),
            "unknown event 'dance'",
        ),
    ],
)
def test_a_bad_token_is_refused_with_the_reason(token, message):
    with pytest.raises(SessionError, match=message):
        decode(token)


def test_a_token_that_would_expand_past_the_limit_is_refused_without_expanding_it():
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * 50_000_000, 9)).decode()
    with pytest.raises(SessionError, match="expands past"):
        decode(bomb)


def test_marks_show_the_cursor_the_live_handles_and_what_a_rewind_invalidated():
    doc = booking()
    session = play(
        doc, scenario(*TO_BOOK, {"observe": {"transport": "http:400", "code": "LOCK_EXPIRED"}})
    )
    marks = run_marks(doc, session.run)
    assert marks["action:lock_price"] == "sim-dispatched sim-cursor"
    assert marks["handle:search_id"] == "sim-live"
    assert marks["handle:lock"] == "sim-invalidated"


def test_marks_show_a_landed_commit():
    doc = booking()
    marks = run_marks(doc, play(doc, scenario(*TO_BOOK, {"observe": "http:200"})).run)
    assert marks["action:book"] == "sim-landed"
    assert "sim-cursor" not in " ".join(marks.values())


def test_gauges_show_attempts_left_on_the_step_and_the_chain_budgets():
    doc = booking()
    run = play(doc, scenario(*TO_BOOK[:3], {"observe": "timeout"})).run
    shown = {g.label: (g.left, g.total) for g in gauges(doc, run)}
    assert shown == {
        "attempts on lock_price": (1, 2),
        "rewinds": (3, 3),
        "repairs": (2, 2),
        "wall clock": (shown["wall clock"][0], 600.0),
    }
    assert shown["wall clock"][0] < 600.0
