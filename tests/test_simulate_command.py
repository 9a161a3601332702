"""``manage.py chain simulate`` runs a scenario against a chain file or a stored chain."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.models import Chain

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FLIGHT = str(FIXTURES / "flight-roundtrip.yaml")
HAPPY = FIXTURES / "scenarios" / "flight-happy-path.yaml"


def simulate(*args: str) -> str:
    out = StringIO()
    call_command("chain", "simulate", *args, stdout=out)
    return out.getvalue()


def failing(*args: str) -> tuple[CommandError, str]:
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("chain", "simulate", *args, stdout=out)
    return caught.value, out.getvalue()


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_scenario_prints_its_trace_and_the_final_state():
    out = simulate(FLIGHT, str(HAPPY))
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["1", "transition"]
    assert lines[1].split()[:5] == ["2", "attempt", "outbound_search", "#1", "http:200"]
    assert "state: done" in out
    assert "commits landed: book_trip" in out
    assert "expect held: state: done" in out


def test_json_output_is_the_simulation_result():
    result = json.loads(simulate(FLIGHT, str(HAPPY), "--json"))
    assert {"state", "cursor", "dispatches", "commits_landed", "trace", "snapshot"} <= set(result)
    assert (result["state"], result["commits_landed"]) == ("done", ["book_trip"])
    assert all(e["held"] for e in result["expectations"])


def test_a_failed_expectation_exits_1_naming_it(tmp_path):
    text = HAPPY.read_text().replace("    book_trip: 1", "    book_trip: 2")
    error, out = failing(FLIGHT, write(tmp_path, "s.yaml", text))
    assert error.returncode == 1
    assert "expectations failed: dispatches.book_trip: expected 2, got 1" in str(error)
    assert "expect FAILED: dispatches.book_trip" in out


def test_a_mismatch_exits_1_naming_the_event_and_its_line(tmp_path):
    text = "chain: flight_roundtrip\nevents:\n  - select: out_1\n"
    error, _ = failing(FLIGHT, write(tmp_path, "s.yaml", text))
    assert error.returncode == 1
    assert str(error) == (
        "scenario mismatch: event 1 (line 3) selects option out_1, "
        "but the run waits for an observation of outbound_search"
    )


def test_a_mismatch_prints_the_trace_up_to_it(tmp_path):
    text = "events:\n  - observe: {options: [{id: out_1}]}\n  - probe: landed\n"
    _, out = failing(FLIGHT, write(tmp_path, "s.yaml", text))
    assert "attempt     outbound_search" in out


def test_a_bad_scenario_file_is_reported_with_line_and_path(tmp_path):
    text = "events:\n  - observe: timeout\n  - probe: maybe\n"
    error, _ = failing(FLIGHT, write(tmp_path, "s.yaml", text))
    assert "bad scenario" in str(error)
    assert "line 3, column 12: events[1].probe.result: expected landed" in str(error)


def test_a_missing_scenario_file_is_an_error(tmp_path):
    error, _ = failing(FLIGHT, str(tmp_path / "nope.yaml"))
    assert "cannot read" in str(error)


def test_a_file_with_several_chains_needs_the_scenario_to_name_one(tmp_path):
    error, _ = failing(str(FIXTURES / "hotel-compile.md"), write(tmp_path, "s.yaml", "seed: 1\n"))
    assert "holds several chains (hotel_stay_booking, hotel_stay_modify)" in str(error)


def test_the_scenario_picks_its_chain_from_a_file_with_several(tmp_path):
    scenario = write(tmp_path, "s.yaml", "chain: hotel_stay_modify\nevents: [{select: x}]\n")
    error, _ = failing(str(FIXTURES / "hotel-compile.md"), scenario)
    assert "scenario mismatch: event 1" in str(error)  # it ran, on the chain it named


def test_a_chain_the_file_does_not_hold_is_an_error(tmp_path):
    scenario = write(tmp_path, "s.yaml", "chain: hotel_stay_cancel\n")
    error, _ = failing(str(FIXTURES / "hotel-compile.md"), scenario)
    assert "has no chain hotel_stay_cancel; it holds hotel_stay_booking" in str(error)


def test_a_scenario_for_another_chain_is_refused(tmp_path):
    error, _ = failing(FLIGHT, write(tmp_path, "s.yaml", "chain: card_payment_manual_capture\n"))
    assert "the scenario is for chain card_payment_manual_capture, not flight_roundtrip" in str(
        error
    )


def test_a_stored_chain_is_simulated_by_its_key():
    chain = formats.load((FIXTURES / "flight-roundtrip.yaml").read_bytes(), format="yaml").chains[0]
    Chain.objects.store(formats.to_document(chain))
    assert "state: done" in simulate("flight_roundtrip", str(HAPPY))


def test_an_unknown_chain_target_is_an_error():
    error, _ = failing("no-such-chain", str(HAPPY))
    assert "neither a file nor a stored chain" in str(error)


def test_a_chain_file_without_a_valid_chain_is_an_error(tmp_path):
    error, _ = failing(write(tmp_path, "c.yaml", "id: [unclosed\n"), str(HAPPY))
    assert "no chain found in" in str(error) and "malformed YAML" in str(error)


def test_a_trip_simulated_twice_with_run_files_is_the_kept_run_the_second_time(tmp_path):
    runs = str(tmp_path / "runs")
    first = json.loads(simulate(FLIGHT, str(HAPPY), "--runs", runs, "--json"))
    again = simulate(FLIGHT, str(HAPPY), "--runs", runs)
    assert first["created"] is True and first["dispatches"]["book_trip"] == 1
    assert "run_key trip-lhr-jfk-0601: the kept run, no event applied" in again
