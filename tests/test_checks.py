"""Verdict and signal boxes are checked while they are typed, against the head's chain."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def check(client, flight, **params):
    response = client.get(flight.url("check"), params)
    return response.status_code, response.content.decode()


def test_a_typed_verdict_is_answered_with_what_it_reads_as(client, flight):
    status, html = check(client, flight, what="verdict", value="reconcile")
    assert status == 200
    assert 'class="check-ok"' in html and "<code>reconcile</code>" in html


def test_a_typed_verdict_naming_no_step_of_the_chain_is_answered_with_the_problem(client, flight):
    _, html = check(client, flight, what="verdict", value="rewind(to: nowhere)")
    assert 'class="check-bad"' in html and "no step nowhere" in html


def test_the_builder_s_parts_are_answered_with_the_verdict_they_make(client, flight):
    step = flight.head().document["actions"][0]["id"]
    _, html = check(client, flight, what="verdict-parts", type="rewind", to=step, gate="")
    assert f"<code>rewind(to: {step})</code>" in html


def test_builder_parts_that_make_no_verdict_are_answered_with_why(client, flight):
    _, html = check(client, flight, what="verdict-parts", type="gate")
    assert 'class="check-bad"' in html and "gate" in html


def test_typed_signals_are_answered_atom_by_atom(client, flight):
    _, html = check(client, flight, what="signal", value="http:410, code:FARE_EXPIRED")
    assert "HTTP status 410; or the provider&#x27;s error code FARE_EXPIRED" in html


def test_an_unknown_question_is_a_bad_request(client, flight):
    assert check(client, flight, what="nonsense")[0] == 400


def test_a_verdict_box_and_a_signal_box_say_where_their_answer_goes(client, flight):
    html = client.get(f"{flight.url()}?select=row:F1&tab=table").content.decode()
    assert 'data-check="signal"' in html
    assert 'data-check="verdict-parts"' in html
    assert f'data-check-url="{flight.url("check")}"' in html
