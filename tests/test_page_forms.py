"""Refused forms outside the workspace: a 4xx that re-renders the bound form, the
person's input kept and the reason beside the field it names, nothing saved."""

from __future__ import annotations

import re
from html import unescape

import pytest

from chains.models import ApiToken, Chain, Comment, Decision, Exploration, Review, Role, Team
from tests.test_openapi_page import SKYLOOM

pytestmark = pytest.mark.django_db


def beside(body: str, field: str) -> str:
    """The reason shown beside ``field`` (the ``id_<field>-error`` paragraph), unescaped."""
    found = re.search(rf'<p class="field-error" id="id_{field}-error">(.*?)</p>', body, re.S)
    assert found, f"no error beside {field}"
    return unescape(found.group(1))


def described_by(body: str, name: str) -> bool:
    """Whether the input ``name`` is marked invalid and points at its reason."""
    tag = re.search(rf'<(?:input|textarea|select) [^>]*name="{name}"[^>]*>', body)
    return bool(tag) and f'aria-describedby="id_{name}-error"' in tag.group(0)


def test_an_empty_comment_is_refused_beside_its_box_keeping_the_anchor(flight, people, signed_in):
    data = {"revision": "1", "anchor": "handle:quote_id", "body": "  "}
    response = signed_in(people["reviewer"]).post(flight.url("comments"), data)
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "body") == "body: a comment needs some text"
    assert described_by(body, "body") and 'value="handle:quote_id"' in body
    assert not Comment.objects.exists()


def test_a_review_request_naming_nobody_is_refused_beside_the_reviewers(flight, people, signed_in):
    data = {"revision": "1", "note": "the cabin rule"}
    body = signed_in(people["editor"]).post(f"{flight.url()}reviews/", data).content.decode()
    assert beside(body, "reviewers") == "reviewers: name at least one reviewer"
    assert ">the cabin rule</textarea>" in body
    assert not Review.objects.exists()


def test_a_review_request_of_a_revision_that_is_not_a_number_is_a_400_beside_it(
    flight, people, signed_in
):
    data = {"revision": "r1", "reviewers": ["reviewer"]}
    response = signed_in(people["editor"]).post(f"{flight.url()}reviews/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "revision").startswith("revision: Input should be a valid integer")
    assert described_by(body, "revision") and 'value="r1"' in body
    assert not Review.objects.exists()


def test_requesting_changes_without_a_note_is_refused_beside_the_note(flight, people, signed_in):
    review = Review.objects.request(flight.head(), people["editor"], ["reviewer"])
    url = f"{flight.url()}reviews/{review.pk}/vote"
    response = signed_in(people["reviewer"]).post(url, {"vote": "request_changes", "note": ""})
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "note") == "note: say what should change"
    assert review.votes.get().decision == Decision.PENDING


def test_a_campaign_box_out_of_range_is_refused_beside_that_box(client, team):
    chain = Chain.objects.store({"id": "tiny", "title": "Tiny"}, team=team).chain
    data = {"revision": "1", "max_faults": "7", "max_events": "60", "shards": "1"}
    response = client.post(chain.url("campaigns"), data)
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "max_faults").startswith("max_faults: faults per path must be")
    assert described_by(body, "max_faults") and not described_by(body, "shards")
    assert not Exploration.objects.exists()


def test_an_unticked_crash_box_is_kept_unticked_on_a_refused_launch(client, team):
    chain = Chain.objects.store({"id": "tiny", "title": "Tiny"}, team=team).chain
    data = {"revision": "1", "max_faults": "9", "max_events": "60", "shards": "1"}
    body = client.post(chain.url("campaigns"), data).content.decode()
    assert re.search(r'<input type="checkbox" name="crashes"\s*>', body)


def test_a_fit_answer_outside_its_choices_is_refused_beside_its_question(client):
    response = client.post("/chains/new/", {"commits": "maybe", "single_call": "no"})
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "commits").startswith("commits: Input should be")
    assert 'name="single_call" value="no" checked' in body


def test_a_malformed_chain_id_is_refused_beside_the_id_box(client):
    data = {"single_call": "no", "create": "1", "key": "bad id", "title": "Trip"}
    body = client.post("/chains/new/", data).content.decode()
    assert beside(body, "key").startswith("key: a chain id has letters, digits")
    assert described_by(body, "key") and 'value="Trip"' in body
    assert not Chain.objects.exists()


def test_a_team_slug_in_use_is_refused_beside_the_slug_keeping_the_name(people, signed_in):
    data = {"name": "Rail desk", "slug": "flight-desk"}
    response = signed_in(people["viewer"]).post("/teams/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert (
        beside(body, "slug") == "slug: a team called 'flight-desk' exists already; choose another"
    )
    assert 'value="Rail desk"' in body and described_by(body, "slug")
    assert Team.objects.filter(name="Rail desk").count() == 0


def test_a_member_role_that_is_not_a_role_is_refused_beside_the_menu(people, signed_in):
    data = {"username": "outsider", "role": "boss"}
    response = signed_in(people["owner"]).post("/teams/flight-desk/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "role").startswith("role: expected viewer")
    assert 'value="outsider"' in body
    assert Team.objects.get(slug="flight-desk").role_of(people["outsider"]) is None


def test_a_grant_to_nobody_is_refused_beside_the_username(flight, people, signed_in):
    data = {"username": "ghost", "role": "editor"}
    response = signed_in(people["owner"]).post(flight.url("people"), data)
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "username").startswith("username: ghost is not a member")
    assert "<option selected>editor</option>" in body
    assert not flight.roles.exists()


def test_a_token_without_a_name_is_refused_beside_the_name(people, signed_in):
    response = signed_in(people["editor"]).post("/account/tokens/", {"name": "  "})
    body = response.content.decode()
    assert response.status_code == 400
    assert beside(body, "name") == "name: give the token a name of 1 to 100 characters"
    assert not ApiToken.objects.exists()


def test_an_effect_that_is_not_one_is_a_400_naming_the_operation(client, team):
    chain = Chain.objects.store({"id": "tiny", "title": "Tiny"}, team=team).chain
    upload = client.post(chain.url("openapi"), {"text": SKYLOOM.read_text()})["Location"]
    form = {"pick": ["get_order"], "effect-get_order": "teleport"}
    response = client.post(upload + "add", form)
    assert response.status_code == 400
    assert "get_order: &#x27;teleport&#x27; is not an effect" in response.content.decode()
    assert chain.head().number == 1


def test_an_invitation_link_for_a_role_that_is_not_one_is_a_400(people, signed_in):
    response = signed_in(people["owner"]).post("/teams/flight-desk/invitations/", {"role": "god"})
    assert response.status_code == 400 and "role: Input should be" in response.content.decode()
    assert not Team.objects.get(slug="flight-desk").invitations.exists()


def test_every_page_role_is_offered_by_the_member_menu(people, signed_in):
    body = signed_in(people["owner"]).get("/teams/flight-desk/").content.decode()
    assert all(f"<option>{role.value}</option>" in body for role in Role)
