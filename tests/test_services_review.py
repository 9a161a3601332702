"""The review use cases the pages and the API share (chains/services/review.py)."""

from __future__ import annotations

import pytest
from django.http import Http404

from chains.models import Chain, Comment, Decision, Review, ReviewError
from chains.services import review

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(team) -> Chain:
    return Chain.objects.store({"id": "other"}, team=team).chain


def second_revision(chain: Chain) -> None:
    Chain.objects.store({**chain.head().document, "title": "second draft"}, team=chain.team)


def test_a_comment_without_a_revision_is_written_on_the_head(flight, people):
    second_revision(flight)
    posted = review.post_comment(flight, people["reviewer"], "why?", anchor="chain")
    assert posted.revision.number == 2


def test_a_comment_on_a_numbered_revision_is_written_on_that_one(flight, people):
    second_revision(flight)
    posted = review.post_comment(flight, people["reviewer"], "why?", anchor="chain", revision=1)
    assert posted.revision.number == 1


@pytest.mark.parametrize("number", [0, 9, 10**20])
def test_a_revision_the_chain_lacks_is_refused_naming_the_field(flight, people, number):
    with pytest.raises(ReviewError, match=r"^revision: flight_roundtrip has no revision"):
        review.post_comment(flight, people["reviewer"], "x", anchor="chain", revision=number)
    assert not Comment.objects.exists()


def test_a_reply_joins_the_thread_of_the_comment_it_names(flight, people):
    first = review.post_comment(flight, people["reviewer"], "why?", anchor="handle:quote_id")
    reply = review.post_comment(flight, people["editor"], "so", anchor="chain", reply_to=first.pk)
    assert reply.parent == first and reply.anchor == "handle:quote_id"


def test_a_reply_to_a_comment_of_another_chain_is_refused_naming_the_field(flight, other, people):
    elsewhere = review.post_comment(other, people["reviewer"], "hm", anchor="chain")
    with pytest.raises(ReviewError, match=r"^reply_to: flight_roundtrip has no comment"):
        review.post_comment(flight, people["reviewer"], "x", anchor="chain", reply_to=elsewhere.pk)
    assert Comment.objects.count() == 1


def test_toggling_a_comment_resolves_its_thread_and_toggling_again_reopens_it(flight, people):
    first = review.post_comment(flight, people["reviewer"], "why?", anchor="chain")
    assert review.toggle_comment(flight, first.pk, people["owner"]).resolved_by == people["owner"]
    assert review.toggle_comment(flight, first.pk, people["owner"]).resolved_at is None


def test_toggling_a_comment_of_another_chain_is_not_found(flight, other, people):
    elsewhere = review.post_comment(other, people["reviewer"], "hm", anchor="chain")
    with pytest.raises(Http404):
        review.toggle_comment(flight, elsewhere.pk, people["owner"])


def test_a_review_request_without_a_revision_asks_about_the_head(flight, people):
    second_revision(flight)
    asked = review.request_review(flight, people["editor"], ["reviewer"], note="please")
    assert asked.revision.number == 2 and asked.note == "please"


def test_a_review_request_naming_nobody_is_refused_and_stores_nothing(flight, people):
    with pytest.raises(ReviewError, match=r"^reviewers: name at least one reviewer"):
        review.request_review(flight, people["editor"], [], note="")
    assert not Review.objects.exists()


def test_a_vote_is_recorded_and_the_review_comes_back_with_it(flight, people):
    asked = review.request_review(flight, people["editor"], ["reviewer"], note="")
    after = review.vote(flight, asked.pk, people["reviewer"], "request_changes", "add a probe")
    assert [v.decision for v in after.votes.all()] == [Decision.CHANGES]
    assert after.state() == "changes requested"


def test_voting_on_a_review_of_another_chain_is_not_found(flight, other, people):
    asked = review.request_review(flight, people["editor"], ["reviewer"], note="")
    with pytest.raises(Http404):
        review.vote(other, asked.pk, people["reviewer"], "approve", "")
    assert asked.votes.get().decision == Decision.PENDING
