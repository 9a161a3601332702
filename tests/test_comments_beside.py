"""Comments beside their element: the selected element's threads in the side panel."""

from __future__ import annotations

import pytest

from chains.models import Comment

pytestmark = pytest.mark.django_db


@pytest.fixture
def thread(flight, people):
    return Comment.objects.post(
        flight.head(), people["reviewer"], "is this really unkeyed?", anchor="action:book_trip"
    )


def beside(body: str) -> str:
    return body.split('id="element-comments"')[1].split("</section>")[0]


def test_the_selected_element_s_threads_are_shown_beside_it(signed_in, people, flight, thread):
    body = signed_in(people["reviewer"]).get(f"{flight.url()}?select=action:book_trip").content
    shown = beside(body.decode())
    assert "is this really unkeyed?" in shown and f'id="beside-{thread.pk}"' in shown


def test_a_reviewer_resolves_and_comments_beside_the_element_outside_the_disabled_editors(
    signed_in, people, flight, thread
):
    body = signed_in(people["reviewer"]).get(f"{flight.url()}?select=action:book_trip").content
    page = body.decode()
    side = page.split('id="side-pane"')[1].split("</aside>")[0]
    editors_end = side.index("</fieldset>")
    assert side.index('id="element-comments"') > editors_end  # not inside the disabled fieldset
    assert "Resolve" in beside(page) and 'id="element-comment-form"' in beside(page)


def test_a_comment_posted_beside_an_element_is_anchored_to_it(signed_in, people, flight):
    reviewer = signed_in(people["reviewer"])
    reviewer.post(
        f"{flight.url()}comments",
        {
            "revision": 1,
            "from": "workspace",
            "anchor": "handle:quote_id",
            "body": "does this expire?",
            "select": "handle:quote_id",
        },
    )
    assert Comment.objects.get(body="does this expire?").anchor == "handle:quote_id"


def test_another_element_s_threads_are_not_shown_beside_this_one(client, flight, thread):
    body = client.get(f"{flight.url()}?select=handle:quote_id").content.decode()
    assert "is this really unkeyed?" not in beside(body)
