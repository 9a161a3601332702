"""Review an author cannot manufacture: who an approval may come from.

An approval of a revision covers every revision since the last approved one
before it (or since r1). It counts only from someone who saved none of them,
and not from a member one of their authors invited into the team, unless
another owner of the team, who saved none of them, vouches for that member.
The rule is ``Revision.approve``'s own, so the vote, the page, the API and a
direct call all refuse the same way.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from chains.models import Chain, NotApprovable, Review, ReviewError, Revision, Role
from chains.services import invitations

pytestmark = pytest.mark.django_db

K = "flight_roundtrip"
PASSWORD = "a-long-passphrase-7"


def written_by(chain: Chain, author, title: str) -> Revision:
    """A new head saved by ``author``."""
    return Chain.objects.store(
        {**chain.head().document, "title": title}, author=author, team=chain.team
    )


def ask(revision: Revision, by, *reviewers) -> Review:
    return Review.objects.request(revision, by, [r.username for r in reviewers])


def puppet_of(team, owner, anonymous, settings, name: str = "puppet"):
    """An account made through ``owner``'s own reviewer link, with sign-up closed."""
    settings.ALLOW_SIGNUP = False
    _, secret = invitations.invite(team, owner, Role.REVIEWER)
    form = {"username": name, "password1": PASSWORD, "password2": PASSWORD}
    anonymous.post(f"/invite/{secret}/account", form)
    return get_user_model().objects.get(username=name)


@pytest.fixture
def puppet(team, people, anonymous, settings):
    return puppet_of(team, people["owner"], anonymous, settings)


@pytest.fixture
def second_owner(team):
    grace = get_user_model().objects.create_user("grace")
    team.add(grace, Role.OWNER)
    return grace


# --- the sock puppet ---------------------------------------------------------------------


def test_an_account_made_through_the_authors_own_link_cannot_approve_her_revision(
    flight, people, puppet
):
    revision = written_by(flight, people["owner"], "by the owner")
    review = ask(revision, people["owner"], puppet, people["reviewer"])
    with pytest.raises(ReviewError, match="^vote: puppet was invited to Flight desk by owner"):
        review.vote(puppet, "approve")
    assert Revision.objects.get(pk=revision.pk).approved_at is None


def test_the_review_page_says_why_the_invitees_approval_does_not_count(
    flight, people, puppet, signed_in
):
    revision = written_by(flight, people["owner"], "by the owner")
    review = ask(revision, people["owner"], puppet, people["reviewer"])
    client = signed_in(puppet)
    response = client.post(f"/chains/{K}/reviews/{review.pk}/vote", {"vote": "approve"})
    assert response.status_code == 400
    said = "puppet was invited to Flight desk by owner, who saved r2"
    assert said in response.content.decode()
    assert "another owner of the team may vouch for them on the team page" in (
        response.content.decode()
    )
    page = signed_in(people["reviewer"]).get(f"/chains/{K}/reviews/{review.pk}/").content.decode()
    ballot = page.split("<td>puppet</td>")[1].split("</tr>")[0]
    assert "not counted: was invited to Flight desk by owner, who saved r2" in ballot
    assert Revision.objects.get(pk=revision.pk).approved_at is None


def test_the_invitee_is_offered_only_the_request_for_changes(flight, people, puppet, signed_in):
    revision = written_by(flight, people["owner"], "by the owner")
    review = ask(revision, people["owner"], puppet, people["reviewer"])
    body = signed_in(puppet).get(f"/chains/{K}/reviews/{review.pk}/").content.decode()
    form = body.split('id="vote-form"')[1].split("</form>")[0]
    assert 'value="approve" disabled' in form
    assert 'id="not-counted"' in body and "puppet was invited to Flight desk by owner" in body


