"""A reviewer resolves a comment beside its element, in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from chains.models import Comment
from tests.browser.pages import signed_in_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_resolves_a_thread_beside_the_element_it_marks(
    browser, live_server, flight, people
):
    thread = Comment.objects.post(
        flight.head(), people["editor"], "is this really unkeyed?", anchor="action:book_trip"
    )
    context = signed_in_context(browser, live_server, people["reviewer"])
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}{flight.url()}?select=action:book_trip")
    beside = page.locator("#element-comments")
    expect(beside).to_contain_text("is this really unkeyed?")
    beside.get_by_role("button", name="Resolve").click()
    expect(page.locator("#element-comments .resolved-note")).to_contain_text("resolved")
    thread.refresh_from_db()
    assert thread.resolved_at is not None
    context.close()
