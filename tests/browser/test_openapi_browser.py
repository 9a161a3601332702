"""Actions from OpenAPI in a real browser: upload, tick, confirm an effect, add; and a
document as large as a real provider's, filtered by a tag and ticked across pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from chains.core import formats
from chains.models import Chain
from chains.services.access import spec_of
from tests.browser.pages import Watch
from tests.core.sim.builders import fixture
from tests.test_openapi_page import provider_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SKYLOOM = Path(settings.BASE_DIR) / "fixtures" / "openapi" / "skyloom-air.yaml"
SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
LOOKED_AT = Path("/tmp/shots")  # where the screenshots of the large document go, to be looked at


@pytest.mark.parametrize("width", [1280, 1440])
def test_ticked_operations_are_added_to_the_chain(page, live_server, width):
    chain = Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{chain.url()}")
    page.click("text=Add action, handle or gate")
    page.click("#openapi-link")
    page.set_input_files("input[name=document]", str(SKYLOOM))
    page.click("#openapi-form button[type=submit]")
    expect(page.locator("#operations tbody tr")).to_have_count(13)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"openapi-{width}.png"), full_page=True)
    page.check("#op-book_order input[name=pick]")
    page.check("#op-refund_payment input[name=pick]")
    page.select_option("#op-refund_payment select", "compensate")
    page.fill("#openapi-filter", "refund")
    page.press("#openapi-filter", "Enter")  # the filter, not the add button, answers Enter
    expect(page.locator("#operations tbody tr")).to_have_count(1)
    page.click("#openapi-pick button[name=add]")
    expect(page).to_have_url(f"{live_server.url}{chain.url()}")
    assert Chain.objects.get(pk=chain.pk).head().number == 2


@pytest.mark.parametrize("width", [1280, 1440])
def test_forty_operations_of_a_large_document_are_ticked_across_two_pages_and_added(
    page, live_server, width, tmp_path
):
    chain = Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain
    document = tmp_path / "provider.json"
    document.write_text(provider_document(padding=100))
    assert document.stat().st_size > 4_000_000
    watch = Watch(page)
    page.set_viewport_size({"width": width, "height": 900})
    watch.visit(f"{live_server.url}{chain.url('openapi')}")
    page.set_input_files("input[name=document]", str(document))
    page.click("#openapi-form button[type=submit]")
    expect(page.locator("#openapi-count")).to_have_text("Operations 1–100 of 468, page 1 of 5.")
    page.select_option("#openapi-tag", "Refunds")
    page.click("#openapi-apply")
    expect(page.locator("#openapi-count")).to_contain_text("1–100 of 117 matching the tag")
    ticks = page.locator("#operations tbody input[name=pick]")
    for row in range(23):
        ticks.nth(row).check()
    expect(page.locator("#openapi-ticked")).to_contain_text("23 ticked (23 on this page, 0 on")
    page.select_option("#op-create_refunds1 select", "compensate")
    shoot(page, f"openapi-large-{width}-1-first-page.png")
    page.click("#openapi-next")
    expect(page.locator("#openapi-count")).to_contain_text("101–117 of 117")
    expect(page.locator("#openapi-ticked")).to_contain_text("23 ticked (0 on this page, 23 on")
    expect(ticks).to_have_count(17)
    for row in range(17):
        ticks.nth(row).check()
    expect(page.locator("#openapi-ticked")).to_contain_text("40 ticked (17 on this page, 23 on")
    shoot(page, f"openapi-large-{width}-2-second-page.png")
    page.check("#openapi-only-ticked")
    page.click("#openapi-apply")
    expect(page.locator("#openapi-count")).to_contain_text("1–40 of 40 ticked and matching")
    shoot(page, f"openapi-large-{width}-3-only-ticked.png")
    watch.check("the list of the ticked ones")
    page.click("#openapi-add")
    expect(page).to_have_url(f"{live_server.url}{chain.url()}")
    head = Chain.objects.get(pk=chain.pk).head()
    added = [a for a in spec_of(head).actions if a.id.startswith("create_refunds")]
    assert head.number == 2 and len(added) == 40
    assert {a.id: a.effect for a in added}["create_refunds1"] == "compensate"


def shoot(page, name: str) -> None:
    """The page as a person sees it from its top, and from its bottom (the bar)."""
    LOOKED_AT.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(LOOKED_AT / name))
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.screenshot(path=str(LOOKED_AT / name.replace(".png", "-end.png")))
