"""HAR 1.2 archives audited through the Duffel chain's HTTP bindings."""

from __future__ import annotations

import json

import pytest

from chains.core import traces
from chains.core.errors import DocumentError

from .traced import audited, duffel, loaded, text


def test_the_har_of_a_correct_run_audits_clean():
    result = audited("duffel-correct.har.json")
    assert result.clean and result.followed and result.format == "har"


def test_a_blind_retry_of_the_order_after_a_timeout_is_a_double_booking_at_that_entry():
    result = audited("duffel-blind-retry.har.json")
    forbidden = [d for d in result.divergences if d.kind == "forbidden_dispatch"]
    assert {d.at for d in result.divergences} == {"/log/entries/4"}
    assert any(d.message.startswith("[unkeyed_redispatch]") for d in forbidden)


def test_the_probe_that_finds_no_order_then_stops_audits_clean():
    assert audited("duffel-probe-then-stop.har.json").clean


def test_the_probe_that_finds_the_order_then_reads_it_audits_clean():
    assert audited("duffel-probe-finds-order.har.json").clean


def test_the_probe_result_is_read_from_the_body_not_inferred():
    result = audited("duffel-probe-finds-order.har.json")
    assert [i.kind for i in result.inferred] == ["select", "answer"]


def test_handles_are_read_through_the_binding_as_aliases_of_their_mint():
    reading = traces.read(text("duffel-correct.har.json"), duffel())
    by_step = {e.step_id: (e.handles_consumed, e.handles_minted) for e in reading.events}
    assert by_step["create_offer_request"] == ([], ["offer_request_id#1", "offer_id#1"])
    # the picked offer is the search's second: still that search's generation
    assert by_step["create_order"] == (["offer_id#1"], ["order_id#1"])
    assert by_step["get_order"] == (["order_id#1"], [])


def test_an_entry_with_no_response_is_read_as_the_failure_its_error_names():
    reading = traces.read(text("duffel-blind-retry.har.json"), duffel())
    assert reading.events[3].signal == {"transport": "timeout"}


def test_an_error_body_gives_the_provider_code_and_type():
    har = loaded("duffel-correct.har.json")
    order = har["log"]["entries"][3]["response"]
    order["status"] = 422
    body = {"errors": [{"type": "invalid_state_error", "code": "offer_no_longer_available"}]}
    order["content"]["text"] = json.dumps(body)
    reading = traces.read(json.dumps(har), duffel())
    assert reading.events[3].signal == {
        "transport": "http:422",
        "code": "offer_no_longer_available",
        "predicates": ["type:invalid_state_error"],
    }


def test_a_search_that_found_nothing_is_the_empty_answer_its_action_declares():
    har = loaded("duffel-correct.har.json")
    har["log"]["entries"] = har["log"]["entries"][:1]
    response = har["log"]["entries"][0]["response"]
    response["content"]["text"] = json.dumps({"data": {"id": "orq_1", "offers": []}})
    reading = traces.read(json.dumps(har), duffel())
    assert reading.events[0].signal["predicates"] == ["offers.length == 0", "empty:true"]
    assert reading.events[0].handles_minted == []


def test_a_call_no_action_is_bound_to_is_named_not_audited():
    har = loaded("duffel-correct.har.json")
    extra = json.loads(json.dumps(har["log"]["entries"][1]))
    extra["request"]["url"] = "https://api.duffel.com/air/airlines?limit=5"
    har["log"]["entries"].insert(2, extra)
    result = audited(har)
    assert result.clean
    (call,) = result.unknown_calls
    assert (call.method, call.path, str(call.place)) == (
        "GET",
        "/air/airlines?limit=5",
        "/log/entries/2",
    )


def test_an_entry_without_its_method_is_named_by_its_pointer():
    har = loaded("duffel-correct.har.json")
    del har["log"]["entries"][2]["request"]["method"]
    with pytest.raises(DocumentError) as caught:
        audited(har)
    assert str(caught.value.problems[0]).startswith("/log/entries/2: request.method")


def test_an_archive_whose_calls_match_no_binding_is_refused_naming_the_first_call():
    har = loaded("duffel-correct.har.json")
    for entry in har["log"]["entries"]:
        entry["request"]["url"] = "https://example.com/health"
    with pytest.raises(DocumentError) as caught:
        audited(har)
    said = str(caught.value.problems[0])
    assert "/log/entries/0" in said and "POST /health" in said and "POST /air/orders" in said


def test_a_page_of_the_archive_is_audited_when_one_is_named():
    har = loaded("duffel-correct.har.json")
    for n, entry in enumerate(har["log"]["entries"]):
        entry["pageref"] = "page_1" if n < 3 else "page_2"
    result = audited(har, run="page_1")
    assert result.clean and result.events == 3
