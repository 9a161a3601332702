"""A real browser for tests: Debian's Chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

CHROMIUM = Path("/usr/bin/chromium")
HTMX = Path(settings.BASE_DIR) / "static" / "vendor" / "htmx" / "htmx.min.js"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require(path: Path, why: str) -> None:
    """Skip without ``path`` locally; in CI a missing browser or asset is a failure."""
    if path.exists():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{path} is missing in CI: {why}")
    pytest.skip(f"{path} is missing: {why}")


@pytest.fixture(scope="session")
def browser():
    require(CHROMIUM, "`make test` installs Debian's chromium")
    require(HTMX, "`make test` copies htmx from node_modules")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server, admin_user):
    """A page signed in as an administrator (the session cookie of a forced login)."""
    signed = Client()
    signed.force_login(admin_user)
    context = browser.new_context()
    cookie = signed.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    yield context.new_page()
    context.close()
