"""Campaign pages in a real browser: launched through htmx, polled to the result, cancelled.

Most tests stub the task queue and run the shards in the test thread, so they
can stop at each point the page shows (queued, one shard done, done); the last
one sends real messages through the configured broker (the filesystem
transport locally, Redis under CI=true) to a worker thread.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from django.conf import settings
from kombu.exceptions import OperationalError
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain, Exploration
from chains.tasks import explore_shard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

UNSAFE = Path(settings.BASE_DIR) / "fixtures" / "unsafe-retry-booking.yaml"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture
def unsafe() -> str:
    document = formats.load(UNSAFE.read_bytes(), filename=UNSAFE.name).chains[0]
    return Chain.objects.store(formats.to_document(document)).chain.key


@pytest.fixture
def sent(monkeypatch):
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: calls.append(args))
    return calls


def test_a_campaign_is_followed_until_it_completes_and_its_counterexample_opens(
    page: Page, live_server, unsafe, sent
):
    page.goto(f"{live_server.url}/chains/{unsafe}/campaigns/")
    page.get_by_label("Max faults").fill("1")
    page.get_by_label("Shards").fill("2")
    page.get_by_role("button", name="Launch").click()

    page.wait_for_url(f"**/chains/{unsafe}/campaigns/*/")
    expect(page.locator("#campaign-status")).to_have_text("queued")
    bar = page.locator("#progress progress")
    expect(bar).to_have_attribute("value", "0")
    first, second = sorted(sent)
    explore_shard.apply(args=first)
    expect(page.locator("#progress")).to_contain_text("1 of 2 shards done", timeout=10_000)
    states = int(bar.get_attribute("value") or 0)
    cap = math.ceil(settings.CAMPAIGN_MAX_STATES / 2) * 2  # max_states per shard, times 2
    assert states > 0 and bar.get_attribute("max") == str(cap)  # states, out of the cap
    explore_shard.apply(args=second)

    expect(page.locator("#campaign-status")).to_have_text("done", timeout=10_000)
    expect(bar).to_have_attribute("value", "1")  # a finished search fills the bar
    expect(bar).to_have_attribute("max", "1")
    expect(page.locator(".terminal-chart meter")).to_have_count(2)
    assert page.locator("#progress").get_attribute("hx-get") is None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "campaign-done.png"), full_page=True)

    page.get_by_role("link", name="open in the simulator").first.click()
    expect(page.locator("#findings .violation-focus")).to_contain_text("unkeyed_redispatch")
    expect(page.locator("#findings")).to_contain_text(
        "row U2 (timeout -> retry) re-dispatched unkeyed commit book_room"
    )


# A select whose handle no step's result fills (the explorer's coverage tests share it).
NO_OPTIONS = (Path(__file__).resolve().parents[1] / "core/sim/fixtures/no-options.yaml").read_text()


def test_a_clean_campaign_with_a_step_never_reached_reads_not_a_pass(page: Page, live_server, sent):
    document = formats.load(NO_OPTIONS, format="yaml").chains[0]
    key = Chain.objects.store(formats.to_document(document)).chain.key
    page.goto(f"{live_server.url}/chains/{key}/campaigns/")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(f"**/chains/{key}/campaigns/*/")
    explore_shard.apply(args=sent[0])

    expect(page.locator("#campaign-status")).to_have_text("done", timeout=10_000)
    expect(page.locator("#not-a-pass")).to_contain_text("Not a pass.")
    expect(page.locator(".campaign-result .notice")).to_have_count(0)
    expect(page.locator("#never-reached")).to_have_text("Never reached: create_order")
    expect(page.locator("#coverage-warnings")).to_contain_text(
        "select_offer never received options"
    )
    expect(page.locator("meter.coverage-steps")).to_have_attribute("value", "2")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "campaign-incomplete.png"), full_page=True)


def test_cancel_stops_the_polling_campaign_in_place(page: Page, live_server, unsafe, sent):
    page.goto(f"{live_server.url}/chains/{unsafe}/campaigns/")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(f"**/chains/{unsafe}/campaigns/*/")

    page.get_by_role("button", name="Cancel").click()

    expect(page.locator("#campaign-status")).to_have_text("cancelled")
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    assert Exploration.objects.get().status == "cancelled"


def test_a_launch_with_the_queue_down_says_so_in_place_of_the_form(
    page: Page, live_server, unsafe, monkeypatch
):
    def refuse(*args):
        raise OperationalError("Connection refused")

    monkeypatch.setattr(explore_shard, "delay", refuse)
    page.goto(f"{live_server.url}/chains/{unsafe}/campaigns/")
    page.get_by_role("button", name="Launch").click()

    expect(page.locator("#launch-error")).to_contain_text(
        "the worker queue is down: OperationalError: Connection refused"
    )
    assert page.url.endswith(f"/chains/{unsafe}/campaigns/")
    expect(page.locator(".campaign-failed")).to_have_count(1)


def test_a_real_worker_runs_a_campaign_the_page_follows_to_the_end(
    page: Page, live_server, unsafe, celery_worker
):
    page.goto(f"{live_server.url}/chains/{unsafe}/campaigns/")
    page.get_by_label("Shards").fill("2")
    page.get_by_role("button", name="Launch").click()

    page.wait_for_url(f"**/chains/{unsafe}/campaigns/*/")
    expect(page.locator("#campaign-status")).to_have_text("done", timeout=60_000)
    expect(page.locator("#progress progress")).to_have_attribute("value", "1")
    expect(page.locator("#progress progress")).to_have_attribute("max", "1")
    expect(page.locator(".violation-list")).to_contain_text("unkeyed_redispatch")


@pytest.mark.parametrize("width", [1280, 1440])
def test_a_violation_reads_cause_first_and_its_row_opens_in_the_workspace(
    page: Page, live_server, unsafe, sent, width
):
    chain = Chain.objects.get(key=unsafe)
    exploration = Exploration.objects.launch(chain.head(), {"max_faults": 1}, shards=1)
    explore_shard.apply(args=(exploration.pk, 0))  # the explorer's own cause: row U2's retry

    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/chains/{unsafe}/campaigns/{exploration.pk}/")
    violation = page.locator(".violation.explained").first
    expect(violation.locator(".cause-line li")).to_have_text(
        ["book_room on timeout: row U2 -> retry verdict_table[U2]"]
    )
    violation.get_by_text("Counterexample of 2 events").click()
    expect(violation.locator(".scenario-events li")).to_have_text(
        ["observes http:200 at find_room", "observes timeout at book_room"]
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"campaign-cause-{width}.png"), full_page=True)

    violation.get_by_role("link", name="verdict_table[U2]").click()
    page.wait_for_url(f"**/chains/{unsafe}/?select=row%3AU2&tab=table")
    expect(page.locator("#workspace")).to_have_attribute("data-select", "row:U2")
