"""The canvas reads at first sight and is edited by mouse and keyboard, in a real browser.

Drives static/js/canvas.js (zoom buttons, node search, overview, keyboard focus,
drag-to-connect, the shortcuts dialog) on top of static/js/workspace.js, and
measures the label size the layout of chains/core/render.py gives at the
default zoom. Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain, Role, Team
from tests.browser.pages import signed_in_context
from tests.shapes import long_chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

# The smallest node label on screen: its font size times the drawing's scale.
SMALLEST_LABEL = """() => Math.min(...[...document.querySelectorAll("#canvas g.node text")].map(
    t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a))"""


def store(document) -> str:
    return Chain.objects.store(formats.to_document(document)).chain.key


@pytest.fixture
def flight() -> str:
    return store(formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0])


@pytest.fixture
def forty() -> str:
    return store(long_chain(20))


def open_canvas(page: Page, live_server, key: str, width: int = 1440, query: str = "") -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/chains/{key}/{query}")
    expect(page.locator("#canvas svg")).to_be_visible()
    # canvas.js shows the zoom tools once it has prepared the drawing.
    expect(page.locator(".zoom-tools")).to_be_visible()


def node(page: Page, key: str):
    return page.locator(f'#canvas [id="{key}"]')


def centre(page: Page, key: str) -> tuple[float, float]:
    box = node(page, key).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def scale(page: Page) -> float:
    return page.locator("#canvas svg").evaluate("svg => svg.getScreenCTM().a")


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


# --- readable at first sight ---------------------------------------------------------


@pytest.mark.parametrize("view", ["handles", "flow"])
@pytest.mark.parametrize("width", [1280, 1440])
def test_the_flight_chain_fits_with_labels_of_eleven_px_or_more(
    live_server, page, flight, view, width
):
    open_canvas(page, live_server, flight, width, f"?view={view}")
    assert page.evaluate(SMALLEST_LABEL) >= 11
    screenshot(page, f"canvas-flight-{view}-{width}")


@pytest.mark.parametrize("view", ["handles", "flow"])
@pytest.mark.parametrize("width", [1280, 1440])
def test_a_forty_node_chain_fits_with_labels_of_eleven_px_or_more(
    live_server, page, forty, view, width
):
    open_canvas(page, live_server, forty, width, f"?view={view}")
    assert page.evaluate(SMALLEST_LABEL) >= 11
    screenshot(page, f"canvas-forty-{view}-{width}")


@pytest.fixture
def forty_steps() -> str:
    return store(long_chain(40))


@pytest.mark.parametrize("width", [1280, 1440])
def test_the_flow_of_a_forty_step_chain_wraps_into_columns_with_labels_of_eleven_px_or_more(
    live_server, page, forty_steps, width
):
    open_canvas(page, live_server, forty_steps, width, "?view=flow")
    assert page.evaluate(SMALLEST_LABEL) >= 11
    # Wrapped, the flow uses the canvas's width rather than one narrow column down it.
    drawn = page.locator("#canvas svg g.graph").bounding_box()
    canvas = page.locator("#canvas").bounding_box()
    assert drawn is not None and canvas is not None
    assert drawn["width"] >= canvas["width"] / 2
    screenshot(page, f"canvas-forty-steps-flow-{width}")


def test_the_whole_drawing_is_inside_the_canvas_and_the_window(live_server, page, forty):
    open_canvas(page, live_server, forty)
    canvas, drawn = page.evaluate(
        """() => ["#canvas", "#canvas svg g.graph"].map(selector => {
            const r = document.querySelector(selector).getBoundingClientRect();
            return {top: r.top, bottom: r.bottom};
        })"""
    )
    assert canvas["top"] - 1 <= drawn["top"] and drawn["bottom"] <= canvas["bottom"] + 1
    assert canvas["bottom"] <= 900


# --- zoom, search, overview ----------------------------------------------------------


def test_the_zoom_buttons_change_the_scale_and_fit_restores_it(live_server, page, flight):
    open_canvas(page, live_server, flight)
    fitted = scale(page)

    page.get_by_role("button", name="Zoom in").click()
    zoomed_in = scale(page)
    page.get_by_role("button", name="Zoom out").click()
    page.get_by_role("button", name="Zoom out").click()
    zoomed_out = scale(page)

    assert zoomed_in > fitted > zoomed_out
    page.get_by_role("button", name="Fit").click()
    assert scale(page) == pytest.approx(fitted)


def test_plus_and_minus_keys_zoom_the_drawing(live_server, page, flight):
    open_canvas(page, live_server, flight)
    fitted = scale(page)
    page.locator("#canvas").focus()

    page.keyboard.press("+")

    assert scale(page) > fitted


def test_finding_a_node_by_id_selects_it_and_centres_it(live_server, page, forty):
    open_canvas(page, live_server, forty)

    page.get_by_label("Find a node").fill("token_17_ref")
    page.get_by_label("Find a node").press("Enter")

    expect(node(page, "handle:token_17_ref")).to_have_class("node handle selected")
    expect(page.locator("#element-panel")).to_contain_text("token_17_ref")
    canvas = page.locator("#canvas").bounding_box()
    assert canvas is not None
    page.wait_for_function(
        """([key, cy]) => {
            const r = document.querySelector(`#canvas [id="${key}"]`).getBoundingClientRect();
            return Math.abs(r.top + r.height / 2 - cy) < 4;
        }""",
        arg=["handle:token_17_ref", canvas["y"] + canvas["height"] / 2],
    )


def test_zoom_to_selection_shows_the_selected_node_at_natural_size(live_server, page, forty):
    open_canvas(page, live_server, forty, query="?select=action:step_12_call")

    page.get_by_role("button", name="Zoom to the selection").click()

    assert scale(page) == pytest.approx(4 / 3)
    expect(page.locator("#overview")).to_be_visible()  # a big chain, zoomed in
    screenshot(page, "canvas-zoomed-to-selection")


def test_the_overview_button_shows_and_hides_the_overview(live_server, page, flight):
    open_canvas(page, live_server, flight)
    expect(page.locator("#overview")).to_be_hidden()

    page.get_by_role("button", name="Overview").click()

    expect(page.locator("#overview")).to_be_visible()
    # The flight handle graph: 9 handles, 12 actions and 4 gates.
    expect(page.locator("#overview rect.map-node")).to_have_count(25)
    page.get_by_role("button", name="Overview").click()
    expect(page.locator("#overview")).to_be_hidden()


# --- keyboard ------------------------------------------------------------------------


def test_arrow_keys_move_focus_between_nodes_and_enter_selects(live_server, page, forty):
    open_canvas(page, live_server, forty)
    node(page, "handle:token_07_ref").focus()

    page.keyboard.press("ArrowDown")
    expect(node(page, "handle:token_08_ref")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(node(page, "action:step_08_call")).to_be_focused()
    page.keyboard.press("Enter")

    expect(node(page, "action:step_08_call")).to_have_class("node action effect-read selected")
    expect(node(page, "action:step_08_call")).to_be_focused()


def test_graph_nodes_are_reached_with_tab_and_named_for_screen_readers(live_server, page, flight):
    open_canvas(page, live_server, flight)
    page.locator("#canvas").focus()

    page.keyboard.press("Tab")

    focused = page.locator("#canvas g.node:focus")
    expect(focused).to_have_count(1)
    expect(focused).to_have_attribute("aria-label", "action outbound_search")


def test_question_mark_opens_the_shortcuts_and_escape_closes_them(live_server, page, flight):
    open_canvas(page, live_server, flight, query="?select=handle:quote_id")
    page.locator("#canvas").focus()

    page.keyboard.press("?")

    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("zoom to the selection")
    screenshot(page, "canvas-shortcuts")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#element-panel")).to_contain_text("quote_id")  # still selected


# --- drag to connect -----------------------------------------------------------------


def drag(page: Page, source: str, target: str) -> None:
    (ax, ay), (bx, by) = centre(page, source), centre(page, target)
    page.mouse.move(ax, ay)
    page.mouse.down()
    page.mouse.move((ax + bx) / 2, (ay + by) / 2, steps=4)
    page.mouse.move(bx, by, steps=4)
    page.mouse.up()


def handle(key: str, name: str) -> dict:
    document = Chain.objects.get(key=key).head().document
    return next(h for h in document["handles"] if h["id"] == name)


def test_dragging_from_a_parent_handle_to_a_child_stores_the_derivation(live_server, page, forty):
    open_canvas(page, live_server, forty)

    drag(page, "handle:token_00_ref", "handle:token_05_ref")

    expect(page.locator("#saved-note")).to_contain_text("Saved revision 2")
    expect(node(page, "edge:derived_from:token_05_ref:token_00_ref")).to_have_count(1)
    assert "token_00_ref" in handle(forty, "token_05_ref")["derived_from"]


def test_dragging_from_a_handle_to_an_action_stores_that_it_consumes_it(live_server, page, forty):
    open_canvas(page, live_server, forty)

    drag(page, "handle:token_01_ref", "action:step_06_call")

    expect(page.locator("#saved-note")).to_contain_text("Saved revision 2")
    expect(node(page, "edge:consumes:step_06_call:token_01_ref")).to_have_count(1)


def test_a_short_press_on_a_node_still_selects_it(live_server, page, flight):
    open_canvas(page, live_server, flight)

    node(page, "handle:quote_id").click()

    expect(page.locator("#element-panel")).to_contain_text("quote_id")
    expect(page.locator("#saved-note")).to_have_count(0)


def test_dragging_between_two_actions_adds_nothing_and_says_why(live_server, page, flight):
    open_canvas(page, live_server, flight)
    (ax, ay), (bx, by) = centre(page, "action:seat_map"), centre(page, "action:revalidate")
    page.mouse.move(ax, ay)
    page.mouse.down()
    page.mouse.move(bx, by, steps=6)

    expect(page.locator("#mode-hint")).to_contain_text("No edge joins an action to an action")
    page.mouse.up()
    expect(page.locator("#saved-note")).to_have_count(0)


@pytest.fixture
def reader(browser, live_server) -> Page:
    """A signed-in page of someone who may only read the flight chain."""
    person = get_user_model().objects.create_user("reader")
    team = Team.objects.found("Flight desk", owner=get_user_model().objects.create_user("lead"))
    team.add(person, Role.VIEWER)
    Chain.objects.store(
        formats.to_document(formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]),
        team=team,
    )
    context = signed_in_context(browser, live_server, person)
    yield context.new_page()
    context.close()


def test_on_a_readers_page_a_drag_from_a_node_pans_and_posts_nothing(live_server, reader):
    open_canvas(reader, live_server, "flight_roundtrip")
    expect(reader.locator("#read-only")).to_be_visible()
    reader.keyboard.press("+")  # the keys zoom, as the toolbar does for a reader too
    before = reader.locator("#canvas svg").get_attribute("viewBox")
    posts: list[str] = []
    reader.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)

    drag(reader, "handle:quote_id", "handle:hold_session")

    assert reader.locator("#canvas svg").get_attribute("viewBox") != before
    reader.wait_for_timeout(300)
    assert posts == []


@pytest.mark.parametrize("width", [1280, 1440])
def test_the_flow_view_offers_no_connect_buttons_but_a_link_to_the_handle_graph(
    live_server, page, flight, width
):
    open_canvas(page, live_server, flight, width, "?view=flow")
    expect(page.locator(".toolbar [data-mode]")).to_have_count(0)
    hint = page.locator(".toolbar .connect-hint")
    expect(hint).to_be_visible()
    screenshot(page, f"canvas-flow-connect-hint-{width}")
    hint.click()
    expect(page.locator(".toolbar [data-mode]")).to_have_count(3)
    assert "view=handles" in page.url
