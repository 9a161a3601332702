"""The trace audit page: upload a run's trace, see its divergences on the graph."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.core.sim.session import decode, play
from chains.models import Chain
from tests.core.sim.builders import double_booking, fixture, walked

pytestmark = pytest.mark.django_db


def stored(name: str) -> Chain:
    doc = fixture(name)
    return Chain.objects.store(formats.to_document(doc), message="r1").chain


def jsonl(run) -> bytes:
    return "".join(e.model_dump_json() + "\n" for e in run.trace).encode()


def test_a_double_booking_trace_shows_its_divergence_and_opens_the_simulator_there(client):
    chain = stored("unsafe-retry-booking.yaml")
    upload = SimpleUploadedFile("run.jsonl", jsonl(double_booking()))
    page = client.post(chain.url("audit"), {"trace": upload})
    html = page.content.decode()
    assert page.status_code == 200 and "1 divergence" in html
    assert "re-dispatched unkeyed commit book_room" in html
    assert "audit&#45;diverged" in html  # book_room outlined on the graph (Graphviz escapes -)
    link = page.context["divergences"][0]["simulate"]
    token = parse_qs(urlparse(link).query)["s"][0]
    session = play(fixture("unsafe-retry-booking.yaml"), decode(token))
    assert session.refused is None and session.run.snapshot.dispatches["book_room"] == 2


def test_a_pasted_correct_trace_shows_no_divergence(client):
    chain = stored("flight-roundtrip.yaml")
    page = client.post(
        chain.url("audit"), {"text": jsonl(walked("flight-roundtrip.yaml")).decode()}
    )
    assert page.status_code == 200 and "No divergence" in page.content.decode()


def test_a_trace_that_cannot_be_read_is_a_400_naming_the_line(client):
    chain = stored("flight-roundtrip.yaml")
    page = client.post(chain.url("audit"), {"text": '{"seq": 1, "event_type": "attempt"}\nnope\n'})
    assert page.status_code == 400 and "line 2" in page.content.decode()


def test_a_trace_over_the_size_limit_is_refused(client, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 10
    chain = stored("flight-roundtrip.yaml")
    upload = SimpleUploadedFile("run.jsonl", b"x" * 11)
    page = client.post(chain.url("audit"), {"trace": upload})
    assert page.status_code == 400 and "the limit is 10" in page.content.decode()
