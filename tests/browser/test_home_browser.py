"""The home page in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from chains.models import Chain

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
HTMX = Path(settings.BASE_DIR) / "static" / "vendor" / "htmx" / "htmx.min.js"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield context.new_page()
    context.close()


def test_home_shows_the_chain_list_and_loads_htmx(live_server, page):
    if not HTMX.exists():
        pytest.skip("static/vendor/htmx is missing: `make test` copies it from node_modules")
    Chain.objects.store({"id": "booking", "title": "Flight booking"}, message="r1")

    page.goto(live_server.url + "/")

    assert page.locator("h1").inner_text() == "Chains"
    assert page.locator("table.chain-list tbody tr").count() == 1
    assert "Flight booking" in page.locator("table.chain-list").inner_text()
    assert page.evaluate("typeof window.htmx") == "object"
