"""Actions from OpenAPI in a real browser: upload, tick, confirm an effect, add."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain
from tests.core.sim.builders import fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SKYLOOM = Path(settings.BASE_DIR) / "fixtures" / "openapi" / "skyloom-air.yaml"
SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.mark.parametrize("width", [1280, 1440])
def test_ticked_operations_are_added_to_the_chain(page, live_server, width):
    chain = Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{chain.url()}")
    page.click("text=Add action, handle or gate")
    page.click("#openapi-link")
    page.set_input_files("input[name=document]", str(SKYLOOM))
    page.click("#openapi-form button[type=submit]")
    expect(page.locator("#operations tbody tr")).to_have_count(13)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"openapi-{width}.png"), full_page=True)
    page.check("#op-book_order input[name=pick]")
    page.check("#op-refund_payment input[name=pick]")
    page.select_option("#op-refund_payment select", "compensate")
    page.fill("#openapi-filter", "refund")
    page.press("#openapi-filter", "Enter")  # the filter, not the add button, answers Enter
    expect(page.locator("#operations tbody tr")).to_have_count(1)
    page.click("#openapi-pick button[name=add]")
    expect(page).to_have_url(f"{live_server.url}{chain.url()}")
    assert Chain.objects.get(pk=chain.pk).head().number == 2
