"""Actions from a provider's OpenAPI document, on a chain's page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.core.lint import lint
from chains.models import Chain
from chains.services.access import document_of
from tests.core.sim.builders import fixture

pytestmark = pytest.mark.django_db

SKYLOOM = Path(__file__).resolve().parent.parent / "fixtures" / "openapi" / "skyloom-air.yaml"


@pytest.fixture
def chain() -> Chain:
    return Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain


def test_an_uploaded_document_lists_every_operation_with_its_guessed_effect(client, chain):
    upload = SimpleUploadedFile("skyloom-air.yaml", SKYLOOM.read_bytes())
    page = client.post(chain.url("openapi"), {"document": upload})
    html = page.content.decode()
    assert page.status_code == 200 and html.count('name="pick"') == 13
    assert (
        '<option value="commit" selected>' in html.split('id="op-book_order"')[1].split("</tr>")[0]
    )


def test_the_ticked_operations_are_added_as_one_revision_with_their_documented_errors(
    client, chain
):
    form = {
        "add": "1",
        "base": "1",
        "name": "skyloom-air.yaml",
        "text": SKYLOOM.read_text(),
        "pick": ["book_order", "refund_payment"],
        "effect-refund_payment": "compensate",
    }
    answer = client.post(chain.url("openapi"), form)
    assert answer.status_code == 302
    head = chain.head()
    doc = document_of(head)
    added = {a.id: a for a in doc.actions if a.id in ("book_order", "refund_payment")}
    assert head.number == 2 and added["refund_payment"].effect == "compensate"
    assert "http:409 && code:HOLD_EXPIRED" in added["book_order"].documented_errors
    rules = {f.rule for f in lint(doc).findings}
    assert "table.documented-error-uncovered" in rules


def test_adding_on_a_stale_base_is_a_409_and_stores_nothing(client, chain):
    form = {"add": "1", "base": "7", "text": SKYLOOM.read_text(), "pick": ["get_order"]}
    assert client.post(chain.url("openapi"), form).status_code == 409
    assert chain.head().number == 1


def test_an_id_the_chain_has_already_is_a_400_naming_it(client, chain):
    text = SKYLOOM.read_text().replace("operationId: getOrder", "operationId: findRoom")
    form = {"add": "1", "base": "1", "text": text, "pick": ["find_room"]}
    answer = client.post(chain.url("openapi"), form)
    assert answer.status_code == 400 and "find_room" in answer.content.decode()
    assert chain.head().number == 1


def test_a_document_that_is_not_openapi_is_a_400_saying_why(client, chain):
    answer = client.post(chain.url("openapi"), {"text": "swagger: '2.0'\n"})
    assert answer.status_code == 400 and "no `openapi` field" in answer.content.decode()
