"""The workspace makes room: a resizable side panel, full-width tabs, row tools in
sight, and a lint summary beside the canvas (templates/chains/workspace.html,
static/css/workspace.css, static/js/layout.js), in Chromium at 1280 and 1440 wide.

The big chain is the unsafe booking fixture grown to 32 findings of all three
severities and 15 domain rows, about the size of a real compile's chain.
Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.core.lint import lint
from chains.models import Chain
from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


def fixture_document(name: str) -> dict:
    path = FIXTURES / name
    return formats.to_document(formats.load(path.read_bytes(), filename=path.name).chains[0])


def big_document() -> dict:
    """The unsafe booking chain with 12 more lookups, 8 open gates and 12 more rows."""
    doc = fixture_document("unsafe-retry-booking.yaml")
    for i in range(12):
        doc["actions"].append(
            {"id": f"lookup_{i}", "effect": "read", "output": {"handles": [f"ref_{i}"]}}
        )
        doc["handles"].append({"id": f"ref_{i}", "minted_by": f"lookup_{i}"})
        doc["verdict_table"].append(
            {
                "id": f"L{i}",
                "signal": [f"code:LOOKUP_{i}_GONE_AWAY_FOR_NOW", "http:404"],
                "scope": {"steps": [f"lookup_{i}"]},
                "verdict": "rewind(to: find_room)",
                "no_side_effect": True,
            }
        )
    doc["gates"] = doc.get("gates", []) + [
        {"id": f"consent_{i}", "audience": "user", "outcomes": {"yes": "ok", "no": "dead_end"}}
        for i in range(8)
    ]
    return doc


def store(document: dict) -> str:
    return Chain.objects.store(formats.to_document(formats.from_document(document))).chain.key


@pytest.fixture
def big() -> str:
    return store(big_document())


@pytest.fixture
def flight() -> str:
    return store(fixture_document("flight-roundtrip.yaml"))


@pytest.fixture
def plain_page(browser, live_server, admin_user):
    """A signed-in page with JavaScript off: what works must work as links and forms."""
    context = signed_in_context(browser, live_server, admin_user, java_script_enabled=False)
    yield context.new_page()
    context.close()


def watch(page: Page) -> list[str]:
    """Console errors (a CSP violation, a script error), favicon aside."""
    complaints: list[str] = []
    page.on(
        "console",
        lambda m: (
            complaints.append(m.text)
            if m.type == "error" and "favicon" not in m.location["url"]
            else None
        ),
    )
    page.on("pageerror", lambda e: complaints.append(str(e)))
    return complaints


def open_workspace(page: Page, live_server, key: str, query: str = "", width: int = 1440) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/chains/{key}/{query}")
    page.wait_for_function("document.documentElement.classList.contains('layout-js')")


def panel_width(page: Page) -> float:
    return page.locator("#side-pane").bounding_box()["width"]


def page_scrolls_sideways(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > window.innerWidth")


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def drag_handle(page: Page, by: float) -> None:
    box = page.locator("#ws-resizer").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + 100
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + by / 2, y, steps=4)
    page.mouse.move(x + by, y, steps=4)
    page.mouse.up()


# --- the side panel resizes -----------------------------------------------------------


def test_dragging_the_handle_left_widens_the_side_panel(live_server, page, flight):
    complaints = watch(page)
    open_workspace(page, live_server, flight)
    before = panel_width(page)

    drag_handle(page, -200)

    assert panel_width(page) == pytest.approx(before + 200, abs=2)
    assert complaints == []
    screenshot(page, "layout-flight-dragged-1440")


def test_arrow_keys_on_the_focused_handle_resize_the_side_panel(live_server, page, flight):
    open_workspace(page, live_server, flight)
    before = panel_width(page)
    handle = page.locator("#ws-resizer")

    handle.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Shift+ArrowLeft")

    assert panel_width(page) == pytest.approx(before + 16 + 64, abs=2)
    assert int(handle.get_attribute("aria-valuenow")) == pytest.approx(before + 80, abs=2)
    page.keyboard.press("ArrowRight")
    assert panel_width(page) == pytest.approx(before + 64, abs=2)


def test_the_panel_width_survives_an_edit_and_a_reload(live_server, page, flight):
    open_workspace(page, live_server, flight)
    drag_handle(page, -150)
    wanted = panel_width(page)

    page.locator("details.adders > summary").click()
    page.locator("#add-handle-form").get_by_label("Handle id").fill("late_token")
    page.locator("#add-handle-form").get_by_role("button", name="Add handle").click()
    expect(page.locator("#saved-note")).to_be_visible()
    assert panel_width(page) == pytest.approx(wanted, abs=1)

    page.reload()
    page.wait_for_function("document.documentElement.classList.contains('layout-js')")
    assert panel_width(page) == pytest.approx(wanted, abs=1)


def test_a_stored_width_too_wide_for_the_window_leaves_the_canvas_room(live_server, page, flight):
    open_workspace(page, live_server, flight)
    page.evaluate("localStorage.setItem('chain-designer:side-width', '5000')")
    open_workspace(page, live_server, flight, width=1280)
    assert page.locator(".canvas-pane").bounding_box()["width"] >= 300
    assert not page_scrolls_sideways(page)


# --- full width and row tools ---------------------------------------------------------


def test_the_full_width_table_shows_every_column_without_page_scroll_at_1280(
    live_server, page, big
):
    complaints = watch(page)
    open_workspace(page, live_server, big, "?tab=table", width=1280)

    page.locator("#wide-toggle").click()

    page.wait_for_url("**wide=1**")
    expect(page.locator("#workspace")).to_have_attribute("data-wide", "1")
    headers = page.locator("#verdict-table thead th")
    for i in range(headers.count()):
        box = headers.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
    assert not page_scrolls_sideways(page)
    screenshot(page, "layout-table-wide-1280")
    assert complaints == []


def test_the_full_width_coverage_keeps_its_scroll_inside_its_box_at_1280(live_server, page, flight):
    open_workspace(page, live_server, flight, "?tab=coverage&wide=1", width=1280)
    table = page.locator("#coverage").bounding_box()
    wrap = page.locator(".coverage-wrap").bounding_box()
    assert wrap["width"] > 1000  # the whole width, not the side panel's
    assert table["x"] >= 0
    assert not page_scrolls_sideways(page)
    screenshot(page, "layout-coverage-wide-1280")


def test_the_side_panel_link_puts_a_wide_table_back(live_server, page, big):
    open_workspace(page, live_server, big, "?tab=table&wide=1")
    page.locator("#wide-toggle").click()
    expect(page.locator("#workspace")).to_have_attribute("data-wide", "")
    assert panel_width(page) < 1000


@pytest.mark.parametrize("width", [1280, 1440])
def test_row_tools_sit_in_the_viewport_in_the_side_panel(live_server, page, big, width):
    open_workspace(page, live_server, big, "?tab=table", width=width)
    tools = page.locator("#verdict-table tr.domain-row td.row-tools")
    assert tools.count() == 15
    for i in (0, 14):
        box = tools.nth(i).locator("button").last.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
    flags = page.locator("#verdict-table tr.domain-row .flag").first.bounding_box()
    assert flags["x"] + flags["width"] <= width
    assert not page_scrolls_sideways(page)
    screenshot(page, f"layout-table-panel-{width}")


def test_an_edit_in_the_wide_table_keeps_it_wide(live_server, page, big):
    open_workspace(page, live_server, big, "?tab=table&wide=1")
    first = page.locator("#verdict-table tr.domain-row").first
    first.get_by_role("button", name="Move down row").click()

    expect(page.locator("#saved-note")).to_be_visible()
    expect(page.locator("#workspace")).to_have_attribute("data-wide", "1")


def test_selecting_a_node_keeps_the_wide_table_in_the_address(live_server, page, flight):
    open_workspace(page, live_server, flight, "?tab=table&wide=1")
    page.locator("#verdict-table tr.domain-row a").first.click()

    expect(page.locator("#element-panel")).to_be_visible()
    page.wait_for_url("**select=**")
    expect(page.locator("#workspace")).to_have_attribute("data-wide", "1")
    assert "wide=1" in page.url


# --- the lint summary -----------------------------------------------------------------


def test_the_lint_summary_sits_above_the_fold_at_1440_by_900(live_server, page, big):
    complaints = watch(page)
    open_workspace(page, live_server, big)
    summary = page.locator("#lint-summary").bounding_box()
    assert summary["y"] + summary["height"] <= 900
    errors = sum(
        f.severity == "error" for f in lint(formats.from_document(big_document())).findings
    )
    expect(page.locator("#lint-summary")).to_contain_text(f"Errors {errors}")
    expect(page.locator("#lint-summary .summary-findings li")).to_have_count(3)
    screenshot(page, "layout-lint-summary-1440")
    assert complaints == []


def test_the_severity_filter_hides_the_other_severities_in_summary_and_panel(
    live_server, page, big
):
    counts = Counter(f.severity for f in lint(formats.from_document(big_document())).findings)
    assert counts["error"] and counts["info"]  # something for the filter to hide
    open_workspace(page, live_server, big)
    page.evaluate("window.sameDocument = true")

    page.locator("#lint-summary .severity-filter a[data-severity='warning']").click()

    expect(page.locator("#workspace")).to_have_attribute("data-sev", "warning")
    summary = page.locator("#lint-summary .summary-findings li")
    expect(summary).to_have_count(3)
    assert all(
        "severity-warning" in c for c in summary.evaluate_all("l => l.map(e => e.className)")
    )
    rows = page.locator("#lint-panel table.findings tbody tr")
    expect(rows).to_have_count(counts["warning"])
    assert set(rows.evaluate_all("l => l.map(e => e.className)")) == {"severity-warning"}
    page.wait_for_url("**sev=warning**")
    assert page.evaluate("window.sameDocument === true")  # swapped by htmx, not reloaded


def test_the_filter_survives_an_edit(live_server, page, big):
    open_workspace(page, live_server, big, "?sev=error")
    page.locator("details.adders > summary").click()
    page.locator("#add-handle-form").get_by_label("Handle id").fill("late_token")
    page.locator("#add-handle-form").get_by_role("button", name="Add handle").click()

    expect(page.locator("#saved-note")).to_be_visible()
    expect(page.locator("#workspace")).to_have_attribute("data-sev", "error")
    rows = page.locator("#lint-panel table.findings tbody tr")
    assert set(rows.evaluate_all("l => l.map(e => e.className)")) == {"severity-error"}


def test_an_edit_leaves_the_side_panel_scrolled_where_it_was(live_server, page, big):
    open_workspace(page, live_server, big, "?tab=table", width=1280)
    row = page.locator("#verdict-table tr.domain-row").nth(10)
    row.scroll_into_view_if_needed()
    before = page.locator("#ws-body .tab-body").evaluate("b => b.scrollTop")
    assert before > 200

    row.get_by_role("button", name="Move down row").click()

    expect(page.locator("#saved-note")).to_be_visible()
    assert page.locator("#ws-body .tab-body").evaluate("b => b.scrollTop") == before


def test_the_lint_panel_has_the_same_filter_and_all_brings_every_finding_back(
    live_server, page, big
):
    total = len(lint(formats.from_document(big_document())).findings)
    open_workspace(page, live_server, big)
    rows = page.locator("#lint-panel table.findings tbody tr")

    page.locator("#lint-panel .severity-filter a[data-severity='info']").click()
    expect(page.locator("#workspace")).to_have_attribute("data-sev", "info")
    assert set(rows.evaluate_all("l => l.map(e => e.className)")) == {"severity-info"}

    page.locator("#lint-panel .severity-filter a.sev-all").click()
    expect(page.locator("#workspace")).to_have_attribute("data-sev", "")
    expect(rows).to_have_count(total)


# --- without JavaScript ---------------------------------------------------------------


def test_without_javascript_the_panel_has_its_default_width_and_no_handle(
    live_server, plain_page, flight
):
    plain_page.set_viewport_size({"width": 1440, "height": 900})
    plain_page.goto(f"{live_server.url}/chains/{flight}/")
    expect(plain_page.locator("#ws-resizer")).to_be_hidden()
    assert panel_width(plain_page) == pytest.approx(26 * 16, abs=1)
    summary = plain_page.locator("#lint-summary").bounding_box()
    assert summary["y"] + summary["height"] <= 900


def test_without_javascript_full_width_and_the_filter_are_links(live_server, plain_page, big):
    plain_page.set_viewport_size({"width": 1280, "height": 900})
    plain_page.goto(f"{live_server.url}/chains/{big}/?tab=table")

    plain_page.locator("#wide-toggle").click()
    plain_page.wait_for_url("**wide=1**")
    expect(plain_page.locator("#ws-body")).to_have_class("ws-body wide")
    plain_page.locator("#lint-summary .severity-filter a[data-severity='error']").click()

    plain_page.wait_for_url("**sev=error**")
    assert "wide=1" in plain_page.url
    rows = plain_page.locator("#lint-panel table.findings tbody tr")
    assert set(rows.evaluate_all("l => l.map(e => e.className)")) == {"severity-error"}
    assert not page_scrolls_sideways(plain_page)
