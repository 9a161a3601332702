"""People: signing in, teams and their members, roles on one chain, where new chains go."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from chains.models import Chain, Invitation, Role, Team, TeamTaken, TooManyTeams

ROOT = Path(__file__).resolve().parent.parent
SMALL = "id: small\nactions:\n  - {id: look, effect: read}\n"


# --- signing in ------------------------------------------------------------------------


def test_signing_in_with_a_wrong_password_says_so(anonymous, db):
    get_user_model().objects.create_user("ada", password="right-passphrase-7")
    response = anonymous.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert "do not match an account" in response.content.decode()
    assert (
        anonymous.post(
            "/accounts/login/", {"username": "ada", "password": "right-passphrase-7"}
        ).status_code
        == 302
    )


# --- teams ------------------------------------------------------------------------------


def test_founding_a_team_makes_its_founder_the_owner(people, signed_in):
    response = signed_in(people["viewer"]).post("/teams/", {"name": "Rail desk"})
    assert response["Location"] == "/teams/rail-desk/"
    assert Team.objects.get(slug="rail-desk").role_of(people["viewer"]) == Role.OWNER


def test_a_team_slug_in_use_is_refused(people, signed_in):
    response = signed_in(people["viewer"]).post("/teams/", {"name": "x", "slug": "flight-desk"})
    assert response.status_code == 400
    assert "a team called &#x27;flight-desk&#x27; exists already" in response.content.decode()


def test_a_team_without_a_name_is_a_400_that_keeps_the_slug_typed(people, signed_in):
    response = signed_in(people["viewer"]).post("/teams/", {"name": "  ", "slug": "rail"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "name: give the team a name of 1 to 200 characters" in body
    assert 'value="rail"' in body
    assert not Team.objects.filter(slug="rail").exists()


def test_a_team_form_sent_empty_asks_for_a_name(people, signed_in):
    response = signed_in(people["viewer"]).post("/teams/", {"name": ""})
    assert response.status_code == 400
    assert "name: give the team a name of 1 to 200 characters" in response.content.decode()


def test_a_team_name_that_makes_no_slug_is_refused(people, signed_in):
    response = signed_in(people["viewer"]).post("/teams/", {"name": "!!!"})
    assert response.status_code == 400
    assert "slug: give the team a name or slug with a letter or digit" in response.content.decode()


def test_an_account_founds_no_more_teams_than_the_setting_allows(people, signed_in, settings):
    settings.TEAMS_PER_ACCOUNT = 2  # the outsider founded "Elsewhere" already
    client = signed_in(people["outsider"])
    assert client.post("/teams/", {"name": "Second"}).status_code == 302
    response = client.post("/teams/", {"name": "Third"})
    assert response.status_code == 400
    assert "outsider has founded 2 teams, the most one account may" in response.content.decode()
    assert not Team.objects.filter(name="Third").exists()


def test_teams_founded_and_left_still_count_against_the_limit(team, people, settings):
    settings.TEAMS_PER_ACCOUNT = 1
    elsewhere = Team.objects.get(slug="elsewhere")
    elsewhere.add(people["owner"], Role.OWNER)
    elsewhere.remove(people["outsider"])
    with pytest.raises(TooManyTeams):
        Team.objects.found("Again", owner=people["outsider"])


def test_founding_teams_is_rate_limited(people, signed_in, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "team": (1, 3600)}
    client = signed_in(people["outsider"])
    assert client.post("/teams/", {"name": "Second"}).status_code == 302
    assert client.post("/teams/", {"name": "Third"}).status_code == 429
    assert not Team.objects.filter(name="Third").exists()


def test_the_member_form_is_rate_limited(team, people, signed_in, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "invite": (1, 3600)}
    owner = signed_in(people["owner"])
    owner.post("/teams/flight-desk/", {"username": "a", "role": "viewer"})
    response = owner.post("/teams/flight-desk/", {"username": "b", "role": "viewer"})
    assert response.status_code == 429
    assert not Invitation.objects.filter(invitee_name="b").exists()


def test_founding_a_team_with_a_slug_in_use_raises_and_stores_nothing(team, people):
    with pytest.raises(TeamTaken, match="flight-desk"):
        Team.objects.found("Other desk", owner=people["viewer"], slug="flight-desk")
    assert Team.objects.filter(name="Other desk").count() == 0


def test_an_owner_adding_someone_makes_no_member_until_they_accept(team, people, signed_in):
    signed_in(people["owner"]).post(
        "/teams/flight-desk/", {"username": "outsider", "role": "reviewer"}
    )
    assert team.role_of(people["outsider"]) is None


def test_an_owner_changes_a_members_role(team, people, signed_in):
    signed_in(people["owner"]).post("/teams/flight-desk/", {"username": "viewer", "role": "editor"})
    assert team.role_of(people["viewer"]) == Role.EDITOR


def test_the_member_form_answers_alike_for_a_name_with_an_account_and_one_without(
    team, people, signed_in
):
    owner = signed_in(people["owner"])
    known = owner.post("/teams/flight-desk/", {"username": "outsider", "role": "viewer"})
    unknown = owner.post("/teams/flight-desk/", {"username": "nobody", "role": "viewer"})
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"]
    page = owner.get("/teams/flight-desk/").content.decode()
    assert "outsider, invited as viewer" in page and "nobody, invited as viewer" in page


def test_an_invitation_to_a_name_without_an_account_can_be_answered_by_nobody(
    team, people, signed_in
):
    signed_in(people["owner"]).post("/teams/flight-desk/", {"username": "nobody", "role": "owner"})
    invitation = Invitation.objects.get(invitee_name="nobody")
    assert invitation.invitee is None and invitation.prefix is None
    late = get_user_model().objects.create_user("nobody")  # an account of that name, made later
    answer = signed_in(late).post(f"/invitations/{invitation.pk}/", {"answer": "accept"})
    assert answer.status_code == 404
    assert team.role_of(late) is None


def test_the_grant_form_answers_alike_for_an_outsider_and_a_name_without_an_account(
    flight, people, signed_in
):
    owner = signed_in(people["owner"])
    outsider = owner.post(f"{flight.url()}people", {"username": "outsider", "role": "editor"})
    nobody = owner.post(f"{flight.url()}people", {"username": "nobody", "role": "editor"})
    assert outsider.status_code == nobody.status_code == 400
    said = "is not a member of Flight desk; a role on one of its chains is for its members"
    assert f"outsider {said}" in outsider.content.decode()
    assert f"nobody {said}" in nobody.content.decode()


def test_removing_a_name_that_is_no_member_is_refused(team, people, signed_in):
    response = signed_in(people["owner"]).post(
        "/teams/flight-desk/", {"username": "outsider", "role": "remove"}
    )
    assert response.status_code == 400
    assert "nobody called &#x27;outsider&#x27; is a member of Flight desk" in (
        response.content.decode()
    )


def test_the_last_owner_cannot_leave_or_step_down(team, people, signed_in):
    owner = signed_in(people["owner"])
    for role in ("remove", "editor"):
        response = owner.post("/teams/flight-desk/", {"username": "owner", "role": role})
        assert response.status_code == 400
        assert "the last owner of Flight desk" in response.content.decode()
    assert team.role_of(people["owner"]) == Role.OWNER


def test_only_an_owner_changes_the_members(team, people, signed_in):
    response = signed_in(people["editor"]).post(
        "/teams/flight-desk/", {"username": "viewer", "role": "owner"}
    )
    assert response.status_code == 403
    assert team.role_of(people["viewer"]) == Role.VIEWER


# --- roles on one chain -----------------------------------------------------------------


def test_a_member_form_without_a_role_is_refused_naming_the_choices(team, people, signed_in):
    url = f"/teams/{team.slug}/"
    response = signed_in(people["owner"]).post(url, {"username": "outsider"})
    assert response.status_code == 400
    assert "role: expected viewer | reviewer | editor | owner or remove, got" in (
        response.content.decode()
    )
    assert team.role_of(people["outsider"]) is None


def test_a_token_without_a_name_is_a_400_and_issues_nothing(people, signed_in):
    response = signed_in(people["viewer"]).post("/account/tokens/", {"name": " "})
    assert response.status_code == 400
    assert "name: give the token a name of 1 to 100 characters" in response.content.decode()
    assert not people["viewer"].api_tokens.exists()


def test_a_chain_owner_grants_and_takes_back_a_role(flight, people, signed_in):
    owner = signed_in(people["owner"])
    owner.post(f"/chains/{flight.key}/people", {"username": "viewer", "role": "editor"})
    assert flight.role_of(people["viewer"]) == Role.EDITOR
    owner.post(f"/chains/{flight.key}/people", {"username": "viewer", "role": "remove"})
    assert flight.role_of(people["viewer"]) == Role.VIEWER


def test_a_grant_to_someone_outside_the_team_is_a_400_saying_why(flight, people, signed_in):
    response = signed_in(people["owner"]).post(
        f"/chains/{flight.key}/people", {"username": "outsider", "role": "editor"}
    )
    assert response.status_code == 400
    assert "outsider is not a member of Flight desk" in response.content.decode()
    assert flight.role_of(people["outsider"]) is None


def test_a_grant_that_would_demote_a_team_owner_is_a_400_saying_why(
    flight, team, people, signed_in
):
    team.add(people["editor"], Role.OWNER)
    response = signed_in(people["editor"]).post(
        f"/chains/{flight.key}/people", {"username": "owner", "role": "viewer"}
    )
    assert response.status_code == 400
    assert "owner owns Flight desk" in response.content.decode()
    assert flight.role_of(people["owner"]) == Role.OWNER


def test_removing_a_member_on_the_team_page_ends_their_grants(flight, team, people, signed_in):
    flight.grant(people["viewer"], Role.OWNER)
    signed_in(people["owner"]).post(
        f"/teams/{team.slug}/", {"username": "viewer", "role": "remove"}
    )
    assert flight.role_of(people["viewer"]) is None
    assert not flight.roles.exists()


def test_an_unknown_role_is_refused_naming_the_choices(flight, people, signed_in):
    response = signed_in(people["owner"]).post(
        f"/chains/{flight.key}/people", {"username": "viewer", "role": "god"}
    )
    assert response.status_code == 400
    assert (
        "role: expected viewer | reviewer | editor | owner or remove" in response.content.decode()
    )


# --- where new chains go ----------------------------------------------------------------


def test_an_import_by_an_editor_belongs_to_their_team(team, people, signed_in):
    response = signed_in(people["editor"]).post(
        "/chains/import/", {"text": SMALL, "name": "s.yaml"}
    )
    assert response.status_code == 302
    assert Chain.objects.get(key="small").team == team


def test_a_viewer_cannot_create_chains_and_is_told_how_to(people, signed_in):
    response = signed_in(people["viewer"]).post(
        "/chains/import/", {"text": SMALL, "name": "s.yaml"}
    )
    assert response.status_code == 400
    assert "you edit in no team" in response.content.decode()
    assert not Chain.objects.filter(key="small").exists()


def test_someone_in_two_teams_must_choose_one(team, people, signed_in):
    Team.objects.found("Second desk", owner=people["editor"], slug="second")
    editor = signed_in(people["editor"])
    response = editor.post("/chains/import/", {"text": SMALL, "name": "s.yaml"})
    assert "choose the team the new chain belongs to" in response.content.decode()
    editor.post("/chains/import/", {"text": SMALL, "name": "s.yaml", "team": "second"})
    assert Chain.objects.get(key="small").team.slug == "second"


def test_the_wizard_creates_the_chain_in_the_chosen_team(team, people, signed_in):
    response = signed_in(people["editor"]).post(
        "/chains/new/", {"create": "1", "key": "fresh", "title": "Fresh"}
    )
    assert response.status_code == 302
    assert Chain.objects.get(key="fresh").team == team


# --- the command line -------------------------------------------------------------------


def test_the_command_line_imports_into_a_named_team(team, tmp_path):
    source = tmp_path / "small.yaml"
    source.write_text(SMALL)
    call_command("chain", "import", str(source), "--team", "flight-desk", stdout=StringIO())
    assert Chain.objects.get(key="small").team == team


def test_an_unknown_team_on_the_command_line_is_refused(db, tmp_path):
    source = tmp_path / "small.yaml"
    source.write_text(SMALL)
    with pytest.raises(CommandError, match="--team: no team called 'nowhere'"):
        call_command("chain", "import", str(source), "--team", "nowhere", stdout=StringIO())
    assert not Chain.objects.exists()


def test_a_chain_without_a_team_and_a_teams_chain_of_the_same_id_are_two_chains(team):
    orphan = Chain.objects.store({"id": "orphan"}).chain
    adopted = Chain.objects.store({"id": "orphan"}, team=team).chain
    assert orphan != adopted and orphan.team is None and adopted.team == team


def test_the_demo_account_is_made_once_and_its_password_printed_again(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    first, again = StringIO(), StringIO()
    call_command("demo_account", stdout=first)
    call_command("demo_account", stdout=again)
    password = (tmp_path / "demo-password").read_text().strip()
    assert first.getvalue() == again.getvalue()
    assert f"Sign in as demo with the password {password}" in first.getvalue()
    demo = get_user_model().objects.get(username="demo")
    assert demo.check_password(password) and not demo.is_superuser
    assert Team.objects.get(slug="demo").role_of(demo) == Role.OWNER


# --- what each role is offered ----------------------------------------------------------


def test_a_viewer_gets_the_workspace_with_every_edit_control_disabled(flight, people, signed_in):
    body = signed_in(people["viewer"]).get(f"/chains/{flight.key}/").content.decode()
    assert 'id="read-only"' in body
    assert '<fieldset class="bare" disabled>' in body


def test_an_editor_gets_the_workspace_to_edit(flight, people, signed_in):
    body = signed_in(people["editor"]).get(f"/chains/{flight.key}/").content.decode()
    assert 'id="read-only"' not in body
    assert '<fieldset class="bare" >' in body


def test_a_viewer_may_simulate_but_is_not_offered_to_save(flight, people, signed_in):
    viewer = signed_in(people["viewer"]).get(f"/chains/{flight.key}/simulate").content.decode()
    editor = signed_in(people["editor"]).get(f"/chains/{flight.key}/simulate").content.decode()
    assert 'id="save-form"' not in viewer
    assert 'id="save-form"' in editor


def test_a_viewer_is_not_offered_to_launch_a_campaign(flight, people, signed_in):
    body = signed_in(people["viewer"]).get(f"/chains/{flight.key}/campaigns/").content.decode()
    assert "launch-form" not in body
    assert "Launching a campaign needs the editor role" in body


# --- what an outsider learns of a team -----------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/teams/{}/"),
        ("post", "/teams/{}/"),
        ("post", "/teams/{}/invitations/"),
        ("post", "/teams/{}/members/1/vouch"),
    ],
)
def test_an_outsider_gets_the_same_404_for_a_team_that_exists_and_one_that_does_not(
    team, people, signed_in, method, path
):
    outsider = signed_in(people["outsider"])
    real = getattr(outsider, method)(path.format("flight-desk"), {"role": "viewer"})
    ghost = getattr(outsider, method)(path.format("no-such-desk"), {"role": "viewer"})
    assert real.status_code == ghost.status_code == 404
    assert shown(real, "flight-desk") == shown(ghost, "no-such-desk")


def shown(response, slug: str) -> str:
    """The page without its slug and its (per-response masked) CSRF tokens."""
    page = response.content.decode().replace(slug, "SLUG")
    return re.sub(r'(CSRFToken": "|csrfmiddlewaretoken" value=")[^"]+', r"\1", page)


def test_a_viewer_may_zoom_and_find_nodes_but_not_connect_them(flight, people, signed_in):
    body = signed_in(people["viewer"]).get(f"/chains/{flight.key}/").content.decode()
    toolbar = body.split('class="toolbar"')[1].split("</div>")[0]
    disabled = '<fieldset class="bare connect-tools" disabled>'
    connect = toolbar.split(disabled)[1].split("</fieldset>")[0]
    assert 'data-mode="derived_from"' in connect
    outside = toolbar.replace(connect, "")
    assert 'data-zoom="in"' in outside and 'id="node-search-input"' in outside
    assert toolbar.count("<fieldset") == 1  # only the connect modes are disabled
