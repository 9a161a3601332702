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
from playwright.sync_api import expect

from chains.core import formats
from chains.core.sim.explorer import Bounds
from chains.models import Chain, Comment, Exploration, Review, Role, Team
from chains.views.workspace import TABS
from tests.browser.pages import Watch, signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
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
    live_server, watch
):
    """The negative control: were nothing ever reported, the other tests would prove nothing."""
    watch.visit(f"{live_server.url}/")
    watch.page.evaluate("() => document.body.setAttribute('style', 'color: red')")
    with pytest.raises(AssertionError, match="style-src"):
        watch.check("an inline style")
    watch.page.evaluate("() => setTimeout(() => { throw new Error('boom'); })")
    with pytest.raises(AssertionError, match="boom"):
        watch.check("a script error")
    watch.page.evaluate("() => fetch('/static/no-such-file.js').catch(() => null)")
    with pytest.raises(AssertionError, match="404"):
        watch.check("a missing file")


def test_the_chain_list_teams_tokens_import_and_new_chain_pages_are_quiet(
    live_server, watch, flight
):
    for path in (
        "/",
        "/teams/",
        "/teams/flight-desk/",
        "/account/tokens/",
        "/chains/import/",
        "/chains/new/",
    ):
        watch.visit(live_server.url + path)


def test_every_workspace_tab_and_both_views_are_quiet(live_server, watch, flight):
    chain = live_server.url + flight.url()
    for tab in TABS:
        watch.visit(f"{chain}?tab={tab}")
        expect(watch.page.locator("#canvas svg")).to_be_visible()
    watch.visit(f"{chain}?view=flow")
    watch.visit(f"{chain}?select=handle:search_token")


def test_the_workspace_stays_quiet_after_an_htmx_edit_a_selection_and_a_tab(
    live_server, watch, flight
):
    page = watch.page
    watch.visit(live_server.url + flight.url())
    page.locator("details.adders > summary").click()
    form = page.locator("#add-handle-form")
    form.get_by_label("Handle id").fill("audit_ref")
    form.get_by_role("button", name="Add handle").click()
    expect(page.locator('#canvas [id="handle:audit_ref"]')).to_have_count(1)
    page.wait_for_load_state("networkidle")
    watch.check("after an htmx edit")

    page.locator('#canvas [id="handle:search_token"]').click()
    expect(page.locator("#cascade-list")).to_contain_text("quote_id")
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Table").click()
    expect(page.locator("#tab-table")).to_be_visible()
    page.get_by_role("link", name="Flow", exact=True).click()
    expect(page.locator('#canvas [id="action:book_trip"]')).to_have_count(1)
    page.wait_for_load_state("networkidle")
    watch.check("after selecting a node, a tab and the flow view")


def test_the_simulator_campaign_review_comment_people_and_diff_pages_are_quiet(
    live_server, watch, flight
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
        watch.visit(chain + path)


def test_the_sign_in_page_is_quiet_when_signed_out(live_server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        watch = Watch(context.new_page())
        watch.visit(f"{live_server.url}/accounts/login/?next=/")
    finally:
        context.close()


def test_the_403_and_404_pages_are_quiet(live_server, browser, flight):
    """As rita, a reviewer: a chain that is not there, and an edit her role does not allow."""
    rita = get_user_model().objects.get(username="rita")
    context = signed_in_context(browser, live_server, rita, viewport={"width": 1440, "height": 900})
    try:
        watch = Watch(context.new_page())
        watch.visit(f"{live_server.url}/t/flight-desk/chains/no_such_chain/", status=404)
        expect(watch.page.locator("#ask-access")).to_be_visible()

        watch.visit(live_server.url + flight.url())
        watch.document = live_server.url + flight.url("edit")
        with watch.page.expect_navigation():
            watch.page.evaluate(POST_AN_EDIT)
        expect(watch.page.locator("#role-needed")).to_contain_text("needs the editor role")
        watch.page.wait_for_load_state("networkidle")
        watch.check("the 403 page")
    finally:
        context.close()
