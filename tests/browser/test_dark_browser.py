"""The dark scheme in a real browser: followed from the system's preference, graphs on paper.

Screenshots land in ``var/screenshots/`` (README's are copies of the workspace's).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture
def dark(browser, live_server, admin_user):
    context = signed_in_context(browser, live_server, admin_user, color_scheme="dark")
    yield context.new_page()
    context.close()


def computed(page, selector: str, prop: str) -> str:
    return page.locator(selector).first.evaluate(
        f"e => getComputedStyle(e).getPropertyValue('{prop}')"
    )


@pytest.mark.parametrize("width,height", [(1280, 800), (1440, 900)])
def test_a_dark_system_gets_dark_pages_with_the_graph_on_light_paper(
    dark, live_server, flight, width, height, explore_on_save
):
    dark.set_viewport_size({"width": width, "height": height})
    dark.goto(f"{live_server.url}{flight.url()}?select=handle:quote_id")
    expect(dark.locator("#workspace[data-ready]")).to_be_visible()
    expect(dark.locator("#save-check")).to_contain_text("Explorer")
    assert computed(dark, "html", "background-color") == "rgb(20, 24, 29)"
    assert computed(dark, "#canvas", "background-color") == "rgb(255, 255, 255)"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    dark.screenshot(path=str(SCREENSHOTS / f"dark-{width}.png"))


def test_a_light_system_keeps_the_light_pages(page, live_server, flight):
    page.goto(f"{live_server.url}{flight.url()}")
    assert computed(page, "html", "background-color") == "rgb(247, 248, 250)"
