"""Design review in a real browser: request, comment on the graph, approve, then edit again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from chains.core import formats
from chains.models import Chain, Role, Team
from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLIGHT = Path(settings.BASE_DIR) / "fixtures" / "flight-roundtrip.yaml"


@pytest.fixture
def team_pages(browser, live_server):
    """A page per person of a team that owns the flight chain: its editor and its reviewer."""
    lead = get_user_model().objects.create_user("lead")
    team = Team.objects.found("Flight desk", owner=lead, slug="flight-desk")
    document = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    Chain.objects.store(formats.to_document(document), team=team)
    contexts, pages = [], {}
    for name, role in (("eddie", Role.EDITOR), ("rita", Role.REVIEWER)):
        user = get_user_model().objects.create_user(name)
        team.add(user, role)
        context = signed_in_context(
            browser, live_server, user, viewport={"width": 1440, "height": 900}
        )
        contexts.append(context)
        pages[name] = context.new_page()
    yield pages
    for context in contexts:
        context.close()


def node(page: Page, key: str):
    return page.locator(f'#canvas [id="{key}"]')


def test_an_editor_asks_a_reviewer_who_comments_on_the_graph_and_approves(team_pages, live_server):
    chain = f"{live_server.url}/chains/flight_roundtrip"
    editor, reviewer = team_pages["eddie"], team_pages["rita"]

    editor.goto(f"{chain}/reviews/")
    form = editor.locator("#request-form")
    form.get_by_label("rita").check()
    form.get_by_label("Note for the reviewers").fill("first cut of the round trip")
    form.get_by_role("button", name="Request review").click()
    expect(editor).to_have_url(re.compile(r"/reviews/\d+/$"))
    expect(editor.locator("#review-state")).to_have_text("open")
    review_url = editor.url

    reviewer.goto(f"{chain}/")
    node(reviewer, "handle:quote_id").click()
    expect(node(reviewer, "handle:quote_id")).to_have_class(re.compile(r"\bselected\b"))
    panel = reviewer.locator("#comments-panel")
    expect(panel.get_by_label("On")).to_have_value("handle:quote_id")
    panel.get_by_label("Comment", exact=True).fill("@eddie does a seat change re-mint this?")
    panel.get_by_role("button", name="Comment", exact=True).click()
    expect(node(reviewer, "handle:quote_id")).to_have_class(re.compile(r"\bhas-comment\b"))
    thread = panel.locator('.thread[data-anchor="handle:quote_id"]')
    expect(thread.locator(".mention")).to_have_text("@eddie")
    expect(thread.locator(".byline")).to_contain_text("rita")

    reviewer.goto(review_url)
    expect(reviewer.locator("#approvable")).to_contain_text("may be approved")
    reviewer.get_by_role("button", name="Approve").click()
    expect(reviewer.locator("#review-state")).to_have_text("approved")
    expect(reviewer.locator("#approved-note")).to_contain_text("approved-1")

    editor.goto(f"{chain}/")
    expect(editor.locator("#approved-badge")).to_have_text("approved r1")
    expect(editor.locator("#since-approved")).to_have_count(0)
    editor.locator("details.adders > summary").click()
    editor.locator("#add-handle-form").get_by_label("Handle id").fill("loyalty_ref")
    editor.get_by_role("button", name="Add handle").click()
    expect(editor.locator("h1 .revision")).to_have_text("revision 2")
    expect(editor.locator("#approved-badge")).to_have_text("approved r1")
    since = editor.get_by_role("link", name="what changed since r1")
    expect(since).to_have_attribute(
        "href", "/t/flight-desk/chains/flight_roundtrip/diff?from=1&to=2"
    )
    since.click()
    expect(editor.locator("h1")).to_have_text("Revision 1 → 2")
    expect(editor.locator("#changes")).to_contain_text("loyalty_ref")
