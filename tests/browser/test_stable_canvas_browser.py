"""An edit moves no node it did not change: the canvas keeps every node where it was.

Graphviz would lay the whole graph out again after each edit; the server
places the changed drawing against the one before (chains/core/layout.py)
and the page shows it at the same scale with the kept nodes where they sat
(static/js/workspace.js). Each test notes where every node's shape is on
screen, makes an edit the way a person would, and compares.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from chains.models import RevisionLayout
from tests.browser.pages import workspace_swap
from tests.browser.test_designer_browser import add_handle, node, open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The centre of each node's shape on the page, by graph key (an adder's autofocus may
# scroll the page after an edit: that moves the page, not the drawing on it).
CENTRES = """() => Object.fromEntries(
  [...document.querySelectorAll("#canvas g.node[data-key]")].map((g) => {
    const r = (g.querySelector("ellipse, polygon, path") || g).getBoundingClientRect();
    return [g.dataset.key, [r.left + r.width / 2 + scrollX, r.top + r.height / 2 + scrollY]];
  })
)"""


def centres(page: Page) -> dict[str, list[float]]:
    return page.evaluate(CENTRES)


def moved(before: dict, after: dict) -> dict[str, float]:
    """The nodes both have that moved more than half a pixel, with how far."""
    far = {
        key: max(abs(after[key][0] - x), abs(after[key][1] - y))
        for key, (x, y) in before.items()
        if key in after
    }
    return {key: round(d, 1) for key, d in far.items() if d > 0.5}


def open_details(page: Page, selector: str) -> None:
    """Open the ``<details>`` at ``selector`` and wait until the page has answered its toggle.

    A panel above the canvas moves the canvas down, and static/js/canvas.js sizes it
    again on the toggle event, which comes a task after the click: noting the
    nodes' places before that answer would note places about to change.
    """
    page.evaluate(
        """() => { window.toggled = new Promise((done) => document.addEventListener(
            "toggle", () => done(), { capture: true, once: true })); }"""
    )
    page.locator(f"{selector} > summary").click()
    page.evaluate("() => window.toggled")
    expect(page.locator(selector)).to_have_attribute("open", "")


def open_adders(page: Page) -> None:
    """Open the adders (above the canvas, so the canvas moves down) before noting places."""
    open_details(page, "details.adders")


def test_adding_a_handle_moves_no_node_of_the_flight_chain(live_server, flight, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_workspace(page, live_server, flight.key)
    open_adders(page)
    before = centres(page)
    add_handle(page, "loyalty_ref")
    after = centres(page)
    assert moved(before, after) == {}
    assert set(after) - set(before) == {"handle:loyalty_ref"}


def test_drawing_a_derivation_edge_moves_no_node(live_server, flight, page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, flight.key)
    before = centres(page)
    page.get_by_role("button", name="Connect: derives from").click()
    node(page, "handle:seatmap_ref").click()
    with workspace_swap(page):
        node(page, "handle:outbound_pick").click()
    expect(node(page, "edge:derived_from:seatmap_ref:outbound_pick")).to_have_count(1)
    assert moved(before, centres(page)) == {}


def test_adding_a_gate_in_the_flow_moves_no_step(live_server, flight, page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, flight.key, "?view=flow")
    open_adders(page)
    open_details(page, "#add-gate")
    before = centres(page)
    form = page.locator("#add-gate-form")
    form.get_by_label("Gate id").fill("visa_consent")
    with workspace_swap(page):
        form.get_by_role("button", name="Add gate").click()
    after = centres(page)
    assert moved(before, after) == {}
    assert set(after) - set(before) == {"gate:visa_consent"}


def test_a_step_added_out_of_sight_is_brought_into_view_by_a_pan_alone(live_server, flight, page):
    """The flow's new last step lies below a canvas that showed the whole flow: the view
    pans just enough to show it, so every step moves alike, and none moves apart."""
    page.set_viewport_size({"width": 1280, "height": 800})
    open_workspace(page, live_server, flight.key, "?view=flow")
    open_adders(page)
    before = centres(page)
    form = page.locator("#add-action-form")
    form.get_by_label("Action id").fill("check_visa")
    with workspace_swap(page):
        form.get_by_role("button", name="Add action").click()
    after = centres(page)
    shifts = {
        (round(after[key][0] - x), round(after[key][1] - y)) for key, (x, y) in before.items()
    }
    assert len(shifts) == 1  # a pan: the steps kept their places with each other
    new = page.locator('#canvas g.node[id="action:check_visa"] path').bounding_box()
    canvas = page.locator("#canvas svg").bounding_box()
    assert canvas["y"] <= new["y"] and new["y"] + new["height"] <= canvas["y"] + canvas["height"]


def test_a_run_of_edits_moves_nothing_and_tidy_lays_the_graph_out_afresh(live_server, flight, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_workspace(page, live_server, flight.key)
    open_adders(page)
    before = centres(page)
    for name in ("loyalty_ref", "visa_ref", "fare_rules_ref"):
        add_handle(page, name)
    assert moved(before, centres(page)) == {}
    head = flight.head()
    kept = RevisionLayout.objects.get(revision=head, view="handles").layout
    with workspace_swap(page):
        page.get_by_role("button", name="Tidy the layout").click()
    tidied = RevisionLayout.objects.get(revision=head, view="handles").layout
    assert tidied["nodes"].keys() == kept["nodes"].keys()
    assert tidied["nodes"] != kept["nodes"]  # laid out afresh, not the memory again
