"""A chain's address names its team; the short address names the one chain a person may see.

Keys are unique within a team, so two teams may each have a chain
``flight_roundtrip``. ``/t/<team>/chains/<key>/`` is every chain's address and
the one every link uses; ``/chains/<key>/`` (older links, scripts) and the
API without ``?team=`` resolve among the chains the person may see, and ask
which one when there are several, listing only those.
"""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from chains.models import Chain, Role, Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def theirs(flight, people) -> Chain:
    """The outsider's team's own chain with the same key as the flight desk's."""
    elsewhere = Team.objects.get(slug="elsewhere")
    document = {**flight.head().document, "title": "Their own flight"}
    return Chain.objects.store(document, team=elsewhere).chain


def test_the_team_address_opens_that_teams_chain(flight, theirs, people, signed_in):
    body = signed_in(people["outsider"]).get(theirs.url()).content.decode()
    assert "Their own flight" in body


def test_the_team_address_of_another_teams_chain_is_a_404_like_a_missing_one(
    flight, theirs, people, signed_in
):
    client = signed_in(people["outsider"])
    assert client.get(flight.url()).status_code == 404
    assert client.get("/t/nobody/chains/flight_roundtrip/").status_code == 404


def test_the_short_address_opens_the_one_chain_of_that_key_the_person_may_see(
    flight, theirs, people, signed_in
):
    body = signed_in(people["outsider"]).get("/chains/flight_roundtrip/").content.decode()
    assert "Their own flight" in body


def test_an_edit_posted_to_the_short_address_changes_the_chain_the_person_may_see(
    flight, theirs, people, signed_in
):
    form = {"op": "add_handle", "form": "add-handle", "id": "mine", "base": "1"}
    response = signed_in(people["outsider"]).post("/chains/flight_roundtrip/edit", form)
    assert response.status_code == 302
    assert (theirs.revisions.count(), flight.revisions.count()) == (2, 1)


@pytest.fixture
def in_both(flight, theirs, people):
    """The flight desk's editor, made a viewer of the other team too."""
    Team.objects.get(slug="elsewhere").add(people["editor"], Role.VIEWER)
    return people["editor"]


def test_the_short_address_of_a_key_two_of_ones_teams_have_asks_which_one(
    in_both, flight, theirs, signed_in
):
    response = signed_in(in_both).get("/chains/flight_roundtrip/simulate?r=1")
    body = response.content.decode()
    assert response.status_code == 409
    assert f'href="{flight.url("simulate")}?r=1"' in body
    assert f'href="{theirs.url("simulate")}?r=1"' in body


def test_the_choice_lists_only_the_chains_the_person_may_see(
    in_both, flight, theirs, people, signed_in
):
    third = Team.objects.found("Third", owner=people["owner"], slug="third")
    Chain.objects.store(flight.head().document, team=third)
    body = signed_in(in_both).get("/chains/flight_roundtrip/").content.decode()
    assert "Third" not in body and "/t/third/" not in body


def test_links_on_the_pages_name_the_team(flight, people, signed_in):
    body = signed_in(people["viewer"]).get("/").content.decode()
    assert 'href="/t/flight-desk/chains/flight_roundtrip/"' in body


def test_the_api_picks_the_team_from_the_query(in_both, flight, theirs, signed_in):
    client = signed_in(in_both)
    answer = client.get("/api/chains/flight_roundtrip?team=elsewhere").json()
    assert (answer["team"], answer["title"]) == ("elsewhere", "Their own flight")


def test_the_api_without_a_team_for_an_ambiguous_key_is_a_409_naming_the_teams(
    in_both, flight, theirs, signed_in
):
    response = signed_in(in_both).get("/api/chains/flight_roundtrip/lint")
    error = response.json()["error"]
    assert response.status_code == 409
    assert (error["code"], error["location"]) == ("ambiguous_key", "team")
    assert "elsewhere" in error["message"] and "flight-desk" in error["message"]


def test_the_api_answers_another_teams_chain_with_a_404(flight, theirs, people, signed_in):
    client = signed_in(people["outsider"])
    assert client.get("/api/chains/flight_roundtrip?team=flight-desk").status_code == 404
    assert client.get("/api/chains/flight_roundtrip").json()["team"] == "elsewhere"


def test_the_command_line_takes_team_and_key(flight, theirs, capsys):
    call_command("chain", "export", "elsewhere/flight_roundtrip")
    assert "Their own flight" in capsys.readouterr().out


def test_the_command_line_asks_for_the_team_when_several_have_the_key(flight, theirs):
    with pytest.raises(CommandError, match="name one as TEAM/KEY: .*flight-desk/flight_roundtrip"):
        call_command("chain", "export", "flight_roundtrip")


@pytest.mark.parametrize("number", ["²", "9" * 30, "-1"])
@pytest.mark.parametrize("page, field", [("audit", "r"), ("simulate", "r"), ("diff", "to")])
def test_a_revision_number_that_is_not_plain_digits_is_no_server_error(
    flight, client, page, field, number
):
    assert client.get(flight.url(page), {field: number}).status_code in (200, 404)


def test_a_finding_number_that_is_not_plain_digits_is_a_400(flight, client):
    assert client.get(flight.url("fixes"), {"revision": "1", "finding": "²"}).status_code == 400