def test_the_invitees_approval_through_the_api_is_the_same_400(flight, people, puppet, signed_in):
    revision = written_by(flight, people["owner"], "by the owner")
    review = ask(revision, people["owner"], puppet, people["reviewer"])
    url = f"/api/chains/{K}/reviews/{review.pk}/vote"
    response = signed_in(puppet).post(url, {"vote": "approve"}, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["location"] == "vote"
    assert "puppet was invited to Flight desk by owner, who saved r2" in error["message"]
    assert Revision.objects.get(pk=revision.pk).approved_at is None


def test_a_review_naming_only_the_authors_invitee_is_refused_saying_why(flight, people, puppet):
    revision = written_by(flight, people["owner"], "by the owner")
    with pytest.raises(ReviewError, match="^reviewers: puppet was invited to Flight desk by owner"):
        ask(revision, people["owner"], puppet)
    assert not Review.objects.exists()


def test_the_invitee_still_approves_what_someone_else_saved(flight, people, puppet):
    revision = written_by(flight, people["editor"], "by the editor")
    ask(revision, people["owner"], puppet).vote(puppet, "approve")
    assert Revision.objects.get(pk=revision.pk).tag == "approved-2"


# --- mixed authorship --------------------------------------------------------------------


def test_an_editor_cannot_approve_a_teammates_revision_on_top_of_her_own(flight, people):
    written_by(flight, people["editor"], "the editor's change")
    on_top = written_by(flight, people["owner"], "the owner's change")
    review = ask(on_top, people["owner"], people["editor"], people["reviewer"])
    with pytest.raises(ReviewError, match="editor saved r2, which an approval of r3 covers"):
        review.vote(people["editor"], "approve")
    assert Revision.objects.get(pk=on_top.pk).approved_at is None


def test_an_approval_covers_only_what_was_saved_since_the_last_approved_revision(flight, people):
    own = written_by(flight, people["editor"], "the editor's change")
    own.approve(by=people["reviewer"])
    on_top = written_by(flight, people["owner"], "the owner's change")
    ask(on_top, people["owner"], people["editor"]).vote(people["editor"], "approve")
    assert Revision.objects.get(pk=on_top.pk).tag == "approved-3"


def test_an_approval_from_an_unrelated_reviewer_counts(flight, people):
    written_by(flight, people["editor"], "the editor's change")
    on_top = written_by(flight, people["owner"], "the owner's change")
    ask(on_top, people["owner"], people["reviewer"]).vote(people["reviewer"], "approve")
    assert Revision.objects.get(pk=on_top.pk).tag == "approved-3"


def test_the_other_reviewers_approve_without_the_one_who_may_not(flight, people):
    written_by(flight, people["editor"], "the editor's change")
    on_top = written_by(flight, people["owner"], "the owner's change")
    review = ask(on_top, people["owner"], people["editor"], people["reviewer"])
    review.vote(people["reviewer"], "approve")
    assert Revision.objects.get(pk=on_top.pk).tag == "approved-3"
    assert review.state() == "approved"


# --- vouching ----------------------------------------------------------------------------


def test_the_invitees_approval_counts_once_another_owner_vouches_for_them(
    flight, team, people, puppet, second_owner
):
    team.memberships.get(user=puppet).vouch(by=second_owner)
    revision = written_by(flight, people["owner"], "by the owner")
    ask(revision, people["owner"], puppet).vote(puppet, "approve")
    assert Revision.objects.get(pk=revision.pk).tag == "approved-2"


def test_an_owner_cannot_vouch_for_someone_she_invited(team, people, puppet):
    with pytest.raises(ReviewError, match="owner invited puppet; another owner"):
        team.memberships.get(user=puppet).vouch(by=people["owner"])
    assert team.memberships.get(user=puppet).vouched_by is None


def test_only_an_owner_vouches(team, people, puppet):
    with pytest.raises(ReviewError, match="only an owner of Flight desk vouches"):
        team.memberships.get(user=puppet).vouch(by=people["editor"])


def test_a_vouch_from_an_author_of_the_covered_changes_does_not_count(
    flight, team, people, puppet, second_owner
):
    team.memberships.get(user=puppet).vouch(by=second_owner)
    written_by(flight, second_owner, "grace's change")
    on_top = written_by(flight, people["owner"], "the owner's change")
    review = ask(on_top, people["owner"], puppet, people["reviewer"])
    with pytest.raises(ReviewError, match="puppet was invited to Flight desk by owner"):
        review.vote(puppet, "approve")


def test_an_owner_vouches_on_the_team_page_which_shows_who_vouched(
    team, people, puppet, second_owner, signed_in
):
    membership = team.memberships.get(user=puppet)
    grace = signed_in(second_owner)
    page = grace.get("/teams/flight-desk/").content.decode()
    assert f'action="/teams/flight-desk/members/{membership.pk}/vouch"' in page
    response = grace.post(f"/teams/flight-desk/members/{membership.pk}/vouch")
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.vouched_by == second_owner
    row = grace.get("/teams/flight-desk/").content.decode().split('id="member-puppet"')[1]
    assert "invited by owner, vouched for by grace" in row.split("</tr>")[0]


def test_the_inviter_is_told_on_the_team_page_why_she_cannot_vouch(team, people, puppet, signed_in):
    membership = team.memberships.get(user=puppet)
    owner = signed_in(people["owner"])
    response = owner.post(f"/teams/flight-desk/members/{membership.pk}/vouch")
    assert response.status_code == 400
    assert "owner invited puppet; another owner" in response.content.decode()
    membership.refresh_from_db()
    assert membership.vouched_by is None


# --- Revision.approve itself -------------------------------------------------------------


def test_approve_called_directly_refuses_the_author(flight, people):
    revision = written_by(flight, people["owner"], "by the owner")
    with pytest.raises(NotApprovable, match="owner saved r2 and cannot approve it"):
        revision.approve(by=people["owner"])
    assert Revision.objects.get(pk=revision.pk).approved_at is None


def test_approve_called_directly_refuses_an_earlier_author(flight, people):
    written_by(flight, people["editor"], "the editor's change")
    on_top = written_by(flight, people["owner"], "the owner's change")
    with pytest.raises(NotApprovable, match="editor saved r2, which an approval of r3 covers"):
        on_top.approve(by=people["editor"])


def test_approve_called_directly_refuses_the_authors_invitee(flight, people, puppet):
    revision = written_by(flight, people["owner"], "by the owner")
    with pytest.raises(NotApprovable, match="puppet was invited to Flight desk by owner"):
        revision.approve(by=puppet)


def test_approve_called_directly_refuses_someone_without_the_reviewer_role(flight, people):
    with pytest.raises(NotApprovable, match="viewer is a viewer on flight_roundtrip"):
        flight.head().approve(by=people["viewer"])
    with pytest.raises(NotApprovable, match="outsider has no role on flight_roundtrip"):
        flight.head().approve(by=people["outsider"])
    assert flight.head().approved_at is None


def test_approve_called_directly_by_someone_unrelated_approves(flight, people, puppet):
    revision = written_by(flight, people["owner"], "by the owner")
    assert revision.approve(by=people["reviewer"]).tag == "approved-2"
