"""``POST /api/chains``: the API imports through the same service as the page and the CLI.

Without ``confirm`` a document with an error is refused whole (400
``invalid_document``) with every problem, errors first; with ``confirm`` its
usable chains are stored and returned with the problems.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from chains.core import formats
from chains.models import ApiToken, Chain

pytestmark = pytest.mark.django_db

LOCKERS = (
    Path(__file__).resolve().parent.parent / "fixtures/import-problems/parcel-lockers.md"
).read_text()


def post(user, **body) -> dict:
    _, secret = ApiToken.objects.issue(user, "test")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = client.post("/api/chains", json.dumps(body), content_type="application/json")
    return {"status": response.status_code, **response.json()}


def test_without_confirm_a_document_with_an_error_is_a_400_listing_the_error_first(people):
    answer = post(people["editor"], document=LOCKERS, filename="lockers.md")
    assert answer["status"] == 400
    assert answer["error"]["code"] == "invalid_document"
    assert answer["error"]["location"] == "actions[release_slot].effect"
    assert [(p["severity"], p["line"]) for p in answer["problems"]][:2] == [
        ("error", 36),
        ("info", 16),
    ]
    assert "confirm: true" in answer["problems"][-1]["message"]
    assert not Chain.objects.exists()


def test_with_confirm_the_usable_chains_are_stored_and_returned_with_the_problems(team, people):
    answer = post(people["editor"], document=LOCKERS, filename="lockers.md", confirm=True)
    assert answer["status"] == 201
    assert [s["id"] for s in answer["stored"]] == ["locker_reserve", "locker_release"]
    assert answer["problems"][0]["line"] == 36
    assert answer["chains"][1] == {
        "id": "locker_release",
        "handles": 1,
        "actions": 1,
        "gates": 0,
        "verdict_rows": 0,
    }
    assert Chain.objects.get(key="locker_release").team == team


def test_confirm_does_not_store_a_document_with_nothing_usable(people):
    broken = "id: x\nactions:\n  - {id: a, effect: teleport}\n"
    answer = post(people["editor"], document=broken, filename="x.yaml", confirm=True)
    assert answer["status"] == 400
    assert answer["problems"][0]["line"] == 3
    assert not Chain.objects.exists()


def test_confirm_never_writes_into_a_chain_the_caller_may_only_view(team, people):
    chain = formats.load(LOCKERS, filename="lockers.md").chains[0]
    stored = Chain.objects.store(formats.to_document(chain), team=team).chain
    stored.grant(people["editor"], "viewer")
    answer = post(people["editor"], document=LOCKERS, filename="lockers.md", confirm=True)
    assert [s["id"] for s in answer["stored"]] == ["locker_release"]
    refused = [p for p in answer["problems"] if "your role on this chain is viewer" in p["message"]]
    assert refused[0]["severity"] == "error"
    assert stored.revisions.count() == 1


def test_another_teams_chain_of_the_same_id_is_no_obstacle(team, people):
    chain = formats.load(LOCKERS, filename="lockers.md").chains[0]
    theirs = Chain.objects.store(formats.to_document(chain), team=team).chain
    answer = post(people["outsider"], document=LOCKERS, filename="lockers.md", confirm=True)
    assert [(s["id"], s["team"]) for s in answer["stored"]] == [
        ("locker_reserve", "elsewhere"),
        ("locker_release", "elsewhere"),
    ]
    assert theirs.revisions.count() == 1


def test_the_import_response_has_an_output_schema(people):
    schema = Client().get("/api/openapi.json").json()
    created = schema["paths"]["/api/chains"]["post"]["responses"]["201"]
    reference = created["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][reference.rsplit("/", 1)[1]]["properties"]
    assert set(fields) == {"format", "chains", "stored", "problems"}
