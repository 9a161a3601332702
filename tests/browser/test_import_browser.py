"""The import page in a real browser: a compile with a problem is confirmed, then stored.

Screenshots of the confirmation and the result at 1280 and 1440 pixels wide
land in ``var/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.models import Chain

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOCKERS = Path(settings.BASE_DIR) / "fixtures" / "import-problems" / "parcel-lockers.md"
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def watch(page: Page) -> list[str]:
    """What the console logs as an error (a CSP violation, a script error), favicon aside."""
    complaints: list[str] = []

    def heard(message) -> None:
        if message.type == "error" and "favicon.ico" not in message.location["url"]:
            complaints.append(message.text)

    page.on("console", heard)
    page.on("pageerror", lambda error: complaints.append(str(error)))
    return complaints


@pytest.mark.parametrize("width", [1280, 1440])
def test_a_pasted_compile_with_a_problem_is_confirmed_then_its_chains_are_listed(
    live_server, page, width
):
    page.set_viewport_size({"width": width, "height": 900})
    complaints = watch(page)
    page.goto(f"{live_server.url}/chains/import/")
    page.get_by_label("File name").fill("lockers.md")
    page.get_by_label("Document text").fill(LOCKERS.read_text())
    page.get_by_role("button", name="Import").click()

    confirm = page.locator(".confirm-import")
    expect(confirm.get_by_role("heading")).to_have_text("Store 2 chains with 2 problems?")
    first = confirm.locator(".problem-list li").first
    expect(first).to_contain_text("error")
    expect(first).to_contain_text("release_slot")
    assert not Chain.objects.exists()
    screenshot(page, f"import-confirm-{width}")

    first.get_by_role("link", name="line 36").click()
    selected = page.get_by_label("Document text").evaluate(
        "t => t.value.slice(t.selectionStart, t.selectionEnd)"
    )
    assert selected.strip() == "effect: vanish"
    expect(page.locator("#line-36")).to_have_class("marked severity-error")

    confirm.get_by_role("button", name="Store 2 chains with 2 problems").click()
    stored = page.locator(".notice[role=status]")
    expect(stored).to_contain_text("Stored 2 chains")
    expect(stored.get_by_role("link", name="locker_release")).to_be_visible()
    expect(stored.get_by_role("link", name="locker_reserve")).to_be_visible()
    screenshot(page, f"import-stored-{width}")
    assert Chain.objects.count() == 2
    assert complaints == []
