"""The inbox in a real browser: a review request is counted in the header and opens the review."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain, Role, Team
from chains.services import review as reviewing
from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.mark.parametrize("width", [1280, 1440])
def test_a_review_request_is_counted_in_the_header_and_opens_the_review(
    browser, live_server, width
):
    lead = get_user_model().objects.create_user("lead")
    rita = get_user_model().objects.create_user("rita")
    team = Team.objects.found("Flight desk", owner=lead, slug="flight-desk")
    team.add(rita, Role.REVIEWER)
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    Chain.objects.store(formats.to_document(document), team=team)
    chain = Chain.objects.get(key="flight_roundtrip")
    asked = reviewing.request_review(chain, lead, ["rita"], note="the fare rules, please")

    context = signed_in_context(
        browser, live_server, rita, viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/")
    expect(page.locator("#inbox-link .badge")).to_have_text("1")
    page.click("#inbox-link")
    item = page.locator(".notification.unread")
    expect(item).to_contain_text("lead asks you to review r1 of flight-desk/flight_roundtrip")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"inbox-{width}.png"), full_page=True)
    item.locator("button").click()
    expect(page).to_have_url(f"{live_server.url}{chain.url('review', asked.pk)}")
    expect(page.locator("#inbox-link .badge")).to_have_count(0)
    context.close()
