"""Every workspace tab, at 1280 and 1440 wide, for the flight chain and the hotel chain.

A person new to the page must be able to read and reach everything on it:
no control outside the window or cut off by a box around it, no text cut
short, nothing drawn over something else. Screenshots of each land in
``var/screenshots/`` (``tabs-<chain>-<tab>-<width>.png``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain
from tests.test_workspace_forms import HOTEL

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
TABS = ("actions", "handles", "gates", "table", "coverage", "policy", "evidence", "history")

# What a person could not read or reach: controls outside the window or clipped by
# a box that hides its overflow, and text a box cuts short.
UNREADABLE = """() => {
    const found = [], width = window.innerWidth;
    const shown = e => e.getClientRects().length && !e.closest(".visually-hidden, [hidden]")
        && getComputedStyle(e).visibility !== "hidden";
    const name = e => (e.id ? "#" + e.id
                            : e.tagName.toLowerCase() + "." + [...e.classList].join("."))
        + " '" + (e.textContent || e.value || e.name || "").trim().slice(0, 30) + "'";
    const controls = "#workspace a, #workspace button, #workspace input:not([type=hidden]), "
        + "#workspace select, #workspace textarea, #workspace summary";
    for (const e of document.querySelectorAll(controls)) {
        if (!shown(e) || e.closest("svg")) continue;
        const r = e.getBoundingClientRect();
        if (r.width < 1 || r.height < 1) continue;
        if (r.left < -1 || r.right > width + 1) found.push("outside the window: " + name(e));
        for (let box = e.parentElement; box && box.id !== "workspace"; box = box.parentElement) {
            const style = getComputedStyle(box);
            if (style.overflowX === "visible") continue;
            // Hidden, or reached only by scrolling the box sideways.
            const b = box.getBoundingClientRect();
            if (r.left < b.left - 1 || r.right > b.right + 1) found.push("clipped: " + name(e));
            break;
        }
    }
    for (const e of document.querySelectorAll("#workspace *")) {
        if (!shown(e) || e.closest("svg") || e.matches("input, textarea, select")) continue;
        const style = getComputedStyle(e);
        const cuts = style.overflowX === "hidden" || style.overflowX === "clip"
            || style.textOverflow === "ellipsis";
        if (cuts && e.scrollWidth > e.clientWidth + 1) found.push("text cut: " + name(e));
        // A box that scrolls sideways hides part of what it holds at first sight.
        // The 16-column coverage matrix scrolls in the side panel by design: "Full width"
        // beside the tabs shows it whole.
        const scrolls = (style.overflowX === "auto" || style.overflowX === "scroll")
            && !(e.matches(".coverage-wrap") && document.getElementById("wide-toggle"));
        if (scrolls && e.scrollWidth > e.clientWidth + 1) found.push("sideways scroll: " + name(e));
    }
    return found;
}"""


def store(document) -> str:
    return Chain.objects.store(formats.to_document(document)).chain.key


@pytest.fixture(params=["flight", "hotel"])
def chain(request) -> str:
    if request.param == "flight":
        return store(formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0])
    return store(formats.load(HOTEL, format="yaml").chains[0])


@pytest.mark.parametrize("width", [1280, 1440])
def test_every_tab_keeps_its_controls_and_text_readable_and_in_reach(
    live_server, page: Page, chain, width
):
    page.set_viewport_size({"width": width, "height": 900})
    problems = []
    for tab in TABS:
        page.goto(f"{live_server.url}/chains/{chain}/?tab={tab}")
        expect(page.locator(f"#tab-{tab}")).to_be_visible()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"tabs-{chain}-{tab}-{width}.png"), full_page=True)
        problems += [f"{tab}: {p}" for p in page.evaluate(UNREADABLE)]
        # The same tab with its first element open in the panel above it.
        first = page.locator(f'#tab-{tab} a[href*="select="]').first
        if first.count():
            first.click()
            expect(page.locator("#element-panel")).to_be_visible()
            shot = SCREENSHOTS / f"tabs-{chain}-{tab}-selected-{width}.png"
            page.screenshot(path=str(shot), full_page=True)
            problems += [f"{tab}, selected: {p}" for p in page.evaluate(UNREADABLE)]
    assert problems == []
