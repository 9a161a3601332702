"""Real clients put through the sample chain's failures (issue 40's acceptance): the naive
client double-books where a booking's answer is lost, the careful client keeps to the chain
under every schedule up to two faults, and a client in shell with curl is checked the same
way. Every process runs on loopback and is stopped by the test that started it."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from chains import cli
from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.sim.schedules import schedules
from chains.core.sim.session import decode
from chains.harness.runner import Client, Target, provider_started, run_schedules

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "fixtures" / "harness"
SCHEMAS = ROOT / "var" / "schemas"
PROVIDER = [sys.executable, str(SAMPLES / "provider.py"), "--port", "0"]
# The clients' own timeout, and how long the proxy holds a call it times out: short, so the
# runs are quick, but far above what a loopback call takes on a loaded machine, so that no
# call the schedule leaves alone ever looks lost to the client.
QUICK = {"CLIENT_TIMEOUT": "1"}
HOLD = 1.2
LOST = "book call 1: response lost after the provider applied it"


@pytest.fixture(scope="module")
def chain() -> ChainSpec:
    return formats.load((SAMPLES / "booking.yaml").read_bytes(), filename="booking.yaml").chains[0]


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with provider_started(PROVIDER) as url:
        yield url


def client(*command: str) -> Client:
    return Client(list(command), QUICK, timeout=30)


def python_client(name: str) -> Client:
    return client(sys.executable, str(SAMPLES / name))


def test_the_naive_client_double_books_at_the_schedule_that_loses_the_booking_s_answer(
    chain, provider, tmp_path
):
    chosen = [s for s in schedules(chain, 1) if s.label in ("no fault", LOST)]
    quiet, lost = run_schedules(
        chain,
        chosen,
        python_client("naive_client.py"),
        Target(provider, hold_seconds=HOLD),
        tmp_path,
    )
    assert quiet.clean
    assert lost.worst is not None and lost.worst["kind"] == "forbidden_dispatch"
    assert lost.first.startswith("[unkeyed_redispatch] unkeyed commit book was dispatched again")


def test_a_divergence_carries_the_simulator_s_run_as_it_stood_there(chain, provider, tmp_path):
    chosen = [s for s in schedules(chain, 1) if s.label == LOST]
    (lost,) = run_schedules(
        chain,
        chosen,
        python_client("naive_client.py"),
        Target(provider, hold_seconds=HOLD),
        tmp_path,
    )
    scenario = decode(lost.worst["scenario"])
    assert scenario.chain == "harness_booking" and scenario.events


def test_the_first_schedule_the_naive_client_fails_loses_a_commit_s_answer(
    chain, provider, tmp_path
):
    results = run_schedules(
        chain,
        schedules(chain, 1),
        python_client("naive_client.py"),
        Target(provider, hold_seconds=HOLD),
        tmp_path,
        jobs=4,
    )
    failed = [r.schedule.label for r in results if not r.clean]
    assert failed[0] == LOST  # the quote expiry, the price change and the 429 before it pass


def test_the_careful_client_keeps_to_the_chain_under_every_schedule_up_to_two_faults(
    chain, provider, tmp_path
):
    found = schedules(chain, 2)
    results = run_schedules(
        chain,
        found,
        python_client("careful_client.py"),
        Target(provider, hold_seconds=HOLD),
        tmp_path,
        jobs=16,  # runs mostly wait for a timeout or a Retry-After: side by side they overlap
    )
    assert len(results) == len(found) > 400
    assert [(r.schedule.label, r.first) for r in results if not r.clean] == []


@pytest.mark.skipif(not (shutil.which("sh") and shutil.which("curl")), reason="needs sh and curl")
def test_a_client_in_shell_with_curl_is_checked_the_same_way(chain, provider, tmp_path):
    results = run_schedules(
        chain,
        schedules(chain, 1),
        client("sh", str(SAMPLES / "curl_client.sh")),
        Target(provider, hold_seconds=HOLD),
        tmp_path,
        jobs=4,
    )
    assert [(r.schedule.label, r.first) for r in results if not r.clean] == []


def test_a_client_that_never_finishes_is_stopped_and_failed_saying_so(chain, provider, tmp_path):
    sleeper = Client([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    (result,) = run_schedules(chain, schedules(chain, 0), sleeper, Target(provider), tmp_path)
    assert result.first == "the client ran past 0.5 s and was stopped"


def harness(*args: str) -> tuple[int, str]:
    out = StringIO()
    return cli.main(["harness", *args], out), out.getvalue()


def test_the_command_exits_1_with_reports_that_validate_when_a_run_diverges(tmp_path):
    junit, sarif = tmp_path / "report.xml", tmp_path / "report.sarif"
    code, out = harness(
        str(SAMPLES / "booking.yaml"),
        "--client", f"{sys.executable} {SAMPLES / 'naive_client.py'}",
        "--provider", " ".join(PROVIDER),
        "--env", "CLIENT_TIMEOUT=1", "--hold", str(HOLD), "--jobs", "4",
        "--out", str(tmp_path / "runs"), "--junit", str(junit), "--sarif", str(sarif),
    )  # fmt: skip
    assert code == 1 and f"FAIL {LOST}: [unkeyed_redispatch]" in out
    xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd")).validate(junit.read_text())
    schema = json.loads((SCHEMAS / "sarif-2.1.0.json").read_text())
    jsonschema.validate(json.loads(sarif.read_text()), schema)


def test_the_command_exits_0_when_every_run_keeps_to_the_chain(tmp_path):
    code, out = harness(
        str(SAMPLES / "booking.yaml"),
        "--client", f"{sys.executable} {SAMPLES / 'careful_client.py'}",
        "--provider", " ".join(PROVIDER),
        "--env", "CLIENT_TIMEOUT=1", "--hold", str(HOLD), "--jobs", "4", "--sample", "8",
        "--out", str(tmp_path / "runs"), "--json",
    )  # fmt: skip
    report = json.loads(out)
    assert code == 0 and report["clean"] and len(report["schedules"]) == 8


def test_the_command_exits_2_when_the_chain_has_no_bound_step(tmp_path):
    chain = tmp_path / "c.yaml"
    chain.write_text("id: c\nactions: [{id: s, effect: read}]\n")
    code, _ = harness(str(chain), "--client", "true", "--upstream", "http://127.0.0.1:9")
    assert code == 2
