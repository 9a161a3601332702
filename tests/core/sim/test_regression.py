"""Saved scenarios replayed on a new revision, and the test-vector export."""

from __future__ import annotations

import json

import pytest

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.sim.regression import (
    TEST_VECTOR_FORMAT,
    ScenarioCheck,
    check_all,
    check_scenario,
    events_to_verdict,
    expect_from,
    test_vectors,
)
from chains.core.sim.scenario import Scenario, load_scenario, simulate

from .builders import BOOKING, FIXTURES, chain

# search → choose → quote → lock_price → book; book answers 429 once (row B2: retry).
THROTTLED = """
intent: {dates: "2026-12-01", card: visa}
events:
  - observe: {options: [{id: o1, key: {carrier: XA, flight: "101"}}]}
  - select: o1
  - observe: "http:200"
  - observe: "http:200"
  - observe: "http:429"
  - observe: "http:200"
"""


def saved(doc: ChainSpec, text: str) -> Scenario:
    """The scenario with the outcome of its replay on ``doc`` saved as its expect."""
    scenario = load_scenario(text)
    return scenario.model_copy(update={"expect": expect_from(simulate(doc, scenario).run)})


def with_row_verdict(doc: ChainSpec, row: str, verdict: str) -> ChainSpec:
    """A new revision of ``doc`` in which verdict-table row ``row`` says ``verdict``."""
    document = formats.to_document(doc)
    for r in document["verdict_table"]:
        if r["id"] == row:
            r["verdict"] = verdict
    return formats.from_document(document)


def flight_happy_path() -> tuple[ChainSpec, Scenario]:
    flight = formats.load((FIXTURES / "flight-roundtrip.yaml").read_bytes(), format="yaml")
    path = FIXTURES / "scenarios" / "flight-happy-path.yaml"
    return flight.chains[0], load_scenario(path.read_bytes(), path.name)


# --- expect_from -------------------------------------------------------------


def test_expect_from_a_fixture_replay_agrees_with_the_scenarios_own_expect():
    flight, scenario = flight_happy_path()
    expect = expect_from(simulate(flight, scenario).run)
    assert scenario.expect is not None
    assert expect.state == scenario.expect.state
    assert expect.dispatches == scenario.expect.dispatches
    assert expect.commits_landed == scenario.expect.commits_landed
    assert expect.verdicts == ["ok"] * 7


def test_a_scenario_saved_with_expect_from_holds_on_the_same_revision():
    flight, scenario = flight_happy_path()
    resaved = scenario.model_copy(update={"expect": expect_from(simulate(flight, scenario).run)})
    assert check_scenario(flight, "happy path", resaved) == ScenarioCheck("happy path", True, ())


def test_expect_from_writes_verdicts_in_canonical_spelling_and_commits_in_landing_order():
    expect = expect_from(simulate(chain(BOOKING), load_scenario(THROTTLED)).run)
    assert expect.verdicts == ["ok", "ok", "ok", "retry", "ok"]
    assert expect.dispatches == {"search": 1, "quote": 1, "lock_price": 1, "book": 2}
    assert (expect.state, expect.commits_landed) == ("done", ["book"])


# --- check_scenario ----------------------------------------------------------


def test_a_changed_row_verdict_is_reported_one_sentence_per_change():
    booking = chain(BOOKING)
    scenario = saved(booking, THROTTLED)
    revised = with_row_verdict(booking, "B2", "rewind(to: lock_price)")
    check = check_scenario(revised, "book throttled once", scenario)
    assert not check.held and check.error is None
    assert check.changes == (
        "scenario 'book throttled once' now ends in running instead of done",
        "scenario 'book throttled once' now dispatches lock_price 2 times instead of 1",
        "scenario 'book throttled once' now dispatches book 1 time instead of 2",
        "scenario 'book throttled once' verdicts differ from verdict 4 on: "
        "expected retry, got rewind(to: lock_price)",
        "scenario 'book throttled once' now lands nothing instead of [book]",
    )


def test_a_new_terminal_verdict_reads_as_now_ends_in_x_instead_of_y():
    booking = chain(BOOKING)
    declined = THROTTLED.replace('"http:429"', '{transport: "http:402", code: CARD_DECLINED}')
    scenario = saved(booking, declined.removesuffix('  - observe: "http:200"\n'))
    revised = with_row_verdict(booking, "B3", "dead_end(reason: declined, permanent: true)")
    changes = check_scenario(revised, "card declined", scenario).changes
    assert changes[0] == "scenario 'card declined' now ends in dead_end instead of running"
    assert changes[-1] == (
        "scenario 'card declined' verdicts differ from verdict 4 on: expected "
        "repair(to: book, fields: [card]), got dead_end(reason: declined, permanent: true)"
    )


def test_a_changed_verdict_says_after_which_event_it_is_first_reached():
    booking = chain(BOOKING)
    scenario = saved(booking, THROTTLED)
    revised = with_row_verdict(booking, "B2", "rewind(to: lock_price)")
    check = check_scenario(revised, "book throttled once", scenario)
    assert check.differs_at == 3  # verdict 4
    # It answers the fifth event, the throttled book (a pick gives no verdict).
    count = events_to_verdict(revised, scenario, check.differs_at)
    assert count == 5
    events = scenario.events[:count]
    trace = simulate(revised, scenario.model_copy(update={"events": events, "expect": None}))
    assert [e.verdict for e in trace.run.trace if e.verdict][-1].startswith("rewind")


