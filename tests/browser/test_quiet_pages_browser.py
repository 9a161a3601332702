"""Every page in a real browser, quiet: no error, no blocked style or script, no failed load.

The watch (tests/browser/pages.py) records what Chromium reports: console
errors and warnings (a blocked inline style, a missing favicon, a failed fetch
all land there), uncaught script errors, ``securitypolicyviolation`` events
(recorded by an init script, since some violations only show there), a
Permissions-Policy Chromium does not understand, and responses of 400 or more
for anything a page loaded after the document; each visit also checks that
the Content-Security-Policy was sent at all, or a quiet console would prove
nothing. The tests walk every page of the app on the flight fixture, every
workspace tab, and the pages after the inputs that change them (an htmx edit,
a selection, simulator steps, the wizard's fit, a failed sign-in), as a
signed-in administrator; the sign-in page signed out; the 403 and 404 pages
as a reviewer. A negative control proves the watch sees what it should.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.core.sim.explorer import Bounds
from chains.models import Chain, Comment, Exploration, Review, Role, Team
from chains.views.workspace import TABS
from tests.browser.pages import Watch, signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
OPTIONS = {"options": [{"id": "opt_1", "key": {"rank": 1}}, {"id": "opt_2", "key": {"rank": 2}}]}
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


def node(page: Page, key: str):
    return page.locator(f'#canvas [id="{key}"]')


def test_the_watch_sees_an_inline_style_a_script_error_and_a_missing_file(live_server, watch):
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


def test_the_chain_list_teams_tokens_import_and_wizard_pages_are_quiet(live_server, watch, flight):
    for path in (
        "/",
        "/teams/",
        "/teams/flight-desk/",
        "/account/tokens/",
        "/chains/import/",
        "/chains/new/",
    ):
        watch.visit(live_server.url + path)
    watch.page.get_by_role("button", name="Check the fit").click()
    expect(watch.page.locator("#key")).to_be_visible()
    watch.check("the wizard's fit result")


def test_every_workspace_tab_both_views_and_a_selection_are_quiet(live_server, watch, flight):
    page, chain = watch.page, live_server.url + flight.url()
    for tab in TABS:
        watch.visit(f"{chain}?tab={tab}")
        expect(page.locator("#canvas svg")).to_be_visible()
    watch.visit(f"{chain}?view=flow")
    expect(node(page, "action:book_trip")).to_have_count(1)
    watch.visit(f"{chain}?select=handle:search_token")
    expect(page.locator("#cascade-list")).to_contain_text("quote_id")


def test_the_workspace_stays_quiet_after_an_htmx_edit_a_selection_and_a_tab(
    live_server, watch, flight
):
    page, chain = watch.page, live_server.url + flight.url()
    watch.visit(chain)
    page.locator("details.adders > summary").click()
    form = page.locator("#add-handle-form")
    form.get_by_label("Handle id").fill("audit_ref")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/edit")) as sent:
        form.get_by_role("button", name="Add handle").click()
    expect(node(page, "handle:audit_ref")).to_have_count(1)
    # The POST carries the CSRF header from <body hx-headers>, and htmx swapped its answer in.
    token = page.locator("body").get_attribute("hx-headers") or "{}"
    assert sent.value.headers.get("x-csrftoken") == json.loads(token)["X-CSRFToken"]
    assert sent.value.headers.get("hx-request") == "true"
    page.wait_for_load_state("networkidle")
    watch.check("after an htmx edit")

    node(page, "handle:search_token").click()
    expect(page.locator("#cascade-list")).to_contain_text("quote_id")
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Table").click()
    expect(page.locator("#tab-table")).to_be_visible()
    page.get_by_role("link", name="Flow", exact=True).click()
    expect(node(page, "action:book_trip")).to_have_count(1)
    page.wait_for_load_state("networkidle")
    watch.check("after selecting a node, a tab and the flow view")

    watch.visit(f"{chain}diff")
    expect(page.locator("main")).to_contain_text("audit_ref")


def test_the_simulator_after_a_few_inputs_is_quiet(live_server, watch, flight):
    page = watch.page
    watch.visit(live_server.url + flight.url("simulate"))
    for event, then in [
        ({"observe": OPTIONS}, "select at select_outbound"),
        ({"select": "opt_1"}, "observe at return_search"),
        ({"observe": OPTIONS}, "select at select_return"),
    ]:
        page.locator(f"#palette button[value='{json.dumps(event)}']").click()
        expect(page.locator("#waiting h2")).to_contain_text(then)
    watch.check("the simulator after three inputs")


def test_the_campaign_review_comment_people_and_diff_pages_are_quiet(live_server, watch, flight):
    chain = live_server.url + flight.url()
    campaign = Exploration.objects.get(revision__chain=flight)
    review = Review.objects.get(chain=flight)
    for path in (
        "campaigns/",
        f"campaigns/{campaign.pk}/",
        "reviews/",
        f"reviews/{review.pk}/",
        "comments?anchor=action:initiate_hold",
        "people",
        "diff",
    ):
        watch.visit(chain + path)


def test_the_api_docs_load_swagger_ui_from_our_static_files_quietly(live_server, watch):
    watch.visit(f"{live_server.url}/api/docs")
    expect(watch.page.locator("#swagger-ui")).to_contain_text("Chain Designer API")
    expect(watch.page.locator("#swagger-ui")).to_contain_text("/api/chains")
    watch.check("the API docs")


def test_the_sign_in_page_and_a_failed_sign_in_are_quiet_when_signed_out(live_server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        watch = Watch(context.new_page())
        watch.visit(f"{live_server.url}/accounts/login/?next=/")
        watch.page.get_by_label("Username").fill("nobody")
        watch.page.get_by_label("Password").fill("wrong")
        watch.page.get_by_role("button", name="Sign in").click()
        expect(watch.page.locator("#login-error")).to_be_visible()
        watch.check("a failed sign-in")
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
