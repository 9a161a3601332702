"""The simulator page in a real browser: a failure walked through step by step, then kept.

Drives chains/views/simulator.py through Debian's Chromium on the flight fixture:
the quote expires at revalidate, the run rewinds to price_quote, the new price
needs the traveller's consent, the unkeyed booking times out, the run
reconciles and the probe finds the trip. Screenshots land in ``var/screenshots/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain, SavedScenario

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
OPTIONS = {"options": [{"id": "opt_1", "key": {"rank": 1}}, {"id": "opt_2", "key": {"rank": 2}}]}
SUCCESS = {"observe": {}}


@pytest.fixture
def flight() -> str:
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(document)).chain.key


def choose(page: Page, event: dict, then: str) -> None:
    """Press the palette button that sends ``event``; wait until the run waits for ``then``."""
    page.locator(f"#palette button[value='{json.dumps(event)}']").click()
    expect(page.locator("#waiting h2")).to_contain_text(then)


def graph_node(page: Page, key: str):
    return page.locator(f'#sim-canvas [id="{key}"]')


def walk_to_revalidate(page: Page) -> None:
    choose(page, {"observe": OPTIONS}, "select at select_outbound")
    choose(page, {"select": "opt_1"}, "observe at return_search")
    choose(page, {"observe": OPTIONS}, "select at select_return")
    choose(page, {"select": "opt_1"}, "observe at price_quote")
    choose(page, SUCCESS, "observe at seat_map")
    choose(page, SUCCESS, "observe at initiate_hold")
    choose(page, SUCCESS, "observe at revalidate")


def test_a_lost_booking_after_a_fare_expiry_and_a_price_consent_is_walked_through(
    page: Page, live_server, flight
):
    page.goto(f"{live_server.url}/chains/{flight}/simulate")
    expect(page.locator("#run-state")).to_have_text("running")
    walk_to_revalidate(page)

    # the fare expired at revalidate: row F3 rewinds to price_quote; the quote's line dies
    choose(page, {"observe": {"transport": "http:400", "code": "QUOTE_EXPIRED"}}, "at price_quote")
    expect(page.locator("#decided-row")).to_have_text("F3")
    expect(page.locator("#decided-verdict")).to_have_text("rewind(to: price_quote)")
    expect(page.locator("#sim-row-F3")).to_have_class("matched")
    expect(page.locator("#invalidated")).to_contain_text("quote_id#1")
    expect(graph_node(page, "handle:quote_id")).to_have_class(re.compile(r"\bsim-invalidated\b"))
    expect(graph_node(page, "handle:search_token")).to_have_class(re.compile(r"\bsim-live\b"))
    expect(graph_node(page, "action:price_quote")).to_have_class(re.compile(r"\bsim-cursor\b"))

    choose(page, SUCCESS, "observe at seat_map")
    choose(page, SUCCESS, "observe at initiate_hold")
    choose(page, SUCCESS, "observe at revalidate")

    # the new price needs consent: the run parks at the gate until the traveller answers
    price_changed = {"observe": {"transport": "http:400", "code": "FARE_PRICE_CHANGED"}}
    choose(page, price_changed, "gate price_change_consent")
    expect(page.locator("#run-state")).to_have_text("at_gate")
    expect(page.locator("#decided-row")).to_have_text("F8")
    page.locator("#gate-card").get_by_role("button", name="Answer accept").click()
    expect(page.locator("#waiting h2")).to_contain_text("observe at book_trip")

    # the unkeyed booking times out: F17 says reconcile, never retry
    choose(page, {"observe": {"transport": "timeout"}}, "probe at book_trip")
    expect(page.locator("#run-state")).to_have_text("reconciling")
    expect(page.locator("#decided-row")).to_have_text("F17")
    expect(page.locator("#decided-verdict")).to_have_text("reconcile")
    expect(page.locator("#gauges")).to_contain_text("rewinds")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOTS / "simulator-reconcile.png"))

    # the probe finds the trip: the booking landed once, the run is done
    choose(page, {"probe": {"result": "landed"}}, "The run ended: done")
    expect(page.locator("#run-state")).to_have_text("done")
    expect(graph_node(page, "action:book_trip")).to_have_class(re.compile(r"\bsim-landed\b"))
    expect(page.locator("#findings")).to_contain_text("None broken so far")
    page.screenshot(path=str(SCREENSHOTS / "simulator-done.png"), full_page=True)

    # the simulation lives in the address: a reload shows the same run
    page.reload()
    expect(page.locator("#run-state")).to_have_text("done")

    # kept as a scenario, then a revision that changes its outcome is flagged
    page.locator("#save-form input[name=name]").fill("fare expires at revalidate")
    page.locator("#save-form").get_by_role("button", name="Save").click()
    expect(page.locator("#saved-note")).to_contain_text("fare expires at revalidate")
    saved = SavedScenario.objects.get(name="fare expires at revalidate")
    assert saved.document["expect"]["state"] == "done"
    assert saved.document["expect"]["dispatches"]["book_trip"] == 1

    page.goto(f"{live_server.url}/chains/{flight}/?select=row:F17&tab=table")
    form = page.locator("#element-fields")
    form.locator("select[name='verdict_type']").select_option("dead_end")
    form.locator("input[name='verdict_reason']").fill("booking_unknown")
    form.locator("select[name='verdict_permanent']").select_option("false")
    form.get_by_role("button", name="Save").click()
    flagged = page.locator("#failing-scenarios li.changed")  # under the title
    expect(flagged).to_contain_text(
        "scenario 'fare expires at revalidate' now ends in dead_end instead of done"
    )


def test_a_timeline_event_takes_the_run_back_there_to_branch_from(page: Page, live_server, flight):
    page.goto(f"{live_server.url}/chains/{flight}/simulate")
    walk_to_revalidate(page)
    choose(page, {"observe": {"transport": "http:400", "code": "QUOTE_EXPIRED"}}, "at price_quote")

    # back to just after the first pick, then a different outbound option
    page.locator("#timeline li", has_text="select_outbound").last.locator("a").click()
    expect(page.locator("#waiting h2")).to_contain_text("observe at return_search")
    assert "s=" in page.url
    page.go_back()
    expect(page.locator("#waiting h2")).to_contain_text("observe at price_quote")


def test_crash_here_resumes_from_the_snapshot_and_the_run_goes_on(page: Page, live_server, flight):
    page.goto(f"{live_server.url}/chains/{flight}/simulate")
    choose(page, {"observe": OPTIONS}, "select at select_outbound")
    page.locator("#crash-form").get_by_role("button", name="Crash here").click()
    expect(page.locator("#last-step")).to_contain_text("crashes")
    expect(page.locator("#waiting h2")).to_contain_text("select at select_outbound")
    choose(page, {"select": "opt_2"}, "observe at return_search")
