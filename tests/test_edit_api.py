"""The edit, undo and redo operations of the API: the workspace's edits, as JSON."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from chains.models import ApiToken, Chain

pytestmark = pytest.mark.django_db

K = "flight_roundtrip"


@pytest.fixture
def editor(flight, people) -> Client:
    _, secret = ApiToken.objects.issue(people["editor"], "test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def post(client: Client, path: str, body: dict):
    return client.post(f"/api/chains/{K}/{path}", json.dumps(body), content_type="application/json")


def add_quote(client: Client, base: int = 1):
    return post(client, "edits", {"op": "add_handle", "base": base, "args": {"id": "quote"}})


def handle_ids(chain: Chain) -> list[str]:
    return [h["id"] for h in chain.head().document["handles"]]


def test_an_edit_answers_201_with_the_new_revision(editor, flight):
    response = add_quote(editor)
    assert response.status_code == 201
    answer = response.json()
    assert (answer["number"], answer["created"], answer["author"]) == (2, True, "editor")
    assert answer["message"] == "add handle quote"
    assert "quote" in handle_ids(flight)


def test_an_edit_that_changes_nothing_answers_with_the_head_not_created(editor, flight):
    same = {"id": "search_token", "fields": {}}
    answer = post(editor, "edits", {"op": "update_handle", "base": 1, "args": same}).json()
    assert (answer["number"], answer["created"]) == (1, False)


def test_an_edit_on_a_stale_base_is_409_and_stores_nothing(editor, flight):
    add_quote(editor)
    response = post(editor, "edits", {"op": "add_handle", "base": 1, "args": {"id": "mine"}})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "stale_revision"
    assert flight.head().number == 2


def test_a_refused_edit_is_400_naming_its_location_and_stores_nothing(editor, flight):
    response = post(editor, "edits", {"op": "delete_handle", "base": 1, "args": {"id": "nope"}})
    assert response.status_code == 400
    error = response.json()
    assert error["error"]["code"] == "edit_refused"
    assert error["error"]["location"] == "handles[nope]"
    assert error["problems"][0]["path"] == "handles[nope]"
    assert flight.head().number == 1


def test_an_edit_changing_the_chains_id_is_refused_at_id(editor, flight):
    args = {"fields": {"id": "other"}}
    response = post(editor, "edits", {"op": "update_chain", "base": 1, "args": args})
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "id"
    assert "cannot change" in response.json()["error"]["message"]
    assert not Chain.objects.filter(key="other").exists()


def test_an_edit_body_with_a_key_it_does_not_declare_is_422(editor, flight):
    response = post(editor, "edits", {"op": "add_handle", "base": 1, "args": {}, "colour": "red"})
    assert response.status_code == 422


def test_a_base_below_one_is_422_naming_base(editor, flight):
    response = post(editor, "edits", {"op": "add_handle", "base": 0})
    assert response.status_code == 422
    assert response.json()["error"]["location"] == "body.body.base"


def test_undo_and_redo_answer_with_the_revision_they_stored(editor, flight):
    add_quote(editor)
    undone = post(editor, "undo", {"base": 2})
    assert (undone.status_code, undone.json()["number"]) == (201, 3)
    assert "quote" not in handle_ids(flight)
    redone = post(editor, "redo", {"base": 3})
    assert (redone.status_code, redone.json()["message"]) == (201, "redo add handle quote (r2)")
    assert "quote" in handle_ids(flight)


def test_undo_with_nothing_to_undo_is_400(editor, flight):
    response = post(editor, "undo", {"base": 1})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "nothing_to_undo"


def test_undo_on_a_stale_base_is_409(editor, flight):
    add_quote(editor)
    assert post(editor, "undo", {"base": 1}).status_code == 409
    assert flight.head().number == 2


@pytest.mark.parametrize(
    ("person", "status"), [("viewer", 403), ("reviewer", 403), ("outsider", 404)]
)
def test_only_editors_may_edit_and_an_outsider_does_not_learn_the_chain_exists(
    flight, people, person, status
):
    _, secret = ApiToken.objects.issue(people[person], "test")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert add_quote(client).status_code == status
    assert post(client, "undo", {"base": 1}).status_code == status
    assert flight.head().number == 1
