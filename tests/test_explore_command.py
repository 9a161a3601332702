"""``manage.py chain explore`` searches a chain's failure sequences and exits 1 on a violation."""

from __future__ import annotations

import json
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


def test_a_violation_prints_its_scenario_and_exits_1():
    code, out = explore(UNSAFE, "--max-faults", "1")
    assert code == 1
    assert "[unkeyed_redispatch] unkeyed commit book_room was dispatched again" in out
    assert "transport: timeout" in out


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
