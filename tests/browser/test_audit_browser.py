"""The trace audit page in a real browser: upload, read the divergence, open the simulator there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain
from tests.core.sim.builders import double_booking, fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.mark.parametrize("width", [1280, 1440])
def test_an_uploaded_double_booking_is_shown_on_the_graph_and_opens_in_the_simulator(
    page, live_server, tmp_path, width
):
    chain = Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain
    trace = tmp_path / "incident.jsonl"
    trace.write_text("".join(e.model_dump_json() + "\n" for e in double_booking().trace))
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{chain.url('audit')}")
    page.set_input_files("input[name=trace]", str(trace))
    page.click("#audit-form button[type=submit]")
    expect(page.locator("#audit-result h2")).to_have_text("1 divergence")
    expect(page.locator("#divergence-1")).to_contain_text("forbidden_dispatch")
    expect(page.locator("#canvas g.audit-diverged")).to_have_count(1)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"audit-{width}.png"), full_page=True)
    page.click("#divergence-1 button[name=simulate]")
    expect(page).to_have_url(re.compile(r"/simulate\?r=1&s="))
    expect(page.locator("body")).to_contain_text("book_room")
