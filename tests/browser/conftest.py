"""A real browser for tests: Debian's Chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from tests.browser.pages import Watch, signed_in_context

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


@pytest.fixture(scope="session")
def live_server(django_db_setup, live_server):
    """pytest-django's live server, started only once the test database exists.

    Started before it (the first test of a process asking for a page did so),
    the server found no in-memory database to share, and its requests opened
    connections of their own to SQLite's shared cache, which answers a read
    beside another connection's write with "table is locked" rather than
    waiting: a real worker's campaign page then failed with a 500 now and then.
    """
    return live_server


@pytest.fixture(scope="module")
def shared_connections(live_server) -> dict:
    """What a worker thread borrows here: the live server's connections (tests/conftest.py)."""
    return live_server.thread.connections_override


@pytest.fixture(autouse=True)
def one_connection(live_server):
    """The test itself uses the live server's connection to an in-memory database too.

    Django keeps a connection per thread, and while Playwright's event loop
    runs in this thread a later test may be handed a new one: the test's own
    queries would then meet the server's and a worker's writes as another
    connection of SQLite's shared cache ("table is locked").
    """
    shared = live_server.thread.connections_override
    own = {alias: connections[alias] for alias in shared}
    for alias, connection in shared.items():
        connections[alias] = connection
    yield
    for alias, connection in own.items():
        connections[alias] = connection


TRACES = Path(settings.BASE_DIR) / "var" / "traces"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so a fixture can see that the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def page(request, browser, live_server, admin_user):
    """A page signed in as an administrator.

    With ``BROWSER_TRACE=1`` a failing test leaves a Playwright trace in
    ``var/traces/`` (open it with ``playwright show-trace``): the way to see a
    failure that shows only under load.
    """
    context = signed_in_context(browser, live_server, admin_user)
    tracing = os.environ.get("BROWSER_TRACE") == "1"
    if tracing:
        context.tracing.start(screenshots=True, snapshots=True, sources=False)
    yield context.new_page()
    if tracing:
        failed = getattr(request.node, "report_call", None)
        if failed is not None and failed.failed:
            TRACES.mkdir(parents=True, exist_ok=True)
            context.tracing.stop(path=TRACES / f"{request.node.name}.zip")
        else:
            context.tracing.stop()
    context.close()


@pytest.fixture
def watch(page) -> Watch:
    """The administrator's page at 1440x900, watched for errors (tests/browser/pages.py)."""
    page.set_viewport_size({"width": 1440, "height": 900})
    return Watch(page)
