"""The trace audit page: upload a run's trace, see its divergences on the graph."""

from __future__ import annotations

from html import escape, unescape
from urllib.parse import parse_qs, urlparse

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.core.sim.session import decode, play
from chains.models import Chain
from chains.views import audit as audit_view
from tests.core.sim.builders import double_booking, fixture, walked

pytestmark = pytest.mark.django_db


def stored(name: str) -> Chain:
    doc = fixture(name)
    return Chain.objects.store(formats.to_document(doc), message="r1").chain


def jsonl(run) -> bytes:
    return "".join(e.model_dump_json() + "\n" for e in run.trace).encode()


def test_a_double_booking_trace_shows_its_divergence_on_the_graph(client):
    chain = stored("unsafe-retry-booking.yaml")
    upload = SimpleUploadedFile("run.jsonl", jsonl(double_booking()))
    page = client.post(chain.url("audit"), {"trace": upload})
    html = page.content.decode()
    assert page.status_code == 200 and "1 divergence" in html
    assert "re-dispatched unkeyed commit book_room" in html
    assert "audit&#45;diverged" in html  # book_room outlined on the graph (Graphviz escapes -)


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


def dead_alias(attempts: int) -> str:
    """A trace that invalidates an offer, then presents it again ``attempts`` times."""
    lines = ['{"seq": 1, "event_type": "transition", "handles_invalidated": ["offer_id#1"]}']
    lines += [
        f'{{"seq": {seq}, "event_type": "attempt", "step_id": "find_room", "t": {seq}, '
        f'"handles_consumed": ["offer_id#1"]}}'
        for seq in range(2, attempts + 2)
    ]
    return "\n".join(lines) + "\n"


def test_a_divergence_opens_in_the_simulator_when_its_button_is_pressed(client, template_context):
    chain = stored("unsafe-retry-booking.yaml")
    trace = jsonl(double_booking()).decode()
    (shown,) = client.post(chain.url("audit"), {"text": trace}).context["divergences"]
    opened = client.post(chain.url("audit"), {"text": trace, "r": "1", "simulate": shown.seq})
    assert opened.status_code == 303
    link = urlparse(opened["Location"])
    assert link.path == chain.url("simulate") and parse_qs(link.query)["r"] == ["1"]
    session = play(fixture("unsafe-retry-booking.yaml"), decode(parse_qs(link.query)["s"][0]))
    assert session.refused is None and session.run.snapshot.dispatches["book_room"] == 2


def test_the_result_page_holds_the_trace_once_and_no_simulator_address(client):
    chain = stored("unsafe-retry-booking.yaml")
    html = client.post(chain.url("audit"), {"text": dead_alias(40)}).content.decode()
    first = escape('{"seq": 1, "event_type": "transition"')
    assert html.count(first) == 1 and "simulate?" not in html
    assert html.count('name="simulate"') == 41


def test_the_result_page_grows_by_a_bounded_number_of_bytes_per_divergence(
    client, template_context
):
    chain = stored("unsafe-retry-booking.yaml")
    sizes = {}
    for attempts in (100, 300):
        page = client.post(chain.url("audit"), {"text": dead_alias(attempts)})
        sizes[len(page.context["result"].divergences)] = len(page.content)
    (few, small), (many, large) = sorted(sizes.items())
    assert (large - small) / (many - few) < 600  # its row and its line of the trace


@pytest.mark.parametrize("seq", ["99", "x", "²", ""])
def test_opening_an_event_the_trace_does_not_hold_is_a_400_naming_it(client, seq):
    chain = stored("unsafe-retry-booking.yaml")
    text = jsonl(double_booking()).decode()
    page = client.post(chain.url("audit"), {"text": text, "simulate": seq})
    assert (
        page.status_code == 400
        and f"simulate: the trace has no event of seq {seq!r}" in unescape(page.content.decode())
    )


def test_a_trace_of_more_divergences_than_the_page_lists_says_how_many_more(
    client, monkeypatch, template_context
):
    monkeypatch.setattr(audit_view, "LISTED", 5)
    chain = stored("unsafe-retry-booking.yaml")
    page = client.post(chain.url("audit"), {"text": dead_alias(9)})
    total = len(page.context["result"].divergences)
    html = page.content.decode()
    assert html.count('name="simulate"') == 5 and f"{total - 5} more divergences" in html


@pytest.mark.parametrize("r", ["²", "-1", "1.0", "x"])
def test_a_revision_that_is_not_a_plain_number_audits_the_head(client, r, template_context):
    chain = stored("flight-roundtrip.yaml")
    page = client.get(chain.url("audit"), {"r": r})
    assert page.status_code == 200 and page.context["revision"].number == 1


def test_a_revision_number_past_any_revision_is_a_404(client):
    chain = stored("flight-roundtrip.yaml")
    assert client.get(chain.url("audit"), {"r": "9" * 12}).status_code == 404


@pytest.mark.parametrize("t", ["1e308", "1e400", "NaN", "-Infinity", "-1", "1" + "0" * 400])
def test_a_trace_with_a_time_out_of_range_is_a_400_naming_the_line_and_field(client, t):
    chain = stored("unsafe-retry-booking.yaml")
    text = '{"seq": 1, "event_type": "transition"}\n'
    text += f'{{"seq": 2, "event_type": "attempt", "t": {t}}}\n'
    page = client.post(chain.url("audit"), {"text": text})
    assert page.status_code == 400 and "line 2: t:" in page.content.decode()


def test_an_outsider_cannot_open_a_divergence_in_the_simulator(flight, people, signed_in):
    trace = jsonl(walked("flight-roundtrip.yaml")).decode()
    page = signed_in(people["outsider"]).post(flight.url("audit"), {"text": trace, "simulate": "1"})
    assert page.status_code == 404
