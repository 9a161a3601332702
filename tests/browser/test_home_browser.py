"""The home page in a real browser."""

from __future__ import annotations

import pytest

from chains.models import Chain

pytestmark = pytest.mark.browser


def test_home_shows_the_chain_list_and_loads_htmx(live_server, page):
    Chain.objects.store({"id": "booking", "title": "Flight booking"}, message="r1")

    page.goto(live_server.url + "/")

    assert page.locator("h1").inner_text() == "Chains"
    assert page.locator("table.chain-list tbody tr").count() == 1
    assert "Flight booking" in page.locator("table.chain-list").inner_text()
    assert page.evaluate("typeof window.htmx") == "object"
