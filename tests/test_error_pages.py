"""The 403 and 404 pages say whom to ask; a 404 never tells a hidden chain from a missing one."""

from __future__ import annotations

import re

from chains.models import Role


def _text(response) -> str:
    """The page's visible words, tags dropped and spaces folded."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_a_chain_the_person_may_not_see_gets_a_404_saying_how_access_is_had(
    flight, people, signed_in
):
    response = signed_in(people["outsider"]).get(flight.url())
    assert response.status_code == 404
    text = _text(response)
    assert "may not exist" in text and "may not have access" in text
    assert "ask the person who gave you this address, or an owner of the chain's team" in text


def test_a_hidden_chain_and_a_missing_one_get_the_same_404_page(flight, people, signed_in):
    outsider = signed_in(people["outsider"])
    hidden = outsider.get(flight.url())
    missing = outsider.get(flight.url().replace(flight.key, "no_such_chain"))
    assert hidden.status_code == missing.status_code == 404
    assert _text(hidden).replace(flight.key, "KEY") == _text(missing).replace(
        "no_such_chain", "KEY"
    )


def test_the_404_page_names_neither_the_team_nor_an_owner_of_the_hidden_chain(
    flight, people, signed_in
):
    text = _text(signed_in(people["outsider"]).get(flight.url()))
    assert "Flight desk" not in text
    general = text.replace("an owner of the chain's team", "").replace("their owners", "")
    assert "owner" not in general


def test_a_role_too_small_gets_a_403_naming_the_role_needed_and_the_owners_to_ask(
    flight, people, signed_in
):
    response = signed_in(people["viewer"]).post(flight.url("edit"), {"op": "add_handle"})
    assert response.status_code == 403
    text = _text(response)
    assert "This needs the editor role on flight_roundtrip; yours is viewer." in text
    assert "ask an owner of this chain: owner (owners of the team Flight desk" in text


def test_the_403_page_names_members_granted_owner_on_the_chain_too(flight, people, signed_in):
    flight.grant(people["editor"], Role.OWNER)
    text = _text(signed_in(people["viewer"]).post(flight.url("edit"), {"op": "add_handle"}))
    assert "ask an owner of this chain: editor , owner (" in text


def test_a_page_that_does_not_exist_gets_the_plain_not_found_page(client):
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "Not found" in _text(response)
    assert "may not have access" not in _text(response)


def test_the_api_still_answers_a_missing_chain_in_json(flight, people, signed_in):
    response = signed_in(people["outsider"]).get(f"/api/chains/{flight.key}")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
