"""Comments are bounded: a maximum size, and threads and replies read a page at a time."""

from __future__ import annotations

import pytest

from chains.models import Chain, Comment, Review, ReviewError

pytestmark = pytest.mark.django_db

K = "flight_roundtrip"


@pytest.fixture
def small(settings):
    """Small limits, so a test needs a few comments rather than hundreds."""
    settings.COMMENT_MAX_CHARS = 20
    settings.COMMENTS_PER_PAGE = 2
    settings.COMMENTS_MAX_PER_PAGE = 3
    settings.COMMENT_REPLIES_SHOWN = 2
    return settings


def say(chain: Chain, people: dict, body: str, **kw) -> Comment:
    return Comment.objects.post(chain.head(), people["reviewer"], body, **kw)


def threads_of(chain: Chain, people: dict, n: int) -> list[Comment]:
    return [say(chain, people, f"thread {i}") for i in range(n)]


def api_get(client, path: str):
    return client.get(path)


def api_post(client, path: str, body: dict):
    return client.post(path, body, content_type="application/json")


# --- size --------------------------------------------------------------------------------


def test_a_comment_longer_than_the_setting_is_refused_naming_the_body(flight, people, small):
    with pytest.raises(ReviewError, match="^body: 21 characters is more than 20"):
        say(flight, people, "x" * 21)
    assert not Comment.objects.exists()


def test_a_comment_at_the_setting_is_kept(flight, people, small):
    assert say(flight, people, "x" * 20).body == "x" * 20


def test_the_default_limit_is_ten_thousand_characters(flight, people):
    with pytest.raises(ReviewError, match="more than 10,000"):
        say(flight, people, "x" * 10_001)


def test_a_long_comment_through_the_page_is_a_400_and_stores_nothing(
    flight, people, signed_in, small
):
    data = {"revision": "1", "body": "x" * 21}
    response = signed_in(people["reviewer"]).post(f"/chains/{K}/comments", data)
    assert response.status_code == 400
    assert "body: 21 characters is more than 20" in response.content.decode()
    assert not Comment.objects.exists()


def test_a_long_comment_through_the_api_is_a_400_naming_the_body(flight, people, signed_in, small):
    reviewer = signed_in(people["reviewer"])
    response = api_post(reviewer, f"/api/chains/{K}/comments", {"body": "x" * 21})
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "body"
    assert not Comment.objects.exists()


def test_a_review_note_longer_than_the_setting_is_refused_not_cut(flight, people, small):
    with pytest.raises(ReviewError, match="^note: 21 characters is more than 20"):
        Review.objects.request(flight.head(), people["editor"], ["reviewer"], "n" * 21)
    assert not Review.objects.exists()


def test_a_vote_note_longer_than_the_setting_is_refused_not_cut(flight, people, small):
    review = Review.objects.request(flight.head(), people["editor"], ["reviewer"])
    with pytest.raises(ReviewError, match="^note: 21 characters is more than 20"):
        review.vote(people["reviewer"], "request_changes", "n" * 21)
    assert review.votes.get().note == ""


# --- the API reads a page at a time -----------------------------------------------------


def test_the_api_lists_threads_a_page_at_a_time(flight, people, signed_in, small):
    threads_of(flight, people, 5)
    response = api_get(signed_in(people["viewer"]), f"/api/chains/{K}/comments?limit=2&offset=2")
    assert response.status_code == 200
    assert [t["body"] for t in response.json()] == ["thread 2", "thread 1"]
    assert response["X-Total-Count"] == "5"
    assert response["Link"] == f'</api/chains/{K}/comments?limit=2&offset=4>; rel="next"'


def test_the_api_gives_the_default_page_without_a_limit(flight, people, signed_in, small):
    threads_of(flight, people, 3)
    response = api_get(signed_in(people["viewer"]), f"/api/chains/{K}/comments")
    assert len(response.json()) == 2