def test_a_scenario_whose_verdicts_hold_has_nowhere_it_differs():
    booking = chain(BOOKING)
    assert check_scenario(booking, "s", saved(booking, THROTTLED)).differs_at is None


def test_a_trace_that_stops_early_says_so():
    booking = chain(BOOKING)
    scenario = load_scenario(THROTTLED + "expect: {verdicts: [ok, ok, ok, retry, ok, ok]}\n")
    (change,) = check_scenario(booking, "s", scenario).changes
    assert change == (
        "scenario 's' verdicts differ from verdict 6 on: expected ok, got the end of the trace"
    )


def test_a_run_that_now_ends_before_the_last_event_reports_the_outcome_it_reached():
    booking = chain(BOOKING)
    scenario = saved(booking, THROTTLED)
    revised = with_row_verdict(booking, "B2", "dead_end(reason: throttled, permanent: false)")
    check = check_scenario(revised, "book throttled once", scenario)
    assert (check.held, check.error) == (False, None)
    assert check.changes[0] == "scenario 'book throttled once' now ends in dead_end instead of done"
    assert check.changes[-1] == (
        "scenario 'book throttled once' now ends after event 5 of 6; "
        "the later events no longer apply"
    )


def test_a_scenario_that_no_longer_replays_is_an_error_naming_the_scenario_and_the_event():
    booking = chain(BOOKING)
    revised = with_row_verdict(booking, "B2", "dead_end(reason: throttled, permanent: false)")
    check = check_scenario(revised, "book throttled once", load_scenario(THROTTLED))
    assert (check.held, check.changes) == (False, ())
    assert check.error == (
        "scenario 'book throttled once' no longer replays: event 6 (line 9) observes http:200, "
        "but the run has finished (state dead_end)"
    )


def test_a_scenario_for_another_chain_is_an_error_not_an_exception():
    scenario = load_scenario("chain: somewhere_else\nevents: []\n")
    check = check_scenario(chain(BOOKING), "elsewhere", scenario)
    assert check.error == (
        "scenario 'elsewhere' no longer replays: the scenario is for chain somewhere_else, "
        "not booking"
    )


def test_a_scenario_without_expect_holds_while_it_replays():
    check = check_scenario(chain(BOOKING), "plain", load_scenario(THROTTLED))
    assert check == ScenarioCheck("plain", True, ())
    assert check.as_dict() == {"name": "plain", "held": True, "changes": [], "error": None}


def test_check_all_reports_every_scenario_in_name_order():
    booking = chain(BOOKING)
    scenarios = {"zulu": saved(booking, THROTTLED), "alpha": load_scenario(THROTTLED)}
    assert [c.name for c in check_all(booking, scenarios)] == ["alpha", "zulu"]


# --- test vectors ------------------------------------------------------------


@pytest.fixture
def vectors_input() -> tuple[ChainSpec, dict[str, Scenario]]:
    flight, happy = flight_happy_path()
    broken = happy.model_copy(update={"events": happy.events[:2] + happy.events[3:]})
    return flight, {"happy path": happy, "broken": broken, "no events": Scenario()}


def test_test_vectors_are_deterministic_and_json_ready(vectors_input):
    first = test_vectors(*vectors_input)
    assert first == test_vectors(*vectors_input)
    assert json.loads(json.dumps(first)) == first
    assert (first["format"], first["version"], first["chain"]) == (
        TEST_VECTOR_FORMAT,
        1,
        "flight_roundtrip",
    )
    assert [v["name"] for v in first["vectors"]] == ["broken", "happy path", "no events"]


def test_a_vector_carries_the_events_the_expect_the_full_trace_and_the_snapshot(vectors_input):
    flight, scenarios = vectors_input
    vector = test_vectors(flight, scenarios)["vectors"][1]
    run = simulate(flight, scenarios["happy path"]).run
    assert vector["events"][1] == {"select": "out_1"}
    assert vector["events"][-1] == {"observe": {"transport": "http:200"}}
    reread = Scenario.model_validate({"events": vector["events"]}).events
    assert [e.model_dump() for e in reread] == [
        e.model_dump() for e in scenarios["happy path"].events
    ]
    assert vector["expect"]["state"] == "done"
    assert len(vector["trace"]) == len(run.trace)
    assert [e.get("verdict") for e in vector["trace"]] == [e.verdict for e in run.trace]
    assert vector["snapshot"]["run_id"] == "run-test-vector"
    assert vector["snapshot"]["state"] == "done"


def test_a_scenario_without_expect_gets_the_outcome_of_its_replay_as_expect(vectors_input):
    vector = test_vectors(*vectors_input)["vectors"][2]
    assert vector["expect"] == {
        "state": "running",
        "dispatches": {},
        "verdicts": [],
        "commits_landed": [],
    }


def test_a_broken_scenario_is_a_vector_with_an_error_and_no_trace(vectors_input):
    vector = test_vectors(*vectors_input)["vectors"][0]
    assert vector["error"].startswith("scenario 'broken' no longer replays: event 3")
    assert "trace" not in vector and "snapshot" not in vector


def test_a_scenario_that_stops_replaying_says_how_many_events_still_apply():
    spec, scenario = flight_happy_path()
    events = list(scenario.events)
    events[3] = events[3].model_copy(update={"select": "ret_9"})
    check = check_scenario(spec, "gone option", scenario.model_copy(update={"events": events}))
    assert (check.held, check.replays) == (False, 3)


def test_a_scenario_that_replays_to_its_end_has_no_stopping_point():
    spec, scenario = flight_happy_path()
    assert check_scenario(spec, "happy path", scenario).replays is None
