"""The simulator page: a run stepped through by posting inputs, carried in its address."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from chains.core import formats
from chains.core.sim.runtime import Run
from chains.core.sim.scenario import Scenario
from chains.core.sim.session import decode, encode
from chains.models import Chain, SavedScenario
from tests.conftest import fixture_document

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = {"options": [{"id": "opt_1", "key": {"rank": 1}}, {"id": "opt_2", "key": {"rank": 2}}]}
# Search, pick, search, pick, then price_quote, seat_map and initiate_hold succeed: revalidate next.
TO_REVALIDATE = [
    {"observe": OPTIONS},
    {"select": "opt_1"},
    {"observe": OPTIONS},
    {"select": "opt_1"},
    {"observe": {}},
    {"observe": {}},
    {"observe": {}},
]
PRICE_CHANGED = {"observe": {"transport": "http:400", "code": "FARE_PRICE_CHANGED"}}
QUOTE_EXPIRED = {"observe": {"transport": "http:400", "code": "QUOTE_EXPIRED"}}


def url(chain: Chain) -> str:
    return f"{chain.url()}simulate"


def token_of(events: list[dict]) -> str:
    return encode(Scenario(chain="flight_roundtrip", intent={}, events=events))


def post(client, chain: Chain, token: str, **fields):
    return client.post(url(chain), {"s": token, **fields})


def step(client, chain: Chain, token: str, event: dict) -> str:
    """Post one palette event; the token of the run it led to."""
    response = post(client, chain, token, event=json.dumps(event))
    assert response.status_code == 302, response.content.decode()[:500]
    return parse_qs(urlparse(response["Location"]).query)["s"][0]


def page(client, chain: Chain, token: str, **query) -> str:
    response = client.get(url(chain), {"s": token, **query})
    assert response.status_code == 200
    return response.content.decode()


def text(body: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', body, re.S)
    assert found, f"#{element_id} is not on the page"
    return unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_a_new_run_waits_at_the_first_step_with_its_signals_offered(client, flight):
    body = client.get(url(flight)).content.decode()
    assert text(body, "run-state") == "running"
    assert "The run waits for observe at <code>outbound_search</code>" in body
    assert 'class="signal signal-success"' in body
    assert "valid empty: itineraries.length == 0" in body


def test_an_input_redirects_to_the_address_of_the_run_it_led_to(client, flight):
    token = step(client, flight, "", {"observe": OPTIONS})
    assert [e.kind for e in decode(token).events] == ["observe"]
    assert "The run waits for select at <code>select_outbound</code>" in page(client, flight, token)


def test_an_htmx_input_answers_with_the_partial_and_pushes_the_new_address(client, flight):
    response = client.post(
        url(flight), {"s": "", "event": json.dumps({"observe": OPTIONS})}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert not response.content.decode().lstrip().startswith("<!doctype")
    assert response["HX-Push-Url"].startswith(f"{url(flight)}?r=1&s=")


def replays(monkeypatch) -> list[int]:
    """One item per run started from now on (a replay starts the run afresh)."""
    started: list[int] = []
    start = Run.start.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):
        started.append(1)
        return start(cls, *args, **kwargs)

    monkeypatch.setattr(Run, "start", classmethod(counted))
    return started


def test_an_htmx_input_replays_the_run_once(client, flight, monkeypatch):
    started = replays(monkeypatch)
    response = client.post(
        url(flight),
        {"s": token_of(TO_REVALIDATE), "event": json.dumps(QUOTE_EXPIRED)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert len(started) == 1


def test_an_input_posted_at_a_checkpoint_replays_the_run_once(client, flight, monkeypatch):
    started = replays(monkeypatch)
    response = post(
        client, flight, token_of(TO_REVALIDATE), at="1", event=json.dumps({"select": "opt_2"})
    )
    assert response.status_code == 302
    assert len(started) == 1


def test_a_domain_signal_shows_the_row_that_matched_its_verdict_and_what_died(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), QUOTE_EXPIRED)
    body = page(client, flight, token)
    assert text(body, "decided-row") == "F3"
    assert text(body, "decided-verdict") == "rewind(to: price_quote)"
    assert 'id="sim-row-F3" class="matched"' in body
    assert "quote_id#1" in body.split('id="invalidated"')[1].split("</p>")[0]


def test_the_run_is_drawn_on_the_graph_with_the_cursor_and_handle_states(client, flight):
    body = unescape(
        page(client, flight, step(client, flight, token_of(TO_REVALIDATE), QUOTE_EXPIRED))
    )
    assert re.search(r'<g id="action:price_quote" class="node [^"]*sim-cursor', body)
    assert re.search(r'<g id="handle:quote_id" class="node [^"]*sim-invalidated', body)
    assert re.search(r'<g id="handle:search_token" class="node [^"]*sim-live', body)


def test_an_input_the_run_does_not_wait_for_is_refused_and_the_run_is_unchanged(client, flight):
    token = token_of(TO_REVALIDATE)
    response = post(client, flight, token, event=json.dumps({"probe": "landed"}))
    assert response.status_code == 400
    body = response.content.decode()
    assert (
        "event 8 reports the probe result landed, but the run waits for an observation"
        in unescape(body)
    )
    assert f'name="s" value="{token}"' in body


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"event": "{not json"}, "event: not valid JSON"),
        ({"event": "[1]"}, "event: expected a JSON object"),
        ({"event": json.dumps({"dance": 1})}, "unknown event 'dance'"),
        ({"kind": "wait", "duration": "soon"}, "events[7].wait"),
        ({"kind": "teleport"}, "kind: expected answer | wait | crash | propose"),
        ({"kind": "propose", "proposal": '{"kind": "bribe"}'}, "events[7].propose.kind"),
        ({"at": "x", "kind": "crash"}, "at: the checkpoint is a number"),
        ({"at": "²", "kind": "crash"}, "at: the checkpoint is a number"),
    ],
)
def test_a_malformed_input_is_a_400_naming_what_is_wrong(client, flight, fields, message):
    response = post(client, flight, token_of(TO_REVALIDATE), **fields)
    assert response.status_code == 400
    assert message in unescape(response.content.decode())


def test_a_token_that_cannot_be_read_is_a_400_and_a_fresh_run_is_shown(client, flight):
    response = client.get(url(flight), {"s": "garbage!!"})
    assert response.status_code == 400
    assert "simulation token: not one this app wrote" in response.content.decode()


def test_a_token_for_another_chain_is_refused(client, flight):
    other = encode(Scenario(chain="somewhere_else"))
    response = client.get(url(flight), {"s": other})
    assert response.status_code == 400
    assert "it is for chain somewhere_else, not flight_roundtrip" in response.content.decode()


def test_an_unknown_revision_or_chain_is_a_404(client, flight):
    assert client.get(url(flight), {"r": "99"}).status_code == 404
    assert client.get("/chains/nowhere/simulate").status_code == 404


def test_a_gate_is_answered_through_its_form(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), PRICE_CHANGED)
    body = page(client, flight, token)
    assert text(body, "run-state") == "at_gate"
    assert 'data-outcome="accept"' in body and 'data-outcome="decline"' in body
    response = post(client, flight, token, kind="answer", outcome="accept")
    after = page(client, flight, parse_qs(urlparse(response["Location"]).query)["s"][0])
    assert "The run waits for observe at <code>book_trip</code>" in after


def test_an_answer_with_an_outcome_the_gate_lacks_is_refused(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), PRICE_CHANGED)
    response = post(client, flight, token, kind="answer", outcome="haggle")
    assert response.status_code == 400
    assert "haggle" in response.content.decode()


def test_a_model_answering_a_consent_gate_is_rejected_by_the_fence(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), PRICE_CHANGED)
    proposal = json.dumps({"kind": "answer", "value": "accept"})
    response = post(client, flight, token, kind="propose", proposal=proposal)
    body = page(client, flight, parse_qs(urlparse(response["Location"]).query)["s"][0])
    assert text(body, "proposal-verdict") == "rejected"
    assert text(body, "run-state") == "at_gate"


def test_advancing_the_clock_past_the_gate_timeout_takes_the_timeout_verdict(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), PRICE_CHANGED)
    response = post(client, flight, token, kind="wait", duration="11m")
    body = page(client, flight, parse_qs(urlparse(response["Location"]).query)["s"][0])
    assert text(body, "run-state") == "dead_end"
    assert "reason: price_consent_timeout" in body


def test_crash_here_resumes_the_run_from_its_snapshot(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), {"crash": True})
    body = page(client, flight, token)
    assert "The run waits for observe at <code>revalidate</code>" in body
    assert "crashes" in body


def test_each_timeline_event_links_to_the_checkpoint_after_the_input_that_wrote_it(client, flight):
    body = page(client, flight, token_of(TO_REVALIDATE))
    links = re.findall(
        r'<a href="(/t/flight-desk/chains/flight_roundtrip/simulate\?[^"]+)" hx-get', body
    )
    first = parse_qs(urlparse(unescape(links[0])).query)["s"][0]
    last = parse_qs(urlparse(unescape(links[-1])).query)["s"][0]
    assert decode(first).events == []
    assert len(decode(last).events) == len(TO_REVALIDATE)


def test_an_input_posted_at_a_checkpoint_branches_from_there(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), QUOTE_EXPIRED)
    response = post(client, flight, token, at="1", event=json.dumps({"select": "opt_2"}))
    events = decode(parse_qs(urlparse(response["Location"]).query)["s"][0]).events
    assert [e.kind for e in events] == ["observe", "select"]
    assert events[1].select == "opt_2"


def test_the_snapshot_and_trace_are_served_as_json(client, flight):
    response = client.get(url(flight), {"s": token_of(TO_REVALIDATE), "format": "json"})
    data = response.json()
    assert data["snapshot"]["waiting"]["step"] == "revalidate"
    assert data["trace"][0]["note"] == "start"


def test_saving_keeps_the_simulation_with_its_outcome_as_a_scenario(client, flight):
    token = step(client, flight, token_of(TO_REVALIDATE), QUOTE_EXPIRED)
    response = client.post(f"{url(flight)}/save", {"s": token, "name": "quote expires"})
    assert response.status_code == 302
    saved = SavedScenario.objects.get(chain=flight, name="quote expires")
    assert saved.document["expect"]["state"] == "running"
    assert saved.document["expect"]["verdicts"][-1] == "rewind(to: price_quote)"
    assert len(saved.document["events"]) == len(TO_REVALIDATE) + 1


def test_saving_under_a_name_already_kept_is_refused_and_keeps_the_first(client, flight):
    client.post(f"{url(flight)}/save", {"s": token_of(TO_REVALIDATE), "name": "twice"})
    response = client.post(f"{url(flight)}/save", {"s": "", "name": "twice"})
    assert response.status_code == 400
    assert "a scenario named &#x27;twice&#x27; is already kept" in response.content.decode()
    assert len(SavedScenario.objects.get(name="twice").document["events"]) == len(TO_REVALIDATE)


def test_saving_without_a_name_is_refused(client, flight):
    response = client.post(f"{url(flight)}/save", {"s": "", "name": "  "})
    assert response.status_code == 400
    assert not SavedScenario.objects.exists()


def test_saving_under_a_name_too_long_is_refused_naming_the_field_and_keeps_the_run(client, flight):
    token = token_of(TO_REVALIDATE)
    response = client.post(f"{url(flight)}/save", {"s": token, "name": "x" * 201})
    body = response.content.decode()
    assert response.status_code == 400
    assert "name: String should have at most 200 characters" in body
    assert token in body
    assert not SavedScenario.objects.exists()


def test_a_broken_invariant_is_listed_and_the_one_named_in_the_address_is_highlighted(client):
    path = ROOT / "fixtures" / "unsafe-retry-booking.yaml"
    unsafe = formats.load(path.read_bytes(), filename=path.name).chains[0]
    chain = Chain.objects.store(formats.to_document(unsafe)).chain
    # the counterexample the explorer finds: book_room times out and is sent again
    token = encode(Scenario(events=[{"observe": {}}, {"observe": "timeout"}]))
    body = page(client, chain, token, violation="unkeyed_redispatch")
    findings = body.split('id="findings"')[1].split("</section>")[0]
    assert '<li class="violation-focus"><code>unkeyed_redispatch</code>' in findings
    assert "re-dispatched unkeyed commit book_room" in findings


def test_a_new_run_starts_from_the_intent_typed_and_drops_the_inputs(client, flight):
    intent = {"origin": "LHR", "destination": "JFK"}
    response = post(
        client, flight, token_of(TO_REVALIDATE), kind="restart", intent=json.dumps(intent)
    )
    scenario = decode(parse_qs(urlparse(response["Location"]).query)["s"][0])
    assert (scenario.intent, scenario.events) == (intent, [])


def test_an_intent_that_is_not_an_object_is_refused(client, flight):
    response = post(client, flight, token_of(TO_REVALIDATE), kind="restart", intent="[1, 2]")
    assert response.status_code == 400
    assert "intent: expected a JSON object" in unescape(response.content.decode())


def test_a_token_for_a_variant_the_chain_lacks_is_a_400_and_a_fresh_run(client, flight):
    token = encode(Scenario(chain="flight_roundtrip", variant="rail"))
    response = client.get(url(flight), {"s": token})
    assert response.status_code == 400
    assert "the simulation cannot start on this revision" in unescape(response.content.decode())


def test_the_simulators_graph_has_the_layout_time_the_settings_give(
    client, flight, settings, layout_timeouts
):
    settings.GRAPH_LAYOUT_SECONDS = 2
    assert client.get(f"{flight.url()}simulate").status_code == 200
    assert layout_timeouts == [2]


def test_a_generic_row_decision_says_no_domain_row_matched(client, flight):
    timeout = {"observe": {"transport": "timeout"}}
    body = page(client, flight, step(client, flight, "", timeout))
    assert "No domain row: generic row" in text(body, "decision")
    assert text(body, "decided-row") == "#6"
    assert text(body, "decided-verdict") == "retry"


def test_an_input_no_row_gave_a_verdict_names_no_row_and_never_none(client, flight):
    token = step(client, flight, token_of([{"observe": OPTIONS}]), {"select": "opt_1"})
    decision = text(page(client, flight, token), "decision")
    assert "None" not in decision
    assert "select" not in decision


def test_the_unsafe_counterexample_names_the_row_at_fault_not_the_p3_record(client, team):
    unsafe = Chain.objects.store(fixture_document("unsafe-retry-booking.yaml"), team=team).chain
    events = [{"observe": {}}, {"observe": {"transport": "timeout"}}]
    token = encode(Scenario(chain=unsafe.key, intent={}, events=events))
    body = page(client, unsafe, token, violation="unkeyed_redispatch")
    assert text(body, "decided-row") == "U2"
    assert text(body, "decided-verdict") == "retry"
    assert "row U2 (timeout -&gt; retry) re-dispatched unkeyed commit book_room" in body
