"""The audit page on real telemetry: HAR and OTLP uploads, inferred inputs, unknown calls."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.core.sim.session import decode, play
from chains.models import Chain
from tests.conftest import fixture_chains

pytestmark = pytest.mark.django_db

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"


def duffel(team=None) -> Chain:
    spec = fixture_chains("duffel-instant-order.yaml")[0]
    return Chain.objects.store(formats.to_document(spec), message="r1", team=team).chain


def upload(name: str, data: bytes | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data if data is not None else (TRACES / name).read_bytes())


def test_a_har_of_a_correct_run_shows_no_divergence_and_what_was_inferred(client):
    page = client.post(duffel().url("audit"), {"trace": upload("duffel-correct.har.json")})
    html = unescape(page.content.decode())
    assert (
        page.status_code == 200 and "No divergence" in html and "read as <code>har</code>" in html
    )
    assert "gate book_consent answered approve, certain from seq 4 (/log/entries/3)" in html


def test_an_otlp_blind_retry_shows_the_double_booking_at_its_span(client, template_context):
    page = client.post(duffel().url("audit"), {"trace": upload("duffel-blind-retry.otlp.json")})
    html = unescape(page.content.decode())
    assert page.status_code == 200 and "[unkeyed_redispatch]" in html
    assert "(/resourceSpans/0/scopeSpans/0/spans/5)" in html


def test_a_call_no_action_is_bound_to_is_listed(client):
    har = json.loads((TRACES / "duffel-correct.har.json").read_text())
    extra = json.loads(json.dumps(har["log"]["entries"][1]))
    extra["request"]["url"] = "https://api.duffel.com/air/airlines"
    har["log"]["entries"].append(extra)
    page = client.post(duffel().url("audit"), {"text": json.dumps(har)})
    html = unescape(page.content.decode())
    assert page.status_code == 200 and 'id="audit-unknown-calls"' in html
    assert "GET /air/airlines</code> at /log/entries/5" in html


def test_an_unreadable_har_is_a_400_naming_the_entry_and_field(client):
    bad = b'{"log": {"entries": [{"request": {"method": "GET"}}]}}'
    page = client.post(duffel().url("audit"), {"trace": upload("bad.har", bad)})
    assert page.status_code == 400
    assert "/log/entries/0: request.url" in unescape(page.content.decode())


def test_a_shape_the_form_names_is_read_as_that_shape(client):
    text = (TRACES / "duffel-correct.har.json").read_text()
    page = client.post(duffel().url("audit"), {"text": text, "format": "otlp"})
    assert page.status_code == 400 and "resourceSpans" in page.content.decode()


def test_a_shape_that_is_no_shape_is_a_400(client):
    text = (TRACES / "duffel-correct.har.json").read_text()
    page = client.post(duffel().url("audit"), {"text": text, "format": "xml"})
    assert page.status_code == 400 and "format: expected auto or one of" in page.content.decode()


def test_the_run_named_in_the_form_is_the_one_audited(client):
    text = (TRACES / "duffel-intent-log.jsonl").read_text()
    chain = duffel()
    assert client.post(chain.url("audit"), {"text": text}).status_code == 400
    page = client.post(chain.url("audit"), {"text": text, "run": "trip-0418"})
    assert page.status_code == 200 and "[unkeyed_redispatch]" in unescape(page.content.decode())


def test_a_trace_over_the_size_limit_is_refused_whatever_its_shape(client, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 100
    page = client.post(duffel().url("audit"), {"trace": upload("duffel-correct.otlp.json")})
    assert page.status_code == 400 and "the limit is 100" in page.content.decode()


def test_a_divergence_of_an_http_trace_opens_in_the_simulator_with_what_was_inferred(client):
    chain = duffel()
    text = (TRACES / "duffel-blind-retry.har.json").read_text()
    opened = client.post(chain.url("audit"), {"text": text, "r": "1", "simulate": "5"})
    assert opened.status_code == 303
    link = urlparse(opened["Location"])
    spec = fixture_chains("duffel-instant-order.yaml")[0]
    session = play(spec, decode(parse_qs(link.query)["s"][0]))
    # the pick and the consent the trace did not record are there: the run reached its order
    assert session.run.snapshot.dispatches["create_order"] >= 1


def test_a_viewer_may_audit_an_http_trace_and_an_outsider_may_not(team, people, signed_in):
    chain = duffel(team)
    trace = {"trace": upload("duffel-correct.otlp.json")}
    assert signed_in(people["viewer"]).post(chain.url("audit"), trace).status_code == 200
    trace = {"trace": upload("duffel-correct.otlp.json")}
    assert signed_in(people["outsider"]).post(chain.url("audit"), trace).status_code == 404
