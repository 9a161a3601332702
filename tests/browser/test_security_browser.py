"""Every main page under the Content-Security-Policy in a real browser: nothing blocked, all works.

Chromium reports each blocked inline style, inline script or eval twice: as a
``securitypolicyviolation`` event (recorded by an init script on every page)
and as a console message naming the Content Security Policy. The tests walk
the pages on the flight fixture and fail on either, on a script error, and on
a Permissions-Policy Chromium does not understand; they also check that the
policy was sent at all, or a quiet console would prove nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.core.sim.explorer import Bounds
from chains.models import Chain, Exploration, Team
from chains.views.workspace import TABS
from tests.browser.pages import Watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"
OPTIONS = {"options": [{"id": "opt_1", "key": {"rank": 1}}, {"id": "opt_2", "key": {"rank": 2}}]}


@pytest.fixture
def flight(admin_user) -> Chain:
    team = Team.objects.found("Flight desk", owner=admin_user, slug="flight-desk")
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    return Chain.objects.store(formats.to_document(document), team=team).chain


def node(page: Page, key: str):
    return page.locator(f'#canvas [id="{key}"]')


def test_the_watch_sees_a_blocked_inline_style(live_server, watch):
    """The negative control: were nothing ever reported, the other tests would prove nothing."""
    watch.visit(f"{live_server.url}/")
    watch.page.evaluate("() => document.body.setAttribute('style', 'color: red')")
    with pytest.raises(AssertionError, match="style-src"):
        watch.check("after adding an inline style")


def test_the_list_import_wizard_teams_and_people_pages_break_no_policy(live_server, watch, flight):
    base = live_server.url
    for path in ("/", "/chains/import/", "/chains/new/", "/teams/", "/teams/flight-desk/"):
        watch.visit(base + path)
    watch.visit(f"{base}/chains/{flight.key}/people")

    watch.visit(f"{base}/chains/new/")
    watch.page.get_by_role("button", name="Check the fit").click()
    expect(watch.page.locator("#key")).to_be_visible()
    watch.check("the wizard's fit result")


def test_every_workspace_tab_the_flow_view_and_the_diff_break_no_policy_and_edits_swap(
    live_server, watch, flight
):
    page, chain = watch.page, f"{live_server.url}/chains/{flight.key}/"
    for tab in TABS:
        watch.visit(f"{chain}?tab={tab}")
        expect(page.locator("#canvas svg")).to_be_visible()
    watch.visit(f"{chain}?view=flow")
    expect(node(page, "action:book_trip")).to_have_count(1)
    watch.visit(f"{chain}?select=handle:search_token")
    expect(page.locator("#cascade-list")).to_contain_text("quote_id")

    # An htmx edit: the POST carries the CSRF header from <body hx-headers> and swaps.
    watch.visit(chain)
    page.locator("details.adders > summary").click()
    form = page.locator("#add-handle-form")
    form.get_by_label("Handle id").fill("audit_ref")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/edit")) as sent:
        form.get_by_role("button", name="Add handle").click()
    expect(node(page, "handle:audit_ref")).to_have_count(1)
    token = page.locator("body").get_attribute("hx-headers") or "{}"
    assert sent.value.headers.get("x-csrftoken") == json.loads(token)["X-CSRFToken"]
    assert sent.value.headers.get("hx-request") == "true"
    watch.check("after an htmx edit")

    watch.visit(f"{chain}diff")
    expect(page.locator("main")).to_contain_text("audit_ref")


def test_the_simulator_after_a_few_inputs_breaks_no_policy(live_server, watch, flight):
    page = watch.page
    watch.visit(f"{live_server.url}/chains/{flight.key}/simulate")
    for event, then in [
        ({"observe": OPTIONS}, "select at select_outbound"),
        ({"select": "opt_1"}, "observe at return_search"),
        ({"observe": OPTIONS}, "select at select_return"),
    ]:
        page.locator(f"#palette button[value='{json.dumps(event)}']").click()
        expect(page.locator("#waiting h2")).to_contain_text(then)
    watch.check("the simulator after three inputs")


def test_the_campaign_pages_break_no_policy(live_server, watch, flight):
    campaign = Exploration.objects.create(
        revision=flight.head(), bounds={**Bounds().__dict__}, shard_count=1, status="done"
    )
    watch.visit(f"{live_server.url}/chains/{flight.key}/campaigns/")
    watch.visit(f"{live_server.url}/chains/{flight.key}/campaigns/{campaign.pk}/")


def test_the_api_docs_load_swagger_ui_from_our_static_files_and_break_no_policy(live_server, watch):
    watch.visit(f"{live_server.url}/api/docs")
    expect(watch.page.locator("#swagger-ui")).to_contain_text("Chain Designer API")
    expect(watch.page.locator("#swagger-ui")).to_contain_text("/api/chains")
    watch.check("the API docs")


def test_the_sign_in_page_breaks_no_policy_when_signed_out(live_server, browser, flight):
    context = browser.new_context()
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
