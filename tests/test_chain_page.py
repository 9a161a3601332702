"""The chain page summarises the head revision and serves each revision's export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from chains.core import formats
from chains.models import Chain

pytestmark = pytest.mark.django_db

FLIGHT = Path(__file__).resolve().parent.parent / "fixtures" / "flight-roundtrip.yaml"


def test_chain_page_lists_the_actions_of_the_head_revision_in_order(client, flight):
    response = client.get(f"{flight.url()}")
    assert response.status_code == 200
    body = response.content.decode()
    document = formats.from_document(flight.head().document)
    positions = [body.index(f"<code>{a.id}</code>") for a in document.actions]
    assert positions == sorted(positions)


def test_home_links_to_the_chain_page(client, flight):
    assert f'href="{flight.url()}"' in client.get("/").content.decode()


def test_unknown_chain_is_not_found(client):
    assert client.get("/chains/nope/").status_code == 404


def test_yaml_export_of_a_revision_reimports_to_the_stored_document(client, flight):
    response = client.get(f"{flight.url()}r1.yaml")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{flight.key}-r1.yaml"'
    assert response["X-Content-Hash"] == flight.head().content_hash
    reloaded = formats.load(response.content, format="yaml").chains[0]
    assert formats.to_document(reloaded) == flight.head().document


def test_json_export_is_the_stored_document(client, flight):
    response = client.get(f"{flight.url()}r1.json")
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == flight.head().document


def test_the_design_document_downloads_and_reimports_to_the_stored_document(client, flight):
    response = client.get(f"{flight.url()}r1.md")
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    reloaded = formats.load(response.content, format="md").chains[0]
    assert formats.to_document(reloaded) == flight.head().document


def test_export_of_a_missing_revision_is_not_found(client, flight):
    assert client.get(f"{flight.url()}r9.yaml").status_code == 404


def test_export_in_an_unknown_format_is_not_found(client, flight):
    assert client.get(f"{flight.url()}r1.xml").status_code == 404


def test_chain_page_and_export_accept_only_get(client, flight):
    assert client.post(f"{flight.url()}").status_code == 405
    assert client.post(f"{flight.url()}r1.yaml").status_code == 405


def test_exported_yaml_is_plain_yaml(client, flight):
    assert yaml.safe_load(client.get(f"{flight.url()}r1.yaml").content)["id"] == flight.key


@pytest.fixture
def outdated():
    """A revision stored under an older grammar that no longer validates."""
    return Chain.objects.store(
        {"id": "old", "actions": [{"id": "a", "effect": "teleport"}]}, message="old"
    ).chain


def test_a_head_that_no_longer_validates_is_shown_as_stored_with_the_reason(client, outdated):
    response = client.get("/chains/old/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "no longer validates" in body
    assert "actions[a].effect" in body
    assert "teleport" in body


def test_exporting_a_revision_that_no_longer_validates_is_a_conflict(client, outdated):
    response = client.get("/chains/old/r1.yaml")
    assert response.status_code == 409
    assert "actions[a].effect" in response.content.decode()


def test_chain_page_shows_the_lint_status_and_every_finding(client):
    doc = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]
    broken = doc.model_copy(update={"gates": []})  # outcomes now point at missing gates
    Chain.objects.store(formats.to_document(broken))
    body = client.get(f"/chains/{doc.id}/").content.decode()
    assert 'class="status status-invalid">INVALID<' in body
    assert "structure.dangling-reference" in body


def test_a_clean_chain_page_says_valid(client, flight):
    body = client.get(f"{flight.url()}").content.decode()
    assert ">VALID<" in body


def test_an_approved_revisions_download_names_its_revision_hash_and_tag(client, flight, people):
    flight.head().approve(by=people["reviewer"])
    response = client.get(f"{flight.url()}r1.yaml")
    assert response["X-Revision"] == "1"
    assert response["X-Content-Hash"] == flight.head().content_hash
    assert response["X-Approved"] == "approved-1"


@pytest.mark.parametrize(
    ("fmt", "content_type", "starts"),
    [
        ("svg", "image/svg+xml", b"<svg"),
        ("png", "image/png", b"\x89PNG"),
        ("dot", "text/vnd.graphviz; charset=utf-8", b"digraph"),
    ],
)
def test_a_viewer_downloads_the_graph_as_svg_png_and_dot(
    flight, people, signed_in, fmt, content_type, starts
):
    response = signed_in(people["viewer"]).get(f"{flight.url()}r1.{fmt}")
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response.content.startswith(starts)
    assert response["Content-Disposition"] == (
        f'attachment; filename="{flight.key}-r1-handles.{fmt}"'
    )


def test_the_flow_graph_downloads_with_graph_flow(client, flight):
    response = client.get(f"{flight.url()}r1.dot", {"graph": "flow"})
    assert response["Content-Disposition"].endswith(f'"{flight.key}-r1-flow.dot"')
    assert response.content.decode() != client.get(f"{flight.url()}r1.dot").content.decode()


def test_someone_without_a_role_cannot_download_the_drawing(flight, people, signed_in):
    assert signed_in(people["outsider"]).get(f"{flight.url()}r1.svg").status_code == 404


def test_the_workspace_offers_the_drawing_of_the_graph_on_show(client, flight):
    body = client.get(flight.url(), {"view": "flow"}).content.decode()
    for fmt in ("svg", "png", "dot"):
        assert f'href="{flight.url()}r1.{fmt}?graph=flow" id="export-{fmt}" download' in body
