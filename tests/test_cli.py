"""``chain-designer``: the chain commands on files, with no Django and no settings."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from io import StringIO
from pathlib import Path

import jsonschema
import pytest
import yaml
from django.core.management import call_command

from chains import cli
from chains.core import formats
from tests.core.sim.builders import double_booking, walked
from tests.core.test_openapi import recording_listener, with_error_schema

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
FLIGHT = str(FIXTURES / "flight-roundtrip.yaml")
UNSAFE = str(FIXTURES / "unsafe-retry-booking.yaml")
HOTEL = str(FIXTURES / "hotel-compile.md")
SARIF_SCHEMA = ROOT / "var" / "schemas" / "sarif-2.1.0.json"

# A commit whose only probe needs the booking the lost response carried: BLOCKED.
BLOCKED = """\
id: blocked
handles:
  - {id: quote, minted_by: price}
  - {id: booking, minted_by: book, derived_from: [quote]}
actions:
  - {id: price, effect: mint, output: {handles: [quote]}, idempotency: {mode: natural}}
  - id: book
    effect: commit
    input: {handles: [quote]}
    output: {handles: [booking]}
    idempotency: {mode: none}
    confirmation: {probe: find, signal: "a booking with our reference exists"}
    compensation: {action: none, ordering_note: "consent gate before the commit"}
  - {id: find, effect: read, input: {handles: [booking]}, idempotency: {mode: natural}}
verdict_table:
  - {id: D1, signal: [timeout], scope: {steps: [book]}, verdict: reconcile}
policy:
  per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 10m}
