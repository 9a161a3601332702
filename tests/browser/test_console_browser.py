"""Every page in a real browser with a quiet console: no error, no CSP violation, no failed load.

The watch records what Chromium reports: console messages of type error
(a blocked inline style, a missing favicon, a failed fetch all land there),
uncaught script errors, ``securitypolicyviolation`` events (recorded by an
init script, since some violations only show there) and responses of 400
or more for anything the page loaded after the document itself. It walks
every page of the app on the flight fixture, every workspace tab, and the
workspace after an htmx edit, as a signed-in administrator; the sign-in
page signed out. A negative control proves the watch sees what it should.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.core.sim.explorer import Bounds
from chains.models import Chain, Comment, Exploration, Review, Role, Team
from chains.views.workspace import TABS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} ` +
    `at ${event.sourceFile}:${event.lineNumber}`
  );
});
"""
# A plain form POST to the edit address, as a page without the editor role has no edit form.
POST_AN_EDIT = """
() => {
  const field = (name, value) => Object.assign(document.createElement("input"), {name, value});
  const form = Object.assign(document.createElement("form"), {method: "post", action: "edit"});
  const token = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  form.append(field("csrfmiddlewaretoken", token), field("op", "add_handle"));
  document.body.append(form);
  form.submit();
}
"""


class Console:
    """Everything that went wrong on a page since the last check."""

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
        if message.type in ("error", "warning") or "Content Security Policy" in message.text:
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response) -> None:
        if response.status >= 400 and response.url != self.document:
            self.problems.append(f"{response.status} for {response.url}")

    def visit(self, url: str, status: int = 200) -> None:
        self.document = url
        response = self.page.goto(url)
        assert response is not None and response.status == status, f"{url}: {response}"
        self.page.wait_for_load_state("networkidle")
        self.check(url)

    def check(self, where: str) -> None:
        """Fail on anything reported so far (violation events arrive as tasks: let them run)."""
        self.page.evaluate("() => new Promise((done) => setTimeout(done, 50))")
        self.problems += self.page.evaluate("() => window.cspViolations || []")
        self.page.evaluate("() => { window.cspViolations = []; }")
        found, self.problems = self.problems, []
        assert found == [], f"{where}: {found}"


@pytest.fixture
def console(page: Page) -> Console:
    page.set_viewport_size({"width": 1440, "height": 900})
    return Console(page)


@pytest.fixture
def flight(admin_user) -> Chain:
    """The flight chain with a review, a comment and a finished campaign to show."""
    team = Team.objects.found("Flight desk", owner=admin_user, slug="flight-desk")
    rita = get_user_model().objects.create_user("rita")
    team.add(rita, Role.REVIEWER)
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    chain = Chain.objects.store(formats.to_document(document), team=team).chain
    Comment.objects.post(chain.head(), rita, "why a hold here?", anchor="action:initiate_hold")
    Review.objects.request(chain.head(), admin_user, ["rita"], "first cut")
    Exploration.objects.create(
        revision=chain.head(), bounds={**Bounds().__dict__}, shard_count=1, status="done"
    )
    return chain


def test_the_console_watch_sees_an_inline_style_a_script_error_and_a_missing_file(
    live_server, console
):
    """The negative control: were nothing ever reported, the other tests would prove nothing."""
    console.visit(f"{live_server.url}/")
    console.page.evaluate("() => document.body.setAttribute('style', 'color: red')")
    with pytest.raises(AssertionError, match="style-src"):
        console.check("an inline style")
    console.page.evaluate("() => setTimeout(() => { throw new Error('boom'); })")
    with pytest.raises(AssertionError, match="boom"):
        console.check("a script error")
    console.page.evaluate("() => fetch('/static/no-such-file.js').catch(() => null)")
    with pytest.raises(AssertionError, match="404"):
        console.check("a missing file")


def test_the_chain_list_teams_tokens_import_and_new_chain_pages_are_quiet(
    live_server, console, flight
):
    for path in (
        "/",
        "/teams/",
        "/teams/flight-desk/",
        "/account/tokens/",
        "/chains/import/",
        "/chains/new/",
    ):
        console.visit(live_server.url + path)


def test_every_workspace_tab_and_both_views_are_quiet(live_server, console, flight):
    chain = live_server.url + flight.url()
    for tab in TABS:
        console.visit(f"{chain}?tab={tab}")
        expect(console.page.locator("#canvas svg")).to_be_visible()
    console.visit(f"{chain}?view=flow")
    console.visit(f"{chain}?select=handle:search_token")


def test_the_workspace_stays_quiet_after_an_htmx_edit_a_selection_and_a_tab(
    live_server, console, flight
):
    page = console.page
    console.visit(live_server.url + flight.url())
    page.locator("details.adders > summary").click()
    form = page.locator("#add-handle-form")
    form.get_by_label("Handle id").fill("audit_ref")
    form.get_by_role("button", name="Add handle").click()
    expect(page.locator('#canvas [id="handle:audit_ref"]')).to_have_count(1)
    page.wait_for_load_state("networkidle")
    console.check("after an htmx edit")

    page.locator('#canvas [id="handle:search_token"]').click()
    expect(page.locator("#cascade-list")).to_contain_text("quote_id")
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Table").click()
    expect(page.locator("#tab-table")).to_be_visible()
    page.get_by_role("link", name="Flow", exact=True).click()
    expect(page.locator('#canvas [id="action:book_trip"]')).to_have_count(1)
    page.wait_for_load_state("networkidle")
    console.check("after selecting a node, a tab and the flow view")


def test_the_simulator_campaign_review_comment_people_and_diff_pages_are_quiet(
    live_server, console, flight
):
    chain = live_server.url + flight.url()
    campaign = Exploration.objects.get(revision__chain=flight)
    review = Review.objects.get(chain=flight)
    for path in (
        "simulate",
        "campaigns/",
        f"campaigns/{campaign.pk}/",
        "reviews/",
        f"reviews/{review.pk}/",
        "comments?anchor=action:initiate_hold",
        "people",
        "diff",
    ):
        console.visit(chain + path)


def test_the_sign_in_page_is_quiet_when_signed_out(live_server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        console = Console(context.new_page())
        console.visit(f"{live_server.url}/accounts/login/?next=/")
    finally:
        context.close()


def test_the_403_and_404_pages_are_quiet(live_server, browser, flight):
    """As rita, a reviewer: a chain that is not there, and an edit her role does not allow."""
    signed = Client()
    signed.force_login(get_user_model().objects.get(username="rita"))
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    cookie = signed.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    try:
        console = Console(context.new_page())
        console.visit(f"{live_server.url}/t/flight-desk/chains/no_such_chain/", status=404)
        expect(console.page.locator("#ask-access")).to_be_visible()

        console.visit(live_server.url + flight.url())
        console.document = live_server.url + flight.url("edit")
        with console.page.expect_navigation():
            console.page.evaluate(POST_AN_EDIT)
        expect(console.page.locator("#role-needed")).to_contain_text("needs the editor role")
        console.page.wait_for_load_state("networkidle")
        console.check("the 403 page")
    finally:
        context.close()
