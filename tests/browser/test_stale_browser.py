"""Nothing typed or clicked is lost: quick clicks, scroll positions and stale saves in Chromium.

The workspace (chains/views/workspace.py) answers every click with a swap of
#workspace; static/js/workspace.js keeps one request in flight and lets the
newest click win, static/js/scroll.js keeps scroll positions across a swap, and
a stale save shows yours beside theirs. Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.models import Chain
from chains.views import workspace as workspace_views
from tests.browser.pages import signed_in_context, workspace_swap

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
SLOW = 0.4  # seconds the server takes to draw a selection the test makes slow


def screenshot(page: Page, name: str) -> None:
    """What the person sees in the window (not the whole page): is the answer in sight?"""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def open_workspace(page: Page, live_server, chain: Chain, query: str = "") -> None:
    page.goto(f"{live_server.url}{chain.url()}{query}")
    expect(page.locator("#workspace[data-ready]")).to_be_visible()


RECORD_ANSWERS = """() => {
    window.answered = [];
    document.addEventListener("htmx:afterRequest", (event) => {
        const query = event.detail.pathInfo.requestPath.split("?")[1] || "";
        window.answered.push(new URLSearchParams(query).get("select") || "");
    });
}"""


def record_answers(page: Page) -> None:
    """From now on, note the selection each answered request asked for (see :func:`answered`)."""
    page.evaluate(RECORD_ANSWERS)


def answered(page: Page, select: str) -> None:
    """Wait until the answer to the request selecting ``select`` is in and handled.

    htmx swaps an answer in (or workspace.js drops it) before it fires
    ``htmx:afterRequest``, so once that is heard the page shows what it will
    show: no need to guess how long the slow answer takes.
    """
    page.wait_for_function("key => window.answered.includes(key)", arg=select)
    page.evaluate("window.answered = []")


def node(page: Page, key: str):
    return page.locator(f'#canvas [id="{key}"]')


def centre(page: Page, key: str) -> tuple[float, float]:
    box = node(page, key).bounding_box()
    assert box is not None, key
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def console_errors(page: Page) -> list[str]:
    """What the console logs as an error from now on (favicon requests aside)."""
    heard: list[str] = []
    page.on(
        "console",
        lambda m: (
            heard.append(m.text)
            if m.type == "error" and "favicon" not in m.location.get("url", "")
            else None
        ),
    )
    return heard


def selected_in_address(page: Page) -> str:
    return parse_qs(urlparse(page.url).query).get("select", [""])[0]


def person(browser, live_server, user) -> Page:
    """A page of its own browser context (its own cookies), signed in as ``user``."""
    context = signed_in_context(browser, live_server, user, viewport={"width": 1280, "height": 900})
    return context.new_page()


@pytest.fixture
def slow_selections(monkeypatch):
    """Selections of the keys put in the returned set are drawn ``SLOW`` seconds late."""
    slow: set[str] = set()
    real = workspace_views.workspace_context

    def late(chain, head, params, *args, **kwargs):
        if params.get("select") in slow:
            time.sleep(SLOW)
        return real(chain, head, params, *args, **kwargs)

    monkeypatch.setattr(workspace_views, "workspace_context", late)
    return slow


@pytest.fixture
def wide(page: Page) -> Page:
    page.set_viewport_size({"width": 1440, "height": 900})
    return page


# --- quick clicks ---------------------------------------------------------------------

PAIRS = [
    ("handle:search_token", "handle:quote_id"),
    ("handle:hold_session", "handle:price_lock"),
    ("handle:outbound_pick", "handle:return_pick"),
]


def test_a_second_click_during_a_pending_selection_wins_ten_times_of_ten(
    live_server, flight, wide, slow_selections
):
    page = wide
    open_workspace(page, live_server, flight)
    errors = console_errors(page)
    for first, _ in PAIRS:
        slow_selections.add(first)
    record_answers(page)
    for attempt in range(10):
        first, second = PAIRS[attempt % len(PAIRS)]
        a, b = centre(page, first), centre(page, second)
        page.mouse.click(*a)
        page.mouse.click(*b)  # well within the first one's SLOW seconds
        # data-ready: settled and wired (workspace.js set the address in the same task);
        # the new markup is in the page some milliseconds before that.
        expect(page.locator("#workspace[data-ready]")).to_have_attribute("data-select", second)
        answered(page, first)  # the first answer is in: it must not have been drawn
        assert page.locator("#workspace").get_attribute("data-select") == second, attempt
        assert selected_in_address(page) == second, (attempt, page.url)
        expect(page.locator("#element-panel h2 code")).to_have_text(second.split(":", 1)[1])
    assert errors == []
    assert page.locator("[data-workspace-request]").count() == 0  # no helper left behind


def test_a_tab_clicked_during_a_pending_selection_is_the_tab_shown_and_in_the_address(
    live_server, flight, wide, slow_selections
):
    page = wide
    open_workspace(page, live_server, flight)
    slow_selections.add("handle:search_token")
    record_answers(page)
    page.mouse.click(*centre(page, "handle:search_token"))
    page.locator("nav.tabs").get_by_role("link", name="Gates").click()
    # Settled, not only swapped in: the address is set as the new workspace is wired.
    expect(page.locator("#workspace[data-ready]")).to_have_attribute("data-tab", "gates")
    answered(page, "handle:search_token")
    assert page.locator("#workspace").get_attribute("data-tab") == "gates"
    assert parse_qs(urlparse(page.url).query)["tab"] == ["gates"]


def test_a_click_during_an_edit_waits_for_the_edit_and_then_selects(
    live_server, flight, wide, monkeypatch
):
    page = wide
    open_workspace(page, live_server, flight)
    real = workspace_views.editing.save_edit

    def slow_save(*args, **kwargs):
        time.sleep(SLOW)
        return real(*args, **kwargs)

    monkeypatch.setattr(workspace_views.editing, "save_edit", slow_save)
    page.locator("details.adders > summary").click()
    page.locator("#add-handle-form").get_by_label("Handle id").fill("scratch")
    page.locator("#add-handle-form").get_by_role("button", name="Add handle").click()
    page.mouse.click(*centre(page, "handle:quote_id"))

    expect(page.locator("#workspace")).to_have_attribute("data-select", "handle:quote_id")
    expect(node(page, "handle:scratch")).to_have_count(1)
    # The address follows once htmx has settled the swap (workspace.js, rendered), a
    # moment after the new workspace is in: wait for it rather than read it at once.
    page.wait_for_function("() => new URLSearchParams(location.search).get('select')")
    assert selected_in_address(page) == "handle:quote_id"
    assert "scratch" in [h["id"] for h in flight.head().document["handles"]]


# --- scroll positions -----------------------------------------------------------------


def test_the_panels_scroll_position_survives_an_edit(live_server, flight, wide):
    page = wide
    open_workspace(page, live_server, flight, "?tab=table")
    body = page.locator(".tab-body")
    scrollable = body.evaluate("el => el.scrollHeight - el.clientHeight")
    assert scrollable > 150, "the table must overflow its panel for this test"
    body.evaluate("el => { el.scrollTop = 150; }")
    row = page.locator("#verdict-table tr.domain-row").nth(5)
    row.get_by_role("button", name="Duplicate").click()

    expect(page.locator("#saved-note")).to_contain_text("duplicate row")
    assert page.locator(".tab-body").evaluate("el => el.scrollTop") == 150


def test_the_panel_never_shows_its_top_while_an_edit_swaps_in(live_server, flight, wide):
    # htmx fires htmx:load only once it settles the swap, some 20 ms on: restoring
    # there showed the top of the panel for that moment (and raced the test above).
    page = wide
    open_workspace(page, live_server, flight, "?tab=table")
    page.evaluate(
        """() => document.addEventListener("htmx:afterSwap", () => {
            window.scrollAtSwap = document.querySelector(".tab-body").scrollTop;
        })"""
    )
    page.locator(".tab-body").evaluate("el => { el.scrollTop = 150; }")
    row = page.locator("#verdict-table tr.domain-row").nth(5)
    row.get_by_role("button", name="Duplicate").click()

    expect(page.locator("#saved-note")).to_contain_text("duplicate row")
    assert page.evaluate("window.scrollAtSwap") == 150


def test_the_pages_scroll_position_survives_an_edit(live_server, flight, wide):
    page = wide
    open_workspace(page, live_server, flight, "?tab=table")
    page.evaluate("window.scrollTo(0, 250)")
    before = page.evaluate("window.scrollY")
    assert before == 250, "the page must be taller than the window for this test"
    row = page.locator("#verdict-table tr.domain-row").nth(2)
    # A click event without Playwright's scrolling the button into view first.
    row.get_by_role("button", name="Duplicate").dispatch_event("click")

    expect(page.locator("#saved-note")).to_be_visible()
    assert page.evaluate("window.scrollY") == before


# --- two people, one chain ------------------------------------------------------------


def describe(page: Page, text: str) -> None:
    panel = page.locator("#element-panel")
    field = panel.get_by_role("textbox", name=re.compile("^Description"))
    field.fill(text)
    with workspace_swap(page):
        panel.locator("#element-fields").get_by_role("button", name="Save").click()


def test_a_stale_save_shows_yours_beside_theirs_and_applies_yours_in_one_click(
    browser, live_server, flight, people
):
    select = "?select=handle:quote_id&tab=handles"
    alice = person(browser, live_server, people["owner"])
    bob = person(browser, live_server, people["editor"])
    open_workspace(alice, live_server, flight, select)
    open_workspace(bob, live_server, flight, select)

    describe(alice, "Alice's words about the quote.")
    expect(alice.locator("#saved-note")).to_contain_text("update handle quote_id")
    describe(bob, "Bob's longer and careful words about the quote.")

    stale = bob.locator("#stale-edit")
    expect(stale).to_be_visible()
    expect(stale.locator("pre.yours").first).to_have_text(
        "Bob's longer and careful words about the quote."
    )
    expect(stale.locator("pre.theirs").first).to_have_text("Alice's words about the quote.")
    expect(stale.locator("#stale-conflicts")).to_contain_text("they changed description too")
    expect(stale).to_be_in_viewport()
    screenshot(bob, "stale-save-1280")

    with workspace_swap(bob):
        stale.get_by_role("button", name="Apply yours over theirs").click()

    expect(bob.locator("#saved-note")).to_contain_text("Saved revision 3")
    expect(bob.locator("#stale-edit")).to_have_count(0)
    handle = next(h for h in flight.head().document["handles"] if h["id"] == "quote_id")
    assert handle["description"] == "Bob's longer and careful words about the quote."
    alice.context.close()
    bob.context.close()


def test_a_stale_save_that_clashes_with_nothing_keeps_both_changes(
    browser, live_server, flight, people
):
    alice = person(browser, live_server, people["owner"])
    bob = person(browser, live_server, people["editor"])
    open_workspace(alice, live_server, flight, "?select=handle:search_token&tab=handles")
    open_workspace(bob, live_server, flight, "?select=handle:quote_id&tab=handles")

    describe(alice, "Alice was here.")
    expect(alice.locator("#saved-note")).to_contain_text("Saved revision 2")
    describe(bob, "Bob was here.")

    stale = bob.locator("#stale-edit")
    expect(stale.locator("#stale-clean")).to_be_visible()
    bob.set_viewport_size({"width": 1440, "height": 900})
    screenshot(bob, "stale-save-clean-1440")
    with workspace_swap(bob):
        stale.get_by_role("button", name="Apply yours on revision 2").click()

    expect(bob.locator("#saved-note")).to_contain_text("Saved revision 3")
    described = {h["id"]: h.get("description") for h in flight.head().document["handles"]}
    assert described["search_token"] == "Alice was here."
    assert described["quote_id"] == "Bob was here."
    alice.context.close()
    bob.context.close()
