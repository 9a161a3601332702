"""The API's OpenAPI document and docs page: built once per process, limited for anonymous clients.

Building the OpenAPI document walks every operation's schemas (most of a
second); it changes only with the code, so each process builds it once.
Anyone not signed in may fetch it, and the docs page, only so often
(``RATE_LIMITS["docs"]``, by client address).
"""

from __future__ import annotations

import ninja.main
import pytest
from django.test import Client

from designer.api import api


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The path prefixes the OpenAPI document is built for, from an empty cache."""
    built: list[str] = []
    build = ninja.main.get_schema

    def counted(*, api, path_prefix):
        built.append(path_prefix)
        return build(api=api, path_prefix=path_prefix)

    monkeypatch.setattr(ninja.main, "get_schema", counted)
    monkeypatch.setattr(api, "schemas", {})
    return built


def test_the_openapi_document_is_built_once(db, builds):
    first = Client().get("/api/openapi.json")
    second = Client().get("/api/openapi.json")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert len(builds) == 1


def test_the_served_document_is_the_one_the_code_builds(db, builds):
    built = api.get_openapi_schema()
    served = Client().get("/api/openapi.json").json()
    assert set(served["paths"]) == set(built["paths"])
    assert len(builds) == 1


def test_anonymous_requests_past_the_docs_limit_get_429(db, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "docs": (2, 60)}
    client = Client(REMOTE_ADDR="192.0.2.1")
    assert client.get("/api/openapi.json").status_code == 200
    assert client.get("/api/docs").status_code == 200
    refused = client.get("/api/openapi.json")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "at most 2 docs requests per minute" in refused.json()["error"]["message"]
    assert 1 <= int(refused["Retry-After"]) <= 66


def test_each_client_address_has_a_docs_count_of_its_own(db, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "docs": (1, 60)}
    assert Client(REMOTE_ADDR="192.0.2.1").get("/api/openapi.json").status_code == 200
    assert Client(REMOTE_ADDR="192.0.2.2").get("/api/openapi.json").status_code == 200
    assert Client(REMOTE_ADDR="192.0.2.1").get("/api/openapi.json").status_code == 429


def test_a_signed_in_person_reads_the_docs_without_a_limit(people, signed_in, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "docs": (1, 60)}
    client = signed_in(people["viewer"])
    assert [client.get("/api/openapi.json").status_code for _ in range(3)] == [200] * 3


def test_every_operation_on_a_chain_key_declares_the_team_it_means(db):
    paths = Client().get("/api/openapi.json").json()["paths"]
    keyed = {
        f"{m.upper()} {p}": op for p, ops in paths.items() if "{key}" in p for m, op in ops.items()
    }
    assert len(keyed) >= 26
    for name, operation in keyed.items():
        team = [p for p in operation.get("parameters", []) if p["name"] == "team"]
        assert len(team) == 1 and team[0]["in"] == "query", name
        assert not team[0].get("required"), name
        assert "several of your teams have a chain of this key" in team[0]["description"], name
