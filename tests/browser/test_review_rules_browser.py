"""Who an approval may come from, as the people see it: the reason on the review, the vouch."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain, Review, Role, Team
from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture
def puppet_review():
    """The lead saved r2 and asks rita and a reviewer she invited; grace owns the team too."""
    people = get_user_model().objects
    lead, grace, puppet, rita = (people.create_user(n) for n in ("lead", "grace", "puppet", "rita"))
    team = Team.objects.found("Flight desk", owner=lead, slug="flight-desk")
    team.add(grace, Role.OWNER)
    team.add(puppet, Role.REVIEWER, invited_by=lead)
    team.add(rita, Role.REVIEWER)
    document = formats.to_document(
        formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    )
    chain = Chain.objects.store(document, team=team).chain
    revision = Chain.objects.store({**document, "title": "by the lead"}, author=lead, team=team)
    review = Review.objects.request(revision, lead, ["puppet", "rita"])
    return {"lead": lead, "grace": grace, "puppet": puppet, "chain": chain, "review": review}


@pytest.mark.parametrize("width", [1280, 1440])
def test_an_invitee_reads_why_their_approval_would_not_count_until_another_owner_vouches(
    browser, live_server, puppet_review, width
):
    viewport = {"width": width, "height": 900}
    review_url = (
        f"{live_server.url}{puppet_review['chain'].url()}reviews/{puppet_review['review'].pk}/"
    )
    as_puppet = signed_in_context(browser, live_server, puppet_review["puppet"], viewport=viewport)
    as_grace = signed_in_context(browser, live_server, puppet_review["grace"], viewport=viewport)
    try:
        page = as_puppet.new_page()
        page.goto(review_url)
        expect(page.locator("#not-counted")).to_contain_text("invited to Flight desk by lead")
        expect(page.get_by_role("button", name="Approve")).to_be_disabled()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"review-not-counted-{width}.png"), full_page=True)

        owner = as_grace.new_page()
        owner.goto(f"{live_server.url}/teams/flight-desk/")
        owner.get_by_role("button", name="Vouch for puppet").click()
        expect(owner.locator("body")).to_contain_text("invited by lead, vouched for by grace")
        owner.screenshot(path=str(SCREENSHOTS / f"team-vouched-{width}.png"), full_page=True)

        page.reload()
        expect(page.locator("#not-counted")).to_have_count(0)
        page.get_by_role("button", name="Approve").click()
        expect(page.locator("#vote-error")).to_have_count(0)
        expect(page.locator("tr.vote-approved")).to_contain_text("puppet")
    finally:
        as_puppet.close()
        as_grace.close()
