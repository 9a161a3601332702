"""A real naive client's harness report in the app: uploaded, its failing schedule read, and
its divergence opened in the simulator at that point."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from chains.core import formats
from chains.core.sim.schedules import schedules
from chains.harness.report import as_json
from chains.harness.runner import Client, Target, provider_started, run_schedules
from chains.models import Chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "fixtures" / "harness"
SHOTS = Path("/tmp/shots")
LOST = "book call 1: response lost after the provider applied it"


@pytest.fixture(scope="module")
def naive_report(tmp_path_factory) -> Path:
    """The naive client's report on the run without a fault and the one that loses the
    booking's answer, from real runs against the stand-in provider."""
    spec = formats.load((SAMPLES / "booking.yaml").read_bytes(), filename="booking.yaml").chains[0]
    chosen = [s for s in schedules(spec, 1) if s.label in ("no fault", LOST)]
    folder = tmp_path_factory.mktemp("harness")
    client = Client(
        [sys.executable, str(SAMPLES / "naive_client.py")], {"CLIENT_TIMEOUT": "1"}, timeout=30
    )
    with provider_started([sys.executable, str(SAMPLES / "provider.py"), "--port", "0"]) as url:
        results = run_schedules(spec, chosen, client, Target(url, hold_seconds=1.2), folder)
    path = folder / "report.json"
    path.write_text(as_json(spec.id, results))
    return path


@pytest.mark.parametrize("width", [1280, 1440])
def test_a_failing_schedule_of_an_uploaded_run_opens_in_the_simulator_at_that_point(
    page, live_server, naive_report, width
):
    document = formats.to_document(
        formats.load((SAMPLES / "booking.yaml").read_bytes(), filename="b.yaml").chains[0]
    )
    chain = Chain.objects.store(document, message="r1").chain
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{chain.url()}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"harness-workspace-{width}.png"))
    page.click("#harness-link")
    page.set_input_files("input[name=report]", str(naive_report))
    page.click("#harness-form button[type=submit]")
    expect(page.locator("#harness-counts")).to_contain_text("2 schedules: 1 clean, 1 diverged")
    page.click("#only-diverged")
    failing = page.locator("#harness-results > li")
    expect(failing).to_have_count(1)
    expect(failing).to_contain_text(LOST)
    expect(failing.locator(".kind").first).to_have_text("forbidden_dispatch")
    page.screenshot(path=str(SHOTS / f"harness-{width}.png"), full_page=True)
    failing.locator("a.simulator-link").first.click()
    expect(page).to_have_url(re.compile(r"/simulate\?r=1&s="))
    expect(page.locator("#timeline")).to_contain_text("book")
