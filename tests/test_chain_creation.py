"""Creating a chain: a key is unique within its team; and keys the site's pages use.

Another team's chain of the same key is not in the way, and nothing says it
exists. Within a team, import and the wizard check a key, then store; between
the two, a teammate may create the same key. The store re-checks inside its
transaction, so a person never appends a revision to a chain they may not
edit, whatever happened since their check. The race is simulated here by
creating the teammate's chain at the moment the store starts (on SQLite there
is one connection); tests/test_creation_race.py runs it with two connections
on PostgreSQL.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from chains.models import ApiToken, Chain, ChainUnavailable
from chains.models.chains import RESERVED_KEYS, ChainQuerySet
from chains.services import imports
from chains.services.imports import import_document

pytestmark = pytest.mark.django_db

SMALL = "id: small\ntitle: Small\nactions:\n  - id: look\n    effect: read\n"


@pytest.fixture
def theirs_first(monkeypatch, team):
    """Make ``team`` create each new chain after a teammate's check, before their store.

    The teammate's chain is stored (committed, as far as one connection
    goes) before the import's or the wizard's own transaction opens.
    """
    original_store, original_store_all = ChainQuerySet.store, imports.store_all

    def claim(key):
        if not Chain.objects.filter(team=team, key=key).exists():
            original_store(Chain.objects.all(), {"id": key, "title": "theirs"}, "theirs", team=team)

    def racing_store(self, document, *args, **kwargs):
        claim(document["id"])
        return original_store(self, document, *args, **kwargs)

    def racing_store_all(chains, *args, **kwargs):
        for chain in chains:
            claim(chain.id)
        return original_store_all(chains, *args, **kwargs)

    monkeypatch.setattr(ChainQuerySet, "store", racing_store)
    monkeypatch.setattr(imports, "store_all", racing_store_all)


def api_import(user, **body):
    _, secret = ApiToken.objects.issue(user, "ci")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client.post("/api/chains", json.dumps(body), content_type="application/json")


# --- the creation race --------------------------------------------------------------------


def test_an_import_that_loses_the_race_to_a_teammate_never_writes_into_their_chain_without_the_role(
    people, team, theirs_first
):
    imported = import_document(SMALL, filename="s.yaml", author=people["viewer"], team=team)
    chain = Chain.objects.get(key="small")
    assert chain.revisions.count() == 1 and chain.title == "theirs"
    assert imported.stored is None
    assert any("'small'" in p.message and p.severity == "error" for p in imported.problems)


def test_the_wizard_never_adds_a_revision_to_a_chain_of_the_same_name_even_of_ones_own_team(
    people, signed_in, theirs_first
):
    response = signed_in(people["editor"]).post("/chains/new/", {"create": "1", "key": "trip"})
    assert response.status_code == 400
    assert "a chain called &#x27;trip&#x27; exists already" in response.content.decode()
    assert Chain.objects.get(key="trip").revisions.count() == 1


def test_the_store_refuses_to_append_to_a_chain_its_author_may_not_edit(flight, people):
    document = {**flight.head().document, "title": "mine"}
    with pytest.raises(ChainUnavailable, match="not available to you"):
        Chain.objects.store(document, author=people["outsider"], team=flight.team)
    with pytest.raises(ChainUnavailable, match="your role on this chain is viewer"):
        Chain.objects.store(document, author=people["viewer"], team=flight.team)
    assert flight.revisions.count() == 1


# --- keys are per team: nothing tells an outsider that another team's key exists -------------


def test_an_import_of_a_key_another_team_has_makes_the_importers_own_chain(
    flight, people, signed_in
):
    document = flight.head().document
    response = signed_in(people["outsider"]).post(
        "/chains/import/", {"text": json.dumps(document), "name": "f.json"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/t/elsewhere/chains/flight_roundtrip/"
    assert Chain.objects.get(team__slug="elsewhere", key=flight.key).revisions.count() == 1
    assert flight.revisions.count() == 1


def test_an_import_page_answers_a_taken_key_and_a_free_one_alike(flight, people, signed_in):
    client = signed_in(people["outsider"])
    taken = client.post("/chains/import/", {"text": json.dumps(flight.head().document)})
    free = client.post("/chains/import/", {"text": SMALL})
    assert (taken.status_code, free.status_code) == (302, 302)
    assert "Flight desk" not in client.get(taken["Location"]).content.decode()


def test_the_wizard_makes_an_outsiders_own_chain_of_a_key_another_team_has(
    flight, people, signed_in
):
    response = signed_in(people["outsider"]).post(
        "/chains/new/", {"create": "1", "key": flight.key}
    )
    assert response.status_code == 302
    assert response["Location"] == "/t/elsewhere/chains/flight_roundtrip/"
    assert flight.revisions.count() == 1


def test_an_api_import_of_a_key_another_team_has_is_stored_in_the_callers_team(flight, people):
    document = json.dumps(flight.head().document)
    response = api_import(people["outsider"], document=document, filename="f.json")
    assert response.status_code == 201
    assert response.json()["stored"] == [
        {"id": "flight_roundtrip", "team": "elsewhere", "revision": 1, "created": True}
    ]


# --- keys the site's own addresses use --------------------------------------------------------


def routes(resolver: URLResolver, prefix: str = ""):
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from routes(entry, route)
        elif isinstance(entry, URLPattern):
            yield route


def test_every_fixed_address_under_chains_is_a_reserved_key():
    segments = set()
    for route in routes(get_resolver()):
        for base in ("chains/", "api/chains/"):
            if route.startswith(base):
                first = route.removeprefix(base).split("/")[0]
                if first and "<" not in first:
                    segments.add(first)
    assert segments <= RESERVED_KEYS
    assert {"new", "import"} <= RESERVED_KEYS


@pytest.mark.parametrize("key", ["new", "import"])
def test_importing_a_chain_whose_id_an_address_uses_is_refused_naming_it(key, people, signed_in):
    text = SMALL.replace("id: small", f"id: {key}")
    response = signed_in(people["editor"]).post("/chains/import/", {"text": text, "name": "s.yaml"})
    assert response.status_code == 400
    assert f"chain id &#x27;{key}&#x27; is reserved" in response.content.decode()
    assert not Chain.objects.exists()


def test_the_wizard_refuses_an_id_an_address_uses(people, signed_in):
    response = signed_in(people["editor"]).post("/chains/new/", {"create": "1", "key": "new"})
    assert response.status_code == 400
    assert "key: chain id &#x27;new&#x27; is reserved" in response.content.decode()
    assert not Chain.objects.exists()


def test_the_api_refuses_an_id_an_address_uses(people):
    text = SMALL.replace("id: small", "id: import")
    response = api_import(people["editor"], document=text, filename="s.yaml", confirm=True)
    assert response.status_code == 400
    assert "chain id 'import' is reserved" in json.dumps(response.json())
    assert not Chain.objects.exists()


def test_the_store_refuses_to_create_a_chain_with_a_reserved_id(team):
    with pytest.raises(ChainUnavailable, match="reserved"):
        Chain.objects.store({"id": "new"}, team=team)
    assert not Chain.objects.exists()
