"""The harness pages: a fault-harness report uploaded, listed, and shown schedule by schedule,
each divergence linked to the simulator at that point."""

from __future__ import annotations

import functools
import json
import re
from html import unescape
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.core.sim.scenario import load_scenario
from chains.core.sim.session import encode
from chains.models import Chain, HarnessRun
from chains.services.harness import PER_PAGE, validated

ROOT = Path(__file__).resolve().parent.parent
BOOKING = ROOT / "fixtures" / "harness" / "booking.yaml"
LOST = "book call 1: response lost after the provider applied it"
# The run as it stood when the naive client sent the booking again (what the harness's
# audit hands the simulator): search, pick, quote, the booking's answer lost, booked again.
STOOD = {
    "chain": "harness_booking",
    "intent": {"destination": "destination_1", "nights": 1, "reference": "reference_1"},
    "events": [
        {"observe": {"options": [{"id": "from-trace"}]}},
        {"select": "from-trace"},
        {"observe": {"transport": "http:201", "options": [{"id": "from-trace"}]}},
        {"observe": {"transport": "conn_reset"}},
        {"observe": {"transport": "http:201", "options": [{"id": "from-trace"}]}},
    ],
}


@functools.cache
def token() -> str:
    return encode(load_scenario(json.dumps(STOOD), "scenario.json"))


def divergence(kind: str, message: str, scenario: bool = True) -> dict:
    found = {"seq": 4, "line": 4, "at": "/log/entries/3", "kind": kind, "step": "book"}
    found["message"] = message
    return {**found, "scenario": token()} if scenario else found


def schedule(label: str, divergences: list[dict] | None = None) -> dict:
    faults = [] if label == "no fault" else [{"step": "book", "dispatch": 1, "kind": "timeout"}]
    return {
        "schedule": {"faults": faults},
        "label": label,
        "clean": not divergences,
        "divergences": divergences or [],
        "client_exit": 0,
        "seconds": 0.4,
        "trace": "1/trace.har.json",
        "exchanges": [
            "POST /bookings [book call 1]: no answer",
            "POST /bookings [book call 2]: 201",
        ],
        "problem": "",
    }


def report(*schedules: dict, chain: str = "harness_booking") -> dict:
    return {
        "chain": chain,
        "clean": all(s["clean"] for s in schedules),
        "schedules": list(schedules),
    }


def naive() -> dict:
    return report(
        schedule("no fault"),
        schedule(
            LOST,
            [
                divergence("out_of_order", "dispatched book; the chain waits for probe at book"),
                divergence("forbidden_dispatch", "[unkeyed_redispatch] book dispatched again"),
            ],
        ),
    )


@pytest.fixture
def booking(team) -> Chain:
    document = formats.to_document(formats.load(BOOKING.read_bytes(), filename="b.yaml").chains[0])
    return Chain.objects.store(document, "import", team=team).chain


def upload(client, chain: Chain, data: dict | str, name: str = "report.json"):
    text = data if isinstance(data, str) else json.dumps(data)
    file = SimpleUploadedFile(name, text.encode(), content_type="application/json")
    return client.post(chain.url("harness"), {"report": file})


def test_an_uploaded_report_is_stored_and_its_page_lists_every_schedule(booking, people, signed_in):
    response = upload(signed_in(people["editor"]), booking, naive())
    assert response.status_code == 303
    run = HarnessRun.objects.get()
    assert (run.schedules, run.clean, run.diverged, run.source) == (2, 1, 1, "upload")
    page = signed_in(people["editor"]).get(response["Location"]).content.decode()
    assert "2</strong> schedules: 1 clean" in page
    assert "no fault" in page and LOST in page


def test_a_failed_schedule_shows_its_gravest_divergence_first(booking, people, signed_in):
    response = upload(signed_in(people["editor"]), booking, naive())
    page = signed_in(people["viewer"]).get(response["Location"]).content.decode()
    kinds = re.findall(r'<span class="kind">(\w+)</span>', page)
    assert kinds == ["forbidden_dispatch", "out_of_order"]


