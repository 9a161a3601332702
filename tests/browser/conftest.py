"""A real browser for tests: Debian's Chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

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


class OneAtATime:
    """The live server's application, answering one request at a time.

    The server's threads all use the test's one connection to the in-memory
    database (Django's LiveServerThread shares it), and one SQLite connection
    used by two threads at once fails ("table is locked"). A page that asks
    for something in the background (the explorer's answer beside lint, a
    finding's quick fixes) while the test clicks on made two requests at once.
    A request holds the lock until its response is closed, when Django's
    request_finished touches the connection for the last time; :meth:`idle`
    waits for the one in flight, so a test does not end, and its database is
    not flushed, under a request still answering.
    """

    def __init__(self, app: Any):
        self.app, self.lock = app, threading.Lock()

    def __call__(self, environ: dict, start_response: Any) -> Any:
        self.lock.acquire()
        try:
            return _Released(self.app(environ, start_response), self.lock)
        except BaseException:
            self.lock.release()
            raise

    def idle(self) -> None:
        with self.lock:
            pass


class _Released:
    """A response whose closing lets the next request in."""

    def __init__(self, result: Any, lock: threading.Lock):
        self.result, self.lock = result, lock

    def __iter__(self) -> Any:
        return iter(self.result)

    def close(self) -> None:
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                close()
        finally:
            self.lock.release()


@pytest.fixture(scope="session")
def live_server(django_db_setup, live_server):
    """pytest-django's live server, started only once the test database exists, answering
    one request at a time (:class:`OneAtATime`).

    Started before it (the first test of a process asking for a page did so),
    the server found no in-memory database to share, and its requests opened
    connections of their own to SQLite's shared cache, which answers a read
    beside another connection's write with "table is locked" rather than
    waiting: a real worker's campaign page then failed with a 500 now and then.
    """
    httpd = live_server.thread.httpd
    httpd.set_app(OneAtATime(httpd.get_app()))
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
    live_server.thread.httpd.get_app().idle()  # no request still answering on the connection
    for alias, connection in own.items():
        connections[alias] = connection


@pytest.fixture(autouse=True)
def explore_on_save_off(settings):
    """Pages make no background request for the explorer's answer unless a test asks
    (``explore_on_save``): its timing is not what the other tests are about, and a
    request of its own beside theirs made them wait on the one-at-a-time server."""
    settings.WORKSPACE_EXPLORE_ON_SAVE = False


@pytest.fixture
def explore_on_save(settings):
    """The workspace loads the explorer's answer after each render, as it does by default."""
    settings.WORKSPACE_EXPLORE_ON_SAVE = True


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
    context.close()  # no request starts after this; one_connection waits for one in flight


@pytest.fixture
def watch(page) -> Watch:
    """The administrator's page at 1440x900, watched for errors (tests/browser/pages.py)."""
    page.set_viewport_size({"width": 1440, "height": 900})
    return Watch(page)