"""


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    return cli.main(list(args), out), out.getvalue()


def manage(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("chain", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    return 0, out.getvalue()


def test_the_cli_lints_a_file_without_django_or_any_setting():
    script = (
        "import sys; from chains import cli; code = cli.main(sys.argv[1:]); "
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'designer')]; "
        "assert not loaded, loaded; sys.exit(code)"
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
    done = subprocess.run(
        [sys.executable, "-c", script, "lint", FLIGHT, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "VALID"


@pytest.mark.django_db
@pytest.mark.parametrize("path", [FLIGHT, UNSAFE, HOTEL])
def test_the_cli_writes_the_lint_json_and_status_of_manage_py_chain(path):
    assert run("lint", path, "--json") == manage("lint", path, "--json")


def test_a_blocked_file_exits_2_and_several_files_exit_with_the_worst(tmp_path):
    blocked = tmp_path / "blocked.yaml"
    blocked.write_text(BLOCKED)
    assert run("lint", str(blocked))[0] == 2
    code, out = run("lint", FLIGHT, UNSAFE, "--json")
    shown = json.loads(out)
    assert (code, shown["status"]) == (1, "INVALID")
    assert [(f["path"], f["status"]) for f in shown["files"]] == [
        (FLIGHT, "VALID"),
        (UNSAFE, "INVALID"),
    ]


def test_the_sarif_output_validates_against_the_sarif_2_1_0_schema(tmp_path):
    assert SARIF_SCHEMA.exists(), "make test fetches the SARIF schema into var/schemas"
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: broken\nactions:\n  - {id: a, effect: wobble}\n")
    code, out = run("lint", UNSAFE, HOTEL, str(broken), "--format", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    results = log["runs"][0]["results"]
    assert code == 1 and {r["ruleId"] for r in results} >= {"import.unreadable"}
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def test_a_sarif_result_points_at_the_line_of_its_element():
    _, out = run("lint", UNSAFE, "--format", "sarif")
    lines = Path(UNSAFE).read_text().splitlines()
    errors = [r for r in json.loads(out)["runs"][0]["results"] if r["level"] == "error"]
    assert errors
    for r in errors:
        element = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].split("/")[1]
        line = r["locations"][0]["physicalLocation"]["region"]["startLine"]
        top = element.split("]")[0].split("[")[-1]  # actions[book_room].x -> book_room
        assert top in lines[line - 1] or element.split("[")[0] in lines[line - 1]


@pytest.mark.django_db
def test_the_cli_explores_as_manage_py_chain_does(tmp_path):
    code, out = run("explore", UNSAFE, "--max-faults", "1", "--json")
    assert code == 1 and json.loads(out)["violations"]
    assert manage("explore", UNSAFE, "--max-faults", "1", "--json")[0] == 1
    code, out = run(
        "explore", UNSAFE, "--max-faults", "1", "--write-counterexamples", str(tmp_path)
    )
    written = sorted(p.name for p in tmp_path.iterdir())
    assert code == 1 and written and f"wrote {tmp_path / written[0]}" in out


@pytest.mark.django_db
def test_the_cli_simulates_a_scenario_as_manage_py_chain_does():
    happy = str(FIXTURES / "scenarios" / "flight-happy-path.yaml")
    code, out = run("simulate", FLIGHT, happy, "--json")
    assert (code, json.loads(out)["state"]) == (0, "done")
    assert json.loads(manage("simulate", FLIGHT, happy, "--json")[1]) == json.loads(out)


@pytest.mark.django_db
def test_the_cli_reports_an_import_as_a_dry_run_of_manage_py_chain_does():
    code, out = run("import", HOTEL, "--json")
    assert code == 0 and json.loads(out)["format"] == "md"
    assert out == manage("import", HOTEL, "--dry-run", "--json")[1]


def test_the_cli_exports_a_file_in_canonical_json():
    code, out = run("export", FLIGHT, "--format", "json")
    assert code == 0 and json.loads(out)["id"] == "flight_roundtrip"


def test_a_file_that_is_not_there_is_named_on_stderr_with_exit_1(capsys, tmp_path):
    missing = tmp_path / "nope.yaml"
    assert run("lint", str(missing))[0] == 1
    assert f"cannot read {missing}" in capsys.readouterr().err


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(capsys, tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (formats.MAX_BYTES + 1))
    assert run("lint", str(big))[0] == 1
    assert "larger than" in capsys.readouterr().err


def trace_file(tmp_path, run) -> str:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(e.model_dump_json() + "\n" for e in run.trace))
    return str(path)


@pytest.mark.django_db
def test_the_cli_audits_a_double_booking_trace_as_manage_py_chain_does(tmp_path):
    trace = trace_file(tmp_path, double_booking())
    code, out = run("audit", UNSAFE, trace, "--json")
    shown = json.loads(out)
    assert code == 1 and [d["kind"] for d in shown["divergences"]] == ["forbidden_dispatch"]
    assert manage("audit", UNSAFE, trace, "--json") == (code, out)


def test_the_cli_audits_a_correct_trace_clean(tmp_path):
    code, out = run("audit", FLIGHT, trace_file(tmp_path, walked("flight-roundtrip.yaml")))
    assert code == 0 and "no divergence" in out


def test_a_trace_that_is_not_json_lines_is_named_with_its_line(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "event_type": "attempt"}\nnot json\n')
    assert run("audit", FLIGHT, str(bad))[0] == 2  # unreadable, apart from 1 for diverged
    assert "line 2" in capsys.readouterr().err


def test_a_trace_with_a_time_out_of_range_is_named_with_its_line_and_field(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"seq": 1, "event_type": "transition"}\n{"seq": 2, "event_type": "attempt", "t": 1e308}\n'
    )
    assert run("audit", FLIGHT, str(bad))[0] == 2
    assert "line 2: t: expected seconds" in capsys.readouterr().err


SKYLOOM = str(ROOT / "fixtures" / "openapi" / "skyloom-air.yaml")


def test_the_cli_lists_a_providers_operations_as_proposed_actions():
    code, out = run("openapi", SKYLOOM, "--json")
    listed = json.loads(out)
    assert code == 0 and len(listed) == 13
    assert {o["id"]: o["effect"] for o in listed}["book_order"] == "commit"


def test_the_cli_prints_the_picked_operations_as_chain_actions_with_the_confirmed_effect():
    code, out = run(
        "openapi",
        SKYLOOM,
        "--pick",
        "book_order,refund_payment",
        "--effect",
        "refund_payment=compensate",
    )
    actions = yaml.safe_load(out)["actions"]
    assert code == 0 and [(a["id"], a["effect"]) for a in actions] == [
        ("book_order", "commit"),
        ("refund_payment", "compensate"),
    ]


def test_a_pick_the_document_lacks_is_named_on_stderr(capsys):
    assert run("openapi", SKYLOOM, "--pick", "pay_twice")[0] == 1
    assert "no operation pay_twice" in capsys.readouterr().err


def test_the_cli_refuses_a_reference_to_a_url_and_fetches_nothing(capsys, tmp_path):
    with recording_listener() as (url, asked):
        document = tmp_path / "api.json"
        document.write_text(with_error_schema({"$ref": f"{url}/error.json"}))
        code, out = run("openapi", str(document))
    assert code == 1 and asked == [] and out == ""
    assert f"`$ref: {url}/error.json` points outside the document" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [[], ["--resolve-local"]])
def test_the_cli_never_reads_a_file_named_by_an_absolute_path_or_outside_its_directory(
    capsys, tmp_path, flag
):
    secret = secrets.token_hex(16)
    marker = tmp_path / "env.yaml"
    marker.write_text(f"SECRET_KEY: {secret}\n")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "link.yaml").symlink_to(marker)
    document = tmp_path / "api" / "api.json"
    for ref in (marker.as_uri(), str(marker), "../env.yaml", "link.yaml"):
        document.write_text(with_error_schema({"$ref": ref}))
        code, out = run("openapi", str(document), *flag)
        err = capsys.readouterr().err
        assert code == 1 and secret not in out + err and f"`$ref: {ref}`" in err


def test_the_cli_refuses_a_relative_file_reference_unless_asked_to_resolve_it(capsys, tmp_path):
    (tmp_path / "errors.yaml").write_text(
        "Conflict:\n  allOf: [{$ref: '#/Base'}]\nBase:\n  properties: {code: {enum: [TAKEN]}}\n"
    )
    document = tmp_path / "api.json"
    document.write_text(with_error_schema({"$ref": "errors.yaml#/Conflict"}))
    assert run("openapi", str(document))[0] == 1
    assert "`$ref: errors.yaml#/Conflict` points outside" in capsys.readouterr().err
    code, out = run("openapi", str(document), "--json", "--resolve-local")
    assert code == 0 and json.loads(out)[0]["errors"] == ["http:409 && code:TAKEN"]


def test_a_trip_simulated_twice_with_run_files_is_the_kept_run_the_second_time(tmp_path):
    scenario = str(FIXTURES / "scenarios" / "flight-happy-path.yaml")
    runs = str(tmp_path / "runs")
    code, out = run("simulate", FLIGHT, scenario, "--runs", runs, "--json")
    assert code == 0 and json.loads(out)["created"] is True
    code, out = run("simulate", FLIGHT, scenario, "--runs", runs)
    assert code == 0 and "run_key trip-lhr-jfk-0601: the kept run, no event applied" in out
