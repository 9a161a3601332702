"""OTLP JSON client spans audited through the Duffel chain's HTTP bindings."""

from __future__ import annotations

import json

import pytest

from chains.core import traces
from chains.core.errors import DocumentError

from .traced import audited, duffel, loaded, text

ORDER_SPAN = "/resourceSpans/0/scopeSpans/0/spans/5"


def spans(doc):
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def test_the_otlp_trace_of_a_correct_run_audits_clean():
    result = audited("duffel-correct.otlp.json")
    assert result.clean and result.followed and result.format == "otlp"


def test_a_blind_retry_of_the_order_after_a_timeout_is_a_double_booking_at_that_span():
    result = audited("duffel-blind-retry.otlp.json")
    assert {d.at for d in result.divergences} == {ORDER_SPAN}
    assert any(d.message.startswith("[unkeyed_redispatch]") for d in result.divergences)


def test_the_probe_that_finds_no_order_then_stops_audits_clean():
    assert audited("duffel-probe-then-stop.otlp.json").clean


def test_the_probe_that_finds_the_order_audits_clean_its_result_inferred_from_the_next_call():
    result = audited("duffel-probe-finds-order.otlp.json")
    (probe,) = [i for i in result.inferred if i.kind == "probe"]
    assert result.clean and (probe.step, probe.value) == ("create_order", "landed")
    assert probe.at == "/resourceSpans/0/scopeSpans/0/spans/6"  # the order read that proves it


def test_handles_are_unknown_without_bodies_and_make_no_finding():
    reading = traces.read(text("duffel-correct.otlp.json"), duffel())
    assert all(not e.handles_consumed and not e.handles_minted for e in reading.events)


def test_only_client_spans_with_an_http_method_are_calls():
    reading = traces.read(text("duffel-correct.otlp.json"), duffel())
    # span 0 is the agent's own internal span around the run
    assert [str(p) for p in reading.places][0] == "/resourceSpans/0/scopeSpans/0/spans/1"
    assert len(reading.events) == 5


def test_the_older_attribute_names_are_read_too():
    reading = traces.read(text("duffel-correct.otlp.json"), duffel())
    assert (reading.events[1].step_id, reading.events[1].signal) == (
        "get_offer",
        {"transport": "http:200"},
    )


def test_a_span_with_no_status_code_is_the_failure_its_exception_names():
    reading = traces.read(text("duffel-blind-retry.otlp.json"), duffel())
    assert reading.events[3].signal == {"transport": "timeout"}


def test_the_logical_span_around_its_tries_is_not_a_second_dispatch():
    doc = loaded("duffel-correct.otlp.json")
    order = spans(doc)[4]
    logical = {**json.loads(json.dumps(order)), "spanId": "b2f0000000000099"}
    order["parentSpanId"] = logical["spanId"]
    spans(doc).append(logical)
    result = audited(doc)
    assert result.clean and result.events == 5


def test_a_file_of_several_traces_needs_the_run_named():
    doc = loaded("duffel-correct.otlp.json")
    for span in spans(doc)[3:]:
        span["traceId"] = "0" * 31 + "1"
    with pytest.raises(DocumentError) as caught:
        audited(doc)
    assert "name the one to audit with --run" in str(caught.value)
    assert audited(doc, run="0" * 31 + "1").events == 3


def test_json_lines_of_export_requests_name_the_line_of_each_span():
    first, second = loaded("duffel-correct.otlp.json"), loaded("duffel-correct.otlp.json")
    del spans(first)[3:]
    del spans(second)[:3]
    lines = json.dumps(first) + "\n" + json.dumps(second) + "\n"
    reading = traces.read(lines, duffel())
    assert [p.line for p in reading.places] == [1, 1, 2, 2, 2]
    assert str(reading.places[2]) == "line 2, /resourceSpans/0/scopeSpans/0/spans/0"


def test_a_status_code_that_is_no_status_is_named_by_its_span():
    doc = loaded("duffel-correct.otlp.json")
    spans(doc)[1]["attributes"][-1] = {
        "key": "http.response.status_code",
        "value": {"intValue": "nine"},
    }
    with pytest.raises(DocumentError) as caught:
        audited(doc)
    said = str(caught.value.problems[0])
    assert said.startswith("/resourceSpans/0/scopeSpans/0/spans/1: http.response.status_code")


def test_a_chain_bound_to_no_http_call_cannot_read_an_http_trace(flight_spec):
    with pytest.raises(DocumentError) as caught:
        audited("duffel-correct.otlp.json", spec=flight_spec)
    assert "binds no action to an HTTP call" in str(caught.value)
