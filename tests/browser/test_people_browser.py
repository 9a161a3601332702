"""Signing in and out in a real browser, and what a reader of a chain is offered."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain, Role, Team

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
PASSWORD = "a-long-passphrase-7"


@pytest.fixture
def reader_page(browser, live_server):
    """A page of nobody yet, and a chain its reader may only read."""
    reader = get_user_model().objects.create_user("reader", password=PASSWORD)
    owner = get_user_model().objects.create_user("lead")
    team = Team.objects.found("Flight desk", owner=owner, slug="flight-desk")
    team.add(reader, Role.VIEWER)
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    Chain.objects.store(formats.to_document(document), team=team)
    context = browser.new_context()
    yield context.new_page()
    context.close()


def test_a_visitor_signs_in_reads_a_chain_without_edit_controls_and_signs_out(
    reader_page, live_server
):
    page = reader_page
    page.goto(f"{live_server.url}/chains/flight_roundtrip/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/chains/flight_roundtrip/")

    page.get_by_label("Username").fill("reader")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#login-error")).to_contain_text("do not match an account")

    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{live_server.url}/chains/flight_roundtrip/")
    expect(page.locator("#signed-in-as")).to_have_text("reader")
    expect(page.locator("#read-only")).to_be_visible()
    expect(page.get_by_role("button", name="Undo")).to_be_disabled()
    expect(page.locator("#canvas svg")).to_be_visible()
    page.locator('#canvas [id="handle:quote_id"]').click()
    expect(page.locator("#workspace")).to_have_attribute("data-select", "handle:quote_id")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.method))
    page.keyboard.press("Delete")  # the shortcuts of a reader's page send nothing
    page.keyboard.press("Control+z")
    page.wait_for_timeout(300)
    assert "POST" not in requests

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{live_server.url}/accounts/login/")
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/")
