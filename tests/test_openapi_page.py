"""Actions from a provider's OpenAPI document, on a chain's page."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats, openapi
from chains.core.lint import lint
from chains.models import Chain
from chains.services.access import spec_of
from tests.core.sim.builders import fixture
from tests.core.test_openapi import recording_listener, self_referring, with_error_schema

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
    doc = spec_of(head)
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
    answer = client.post(chain.url("openapi"), {"text": "asyncapi: '2.6.0'\n"})
    assert answer.status_code == 400 and "no `openapi` (3.x)" in answer.content.decode()


def test_a_reference_to_a_url_is_refused_naming_it_and_nothing_is_fetched(client, chain):
    with recording_listener() as (url, asked):
        text = with_error_schema({"$ref": f"{url}/error.json"})
        answer = client.post(chain.url("openapi"), {"text": text})
    html = answer.content.decode()
    assert answer.status_code == 400 and asked == []
    assert f"$ref: {url}/error.json` points outside the document" in html
    assert "/paths/~1orders/post/responses/409/content/application~1json/schema" in html


def test_a_reference_to_a_file_is_refused_and_the_file_never_shows(client, chain, tmp_path):
    secret = secrets.token_hex(16)
    marker = tmp_path / "env.yaml"
    marker.write_text(f"SECRET_KEY: {secret}\n")
    for ref in (marker.as_uri(), "env.yaml"):
        upload = SimpleUploadedFile("api.json", with_error_schema({"$ref": ref}).encode())
        answer = client.post(chain.url("openapi"), {"document": upload})
        html = answer.content.decode()
        assert answer.status_code == 400 and secret not in html
        assert f"$ref: {ref}` points outside the document" in html


@pytest.mark.parametrize("shape", ["recursive", "all_of"])
def test_schemas_that_refer_back_to_themselves_are_listed(client, chain, shape):
    schemas = (
        self_referring(12)
        if shape == "recursive"
        else {"S1": {"allOf": [{"$ref": "#/components/schemas/S1"}], "required": ["x"]}}
    )
    text = with_error_schema({"$ref": "#/components/schemas/S1"}, components={"schemas": schemas})
    answer = client.post(chain.url("openapi"), {"text": text})
    assert answer.status_code == 200 and 'id="op-create_order"' in answer.content.decode()


@pytest.mark.parametrize("base", ["abc", "1.5", "-3", "0"])
def test_a_base_that_is_not_a_revision_number_is_a_400_naming_the_field(client, chain, base):
    form = {"add": "1", "base": base, "text": SKYLOOM.read_text(), "pick": ["get_order"]}
    answer = client.post(chain.url("openapi"), form)
    assert answer.status_code == 400 and "base:" in answer.content.decode()
    assert chain.head().number == 1


def many_operations(count: int) -> str:
    paths = {
        f"/things{i}": {
            "post": {"operationId": f"makeThing{i}", "responses": {"409": {"description": "c"}}}
        }
        for i in range(count)
    }
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths})


def test_a_long_document_is_listed_a_page_at_a_time(client, chain):
    text = many_operations(250)
    first = client.post(chain.url("openapi"), {"text": text}).content.decode()
    last = client.post(chain.url("openapi"), {"text": text, "page": "3"}).content.decode()
    assert first.count('name="pick"') == 100 and 'id="op-make_thing0"' in first
    assert last.count('name="pick"') == 50 and 'id="op-make_thing249"' in last
    assert "page 3 of 3" in last and 'id="openapi-next"' not in last


def test_the_filter_lists_only_the_operations_it_matches(client, chain):
    answer = client.post(chain.url("openapi"), {"text": many_operations(250), "q": "thing24"})
    html = answer.content.decode()
    assert html.count('name="pick"') == 11  # make_thing24 and make_thing240..249
    assert "11 of 250 operations" in html


def test_ticks_on_other_pages_are_kept_and_added(client, chain):
    text = many_operations(250)
    ticked = {"text": text, "pick": ["make_thing3"], "effect-make_thing3": "read", "page": "2"}
    page_two = client.post(chain.url("openapi"), ticked).content.decode()
    assert '<input type="hidden" name="pick" value="make_thing3">' in page_two
    assert '<input type="hidden" name="effect-make_thing3" value="read">' in page_two
    form = {**ticked, "pick": ["make_thing3", "make_thing150"], "add": "1", "base": "1"}
    assert client.post(chain.url("openapi"), form).status_code == 302
    added = {a.id: a.effect for a in spec_of(chain.head()).actions}
    assert added["make_thing3"] == "read" and added["make_thing150"] == "commit"


def test_a_document_with_too_many_operations_is_a_400_saying_how_many(client, chain, monkeypatch):
    monkeypatch.setattr(openapi.reading, "MAX_OPERATIONS", 200)
    answer = client.post(chain.url("openapi"), {"text": many_operations(250)})
    assert (
        answer.status_code == 400 and "has 250 operations; at most 200" in answer.content.decode()
    )


def test_a_document_over_the_upload_limit_is_a_400_before_it_is_read(client, chain, settings):
    settings.OPENAPI_UPLOAD_MAX_BYTES = 1000
    upload = SimpleUploadedFile("skyloom-air.yaml", SKYLOOM.read_bytes())
    answer = client.post(chain.url("openapi"), {"document": upload})
    assert answer.status_code == 400 and "the limit is 1,000" in answer.content.decode()


def test_an_openapi_document_larger_than_any_chain_is_read(client, chain, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 1000  # the provider's document has a limit of its own
    upload = SimpleUploadedFile("skyloom-air.yaml", SKYLOOM.read_bytes())
    answer = client.post(chain.url("openapi"), {"document": upload})
    assert answer.status_code == 200 and "book_order" in answer.content.decode()
