"""The OpenAPI and Postman exports through every door: the menu, the page, the API, both CLIs.

Each door answers with the file :mod:`chains.services.exports` builds (or, at
the command line, the text :func:`chains.core.export.export` writes); the
OpenAPI file imports back, through the import doors too, as the stored chain.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from chains import cli
from chains.core import formats
from chains.core.export import export
from chains.core.postman import POSTMAN_SCHEMA
from chains.models import ApiToken, Chain
from tests.conftest import FIXTURES, fixture_chains
from tests.core.test_openapi_export import bound

pytestmark = pytest.mark.django_db

OPENAPI_TYPE = "application/vnd.oai.openapi+json"


@pytest.fixture
def booked(team) -> Chain:
    """The flight chain with an HTTP binding on every action, stored as revision 1."""
    document = formats.to_document(bound(fixture_chains("flight-roundtrip.yaml")[0]))
    return Chain.objects.store(document, "import", team=team).chain


def bearer(user) -> Client:
    _, secret = ApiToken.objects.issue(user, "test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def the_chain_of(text: bytes | str, filename: str) -> dict:
    result = formats.load(text, filename=filename)
    assert result.format == "openapi"
    (chain,) = result.chains
    return formats.to_document(chain)


# --- the web page and its menu --------------------------------------------------------------


def test_the_export_menu_offers_openapi_and_postman(client, booked):
    body = client.get(booked.url()).content.decode()
    assert f'href="{booked.url()}r1.openapi"' in body
    assert f'href="{booked.url()}r1.postman"' in body


def test_the_page_serves_the_openapi_file_that_imports_back_as_the_revision(
    booked, people, signed_in
):
    response = signed_in(people["viewer"]).get(f"{booked.url()}r1.openapi")
    assert response.status_code == 200
    assert response["Content-Type"] == OPENAPI_TYPE
    assert response["Content-Disposition"] == (
        f'attachment; filename="{booked.key}-r1.openapi.json"'
    )
    assert response["X-Content-Hash"] == booked.head().content_hash
    assert the_chain_of(response.content, "r1.openapi.json") == booked.head().document


def test_the_page_serves_the_postman_collection(booked, people, signed_in):
    response = signed_in(people["viewer"]).get(f"{booked.url()}r1.postman")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == (
        f'attachment; filename="{booked.key}-r1.postman_collection.json"'
    )
    assert json.loads(response.content)["info"]["schema"] == POSTMAN_SCHEMA


@pytest.mark.parametrize("fmt", ["openapi", "postman"])
def test_someone_without_a_role_cannot_download_either(booked, people, signed_in, fmt):
    assert signed_in(people["outsider"]).get(f"{booked.url()}r1.{fmt}").status_code == 404


def test_a_revision_that_no_longer_validates_is_a_conflict_in_openapi_too(client):
    old = Chain.objects.store({"id": "old", "actions": [{"id": "a", "effect": "x"}]}).chain
    response = client.get(f"{old.url()}r1.openapi")
    assert response.status_code == 409
    assert "actions[a].effect" in response.content.decode()


# --- the API -----------------------------------------------------------------------------------


def test_the_api_exports_openapi_that_imports_back_as_the_revision(booked, people):
    url = f"/api/chains/{booked.key}/revisions/1/export?format=openapi"
    response = bearer(people["viewer"]).get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == OPENAPI_TYPE
    assert response["Content-Disposition"].endswith(f'"{booked.key}-r1.openapi.json"')
    assert the_chain_of(response.content, "r1.openapi.json") == booked.head().document


def test_the_api_exports_a_postman_collection(booked, people):
    url = f"/api/chains/{booked.key}/revisions/1/export?format=postman"
    response = bearer(people["viewer"]).get(url)
    assert response.status_code == 200
    collection = response.json()
    assert collection["info"]["schema"] == POSTMAN_SCHEMA
    assert [f["name"] for f in collection["item"]] == ["happy path", "other calls"]


def test_the_api_refuses_an_unknown_format_with_the_one_error_shape(booked, people):
    url = f"/api/chains/{booked.key}/revisions/1/export?format=swagger"
    response = bearer(people["viewer"]).get(url)
    assert response.status_code == 422
    assert response.json()["error"]["location"].endswith("format")


def test_the_api_import_reads_an_openapi_export_as_the_chain(people):
    chain = bound(fixture_chains("card-payment.yaml")[0])
    document = formats.dump(chain, "json")
    exported = json.dumps(json.loads(export(chain, "openapi")))
    response = bearer(people["editor"]).post(
        "/api/chains",
        json.dumps({"document": exported, "filename": "card.openapi.json"}),
        content_type="application/json",
    )
    assert response.status_code in (200, 201), response.content
    stored = Chain.objects.get(key=chain.id).head().document
    assert stored == json.loads(document)


# --- the command lines -------------------------------------------------------------------------


def test_manage_py_chain_export_prints_openapi_that_imports_back(booked):
    out = StringIO()
    call_command("chain", "export", booked.key, "--format", "openapi", stdout=out)
    assert the_chain_of(out.getvalue(), "x.openapi.json") == booked.head().document


def test_manage_py_chain_export_prints_a_postman_collection(booked):
    out = StringIO()
    call_command("chain", "export", booked.key, "--format", "postman", stdout=out)
    assert json.loads(out.getvalue())["info"]["schema"] == POSTMAN_SCHEMA


@pytest.mark.parametrize("fmt", ["openapi", "postman"])
def test_chain_designer_exports_a_file_in_both_formats(fmt):
    out = StringIO()
    path = str(FIXTURES / "card-payment.yaml")
    assert cli.main(["export", path, "--format", fmt], out) == 0
    written = json.loads(out.getvalue())
    assert ("openapi" in written) == (fmt == "openapi")
    assert ("x-chain" in written) == (fmt == "openapi")


def test_chain_designer_reads_an_openapi_export_back(tmp_path):
    chain = bound(fixture_chains("card-payment.yaml")[0])
    path = tmp_path / "card.openapi.json"
    path.write_text(export(chain, "openapi"))
    out = StringIO()
    assert cli.main(["export", str(path), "--format", "json"], out) == 0
    assert json.loads(out.getvalue()) == formats.to_document(chain)


def test_every_export_format_and_drawing_is_a_download_of_the_page_and_the_api():
    from chains.core.export import EXPORT_FORMATS
    from chains.services.exports import DOWNLOADS, DRAWINGS

    assert (*EXPORT_FORMATS, *DRAWINGS) == DOWNLOADS
