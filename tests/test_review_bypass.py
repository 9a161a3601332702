"""Review cannot be bypassed: a second review, the author's own vote, reviews left open.

Every rule is checked on the model verb, and through the page and the API where
a person meets it, since all three doors must refuse the same way.
"""

from __future__ import annotations

import pytest

from chains.models import Chain, Decision, Review, ReviewError, Revision

pytestmark = pytest.mark.django_db

K = "flight_roundtrip"


def ask(revision: Revision, people: dict, *names: str) -> Review:
    return Review.objects.request(revision, people["editor"], list(names))


def written_by(chain: Chain, author) -> Revision:
    """A new head saved by ``author``."""
    return Chain.objects.store(
        {**chain.head().document, "title": "by hand"}, author=author, team=chain.team
    )


def state(review: Review) -> str:
    return Review.objects.get(pk=review.pk).state()


def api(client, method: str, path: str, body: dict | None = None):
    if method == "GET":
        return client.get(path)
    return client.post(path, body or {}, content_type="application/json")


# --- a second review -----------------------------------------------------------------------


def test_a_second_review_cannot_approve_while_the_first_requests_changes(flight, people):
    first = ask(flight.head(), people, "reviewer")
    first.vote(people["reviewer"], "request_changes", "the probe is missing")
    second = ask(flight.head(), people, "owner")
    second.vote(people["owner"], "approve")
    assert flight.head().approved_at is None
    assert first.state() == "changes requested"
    assert second.state() == "held back"


def test_the_hold_lifts_when_the_reviewer_who_asked_for_changes_approves(flight, people):
    first = ask(flight.head(), people, "reviewer")
    first.vote(people["reviewer"], "request_changes", "the probe is missing")
    second = ask(flight.head(), people, "owner")
    second.vote(people["owner"], "approve")
    first.vote(people["reviewer"], "approve")
    assert flight.head().tag == "approved-1"
    assert state(first) == "approved" and state(second) == "approved"


def test_a_review_of_another_revision_does_not_hold_this_one_back(flight, people):
    older = flight.head()
    ask(older, people, "reviewer").vote(people["reviewer"], "request_changes", "no")
    newer = Chain.objects.store({**older.document, "title": "second draft"}, team=flight.team)
    ask(newer, people, "owner").vote(people["owner"], "approve")
    assert flight.head().tag == "approved-2"


def test_the_bypass_through_the_api_leaves_the_export_unapproved(flight, people, signed_in):
    editor, reviewer, owner = (signed_in(people[n]) for n in ("editor", "reviewer", "owner"))
    first = api(editor, "POST", f"/api/chains/{K}/reviews", {"reviewers": ["reviewer"]}).json()
    vote = {"vote": "request_changes", "note": "the probe is missing"}
    api(reviewer, "POST", f"/api/chains/{K}/reviews/{first['id']}/vote", vote)
    second = api(editor, "POST", f"/api/chains/{K}/reviews", {"reviewers": ["owner"]}).json()
    voted = api(owner, "POST", f"/api/chains/{K}/reviews/{second['id']}/vote", {"vote": "approve"})
    assert voted.status_code == 200 and voted.json()["state"] == "held back"
    export = owner.get(f"/api/chains/{K}/revisions/1/export")
    assert "X-Approved" not in export
    states = {r["id"]: r["state"] for r in api(owner, "GET", f"/api/chains/{K}/reviews").json()}
    assert states[first["id"]] == "changes requested"


def test_the_review_page_says_what_holds_the_approval_back(flight, people, signed_in):
    first = ask(flight.head(), people, "reviewer")
    first.vote(people["reviewer"], "request_changes", "the probe is missing")
    second = ask(flight.head(), people, "owner")
    owner = signed_in(people["owner"])
    response = owner.post(f"/chains/{K}/reviews/{second.pk}/vote", {"vote": "approve"})
    page = owner.get(response["Location"]).content.decode()
    held = page.split('id="held-back"')[1].split("</div>")[0]
    assert (
        f'reviewer requested changes on <a href="/t/flight-desk/chains/{K}/reviews/{first.pk}/">'
        in held
    )
    assert "the probe is missing" in held
    assert 'id="approvable"' not in page
    assert flight.head().approved_at is None


# --- the revision's author --------------------------------------------------------------


def test_the_author_of_a_revision_cannot_approve_it(flight, people):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    with pytest.raises(ReviewError, match="^vote: owner saved r2 and cannot approve it"):
        review.vote(people["owner"], "approve")
    assert review.votes.get(reviewer=people["owner"]).decision == Decision.PENDING


def test_the_author_of_a_revision_may_request_changes_and_that_holds_it_back(flight, people):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    review.vote(people["owner"], "request_changes", "I forgot the refund")
    review.vote(people["reviewer"], "approve")
    assert flight.head().approved_at is None


def test_the_other_reviewers_approve_without_the_author(flight, people):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    review.vote(people["reviewer"], "approve")
    assert flight.head().tag == "approved-2"
    assert review.state() == "approved"


def test_a_review_naming_only_the_author_is_refused(flight, people):
    revision = written_by(flight, people["owner"])
    with pytest.raises(ReviewError, match="^reviewers: owner saved r2 and cannot approve it"):
        ask(revision, people, "owner")
    assert not Review.objects.exists()


def test_the_author_approving_through_the_page_is_a_400_that_says_why(flight, people, signed_in):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    url = f"/chains/{K}/reviews/{review.pk}/vote"
    response = signed_in(people["owner"]).post(url, {"vote": "approve"})
    assert response.status_code == 400
    assert "owner saved r2 and cannot approve it" in response.content.decode()
    assert flight.head().approved_at is None


def test_the_author_approving_through_the_api_is_a_400_naming_the_vote(flight, people, signed_in):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    url = f"/api/chains/{K}/reviews/{review.pk}/vote"
    response = api(signed_in(people["owner"]), "POST", url, {"vote": "approve"})
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "vote"
    assert "cannot approve it" in response.json()["error"]["message"]


def test_the_author_is_offered_only_the_request_for_changes(flight, people, signed_in):
    revision = written_by(flight, people["owner"])
    review = ask(revision, people, "owner", "reviewer")
    body = signed_in(people["owner"]).get(f"/chains/{K}/reviews/{review.pk}/").content.decode()
    assert "owner saved r2, so may request changes but not approve it" in body
    form = body.split('id="vote-form"')[1].split("</form>")[0]
    assert 'value="approve" disabled' in form
    assert 'value="request_changes"' in form


# --- reviews made moot ------------------------------------------------------------------


def test_a_review_made_moot_by_an_approval_is_closed(flight, people):
    first = ask(flight.head(), people, "reviewer")
    second = ask(flight.head(), people, "owner")
    second.vote(people["owner"], "approve")
    assert flight.head().tag == "approved-1"
    assert state(first) == "closed"
    assert state(second) == "approved"


def test_a_closed_review_says_so_on_its_page_and_in_the_api(flight, people, signed_in):
    first = ask(flight.head(), people, "reviewer")
    ask(flight.head(), people, "owner").vote(people["owner"], "approve")
    reviewer = signed_in(people["reviewer"])
    page = reviewer.get(f"/chains/{K}/reviews/{first.pk}/").content.decode()
    assert 'id="review-state">closed</span>' in page
    assert "This review is closed: r1 was approved (approved-1) by owner" in page
    assert 'id="vote-form"' not in page
    states = {r["id"]: r["state"] for r in api(reviewer, "GET", f"/api/chains/{K}/reviews").json()}
    assert states[first.pk] == "closed"
