"""An intent log (SPEC P3's correlation records, one row a dispatch) read and audited."""

from __future__ import annotations

import json

import pytest

from chains.core import traces
from chains.core.errors import DocumentError

from .traced import audited, duffel, text

LOG = "duffel-intent-log.jsonl"


def rows(*given) -> str:
    return "".join(
        json.dumps({"run_id": "r1", "created_at": f"2026-03-02T09:00:0{n}Z", **row}) + "\n"
        for n, row in enumerate(given)
    )


def test_a_log_of_two_runs_is_refused_until_one_is_named():
    with pytest.raises(DocumentError) as caught:
        audited(LOG)
    assert "2 runs (trip-0417, trip-0418)" in str(caught.value)


def test_the_run_whose_lost_order_was_found_landed_audits_clean():
    result = audited(LOG, run="trip-0417")
    assert result.clean and result.format == "intent-log"


def test_the_run_that_sent_its_pending_order_again_is_a_double_booking_at_that_row():
    result = audited(LOG, run="trip-0418")
    assert {d.at for d in result.divergences} == {"line 14"}
    assert any(d.message.startswith("[unkeyed_redispatch]") for d in result.divergences)


def test_a_landed_commit_row_is_its_lost_answer_then_the_probe_that_found_it():
    reading = traces.read(text(LOG), duffel(), run="trip-0417")
    lost, found = [e for e in reading.events if e.step_id == "create_order"]
    assert (lost.event_type, lost.signal) == ("attempt", {"transport": "timeout"})
    assert (found.event_type, found.signal) == ("reconcile", {"probe": "landed"})
    assert found.t - lost.t == 156  # updated_at, when the reconcile found it


def test_a_gate_row_is_an_answer_by_whom_it_names():
    reading = traces.read(text(LOG), duffel(), run="trip-0417")
    (answer,) = [e for e in reading.events if e.input]
    assert answer.input == {
        "kind": "answer",
        "outcome": "approve",
        "gate": "book_consent",
        "by": "user",
    }


def test_a_failed_row_that_does_not_say_how_it_failed_is_named_with_its_line():
    log = rows(
        {"step_id": "create_offer_request", "status": "succeeded"},
        {"tool": "get_offer", "status": "failed"},
    )
    with pytest.raises(DocumentError) as caught:
        traces.read(log, duffel())
    assert str(caught.value.problems[0]).startswith(
        "line 2: status: a failed row needs its http_status"
    )


def test_an_unknown_status_is_named_with_its_line():
    with pytest.raises(DocumentError) as caught:
        traces.read(rows({"step_id": "create_offer_request", "status": "maybe"}), duffel())
    assert str(caught.value.problems[0]).startswith("line 1: status: expected one of")


def test_a_failed_row_gives_its_status_and_code():
    log = rows(
        {
            "step_id": "create_offer_request",
            "status": "failed",
            "http_status": 422,
            "error_code": "invalid_slices",
            "error_type": "validation_error",
        }
    )
    (event,) = traces.read(log, duffel()).events
    assert event.signal == {
        "transport": "http:422",
        "code": "invalid_slices",
        "predicates": ["type:validation_error"],
    }
