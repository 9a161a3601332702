"""Run state models (chains/core/sim/state.py): events the runtime writes, checked once."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from chains.core.sim.runtime import Run
from chains.core.sim.state import Event, Observation, Snapshot, clone

from .builders import OK, drive_to_book, fixture, start_booking


def draft(**more) -> dict:
    fields = dict.fromkeys(f.name for f in dataclasses.fields(Event))
    fields |= {"seq": 3, "event_type": "attempt", "step_id": "s", "t": 1.5, "state": "running"}
    fields |= {"handles_consumed": ["h#1"], "handles_minted": [], "handles_invalidated": []}
    fields |= {"budget_after": {"rewinds_left": 2}}
    return fields | more


def test_an_event_from_a_whole_draft_equals_the_validated_one():
    assert Event.from_draft(draft()) == Event(**draft())


def test_a_draft_with_a_stray_key_is_validated_and_the_key_named():
    with pytest.raises(ValidationError, match="surprise"):
        Event.from_draft(draft(surprise=1))


def test_a_draft_missing_a_field_is_validated_and_gets_its_default():
    whole = draft()
    del whole["note"]
    assert Event.from_draft(whole).note is None


def test_the_event_log_refuses_a_field_no_event_has_and_keeps_its_draft():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    run.log.open("transition", step="outbound_search", note="first")
    with pytest.raises(ValidationError, match="surprise"):
        run.log.set(surprise=1)
    run.log.flush()
    assert run.trace[-1].note == "first" and not hasattr(run.trace[-1], "surprise")


def test_a_run_trace_survives_a_json_round_trip():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR"})
    run.observe(Observation(transport="timeout"))
    run.observe(Observation())
    for event in run.trace:
        assert Event.model_validate_json(event.model_dump_json()) == event


def test_a_runs_parts_read_and_write_the_fields_of_the_runs_own_snapshot():
    run = Run.start(fixture("flight-roundtrip.yaml"))
    view = run.steps.snapshot
    assert view is not run.snapshot
    view.attempt = 7
    assert run.snapshot.attempt == 7
    run.snapshot.cursor = "elsewhere"
    assert view.cursor == "elsewhere"
    assert run.snapshot.model_dump()["attempt"] == 7


def landed_booking() -> Run:
    run = drive_to_book(start_booking())
    run.observe(OK)
    assert run.snapshot.commits_landed and run.snapshot.correlation
    return run


def test_a_clone_copies_every_record_with_lists_and_dicts_of_its_own():
    s = landed_booking().snapshot
    copy = clone(s)
    records = [s.budgets, *s.commits_landed, *s.correlation]
    copies = [copy.budgets, *copy.commits_landed, *copy.correlation]
    for record, copied in zip(records, copies, strict=True):
        assert copied == record and copied is not record
        for name, value in dataclasses.asdict(record).items():
            if isinstance(value, list | dict):
                assert getattr(copied, name) is not getattr(record, name), name


def test_a_snapshot_with_records_survives_a_json_round_trip():
    s = landed_booking().snapshot
    assert Snapshot.model_validate_json(s.model_dump_json()) == s


def test_a_snapshot_refuses_a_record_field_it_does_not_know_and_names_where():
    data = landed_booking().snapshot.model_dump(mode="json")
    data["commits_landed"][0]["surprise"] = 1
    with pytest.raises(ValidationError, match=r"commits_landed\.0\.surprise"):
        Snapshot.model_validate(data)
