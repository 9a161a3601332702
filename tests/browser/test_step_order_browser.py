"""Steps are put in order in the browser: dragged in the Actions tab, or moved with ↑."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from chains.core import formats
from chains.core.model import main_steps
from chains.models import Chain
from tests.browser.pages import workspace_swap
from tests.browser.test_designer_browser import open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUOTE_FIRST = """
id: misordered
handles:
  - {id: search_id, minted_by: search}
  - {id: quote_id, minted_by: quote, derived_from: [search_id]}
actions:
  - {id: quote, effect: mint, input: {handles: [search_id]}, output: {handles: [quote_id]}}
  - {id: search, effect: read, output: {handles: [search_id]}}
  - {id: find_order, effect: read, probe_only: true}
  - {id: order, effect: commit, input: {handles: [quote_id]},
     confirmation: {probe: find_order, signal: one order with our reference}}
"""


@pytest.fixture
def misordered() -> str:
    spec = formats.load(QUOTE_FIRST, format="yaml").chains[0]
    return Chain.objects.store(formats.to_document(spec)).chain.key


def steps_now(key: str) -> list[str]:
    return main_steps(formats.from_document(Chain.objects.get(key=key).head().document))


def test_a_step_dragged_above_another_walks_before_it(live_server, page, misordered):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, misordered, "?tab=actions")
    items = page.locator("#step-list > li")
    expect(items).to_have_count(3)  # the probe is listed apart, not as a step
    items.filter(has_text="search").drag_to(items.filter(has_text="quote"))
    expect(items.first).to_contain_text("search")
    assert steps_now(misordered) == ["search", "quote", "order"]
    expect(page.locator("#side-actions")).to_contain_text("probe of order")


def test_a_step_moved_up_with_its_button_walks_before_the_one_above(live_server, page, misordered):
    open_workspace(page, live_server, misordered, "?tab=actions")
    page.get_by_role("button", name="Move up search").click()
    expect(page.locator("#step-list > li").first).to_contain_text("search")
    assert steps_now(misordered) == ["search", "quote", "order"]


def drag(page, source: str, target: str) -> None:
    """Press on one node of the canvas, move in steps onto another, let go."""
    start = page.locator(f'#canvas [id="{source}"]').bounding_box()
    end = page.locator(f'#canvas [id="{target}"]').bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)


def test_a_step_dragged_onto_another_in_the_flow_takes_its_place(live_server, page, misordered):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, misordered, "?view=flow")
    drag(page, "action:search", "action:quote")
    expect(page.locator("#mode-hint")).to_have_text("Drop to move search to where quote is.")
    with workspace_swap(page):
        page.mouse.up()
    assert steps_now(misordered) == ["search", "quote", "order"]
    expect(page.locator("#workspace")).to_have_attribute("data-view", "flow")


def test_a_probe_cannot_be_dragged_into_the_flow_s_order(live_server, page, misordered):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, misordered, "?view=flow")
    drag(page, "action:search", "action:find_order")
    expect(page.locator("#mode-hint")).to_have_text(
        "Drop on a step of the main line to move search there."
    )
    page.mouse.up()
    assert steps_now(misordered) == ["quote", "search", "order"]