def test_the_last_page_has_no_next_link(flight, people, signed_in, small):
    threads_of(flight, people, 3)
    response = api_get(signed_in(people["viewer"]), f"/api/chains/{K}/comments?offset=2")
    assert len(response.json()) == 1
    assert "Link" not in response


@pytest.mark.parametrize("query", ["limit=4", "limit=0", "offset=-1"])
def test_a_page_out_of_range_is_a_400_naming_the_parameter(flight, people, signed_in, small, query):
    response = api_get(signed_in(people["viewer"]), f"/api/chains/{K}/comments?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["location"] == query.split("=")[0]


def test_a_thread_in_the_list_carries_its_first_replies_and_their_count(
    flight, people, signed_in, small
):
    first = say(flight, people, "why?")
    for i in range(3):
        say(flight, people, f"reply {i}", reply_to=first)
    (thread,) = api_get(signed_in(people["viewer"]), f"/api/chains/{K}/comments").json()
    assert [r["body"] for r in thread["replies"]] == ["reply 0", "reply 1"]
    assert thread["reply_count"] == 3


def test_the_replies_of_a_thread_are_read_a_page_at_a_time(flight, people, signed_in, small):
    first = say(flight, people, "why?")
    for i in range(3):
        say(flight, people, f"reply {i}", reply_to=first)
    url = f"/api/chains/{K}/comments/{first.pk}/replies?offset=2"
    response = api_get(signed_in(people["viewer"]), url)
    assert response.status_code == 200
    assert [r["body"] for r in response.json()] == ["reply 2"]
    assert response["X-Total-Count"] == "3"


def test_the_replies_of_another_chains_comment_are_a_404(flight, people, signed_in, small):
    other = Chain.objects.store({"id": "other"}, team=flight.team).chain
    elsewhere = say(other, people, "hm")
    url = f"/api/chains/{K}/comments/{elsewhere.pk}/replies"
    assert api_get(signed_in(people["viewer"]), url).status_code == 404


# --- the page reads a page at a time ----------------------------------------------------


def test_the_comments_page_shows_one_page_of_threads_and_links_the_next(
    flight, people, signed_in, small
):
    threads_of(flight, people, 3)
    viewer = signed_in(people["viewer"])
    body = viewer.get(f"/chains/{K}/comments").content.decode()
    assert "thread 2" in body and "thread 1" in body and "thread 0" not in body
    assert 'href="?page=2" rel="next"' in body
    assert "thread 0" in viewer.get(f"/chains/{K}/comments?page=2").content.decode()


def test_a_thread_with_more_replies_than_shown_links_to_all_of_them(
    flight, people, signed_in, small
):
    first = say(flight, people, "why?")
    for i in range(3):
        say(flight, people, f"reply {i}", reply_to=first)
    viewer = signed_in(people["viewer"])
    body = viewer.get(f"/chains/{K}/comments").content.decode()
    assert "reply 1" in body and "reply 2" not in body
    assert f'href="/t/flight-desk/chains/{K}/comments?thread={first.pk}">1 more reply</a>' in body
    alone = viewer.get(f"/chains/{K}/comments?thread={first.pk}&page=2").content.decode()
    assert "reply 2" in alone and "reply 0" not in alone


@pytest.mark.parametrize("query", ["page=x", "page=0", "thread=x"])
def test_a_bad_page_number_is_a_400(flight, people, signed_in, small, query):
    assert signed_in(people["viewer"]).get(f"/chains/{K}/comments?{query}").status_code == 400


def test_a_page_past_the_end_is_empty_and_a_thread_the_chain_lacks_is_a_404(
    flight, people, signed_in, small
):
    threads_of(flight, people, 1)
    viewer = signed_in(people["viewer"])
    past = viewer.get(f"/chains/{K}/comments?page={10**20}")
    assert past.status_code == 200 and "thread 0" not in past.content.decode()
    assert viewer.get(f"/chains/{K}/comments?thread={10**20}").status_code == 404
    assert viewer.get(f"/api/chains/{K}/comments?offset={10**20}").json() == []
