"""Comments and design review: the model verbs, then the pages as each role uses them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.db import transaction

from chains.core import formats
from chains.models import (
    Chain,
    Comment,
    Decision,
    ImmutableRevision,
    NotApprovable,
    Review,
    ReviewError,
    Revision,
    Role,
    SavedScenario,
)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
HAPPY = ROOT / "fixtures" / "scenarios" / "flight-happy-path.yaml"
HTMX = {"HTTP_HX_REQUEST": "true"}
# Lints INVALID: a selection handle without a rematch rule.
BROKEN = """
id: broken
handles:
  - {id: search_id, minted_by: search}
  - {id: pick, minted_by: choose, derived_from: [search_id]}
actions:
  - {id: search, effect: read, output: {handles: [search_id]}}
  - {id: choose, effect: select, input: {handles: [search_id]}, output: {handles: [pick]}}
"""


def store(text: str, team=None, **fields) -> Revision:
    document = formats.to_document(formats.load(text, format="yaml").chains[0])
    return Chain.objects.store({**document, **fields}, team=team)


@pytest.fixture
def broken(team) -> Chain:
    return store(BROKEN, team=team).chain


def edit(chain: Chain, title: str) -> Revision:
    """A new head that differs from the old one in its title."""
    return Chain.objects.store({**chain.head().document, "title": title}, team=chain.team)


def keep_scenario(chain: Chain, expect: dict) -> None:
    data = yaml.safe_load(HAPPY.read_text())
    SavedScenario.objects.create(
        chain=chain, name="happy path", document={**data, "expect": expect}
    )


def comment(chain: Chain, people: dict, body: str = "why?", **kw) -> Comment:
    return Comment.objects.post(chain.head(), people["reviewer"], body, **kw)


def request(chain: Chain, people: dict, *names: str, revision: Revision | None = None) -> Review:
    return Review.objects.request(revision or chain.head(), people["editor"], list(names))


# --- comments ---------------------------------------------------------------------------


def test_a_comment_is_written_on_a_revision_and_anchored_to_an_element(flight, people):
    first = comment(flight, people, anchor="handle:quote_id")
    assert first.revision == flight.head()
    assert first.anchor == "handle:quote_id"
    assert first.author == people["reviewer"]


def test_a_comment_may_be_anchored_to_an_edge_a_row_a_gate_or_the_chain(flight, people):
    for anchor in ["edge:derived_from:quote_id:outbound_pick", "gate:seat_degrade", "chain"]:
        assert comment(flight, people, anchor=anchor).anchor == anchor
    row = next(r.id for r in formats.from_document(flight.head().document).verdict_table if r.id)
    assert comment(flight, people, anchor=f"row:{row}").anchor == f"row:{row}"


def test_an_empty_comment_is_refused(flight, people):
    with pytest.raises(ReviewError, match="needs some text"):
        comment(flight, people, body="   ")
    assert not Comment.objects.exists()


def test_a_comment_on_an_element_the_revision_lacks_is_refused_naming_it(flight, people):
    with pytest.raises(ReviewError, match="no element 'handle:ghost'"):
        comment(flight, people, anchor="handle:ghost")


def test_a_reply_joins_the_thread_and_takes_its_anchor(flight, people):
    first = comment(flight, people, anchor="action:book_trip")
    reply = Comment.objects.post(flight.head(), people["editor"], "because", reply_to=first)
    again = Comment.objects.post(flight.head(), people["owner"], "agreed", reply_to=reply)
    assert reply.parent == first and again.parent == first
    assert again.anchor == "action:book_trip"


def test_a_reply_to_a_comment_of_another_chain_is_refused(flight, broken, people):
    elsewhere = comment(broken, people)
    with pytest.raises(ReviewError, match="is not on flight_roundtrip"):
        Comment.objects.post(flight.head(), people["reviewer"], "hm", reply_to=elsewhere)


def test_only_people_with_a_role_on_the_chain_are_recorded_as_mentioned(flight, people):
    said = comment(flight, people, body="@editor and @outsider, see @nobody (mail@x.org)")
    assert list(said.mentions.all()) == [people["editor"]]
    assert said.parts() == [
        ("@editor", True),
        (" and @outsider, see @nobody (mail@x.org)", False),
    ]


def test_resolving_a_reply_resolves_its_thread_and_toggling_again_reopens_it(flight, people):
    first = comment(flight, people)
    reply = Comment.objects.post(flight.head(), people["editor"], "fixed", reply_to=first)
    assert reply.toggle(by=people["reviewer"]).resolved_by == people["reviewer"]
    first.refresh_from_db()
    assert first.resolved_at is not None
    assert first.toggle(by=people["owner"]).resolved_at is None


def test_open_threads_are_counted_per_anchor_and_resolved_ones_are_not(flight, people):
    comment(flight, people, anchor="handle:quote_id")
    comment(flight, people, anchor="handle:quote_id")
    comment(flight, people, anchor="gate:seat_degrade").resolve(by=people["owner"])
    assert Comment.objects.open_counts(flight) == {"handle:quote_id": 2}


# --- review requests and approval -------------------------------------------------------


def test_a_review_names_people_with_the_reviewer_role_or_higher(flight, people):
    review = request(flight, people, "reviewer", "owner")
    assert [v.reviewer.username for v in review.votes.all()] == ["owner", "reviewer"]
    assert review.state() == "open"


def test_a_review_refuses_everyone_who_may_not_review_by_name(flight, people):
    with pytest.raises(ReviewError) as refused:
        request(flight, people, "viewer", "outsider", "ghost", "editor")
    message = str(refused.value)
    assert "viewer is a viewer on flight_roundtrip; reviewing needs reviewer" in message
    assert "outsider has no role on flight_roundtrip" in message
    assert "ghost has no role" in message
    assert "editor asks for this review and cannot also give it" in message
    assert not Review.objects.exists()


def test_a_review_needs_at_least_one_reviewer(flight, people):
    with pytest.raises(ReviewError, match="name at least one reviewer"):
        request(flight, people, " ")


def test_a_grant_on_the_chain_makes_a_viewer_a_reviewer_there(flight, people):
    flight.grant(people["viewer"], Role.REVIEWER)
    assert request(flight, people, "viewer").votes.get().reviewer == people["viewer"]


def test_the_revision_is_approved_when_every_named_reviewer_approved(flight, people):
    review = request(flight, people, "reviewer", "owner")
    review.vote(people["reviewer"], "approve")
    assert flight.head().approved_at is None
    review.vote(people["owner"], "approve", "ship it")
    head = flight.head()
    assert head.approved_by == people["owner"]
    assert head.tag == "approved-1"
    assert review.state() == "approved"


def test_a_request_for_changes_needs_a_note_and_holds_the_approval_back(flight, people):
    review = request(flight, people, "reviewer", "owner")
    with pytest.raises(ReviewError, match="say what should change"):
        review.vote(people["reviewer"], "request_changes")
    review.vote(people["reviewer"], "request_changes", "probe is missing")
    review.vote(people["owner"], "approve")
    assert review.state() == "changes requested"
    assert flight.head().approved_at is None


def test_a_reviewer_may_change_their_vote_while_the_review_is_open(flight, people):
    review = request(flight, people, "reviewer")
    review.vote(people["reviewer"], "request_changes", "not yet")
    review.vote(people["reviewer"], "approve")
    assert review.votes.get().decision == Decision.APPROVED
    assert flight.head().tag == "approved-1"


def test_someone_not_named_cannot_vote(flight, people):
    review = request(flight, people, "reviewer")
    with pytest.raises(ReviewError, match="owner is not a reviewer of review .* reviewer"):
        review.vote(people["owner"], "approve")


def test_an_unknown_vote_is_refused(flight, people):
    with pytest.raises(ReviewError, match="neither 'approve' nor 'request_changes'"):
        request(flight, people, "reviewer").vote(people["reviewer"], "maybe")


def test_an_invalid_revision_cannot_be_approved_and_the_vote_is_not_stored(broken, people):
    review = request(broken, people, "reviewer")
    with pytest.raises(NotApprovable, match="its lint status is INVALID"):
        review.vote(people["reviewer"], "approve")
    assert review.votes.get().decision == Decision.PENDING
    assert broken.head().approved_at is None


def test_a_revision_whose_saved_scenario_changed_cannot_be_approved(flight, people):
    keep_scenario(flight, {"state": "dead_end"})
    with pytest.raises(NotApprovable) as refused:
        flight.head().approve(by=people["owner"])
    (problem,) = refused.value.problems
    assert problem.startswith("saved scenario 'happy path' no longer holds:")
    assert "now ends in done instead of dead_end" in problem


def test_a_revision_whose_saved_scenarios_hold_can_be_approved(flight, people):
    keep_scenario(flight, {"state": "done"})
    assert flight.head().approve(by=people["owner"]).tag == "approved-1"


def test_approving_twice_keeps_the_first_approval(flight, people):
    head = flight.head().approve(by=people["reviewer"])
    again = Revision.objects.get(pk=head.pk).approve(by=people["owner"])
    assert again.approved_by == people["reviewer"]
    assert again.approved_at == head.approved_at


def test_an_older_revision_may_be_approved_and_a_later_edit_needs_its_own(flight, people):
    first = flight.head()
    edit(flight, "Round trip, second draft")
    first.approve(by=people["owner"])
    assert flight.approved() == first
    assert flight.head().approved_at is None
    edit(flight, "Round trip, third draft")
    assert flight.approved() == first


def test_a_review_of_an_approved_revision_is_refused(flight, people):
    flight.head().approve(by=people["owner"])
    with pytest.raises(ReviewError, match="r1 is approved already"):
        request(flight, people, "reviewer")


def test_a_vote_on_a_review_whose_revision_was_approved_is_refused(flight, people):
    review = request(flight, people, "reviewer")
    flight.head().approve(by=people["owner"])
    with pytest.raises(ReviewError, match="this review is closed"):
        review.vote(people["reviewer"], "approve")


def test_a_stored_revision_cannot_be_saved_again(flight):
    head = flight.head()
    head.message = "rewritten history"
    with pytest.raises(ImmutableRevision):
        head.save()


def test_an_approved_revision_cannot_be_deleted_even_with_its_chain(flight, people):
    flight.head().approve(by=people["owner"])
    attempts = [flight.head().delete, Revision.objects.filter(chain=flight).delete, flight.delete]
    for attempt in attempts:
        with pytest.raises(ImmutableRevision, match="is approved"), transaction.atomic():
            attempt()
    assert flight.revisions.count() == 1


# --- the workspace ---------------------------------------------------------------------


def post_comment(client, chain: Chain, htmx: bool = True, **fields):
    data = {"revision": str(chain.head().number), "from": "workspace", "body": "why?", **fields}
    return client.post(f"{chain.url()}comments", data, **(HTMX if htmx else {}))


def test_a_reviewer_comments_from_the_workspace_and_the_graph_marks_the_element(
    flight, people, signed_in
):
    reviewer = signed_in(people["reviewer"])
    response = post_comment(reviewer, flight, anchor="handle:quote_id", select="handle:quote_id")
    body = response.content.decode()
    assert response.status_code == 200
    # Graphviz writes '-' as a character reference.
    assert 'id="handle:quote_id" class="node handle selected has&#45;comment"' in body
    assert 'id="comments-panel"' in body and "why?" in body


def test_a_refused_workspace_comment_keeps_what_was_typed_in_the_comment_box(
    flight, people, signed_in
):
    reviewer = signed_in(people["reviewer"])
    response = post_comment(reviewer, flight, anchor="handle:nope", body="keep me")
    box = response.content.decode().split('id="comment-form"')[1].split("</form>")[0]
    assert response.status_code == 400
    assert ">keep me</textarea>" in box
    assert flight.comments.count() == 0


def test_a_plain_comment_post_returns_to_the_workspace_with_the_selection(
    flight, people, signed_in
):
    response = post_comment(
        signed_in(people["reviewer"]), flight, htmx=False, anchor="chain", select="gate:x"
    )
    assert response.status_code == 303
    assert response["Location"] == f"{flight.url()}?select=gate%3Ax"


def test_the_graph_marks_every_element_with_an_open_thread(flight, people, client):
    key = "edge:derived_from:quote_id:outbound_pick"
    comment(flight, people, anchor=key)
    body = client.get(f"{flight.url()}").content.decode()
    assert f'id="{key}" class="edge derived&#45;from has&#45;comment"' in body


def test_a_resolved_thread_no_longer_marks_the_graph(flight, people, client):
    comment(flight, people, anchor="handle:quote_id").resolve(by=people["owner"])
    assert "has&#45;comment" not in client.get(f"{flight.url()}").content.decode()


def test_a_verdict_row_with_comments_shows_their_count_in_the_table(flight, people, client):
    row = next(r.id for r in formats.from_document(flight.head().document).verdict_table if r.id)
    comment(flight, people, anchor=f"row:{row}")
    comment(flight, people, anchor=f"row:{row}")
    body = client.get(f"{flight.url()}?tab=table").content.decode()
    marked = body.split(f'data-row="{row}"')[0].rsplit("<tr", 1)[1]
    assert "has-comment" in marked
    assert 'title="2 open comment threads">💬 2</a>' in body


def test_a_viewer_reads_comments_but_is_offered_no_comment_form(flight, people, signed_in):
    comment(flight, people, body="look at @editor")
    body = signed_in(people["viewer"]).get(f"{flight.url()}").content.decode()
    assert '<span class="mention">@editor</span>' in body
    assert 'id="comment-form"' not in body
    assert "Resolve</button>" not in body


@pytest.mark.parametrize("person", ["reviewer", "editor", "owner"])
def test_reviewers_and_up_are_offered_the_comment_form(flight, people, signed_in, person):
    body = signed_in(people[person]).get(f"{flight.url()}").content.decode()
    assert 'id="comment-form"' in body


def test_a_viewer_may_not_comment_and_nothing_is_saved(flight, people, signed_in):
    assert post_comment(signed_in(people["viewer"]), flight).status_code == 403
    assert not Comment.objects.exists()


def test_an_empty_comment_is_a_400_shown_in_the_workspace(flight, people, signed_in):
    response = post_comment(signed_in(people["reviewer"]), flight, body="")
    assert response.status_code == 400
    assert "body: a comment needs some text" in response.content.decode()
    assert not Comment.objects.exists()


def test_an_unknown_anchor_is_a_400_naming_it(flight, people, signed_in):
    response = post_comment(signed_in(people["reviewer"]), flight, anchor="action:nope")
    assert response.status_code == 400
    assert "no element &#x27;action:nope&#x27;" in response.content.decode()
    assert not Comment.objects.exists()


@pytest.mark.parametrize("revision", ["9", "x", "99999999999999999999"])
def test_a_revision_the_chain_lacks_is_a_400(flight, people, signed_in, revision):
    response = post_comment(signed_in(people["reviewer"]), flight, revision=revision)
    assert response.status_code == 400
    assert not Comment.objects.exists()


def test_a_reply_to_a_comment_of_another_chain_is_a_400(flight, broken, people, signed_in):
    elsewhere = comment(broken, people)
    response = post_comment(signed_in(people["reviewer"]), flight, reply_to=str(elsewhere.pk))
    assert response.status_code == 400
    assert Comment.objects.count() == 1


def test_resolving_a_comment_of_another_chain_is_a_404(flight, broken, people, signed_in):
    elsewhere = comment(broken, people)
    url = f"{flight.url()}comments/{elsewhere.pk}/resolve"
    assert signed_in(people["owner"]).post(url).status_code == 404
    elsewhere.refresh_from_db()
    assert elsewhere.resolved_at is None


def test_the_author_of_a_comment_resolves_its_thread_from_the_comments_page(
    flight, people, signed_in
):
    first = comment(flight, people)
    reviewer = signed_in(people["reviewer"])
    response = reviewer.post(f"{flight.url()}comments/{first.pk}/resolve")
    assert response.status_code == 303 and response["Location"].endswith("/comments")
    first.refresh_from_db()
    assert first.resolved_by == people["reviewer"]
    assert "resolved by reviewer" in reviewer.get(response["Location"]).content.decode()


def test_the_comments_page_lists_the_threads_of_one_anchor(flight, people, client):
    comment(flight, people, body="about the quote", anchor="handle:quote_id")
    comment(flight, people, body="on the whole thing")
    body = client.get(f"{flight.url()}comments?anchor=handle:quote_id").content.decode()
    assert "about the quote" in body and "on the whole thing" not in body


def test_a_reply_from_the_comments_page_shows_in_its_thread(flight, people, signed_in):
    first = comment(flight, people)
    editor = signed_in(people["editor"])
    data = {"revision": "1", "body": "see r2", "reply_to": str(first.pk)}
    response = editor.post(f"{flight.url()}comments", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert '<div class="comment reply">' in response.content.decode()
    assert first.replies.get().author == people["editor"]


# --- the review pages ----------------------------------------------------------------------


def test_an_editor_requests_a_review_and_is_sent_to_its_page(flight, people, signed_in):
    editor = signed_in(people["editor"])
    data = {"revision": "1", "reviewers": ["reviewer", "owner"], "note": "please"}
    response = editor.post(f"{flight.url()}reviews/", data)
    review = Review.objects.get()
    assert response.status_code == 303
    assert response["Location"] == f"{flight.url()}reviews/{review.pk}/"
    assert review.requested_by == people["editor"] and review.votes.count() == 2


def test_the_review_form_offers_only_people_who_may_review(flight, people, signed_in):
    body = signed_in(people["editor"]).get(f"{flight.url()}reviews/").content.decode()
    offered = body.split('id="request-form"')[1].split("</fieldset>")[0]
    assert 'value="reviewer"' in offered and 'value="owner"' in offered
    assert 'value="viewer"' not in offered and 'value="editor"' not in offered


def test_requesting_a_review_from_a_viewer_is_a_400_naming_them(flight, people, signed_in):
    data = {"reviewers": ["viewer"]}
    response = signed_in(people["editor"]).post(f"{flight.url()}reviews/", data)
    assert response.status_code == 400
    assert "viewer is a viewer on flight_roundtrip" in response.content.decode()
    assert not Review.objects.exists()


def test_a_review_request_naming_nobody_is_a_400_that_keeps_the_note(flight, people, signed_in):
    data = {"revision": "1", "note": "the cabin rule"}
    response = signed_in(people["editor"]).post(f"{flight.url()}reviews/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert "reviewers: name at least one reviewer" in body
    assert ">the cabin rule</textarea>" in body
    assert not Review.objects.exists()


def test_a_vote_that_is_neither_approve_nor_request_changes_is_a_400(flight, people, signed_in):
    review = request(flight, people, "reviewer")
    url = f"{flight.url()}reviews/{review.pk}/vote"
    response = signed_in(people["reviewer"]).post(url, {"vote": "maybe"})
    assert response.status_code == 400
    assert "vote: Input should be" in response.content.decode()
    assert review.votes.get().decision == Decision.PENDING


def test_a_reviewer_may_not_request_a_review(flight, people, signed_in):
    data = {"reviewers": ["owner"]}
    assert signed_in(people["reviewer"]).post(f"{flight.url()}reviews/", data).status_code == 403


def test_a_named_reviewer_approves_and_the_workspace_shows_the_approval(flight, people, signed_in):
    review = request(flight, people, "reviewer")
    reviewer = signed_in(people["reviewer"])
    response = reviewer.post(f"{flight.url()}reviews/{review.pk}/vote", {"vote": "approve"})
    assert response.status_code == 303
    page = reviewer.get(response["Location"]).content.decode()
    assert "r1 is approved (approved-1) by reviewer" in page
    body = reviewer.get(f"{flight.url()}").content.decode()
    assert "approved r1" in body
    assert 'id="since-approved"' not in body  # nothing changed since


def test_after_an_edit_the_workspace_links_what_changed_since_the_approval(flight, people, client):
    flight.head().approve(by=people["owner"])
    edit(flight, "Round trip, second draft")
    body = client.get(f"{flight.url()}").content.decode()
    assert "approved r1" in body
    assert f'href="{flight.url()}diff?from=1&amp;to=2" id="since-approved"' in body


def test_approving_an_invalid_revision_is_a_400_saying_which_condition_fails(
    broken, people, signed_in
):
    review = request(broken, people, "reviewer")
    url = f"{broken.url()}reviews/{review.pk}/vote"
    response = signed_in(people["reviewer"]).post(url, {"vote": "approve"})
    assert response.status_code == 400
    assert "r1 cannot be approved: its lint status is INVALID" in response.content.decode()
    assert broken.head().approved_at is None


def test_the_review_page_shows_the_failing_conditions_up_front(flight, people, client):
    keep_scenario(flight, {"state": "dead_end"})
    review = request(flight, people, "reviewer")
    body = client.get(f"{flight.url()}reviews/{review.pk}/").content.decode()
    conditions = body.split('id="approval-problems"')[1].split("</div>")[0]
    assert "saved scenario &#x27;happy path&#x27; no longer holds" in conditions
    assert "now ends in done instead of dead_end" in conditions
    assert body.index('id="approval-problems"') < body.index('id="reviewers-title"')


def test_voting_when_not_named_is_a_400_and_stores_nothing(flight, people, signed_in):
    review = request(flight, people, "reviewer")
    url = f"{flight.url()}reviews/{review.pk}/vote"
    response = signed_in(people["owner"]).post(url, {"vote": "approve"})
    assert response.status_code == 400
    assert "owner is not a reviewer of review" in response.content.decode()
    assert flight.head().approved_at is None


def test_only_a_named_reviewer_is_offered_the_vote_form(flight, people, signed_in):
    review = request(flight, people, "reviewer")
    url = f"{flight.url()}reviews/{review.pk}/"
    assert 'id="vote-form"' in signed_in(people["reviewer"]).get(url).content.decode()
    assert 'id="vote-form"' not in signed_in(people["owner"]).get(url).content.decode()


def test_a_review_of_another_chain_is_a_404(flight, broken, people, signed_in):
    review = request(broken, people, "reviewer")
    reviewer = signed_in(people["reviewer"])
    assert reviewer.get(f"{flight.url()}reviews/{review.pk}/").status_code == 404
    url = f"{flight.url()}reviews/{review.pk}/vote"
    assert reviewer.post(url, {"vote": "request_changes", "note": "x"}).status_code == 404
    assert review.votes.get().decision == Decision.PENDING


def test_the_reviews_page_lists_each_review_with_its_state(flight, people, client):
    review = request(flight, people, "reviewer")
    review.vote(people["reviewer"], "request_changes", "add a probe")
    body = client.get(f"{flight.url()}reviews/").content.decode()
    assert "reviewer: changes requested" in body
    assert '<span class="review-state state-changes-requested">changes requested</span>' in body


def test_the_reviews_page_shows_a_pending_vote_on_an_approved_revision_as_not_needed(
    flight, people, client
):
    waiting = request(flight, people, "owner")
    request(flight, people, "reviewer").vote(people["reviewer"], "approve")
    assert Review.objects.get(pk=waiting.pk).state() == "closed"
    body = client.get(f"{flight.url()}reviews/").content.decode()
    assert "owner: not needed: approved without this vote" in body
    assert "owner: pending" not in body


def test_the_authors_pending_vote_on_an_approved_review_says_it_does_not_count(
    flight, people, client
):
    document = {**flight.head().document, "title": "edited"}
    revision = Chain.objects.store(document, "edit", author=people["editor"], team=flight.team)
    review = Review.objects.request(revision, people["owner"], ["editor", "reviewer"])
    review.vote(people["reviewer"], "approve")
    assert review.state() == "approved"
    for page in (f"{flight.url()}reviews/", f"{flight.url()}reviews/{review.pk}/"):
        body = client.get(page).content.decode()
        assert f"not counted: saved r{revision.number}" in body, page
        assert ">pending<" not in body and "editor: pending" not in body, page
