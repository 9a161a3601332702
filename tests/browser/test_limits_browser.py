"""A rate limit met in a real browser: the message appears above the page, which stays usable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
OPTIONS = {"options": [{"id": "opt_1", "key": {"rank": 1}}, {"id": "opt_2", "key": {"rank": 2}}]}


@pytest.fixture
def flight() -> str:
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(document)).chain.key


def test_a_simulator_step_past_the_limit_shows_why_and_keeps_the_run(
    page: Page, live_server, flight, settings
):
    # A day-long window: a minute-long one could end between the requests and reset the count.
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "simulate": (2, 86400)}
    page.goto(f"{live_server.url}/chains/{flight}/simulate")  # the first request
    step = page.locator(f"#palette button[value='{json.dumps({'observe': OPTIONS})}']")
    step.click()  # the second
    expect(page.locator("#waiting h2")).to_contain_text("select at select_outbound")
    page.locator(f"#palette button[value='{json.dumps({'select': 'opt_1'})}']").click()
    message = page.locator("main > #rate-limited")
    expect(message).to_contain_text("at most 2 simulate requests per day")
    expect(page.locator("#waiting h2")).to_contain_text("select at select_outbound")
