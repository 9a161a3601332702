"""Joining a team: an owner invites, and nobody is a member until they accept.

An invitation is either addressed to a username (the member form of the team
page; the person answers it on their Teams page) or a link with a secret (the
invitation form; whoever opens it signed in may accept, and someone without an
account may create one through it, even with sign-up closed). Both are single
use, expire after ``INVITATION_DAYS`` and can be revoked by the team's owners.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from chains.models import ApiToken, Invitation, Role
from chains.services import invitations
from tests.test_settings import run_python, settings_json

PASSWORD = "a-long-passphrase-7"
SMALL = "id: small\nactions:\n  - {id: look, effect: read}\n"


def link_for(team, people, role=Role.EDITOR) -> str:
    """The path of a fresh link invitation to ``team``, made by its owner."""
    _, secret = invitations.invite(team, people["owner"], role)
    return f"/invite/{secret}/"


# --- an owner's add is an invitation ------------------------------------------------------


def test_an_owner_adding_someone_invites_them_and_makes_no_member(team, people, signed_in):
    response = signed_in(people["owner"]).post(
        "/teams/flight-desk/", {"username": "outsider", "role": "reviewer"}
    )
    assert response.status_code == 302
    assert team.role_of(people["outsider"]) is None
    pending = Invitation.objects.get(team=team, invitee=people["outsider"])
    assert pending.role == Role.REVIEWER
    page = signed_in(people["owner"]).get("/teams/flight-desk/").content.decode()
    assert "outsider" in page and "invited as reviewer" in page


def test_the_invitee_sees_the_invitation_and_accepting_makes_them_a_member(team, people, signed_in):
    signed_in(people["owner"]).post(
        "/teams/flight-desk/", {"username": "outsider", "role": "editor"}
    )
    outsider = signed_in(people["outsider"])
    page = outsider.get("/teams/").content.decode()
    assert 'id="invitations"' in page and "Flight desk" in page
    pending = Invitation.objects.get(invitee=people["outsider"])
    response = outsider.post(f"/invitations/{pending.pk}/", {"answer": "accept"})
    assert response["Location"] == "/teams/flight-desk/"
    assert team.role_of(people["outsider"]) == Role.EDITOR


def test_declining_an_invitation_leaves_the_team_as_it_was(team, people, signed_in):
    pending, _ = invitations.invite(team, people["owner"], Role.EDITOR, username="outsider")
    response = signed_in(people["outsider"]).post(
        f"/invitations/{pending.pk}/", {"answer": "decline"}
    )
    assert response.status_code == 302
    assert team.role_of(people["outsider"]) is None
    pending.refresh_from_db()
    assert pending.status == "declined"
    again = signed_in(people["outsider"]).post(f"/invitations/{pending.pk}/", {"answer": "accept"})
    assert again.status_code == 410
    assert team.role_of(people["outsider"]) is None


def test_only_the_invitee_may_answer_an_invitation_addressed_to_them(team, people, signed_in):
    pending, _ = invitations.invite(team, people["owner"], Role.OWNER, username="outsider")
    intruder = get_user_model().objects.create_user("mallory")
    response = signed_in(intruder).post(f"/invitations/{pending.pk}/", {"answer": "accept"})
    assert response.status_code == 404
    assert team.role_of(intruder) is None


def test_the_invitees_ci_import_works_unchanged_until_they_accept(team, people, signed_in):
    signed_in(people["owner"]).post(
        "/teams/flight-desk/", {"username": "outsider", "role": "editor"}
    )
    _, secret = ApiToken.objects.issue(people["outsider"], "ci")
    ci = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = ci.post(
        "/api/chains", {"document": SMALL, "filename": "s.yaml"}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert [c["key"] for c in ci.get("/api/chains").json()] == ["small"]


def test_a_non_owner_cannot_invite(team, people, signed_in):
    editor = signed_in(people["editor"])
    by_name = editor.post("/teams/flight-desk/", {"username": "outsider", "role": "viewer"})
    by_link = editor.post("/teams/flight-desk/invitations/", {"role": "viewer"})
    assert by_name.status_code == 403 and by_link.status_code == 403
    assert not Invitation.objects.exists()
    with pytest.raises(invitations.NotAnOwner):
        invitations.invite(team, people["editor"], Role.VIEWER)


def test_a_second_invitation_to_someone_replaces_the_first(team, people, signed_in):
    owner = signed_in(people["owner"])
    owner.post("/teams/flight-desk/", {"username": "outsider", "role": "viewer"})
    owner.post("/teams/flight-desk/", {"username": "outsider", "role": "editor"})
    (pending,) = invitations.pending_for(people["outsider"])
    assert pending.role == Role.EDITOR


def test_inviting_a_member_says_they_belong_already(team, people, signed_in):
    with pytest.raises(invitations.InvitationRefused, match="viewer is a member of Flight desk"):
        invitations.invite(team, people["owner"], Role.EDITOR, username="viewer")


# --- links --------------------------------------------------------------------------------


def test_an_owner_creates_a_link_shown_once_and_never_cached(team, people, signed_in):
    response = signed_in(people["owner"]).post(
        "/teams/flight-desk/invitations/", {"role": "reviewer"}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    secret = re.search(r"/invite/(inv_[\w-]+)/", response.content.decode())[1]
    invitation = Invitation.objects.get(team=team)
    assert invitation.role == Role.REVIEWER
    assert secret not in invitation.digest and len(invitation.digest) == 64
    later = signed_in(people["owner"]).get("/teams/flight-desk/").content.decode()
    assert secret not in later and "link, reviewer" in later


def test_a_link_accepted_makes_a_member_with_its_role_and_is_then_used_up(team, people, signed_in):
    path = link_for(team, people, Role.REVIEWER)
    outsider = signed_in(people["outsider"])
    assert "Flight desk" in outsider.get(path).content.decode()
    assert team.role_of(people["outsider"]) is None  # opening the link joins nobody
    response = outsider.post(path, {"answer": "accept"})
    assert response["Location"] == "/teams/flight-desk/"
    assert team.role_of(people["outsider"]) == Role.REVIEWER
    other = get_user_model().objects.create_user("grace")
    used = signed_in(other).post(path, {"answer": "accept"})
    assert used.status_code == 410
    assert "has been used" in used.content.decode()
    assert team.role_of(other) is None


def test_accepting_twice_is_harmless(team, people, signed_in):
    path = link_for(team, people, Role.REVIEWER)
    outsider = signed_in(people["outsider"])
    outsider.post(path, {"answer": "accept"})
    again = outsider.post(path, {"answer": "accept"})
    assert again.status_code == 302
    assert outsider.get(path)["Location"] == "/teams/flight-desk/"
    assert team.role_of(people["outsider"]) == Role.REVIEWER


def test_a_link_for_a_team_you_belong_to_says_so_and_stays_unused(team, people, signed_in):
    path = link_for(team, people, Role.OWNER)
    response = signed_in(people["viewer"]).post(path, {"answer": "accept"})
    assert response.status_code == 409
    assert "You belong to Flight desk already" in response.content.decode()
    assert team.role_of(people["viewer"]) == Role.VIEWER
    assert Invitation.objects.get().status == "pending"


def test_an_expired_link_is_refused_and_joins_nobody(team, people, signed_in, settings):
    path = link_for(team, people)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    for method in ("get", "post"):
        response = getattr(signed_in(people["outsider"]), method)(path, {"answer": "accept"})
        assert response.status_code == 410
        assert "has expired" in response.content.decode()
    assert team.role_of(people["outsider"]) is None


def test_a_link_expires_after_the_configured_days(team, people, settings):
    settings.INVITATION_DAYS = 3
    invitation, _ = invitations.invite(team, people["owner"], Role.VIEWER)
    lasts = invitation.expires_at - invitation.created_at
    assert timedelta(days=3) - timedelta(seconds=5) < lasts <= timedelta(days=3)


def test_invitations_last_a_week_unless_the_environment_says_otherwise():
    assert settings_json("settings.INVITATION_DAYS", DEBUG="1") == 7
    assert settings_json("settings.INVITATION_DAYS", DEBUG="1", INVITATION_DAYS="2") == 2


def test_invitations_lasting_no_day_stop_the_process():
    result = run_python("import django; django.setup()", DEBUG="1", INVITATION_DAYS="0")
    assert result.returncode != 0
    assert "INVITATION_DAYS" in result.stderr


def test_a_revoked_link_is_refused(team, people, signed_in):
    path = link_for(team, people)
    invitation = Invitation.objects.get()
    response = signed_in(people["owner"]).post(
        f"/teams/flight-desk/invitations/{invitation.pk}/revoke"
    )
    assert response.status_code == 302
    refused = signed_in(people["outsider"]).post(path, {"answer": "accept"})
    assert refused.status_code == 410
    assert "was revoked" in refused.content.decode()
    assert team.role_of(people["outsider"]) is None


def test_only_an_owner_revokes(team, people, signed_in):
    link_for(team, people)
    invitation = Invitation.objects.get()
    url = f"/teams/flight-desk/invitations/{invitation.pk}/revoke"
    assert signed_in(people["editor"]).post(url).status_code == 403
    assert Invitation.objects.get().status == "pending"


@pytest.mark.parametrize(
    "secret", ["inv_00000000_nope", "nonsense", "inv_x", "inv_00000000_" + "a" * 32]
)
def test_an_unknown_link_is_a_404(people, signed_in, secret):
    response = signed_in(people["outsider"]).post(f"/invite/{secret}/", {"answer": "accept"})
    assert response.status_code == 404
    assert "no such invitation" in response.content.decode()


def test_a_link_with_the_right_prefix_and_a_wrong_secret_is_a_404(team, people, signed_in):
    path = link_for(team, people)
    forged = path[:-3] + ("x" if path[-3] != "x" else "y") + path[-2:]
    assert signed_in(people["outsider"]).post(forged, {"answer": "accept"}).status_code == 404
    assert team.role_of(people["outsider"]) is None


def test_declining_a_link_uses_it_up(team, people, signed_in):
    path = link_for(team, people)
    signed_in(people["outsider"]).post(path, {"answer": "decline"})
    assert Invitation.objects.get().status == "declined"
    assert signed_in(people["outsider"]).post(path, {"answer": "accept"}).status_code == 410


# --- an account through a link -------------------------------------------------------------


def account_form(username: str) -> dict[str, str]:
    return {"username": username, "password1": PASSWORD, "password2": PASSWORD}


def test_someone_without_an_account_joins_through_a_link_while_sign_up_is_closed(
    team, people, anonymous, settings
):
    settings.ALLOW_SIGNUP = False
    path = link_for(team, people, Role.EDITOR)
    page = anonymous.get(path).content.decode()
    assert 'id="invitation-account-form"' in page
    response = anonymous.post(path + "account", account_form("ada"))
    assert response["Location"] == "/teams/flight-desk/"
    ada = get_user_model().objects.get(username="ada")
    assert team.role_of(ada) == Role.EDITOR
    assert Invitation.objects.get().status == "accepted"
    assert anonymous.get("/").status_code == 200  # signed in


def test_someone_signed_out_is_sent_to_sign_in_and_back_to_the_link(team, people, anonymous):
    path = link_for(team, people)
    assert f'href="/accounts/login/?next={path}"' in anonymous.get(path).content.decode()
    response = anonymous.post(path, {"answer": "accept"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/invite/")
    assert Invitation.objects.get().status == "pending"


def test_an_account_through_a_used_link_is_refused_and_not_created(team, people, anonymous):
    path = link_for(team, people)
    signed_in_client = Client()
    signed_in_client.force_login(people["outsider"])
    signed_in_client.post(path, {"answer": "accept"})
    response = anonymous.post(path + "account", account_form("ada"))
    assert response.status_code == 410
    assert not get_user_model().objects.filter(username="ada").exists()


def test_an_account_through_a_link_refuses_a_lookalike_username(team, people, anonymous):
    path = link_for(team, people)
    response = anonymous.post(path + "account", account_form("оutsider"))  # Cyrillic о
    assert response.status_code == 400
    assert "looks like a username already in use" in response.content.decode()
    assert Invitation.objects.get().status == "pending"


def test_accounts_through_a_link_count_against_the_sign_up_limit(team, people, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "signup": (1, 3600)}
    path = link_for(team, people)
    Client().post(path + "account", {"username": "x"})  # refused form, counted all the same
    response = Client().post(path + "account", account_form("ada"))
    assert response.status_code == 429
    assert not get_user_model().objects.filter(username="ada").exists()


def test_the_home_page_points_the_invitee_to_their_pending_invitations(team, people, signed_in):
    invitations.invite(team, people["owner"], Role.VIEWER, username="outsider")
    body = signed_in(people["outsider"]).get("/").content.decode()
    assert 'id="pending-invitations"' in body
    assert f"{team.name}" in body and 'href="/teams/"' in body


def test_the_home_page_says_nothing_of_invitations_to_someone_without_any(people, signed_in):
    body = signed_in(people["outsider"]).get("/").content.decode()
    assert 'id="pending-invitations"' not in body


# --- an invitation stands on its maker's place in the team ------------------------------------


def test_a_removed_owner_cannot_walk_back_in_through_her_own_link(team, people, signed_in):
    second = get_user_model().objects.create_user("grace")
    team.add(second, Role.OWNER)
    _, secret = invitations.invite(team, second, Role.OWNER)
    team.remove(second)
    response = signed_in(second).post(f"/invite/{secret}/", {"answer": "accept"})
    assert response.status_code == 410
    assert team.role_of(second) is None


def test_removing_a_member_revokes_every_open_invitation_they_made(team, people):
    second = get_user_model().objects.create_user("grace")
    team.add(second, Role.OWNER)
    link, _ = invitations.invite(team, second, Role.VIEWER)
    addressed, _ = invitations.invite(team, second, Role.EDITOR, username="outsider")
    kept, _ = invitations.invite(team, people["owner"], Role.VIEWER)
    team.remove(second)
    statuses = {i.pk: i.status for i in Invitation.objects.all()}
    assert statuses == {link.pk: "revoked", addressed.pk: "revoked", kept.pk: "pending"}


def test_an_owner_stepping_down_revokes_the_invitations_she_made(team, people):
    second = get_user_model().objects.create_user("grace")
    team.add(second, Role.OWNER)
    made, _ = invitations.invite(team, second, Role.VIEWER)
    team.add(second, Role.EDITOR)
    made.refresh_from_db()
    assert made.status == "revoked"


def test_a_link_whose_maker_is_no_longer_an_owner_is_refused_even_if_left_open(
    team, people, signed_in
):
    second = get_user_model().objects.create_user("grace")
    team.add(second, Role.OWNER)
    _, secret = invitations.invite(team, second, Role.OWNER)
    team.memberships.filter(user=second).delete()  # as a race with the removal might leave it
    response = signed_in(people["outsider"]).post(f"/invite/{secret}/", {"answer": "accept"})
    assert response.status_code == 410
    assert "no longer an owner" in response.content.decode()
    assert team.role_of(people["outsider"]) is None


def test_accepting_an_invitation_records_who_invited_whom(team, people, signed_in):
    path = link_for(team, people, Role.REVIEWER)
    signed_in(people["outsider"]).post(path, {"answer": "accept"})
    membership = team.memberships.get(user=people["outsider"])
    assert membership.invited_by == people["owner"]
    page = signed_in(people["owner"]).get("/teams/flight-desk/").content.decode()
    row = page.split('id="member-outsider"')[1].split("</tr>")[0]
    assert "invited by owner" in row


def test_an_account_made_through_a_link_records_who_invited_it(team, people, anonymous, settings):
    settings.ALLOW_SIGNUP = False
    path = link_for(team, people, Role.REVIEWER)
    anonymous.post(path + "account", account_form("ada"))
    ada = get_user_model().objects.get(username="ada")
    assert team.memberships.get(user=ada).invited_by == people["owner"]
