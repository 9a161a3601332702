"""Leftovers of issue 15 a person sees: the canvas toolbar, the flow of a long chain.

Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

# Whether the toolbar's visible tools share one row: every box overlaps every other vertically.
TOOLBAR_IN_ONE_ROW = """() => {
    const boxes = [...document.querySelectorAll(
        ".canvas-pane .toolbar a, .canvas-pane .toolbar button, .canvas-pane .toolbar input")]
        .filter(e => e.getClientRects().length && !e.closest(".visually-hidden, [hidden]")
                     && !e.classList.contains("visually-hidden") && e.type !== "hidden")
        .map(e => e.getBoundingClientRect());
    return Math.max(...boxes.map(b => b.top)) < Math.min(...boxes.map(b => b.bottom));
}"""


def store(document) -> str:
    return Chain.objects.store(formats.to_document(document)).chain.key


@pytest.fixture
def flight() -> str:
    return store(formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0])


def open_canvas(page: Page, live_server, key: str, width: int, query: str = "") -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/chains/{key}/{query}")
    expect(page.locator(".zoom-tools")).to_be_visible()


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.mark.parametrize("view", ["handles", "flow"])
def test_at_1440_the_canvas_toolbar_is_one_row_and_the_legend_is_in_the_window(
    live_server, page, flight, view
):
    open_canvas(page, live_server, flight, 1440, f"?view={view}")
    screenshot(page, f"polish-toolbar-{view}-1440")
    assert page.evaluate(TOOLBAR_IN_ONE_ROW)
    legend = page.locator(".canvas-pane .legend").bounding_box()
    assert legend is not None and legend["y"] + legend["height"] <= 900


def test_at_1280_the_canvas_toolbar_keeps_every_tool_inside_the_graph_pane(
    live_server, page, flight
):
    open_canvas(page, live_server, flight, 1280)
    screenshot(page, "polish-toolbar-handles-1280")
    pane = page.locator(".canvas-pane").bounding_box()
    assert pane is not None
    for tool in page.locator(
        ".canvas-pane .toolbar button:visible, .canvas-pane .toolbar input:visible"
    ).all():
        box = tool.bounding_box()
        assert box is not None
        assert (
            box["x"] >= pane["x"] - 1 and box["x"] + box["width"] <= pane["x"] + pane["width"] + 1
        )


def test_a_refused_add_says_why_once_beside_its_form_and_not_in_the_page_banner(
    live_server, page, flight
):
    open_canvas(page, live_server, flight, 1440)
    page.locator("details.adders > summary").click()
    form = page.locator("#add-action-form")
    form.get_by_label("Action id").fill("outbound_search")  # taken
    form.get_by_role("button", name="Add action").click()

    expect(form.locator(".field-error")).to_contain_text("Not added")
    expect(page.locator("#edit-error")).to_have_count(0)
    expect(page.get_by_text("already", exact=False)).to_have_count(1)
    screenshot(page, "polish-refused-add-1440")
