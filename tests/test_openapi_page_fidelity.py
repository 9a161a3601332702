"""The OpenAPI page with what real providers need: a key header stated for every POST,
the document's schema breaks shown as warnings, and picks that attach to the chain's
own bound actions."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chains.core import formats
from chains.models import Chain, OpenApiUpload
from chains.services.access import spec_of
from tests.core.sim.builders import fixture
from tests.core.test_openapi_fidelity import bound_chain, broken_document, orders_document


@pytest.fixture
def chain() -> Chain:
    return Chain.objects.store(
        formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
    ).chain


def upload(client, chain, text: str, **fields) -> str:
    file = SimpleUploadedFile("orders.json", text.encode())
    answer = client.post(chain.url("openapi"), {"document": file, **fields})
    assert answer.status_code == 302, answer.content.decode()[:500]
    return answer["Location"]


def test_a_stated_key_header_keys_every_post_and_the_list_says_who_stated_it(client, chain):
    page = client.get(upload(client, chain, orders_document(), key_header="Idempotency-Key"))
    text = page.content.decode()
    assert "Every POST is proposed keyed with <code>Idempotency-Key</code> (you stated it)" in text
    kept = OpenApiUpload.objects.get()
    assert {op.idempotency for op in kept.read_operations() if op.method == "post"} == {"keyed"}


def test_a_key_header_that_is_no_header_name_is_a_400_naming_the_field(client, chain):
    file = SimpleUploadedFile("orders.json", orders_document().encode())
    answer = client.post(chain.url("openapi"), {"document": file, "key_header": "Idem Key:"})
    assert answer.status_code == 400 and "key_header" in answer.content.decode()
    assert not OpenApiUpload.objects.exists()


def test_the_document_s_schema_breaks_are_listed_as_warnings_above_its_operations(client, chain):
    text = client.get(upload(client, chain, broken_document())).content.decode()
    assert "1 place where the document is not valid OpenAPI" in text
    assert "/paths/~1a/get/parameters/0" in text and 'id="op-get_a"' in text


def test_an_added_operation_attaches_to_the_action_bound_to_its_call(client):
    bound = Chain.objects.store(bound_chain(), message="r1").chain
    address = upload(client, bound, orders_document())
    answer = client.post(address + "add", {"base": "1", "pick": ["get_order", "cancel_order"]})
    assert answer.status_code == 302
    spec = spec_of(bound.head())
    assert [a.id for a in spec.actions] == ["book", "look", "cancel_order"]
    assert spec.action("look").http.operation_id == "getOrder"
    assert [h.id for h in spec.handles] == ["booking", "order_id"]
    assert formats.to_document(spec)["handles"][1]["minted_by"] == "external(POST /air/orders)"


def test_the_onto_menu_attaches_an_operation_to_an_action_of_another_name(client):
    bound = Chain.objects.store(bound_chain(), message="r1").chain
    address = upload(client, bound, orders_document())
    form = {"base": "1", "pick": ["create_order"], "onto-create_order": "book"}
    assert client.post(address + "add", form).status_code == 302
    spec = spec_of(bound.head())
    assert [a.id for a in spec.actions] == ["book", "look"]
    assert spec.action("book").http.reads == {"booking": "body:/data/id"}


def test_the_onto_menu_offers_the_action_bound_to_the_same_call_first(client):
    bound = Chain.objects.store(bound_chain(), message="r1").chain
    html = client.get(upload(client, bound, orders_document())).content.decode()
    menu = html.split('name="onto-get_order"')[1].split("</select>")[0]
    assert '<option value="look" selected>' in menu


def test_a_new_action_chosen_in_the_onto_menu_is_added_though_its_call_is_bound(client):
    bound = Chain.objects.store(bound_chain(), message="r1").chain
    address = upload(client, bound, orders_document())
    form = {"base": "1", "pick": ["get_order"], "onto-get_order": "+new"}
    assert client.post(address + "add", form).status_code == 302
    assert [a.id for a in spec_of(bound.head()).actions] == ["book", "look", "get_order"]


def test_an_onto_action_the_chain_lacks_is_a_400_naming_it(client):
    bound = Chain.objects.store(bound_chain(), message="r1").chain
    address = upload(client, bound, orders_document())
    form = {"base": "1", "pick": ["get_order"], "onto-get_order": "nowhere"}
    answer = client.post(address + "add", form)
    assert (
        answer.status_code == 400 and "the chain has no action nowhere" in answer.content.decode()
    )
    assert bound.head().number == 1
