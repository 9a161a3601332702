"""``manage.py chain explore`` searches a chain's failure sequences and exits 1 on a violation."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.core.sim.scenario import load_scenario, simulate
from chains.models import Chain

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
UNSAFE = str(FIXTURES / "unsafe-retry-booking.yaml")
CARD = str(FIXTURES / "card-payment.yaml")


def explore(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("chain", "explore", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_a_safe_chain_prints_its_counts_and_exits_0():
    code, out = explore(CARD, "--max-faults", "1")
    assert code == 0
    assert "states: " in out and "paths: " in out and "time: " in out
    assert "terminal states: dead_end" in out
    assert "no invariant broken" in out


def test_the_search_size_line_shows_the_peak_memory():
    _, out = explore(CARD, "--max-faults", "0")
    size = next(line for line in out.splitlines() if line.startswith("states: "))
    assert re.search(r"  peak memory: \d+ MB", size)


def test_a_violation_prints_its_scenario_and_exits_1():
    code, out = explore(UNSAFE, "--max-faults", "1")
    assert code == 1
    assert "1. [unkeyed_redispatch]" in out
    assert "row U2 (timeout -> retry) re-dispatched unkeyed commit book_room" in out
    assert "transport: timeout" in out


def test_every_event_of_a_printed_counterexample_names_its_step():
    _, out = explore(UNSAFE, "--max-faults", "1")
    events = [line.strip() for line in out.splitlines() if line.strip().startswith("- {")]
    assert events == [
        "- {step: find_room, observe: {}}",
        "- {step: book_room, observe: {transport: timeout}}",
    ]


def test_json_output_is_the_result_dict():
    code, out = explore(UNSAFE, "--max-faults", "1", "--no-crashes", "--json")
    result = json.loads(out)
    assert code == 1
    assert set(result) >= {"states", "paths", "terminals", "violations", "seconds", "truncated"}
    assert result["violations"][0]["scenario"]["chain"] == "unsafe_retry_booking"


def test_counterexamples_are_written_as_replayable_scenarios(tmp_path):
    code, out = explore(UNSAFE, "--max-faults", "1", "--write-counterexamples", str(tmp_path))
    (written,) = sorted(tmp_path.iterdir())
    assert code == 1 and f"wrote {written}" in out
    doc = formats.load((FIXTURES / "unsafe-retry-booking.yaml").read_text()).chains[0]
    assert simulate(doc, load_scenario(written.read_text(), written.name)).held


def test_a_stored_chain_is_explored_by_its_key():
    Chain.objects.store(formats.to_document(formats.load(Path(CARD).read_text()).chains[0]))
    code, out = explore("card_payment_manual_capture", "--max-faults", "0")
    assert code == 0 and "terminal states: done 1" in out


def test_a_multi_chain_file_needs_chain(tmp_path):
    compile_doc = str(FIXTURES / "hotel-compile.md")
    with pytest.raises(CommandError, match="several chains .*--chain"):
        explore(compile_doc)
    code, out = explore(compile_doc, "--chain", "hotel_stay_booking", "--max-faults", "0")
    assert "chain hotel_stay_booking" in out
    with pytest.raises(CommandError, match="has no chain nope"):
        explore(compile_doc, "--chain", "nope")


def test_bad_bounds_are_refused():
    with pytest.raises(CommandError, match="--max-faults"):
        explore(CARD, "--max-faults", "-1")


# A select whose handle no step's result fills (the explorer's coverage tests share it).
NO_OPTIONS = (Path(__file__).resolve().parent / "core/sim/fixtures/no-options.yaml").read_text()


@pytest.fixture
def dark(tmp_path) -> str:
    path = tmp_path / "offers.yaml"
    path.write_text(NO_OPTIONS)
    return str(path)


def test_json_output_carries_coverage_and_says_a_complete_search_is_complete():
    code, out = explore(CARD, "--max-faults", "1", "--json")
    result = json.loads(out)
    assert code == 0
    assert set(result["coverage"]) == {"steps", "rows", "outcomes", "compensations"}
    assert result["coverage"]["steps"]["total"] == 4
    assert len(result["coverage"]["steps"]["reached"]) == 4
    assert set(result["coverage"]["rows"]) == {"fired", "total"}
    assert result["complete"] is True and result["warnings"] == []


def test_a_clean_search_that_never_reaches_a_step_exits_3_and_says_why(dark):
    code, out = explore(dark, "--max-faults", "1")
    assert code == 3
    assert "coverage: steps 2/3, rows 0/0, outcomes 0/0, compensations 0/0" in out
    assert "never reached: create_order" in out
    assert "select_offer never received options" in out
    assert "no invariant broken\n" not in out and "not a pass" in out


def test_json_of_an_incomplete_search_flags_it_and_lists_the_warnings(dark):
    code, out = explore(dark, "--max-faults", "1", "--json")
    result = json.loads(out)
    assert code == 3
    assert result["complete"] is False and result["violations"] == []
    assert result["coverage"]["steps"] == {"reached": ["search", "select_offer"], "total": 3}
    assert result["not_covered"]["steps"] == ["create_order"]
    assert any(w.startswith("explored 2 of 3 steps: select_offer") for w in result["warnings"])


def test_allow_incomplete_exits_0_and_still_warns(dark):
    code, out = explore(dark, "--max-faults", "1", "--allow-incomplete")
    assert code == 0 and "never reached: create_order" in out


def test_a_violation_outranks_incomplete_coverage(tmp_path):
    # Exit 1 means an invariant broke, whatever the coverage; 3 is only for a clean search.
    path = tmp_path / "both.yaml"
    path.write_text(
        NO_OPTIONS.replace("actions:\n", "actions:\n  - {id: hold, effect: commit}\n")
        + "verdict_table:\n"
        + "  - {signal: [timeout], scope: {steps: [hold]}, verdict: retry, no_side_effect: true}\n"
    )
    code, out = explore(str(path), "--max-faults", "1", "--json")
    result = json.loads(out)
    assert result["violations"] and result["complete"] is False
    assert code == 1
