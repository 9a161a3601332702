"""The harness's reports validate as CI reads them: JUnit XML against Jenkins' junit-10.xsd,
SARIF against the SARIF 2.1.0 JSON Schema (both fetched by `make test` into var/schemas)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import xmlschema

from chains.core.sim.schedules import Fault, Schedule
from chains.harness.report import ScheduleResult, junit_xml, sarif_log

SCHEMAS = Path(__file__).resolve().parent.parent.parent / "var" / "schemas"
LOST = Schedule((Fault("book", 1, "lost_response"),))


def results() -> list[ScheduleResult]:
    double = {
        "kind": "forbidden_dispatch",
        "message": "[unkeyed_redispatch] unkeyed commit book was dispatched again",
        "line": 4,
        "at": "/log/entries/3",
        "step": "book",
    }
    return [
        ScheduleResult(Schedule(()), seconds=0.4, trace="runs/0.har.json"),
        ScheduleResult(LOST, [double], client_exit=0, seconds=1.1, trace="runs/1.har.json",
                       exchanges=["POST /bookings: no answer (lost)", "POST /bookings: 201"]),
        ScheduleResult(LOST, problem="the client ran past 30 s and was stopped"),
    ]  # fmt: skip


def test_the_junit_report_validates_against_junit_10_xsd():
    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))
    schema.validate(junit_xml("booking", results()))


def test_the_junit_report_fails_a_schedule_at_its_first_divergence():
    xml = junit_xml("booking", results())
    assert 'tests="3" failures="2"' in xml
    assert 'message="[unkeyed_redispatch] unkeyed commit book was dispatched again"' in xml


def test_a_client_that_did_not_finish_is_a_failure_saying_why():
    assert 'message="the client ran past 30 s and was stopped"' in junit_xml("booking", results())


def test_the_sarif_log_validates_against_the_sarif_2_1_0_schema():
    log = sarif_log("booking", results(), "1.0")
    jsonschema.validate(log, json.loads((SCHEMAS / "sarif-2.1.0.json").read_text()))


def test_each_divergence_is_a_sarif_result_at_its_entry_in_the_run_s_trace():
    found = sarif_log("booking", results())["runs"][0]["results"]
    assert [r["ruleId"] for r in found] == ["harness.forbidden_dispatch", "harness.client_failed"]
    place = found[0]["locations"][0]["physicalLocation"]
    assert place == {"artifactLocation": {"uri": "runs/1.har.json"}, "region": {"startLine": 4}}
