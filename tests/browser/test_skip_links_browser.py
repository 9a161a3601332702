"""Keyboard users reach the content, and on the workspace the graph, in one or two key presses."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain, Team

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"


@pytest.fixture
def flight(admin_user) -> Chain:
    team = Team.objects.found("Flight desk", owner=admin_user, slug="flight-desk")
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(document), team=team).chain


def test_the_second_tab_on_the_workspace_reaches_skip_to_the_graph_which_focuses_it(
    live_server, page, flight
):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server.url + flight.url())
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    expect(page.locator(":focus")).to_be_in_viewport()
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to the graph")
    page.keyboard.press("Enter")
    expect(page.locator("#canvas")).to_be_focused()


def test_skip_to_content_moves_the_focus_into_the_main_region(live_server, page):
    page.goto(f"{live_server.url}/teams/")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.querySelector('main').contains(document.activeElement)")
