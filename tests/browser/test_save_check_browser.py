"""Every save explored: a row that re-sends the unkeyed booking shows its double booking.

Drives the workspace (templates/chains/_save_check.html, views.campaigns.save_check)
through Debian's Chromium on the flight fixture, with no campaign launched: the
panel beside lint answers after each save. How long it takes is measured by
bench/save_check.py (docs/benchmarks.md), not here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain, Exploration

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"


@pytest.fixture
def flight() -> Chain:
    cache.clear()
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(document)).chain


def test_a_save_that_retries_the_unkeyed_booking_shows_the_double_booking_beside_lint(
    page, live_server, flight, explore_on_save
):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}{flight.url()}?select=row:F17&tab=table")
    check = page.locator("#save-check")
    expect(check).to_contain_text("no double booking")

    form = page.locator("#element-fields")
    form.locator("select[name='verdict_type']").select_option("retry")
    form.locator("input[name='no_side_effect']").check()
    form.get_by_role("button", name="Save").click()

    expect(page.locator("#workspace")).to_have_attribute("data-base", "2")
    expect(check).to_have_class("save-check broken")
    expect(check).to_contain_text("double_commit")
    expect(check.locator(".cause-line")).to_contain_text("row F17 -> retry")
    assert not Exploration.objects.exists()  # no campaign was launched

    check.get_by_role("link", name="open in the simulator").click()
    expect(page).to_have_url(re.compile(r"/simulate\?.*violation=double_commit"))
    expect(page.locator("body")).to_contain_text("double_commit")