def test_the_simulator_link_opens_the_simulator_at_that_point(booking, people, signed_in):
    client = signed_in(people["viewer"])
    response = upload(signed_in(people["editor"]), booking, naive())
    page = client.get(response["Location"]).content.decode()
    links = re.findall(r'<a href="([^"]+)" class="simulator-link">', page)
    assert len(links) == 2
    assert f"r={booking.head().number}" in unescape(links[0])
    simulator = client.get(unescape(links[0]))
    assert simulator.status_code == 200
    assert "book" in simulator.content.decode()


def test_a_divergence_without_a_token_has_no_simulator_link(booking, people, signed_in):
    bare = report(schedule(LOST, [divergence("out_of_order", "early", scenario=False)]))
    response = upload(signed_in(people["editor"]), booking, bare)
    page = signed_in(people["editor"]).get(response["Location"]).content.decode()
    assert "simulator-link" not in page
    assert "no simulator token" in page


def test_the_filter_shows_only_the_diverged_schedules(booking, people, signed_in):
    response = upload(signed_in(people["editor"]), booking, naive())
    page = signed_in(people["editor"]).get(response["Location"] + "?diverged=1")
    text = page.content.decode()
    assert LOST in text and 'id="schedule-1"' not in text and 'id="schedule-2"' in text


def test_a_report_of_another_chain_is_refused_naming_it(booking, people, signed_in):
    response = upload(signed_in(people["editor"]), booking, report(chain="flight_roundtrip"))
    assert response.status_code == 400
    assert "flight_roundtrip" in response.content.decode()
    assert not HarnessRun.objects.exists()


def test_malformed_json_is_refused_naming_the_line(booking, people, signed_in):
    response = upload(signed_in(people["editor"]), booking, '{"chain": "harness_booking",\n]')
    assert response.status_code == 400
    assert "line 2" in response.content.decode()


def test_a_report_of_the_wrong_shape_is_refused_naming_the_field(booking, people, signed_in):
    bad = naive()
    bad["schedules"][1]["divergences"][0]["kind"] = 7
    response = upload(signed_in(people["editor"]), booking, bad)
    assert response.status_code == 400
    assert "schedules.1.divergences.0.kind" in response.content.decode()
    assert not HarnessRun.objects.exists()


def test_a_report_over_the_limit_is_refused(booking, people, signed_in, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 1_000
    response = upload(signed_in(people["editor"]), booking, naive())
    assert response.status_code == 400
    assert "the limit is 1,000" in response.content.decode()


def test_a_viewer_sees_the_runs_but_cannot_upload(booking, people, signed_in):
    upload(signed_in(people["editor"]), booking, naive())
    viewer = signed_in(people["viewer"])
    assert upload(viewer, booking, naive()).status_code == 403
    page = viewer.get(booking.url("harness"))
    assert page.status_code == 200
    assert 'id="harness-form"' not in page.content.decode()
    assert HarnessRun.objects.count() == 1


def test_an_outsider_finds_neither_the_list_nor_a_run(booking, people, signed_in):
    run = HarnessRun.objects.record(booking, booking.head(), validated(naive()))
    outsider = signed_in(people["outsider"])
    assert outsider.get(booking.url("harness")).status_code == 404
    assert outsider.get(run.url()).status_code == 404


def test_a_long_run_is_shown_a_page_at_a_time(booking, people, signed_in):
    many = report(*[schedule(f"schedule {n}") for n in range(PER_PAGE + 5)])
    run = HarnessRun.objects.record(booking, booking.head(), validated(many))
    client = signed_in(people["viewer"])
    first = client.get(run.url()).content.decode()
    second = client.get(run.url() + "?page=2").content.decode()
    assert first.count('class="harness-label"') == PER_PAGE
    assert second.count('class="harness-label"') == 5
    assert "page 2 of 2" in second and f"schedule {PER_PAGE + 4}" in second


def test_the_workspace_links_the_harness_page(booking, people, signed_in):
    page = signed_in(people["viewer"]).get(booking.url()).content.decode()
    assert f'href="{booking.url("harness")}" id="harness-link"' in page
