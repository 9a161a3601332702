"""``chain-designer audit`` and ``manage.py chain audit`` on real telemetry: exit codes and JSON.

0 when the run kept to the chain, 1 when it diverged, 2 when the chain or the
trace cannot be read; ``--json`` adds the shape read, the inferred inputs and
the calls no action is bound to.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.models import Chain
from tests.test_cli import run

ROOT = Path(__file__).resolve().parent.parent
DUFFEL = str(ROOT / "fixtures" / "duffel-instant-order.yaml")
TRACES = ROOT / "fixtures" / "traces"


def trace(name: str) -> str:
    return str(TRACES / name)


def manage(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("chain", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


@pytest.mark.parametrize(
    "name",
    [
        "duffel-correct.har.json",
        "duffel-correct.otlp.json",
        "duffel-probe-then-stop.har.json",
        "duffel-probe-then-stop.otlp.json",
    ],
)
def test_a_run_that_kept_to_the_chain_exits_0(name):
    code, out = run("audit", DUFFEL, trace(name))
    assert code == 0 and "no divergence" in out


def test_a_blind_retry_exits_1_with_the_double_booking_in_the_json():
    code, out = run("audit", DUFFEL, trace("duffel-blind-retry.otlp.json"), "--json")
    shown = json.loads(out)
    assert code == 1 and shown["format"] == "otlp"
    (retry,) = [d for d in shown["divergences"] if d["kind"] == "forbidden_dispatch"]
    assert retry["message"].startswith("[unkeyed_redispatch]")
    assert retry["at"] == "/resourceSpans/0/scopeSpans/0/spans/5"


def test_the_json_lists_the_inferred_inputs_and_the_unknown_calls():
    code, out = run("audit", DUFFEL, trace("duffel-correct.har.json"), "--json")
    shown = json.loads(out)
    assert [i["kind"] for i in shown["inferred"]] == ["select", "answer"]
    assert shown["unknown_calls"] == []


def test_a_trace_that_cannot_be_read_exits_2_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"run_id": "r", "step_id": "get_offer", "status": "maybe", "created_at": 1}\n')
    assert run("audit", DUFFEL, str(bad))[0] == 2
    assert "line 1: status: expected one of" in capsys.readouterr().err


def test_a_chain_that_cannot_be_read_exits_2(tmp_path, capsys):
    assert run("audit", str(tmp_path / "missing.yaml"), trace("duffel-correct.har.json"))[0] == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_file_of_several_runs_exits_2_until_run_names_one(capsys):
    log = trace("duffel-intent-log.jsonl")
    assert run("audit", DUFFEL, log)[0] == 2
    assert "name the one to audit with --run" in capsys.readouterr().err
    assert run("audit", DUFFEL, log, "--run", "trip-0417")[0] == 0
    assert run("audit", DUFFEL, log, "--run", "trip-0418")[0] == 1


def test_format_overrides_what_the_content_says(capsys):
    code, _ = run("audit", DUFFEL, trace("duffel-correct.har.json"), "--format", "otlp")
    assert code == 2 and "resourceSpans" in capsys.readouterr().err


def test_the_text_output_names_each_inferred_input():
    _, out = run("audit", DUFFEL, trace("duffel-probe-finds-order.otlp.json"))
    assert "inferred: probe of create_order found it landed" in out


@pytest.mark.django_db
def test_manage_py_chain_audit_gives_the_same_json_and_exit_code():
    args = ("audit", DUFFEL, trace("duffel-blind-retry.har.json"), "--json")
    assert manage(*args) == run(*args)


@pytest.mark.django_db
def test_manage_py_chain_audit_of_a_stored_chain_exits_0_for_a_correct_run():
    spec = formats.load(Path(DUFFEL).read_text(), format="yaml").chains[0]
    Chain.objects.store(formats.to_document(spec), message="r1")
    assert manage("audit", spec.id, trace("duffel-correct.otlp.json"))[0] == 0


@pytest.mark.django_db
def test_manage_py_chain_audit_exits_2_for_an_unreadable_trace_or_a_missing_chain(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"log": {"entries": [{"request": {}}]}}')
    code, said = manage("audit", DUFFEL, str(bad))
    assert code == 2 and "/log/entries/0: request.method" in said
    assert manage("audit", "no_such_chain", str(bad))[0] == 2
