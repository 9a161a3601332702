"""What several browser tests need: a page signed in as someone, and a watch on what goes wrong."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.test import Client
from playwright.sync_api import Page


def signed_in_context(browser, live_server, user, **options):
    """A browser context of its own (its own cookies) signed in as ``user``.

    The session cookie of a forced login; ``options`` go to ``new_context``
    (a viewport, ``java_script_enabled``). The caller closes it.
    """
    signed = Client()
    signed.force_login(user)
    context = browser.new_context(**options)
    cookie = signed.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    return context


@contextmanager
def workspace_swap(page: Page) -> Iterator[None]:
    """Wait, after the block, until #workspace was swapped for a new one and htmx wired it.

    The old workspace is ``data-ready`` until the swap replaces it, so waiting for
    that mark alone may pass before the answer arrives; static/js/workspace.js
    numbers each workspace it draws (``data-render``, once htmx has settled it) and
    this waits for a higher number: the swap itself, not a guess at how long it takes.
    """
    before = page.locator("#workspace").get_attribute("data-render")
    assert before is not None, "the workspace is not drawn yet: wait for it to open first"
    yield
    page.wait_for_function(
        "n => Number(document.getElementById('workspace')?.dataset.render) > n",
        arg=int(before),
    )


RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} ` +
    `at ${event.sourceFile}:${event.lineNumber}`
  );
});
"""


class Watch:
    """Everything that went wrong on a page since the last check.

    Console errors and warnings (a blocked inline style, a missing favicon, a
    failed fetch all land there), uncaught script errors,
    ``securitypolicyviolation`` events (recorded by an init script, since some
    violations only show there), and responses of 400 or more for anything
    the page loaded after the document itself. Every visit also checks that
    the Content-Security-Policy was sent at all, or a quiet console would
    prove nothing.
    """

    def __init__(self, page: Page):
        self.page = page
        self.problems: list[str] = []
        self.document: str | None = None
        page.add_init_script(RECORD_VIOLATIONS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        page.on("response", self._response)
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))

    def _console(self, message) -> None:
        if message.location.get("url") == self.document and "Failed to load" in message.text:
            return  # an error page's own status, which the visit checks
        policy = "Content Security Policy" in message.text or "Permissions-Policy" in message.text
        if message.type in ("error", "warning") or policy:
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response) -> None:
        if response.status >= 400 and response.url != self.document:
            self.problems.append(f"{response.status} for {response.url}")

    def visit(self, url: str, status: int = 200) -> None:
        self.document = url
        response = self.page.goto(url)
        assert response is not None and response.status == status, f"{url}: {response}"
        assert "script-src 'self'" in response.headers["content-security-policy"], url
        self.page.wait_for_load_state("networkidle")
        self.check(url)

    def check(self, where: str) -> None:
        """Fail on anything reported so far (violation events arrive as tasks: let them run)."""
        self.page.evaluate("() => new Promise((done) => setTimeout(done, 50))")
        self.problems += self.page.evaluate("() => window.cspViolations || []")
        self.page.evaluate("() => { window.cspViolations = []; }")
        found, self.problems = self.problems, []
        assert found == [], f"{where}: {found}"
