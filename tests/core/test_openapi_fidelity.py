"""OpenAPI import at the fidelity real providers need: Swagger 2.0, errors where providers
put them, provider-wide keys, intent fields a caller decides, ids as handles, and proposals
that lint alone or attach to a chain's own actions. Every document here is our own text,
shaped like the real ones (docs/openapi-import.md)."""

from __future__ import annotations

import json

import pytest

from chains.core import edit, formats
from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.core.openapi import edits_onto, propose_chain, read_openapi, read_provider
from chains.core.openapi.effects import guess_effect

ERROR_TABLE = (
    "code    | title\n------- | -----\n477     | INVALID FORMAT\n"
    "34651   | SEGMENT SELL FAILURE\n36870   | BOOKING FAILED\n37200   | PRICE DISCREPANCY\n"
)

# A booking API in Swagger 2.0, as a travel provider publishes one: a JSON:API-like
# envelope, shared responses, the codes in a table in the 400's description.
SWAGGER = {
    "swagger": "2.0",
    "info": {"title": "Orders", "version": "1.0"},
    "host": "api.example.test",
    "basePath": "/v1",
    "consumes": ["application/vnd.example+json"],
    "produces": ["application/vnd.example+json"],
    "paths": {
        "/booking/orders": {
            "post": {
                "operationId": "createOrders",
                "tags": ["Booking"],
                "parameters": [
                    {
                        "in": "body",
                        "name": "body",
                        "required": True,
                        "schema": {
                            "properties": {"data": {"$ref": "#/definitions/OrderQuery"}},
                        },
                    }
                ],
                "responses": {
                    "201": {"$ref": "#/responses/created"},
                    "400": {"$ref": "#/responses/400_Book"},
                    "default": {"$ref": "#/responses/500"},
                },
            }
        },
        "/booking/orders/{order-id}": {
            "get": {
                "operationId": "getOrder",
                "parameters": [
                    {"in": "path", "name": "order-id", "required": True, "type": "string"}
                ],
                "responses": {"200": {"$ref": "#/responses/created"}},
            }
        },
    },
    "definitions": {
        "OrderQuery": {
            "type": "object",
            "required": ["type", "offers", "travelers"],
            "properties": {
                "type": {"type": "string"},
                "offers": {"type": "array", "items": {"type": "object"}},
                "travelers": {"type": "array", "items": {"type": "object"}},
                "remarks": {"type": "string"},
            },
        },
        "Error": {
            "type": "object",
            "properties": {"errors": {"type": "array", "items": {"type": "object"}}},
        },
    },
    "responses": {
        "created": {"description": "the order", "schema": {"type": "object"}},
        "400_Book": {"description": ERROR_TABLE, "schema": {"$ref": "#/definitions/Error"}},
        "500": {"description": "unexpected error", "schema": {"$ref": "#/definitions/Error"}},
    },
}


def document(paths: dict, **top) -> str:
    return json.dumps(
        {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **top}
    )


def post(operation_id: str, body: dict | None = None, **fields) -> dict:
    node: dict = {
        "operationId": operation_id,
        "responses": {"200": {"description": "ok"}},
        **fields,
    }
    if body is not None:
        node["requestBody"] = {"content": {"application/json": {"schema": body}}}
    return node


def by_id(text: str, **options) -> dict:
    return {op.id: op for op in read_openapi(text, "api.json", **options)}


def test_a_swagger_2_document_is_read_as_its_openapi_3_form():
    provider = read_provider(json.dumps(SWAGGER), "orders.json")
    assert provider.converted and [op.id for op in provider.operations] == [
        "create_orders",
        "get_order",
    ]
    create = provider.operations[0]
    assert (create.method, create.path, create.effect, create.tags) == (
        "post",
        "/booking/orders",
        "commit",
        ["Booking"],
    )


def test_the_codes_of_a_table_in_an_error_response_s_description_are_documented():
    create = by_id(json.dumps(SWAGGER))["create_orders"]
    assert create.errors == [
        "http:400 && code:477",
        "http:400 && code:34651",
        "http:400 && code:36870",
        "http:400 && code:37200",
    ]


def test_the_body_is_read_through_its_envelope_to_the_fields_a_caller_fills_in():
    create = by_id(json.dumps(SWAGGER))["create_orders"]
    assert create.fields == ["type", "offers", "travelers"]  # remarks is optional
    assert create.places["offers"] == "body:/data/offers"


def test_an_id_in_the_path_becomes_a_handle_named_for_what_it_identifies():
    get = by_id(json.dumps(SWAGGER))["get_order"]
    assert get.handles == ["order_id"] and get.places == {"order_id": "path:order-id"}


def test_the_default_response_s_codes_are_documented_without_a_status():
    error = {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["api_error", "card_error"]},
                    # a resource the error names: its own type is no error code
                    "payment_method": {
                        "type": "object",
                        "properties": {"type": {"type": "string", "enum": ["card"]}},
                    },
                },
            }
        },
    }
    default = {
        "default": {"description": "Error", "content": {"application/json": {"schema": error}}}
    }
    text = document({"/v1/charges": {"post": post("PostCharges", responses=default)}})
    assert by_id(text)["post_charges"].errors == ["type:api_error", "type:card_error"]


def test_an_example_shared_by_several_operations_documents_no_code_for_them():
    shared = {"$ref": "#/components/examples/generic"}
    response = {
        "422": {
            "description": "invalid",
            "content": {"application/json": {"examples": {"g": shared}}},
        }
    }
    own = {
        "422": {
            "description": "invalid",
            "content": {"application/json": {"example": {"errorCode": "14_030"}}},
        }
    }
    text = document(
        {
            "/payments": {"post": post("payments", responses=response)},
            "/refunds": {"post": post("refunds", responses=response)},
            "/captures": {"post": post("captures", responses=own)},
        },
        components={"examples": {"generic": {"value": {"errorCode": "000"}}}},
    )
    ops = by_id(text)
    assert ops["payments"].errors == ["http:422"] and ops["refunds"].errors == ["http:422"]
    assert ops["captures"].errors == ["http:422 && code:14_030"]


def test_only_required_fields_that_a_caller_decides_are_intent_fields_with_their_types():
    body = {
        "type": "object",
        "required": ["amount", "currency", "customer_id", "expand", "metadata", "kind", "day"],
        "properties": {
            "amount": {"type": "integer"},
            "currency": {"type": "string"},
            "customer_id": {"type": "string"},
            "expand": {"type": "array"},
            "metadata": {"type": "object"},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "day": {"type": "string", "format": "date"},
            "note": {"type": "string"},
        },
    }
    op = by_id(document({"/v1/payments": {"post": post("PostPayments", body)}}))["post_payments"]
    assert op.types == {
        "amount": "integer",
        "currency": "string",
        "kind": "enum[a, b]",
        "day": "date",
    }
    assert op.handles == ["customer_id"]


def test_a_provider_wide_key_stated_in_the_document_keys_every_post():
    info = {
        "title": "T",
        "version": "1",
        "description": "Send an `Idempotency-Key` header on POSTs.",
    }
    text = document(
        {"/v1/charges": {"post": post("PostCharges"), "get": post("GetCharges")}}, info=info
    )
    provider = read_provider(text, "api.json")
    listing, charges = provider.operations
    assert (provider.key_header, provider.key_source) == ("Idempotency-Key", "/info/description")
    assert (charges.idempotency, charges.key_header) == ("keyed", "Idempotency-Key")
    assert listing.idempotency == "natural"


def test_a_provider_wide_key_the_person_states_keys_every_post():
    text = document({"/v1/charges": {"post": post("PostCharges")}})
    charge = by_id(text, key_header="Idempotency-Key")["post_charges"]
    assert (charge.idempotency, charge.key_header) == ("keyed", "Idempotency-Key")
    assert "you stated it" in charge.key_why


def test_a_key_field_in_the_request_body_makes_the_call_keyed():
    body = {"type": "object", "properties": {"idempotency_key": {"type": "string"}}}
    op = by_id(document({"/v2/payments": {"post": post("CreatePayment", body)}}))["create_payment"]
    assert op.idempotency == "keyed" and "idempotency_key" in op.key_why


def broken_document() -> str:
    """A document whose one parameter breaks the OpenAPI schema (a ``format`` that is 5)."""
    bad = {"schema": {"type": "string", "format": 5}, "name": "q", "in": "query"}
    return document({"/a": {"get": post("getA", parameters=[bad])}, "/b": {"get": post("getB")}})


def test_a_schema_that_breaks_the_openapi_schema_is_a_warning_and_the_operations_still_import():
    text = broken_document()
    provider = read_provider(text, "api.json")
    assert [op.id for op in provider.operations] == ["get_a", "get_b"]
    assert provider.warnings and provider.warnings[0].path.startswith("/paths/~1a/get")


def test_a_document_broken_at_its_top_is_refused():
    with pytest.raises(DocumentError, match="invalid OpenAPI document"):
        read_openapi(
            json.dumps({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": []})
        )


@pytest.mark.parametrize(
    ("method", "path", "effect"),
    [
        ("post", "/v1/refunds", "compensate"),
        ("post", "/v1/charges/{charge}/refunds", "compensate"),
        ("post", "/v1/refunds/{refund}", "commit"),  # updates a refund
        ("post", "/v1/test_helpers/refunds/{refund}/expire", "commit"),
        ("post", "/v1/payment_intents/{intent}/cancel", "compensate"),
    ],
)
def test_an_undoing_word_makes_a_compensator_only_as_the_call_s_verb(method, path, effect):
    assert guess_effect(method, path, "")[0] == effect


def orders_document() -> str:
    data = {"type": "object", "properties": {"id": {"type": "string"}}}
    schema = {"type": "object", "properties": {"data": data}}
    created = {"201": {"description": "made", "content": {"application/json": {"schema": schema}}}}
    item = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    return document(
        {
            "/air/orders": {"post": post("createOrder", responses=created)},
            "/air/orders/{id}": {"get": post("getOrder", parameters=[item])},
            "/air/orders/{id}/actions/cancel": {"post": post("cancelOrder", parameters=[item])},
        }
    )


def test_a_post_on_a_collection_mints_the_handle_its_items_are_named_by():
    ops = read_openapi(orders_document())
    chain = propose_chain(ops, ["create_order", "get_order"])
    create, get = chain["actions"]
    assert create["output"]["handles"] == ["order_id"]
    assert create["http"]["reads"] == {"order_id": "body:/data/id"}
    assert get["input"]["handles"] == ["order_id"]
    assert chain["handles"] == [{"id": "order_id", "minted_by": "create_order"}]


def test_picked_operations_make_a_chain_the_lint_reads_whose_errors_are_only_design_left_to_do():
    chain = propose_chain(read_openapi(orders_document()), ["get_order", "cancel_order"])
    report = lint(formats.from_document(chain))
    errors = {f.rule for f in report.findings if f.severity == "error"}
    # what no provider document says: how a lost cancel is confirmed, how a dead order shows
    assert errors == {"commit.missing-confirmation", "handles.commit-input-undetectable"}
    assert chain["handles"] == [{"id": "order_id", "minted_by": "external(POST /air/orders)"}]


def bound_chain() -> dict:
    return {
        "id": "orders",
        "handles": [{"id": "booking", "minted_by": "book"}],
        "actions": [
            {"id": "book", "effect": "commit", "idempotency": {"mode": "none"},
             "output": {"handles": ["booking"]}},
            {"id": "look", "effect": "read", "input": {"handles": ["booking"]},
             "http": {"method": "GET", "path": "/air/orders/{id}"}},
        ],
    }  # fmt: skip


def test_a_proposal_attaches_to_the_action_already_bound_to_its_call():
    proposal = propose_chain(read_openapi(orders_document()), ["get_order"])
    edits = edits_onto(bound_chain(), proposal)
    assert edits == [
        (
            "update_action",
            {
                "id": "look",
                "fields": {"http": {"method": "GET", "path": "/air/orders/{id}",
                                    "operation_id": "getOrder", "sends": {"booking": "path:id"}}},
            },
        )
    ]  # fmt: skip


def test_a_rename_map_attaches_a_proposal_to_an_action_of_another_name():
    proposal = propose_chain(read_openapi(orders_document()), ["create_order", "get_order"])
    edits = edits_onto(bound_chain(), proposal, {"create_order": "book"})
    assert [(op, args["id"]) for op, args in edits] == [
        ("update_action", "book"),
        ("update_action", "look"),
    ]
    spec = formats.from_document(bound_chain())
    for op, args in edits:
        spec = edit.apply(spec, op, args)
    assert spec.action("book").http.path == "/air/orders"
    # the one handle its answer carries is the one book mints, whatever its name
    assert spec.action("book").http.reads == {"booking": "body:/data/id"}
    assert [f.rule for f in lint(spec).findings if f.rule.startswith("binding.")] == []


def test_a_rename_to_an_action_the_chain_lacks_is_refused_by_name():
    proposal = propose_chain(read_openapi(orders_document()), ["get_order"])
    with pytest.raises(DocumentError, match="the chain has no action nowhere"):
        edits_onto(bound_chain(), proposal, {"get_order": "nowhere"})


def test_a_document_that_tags_no_operation_tags_each_with_the_resource_its_path_names():
    paths = {
        "/v1/payment_intents": {"post": post("PostPaymentIntents")},
        "/v1/payment_intents/{intent}/cancel": {"post": post("PostCancel")},
        "/v1/refunds": {"post": post("PostRefunds")},
    }
    ops = read_openapi(document(paths))
    assert [op.tags for op in ops] == [["payment_intents"], ["payment_intents"], ["refunds"]]


def test_a_document_that_tags_some_operation_keeps_its_own_tags():
    paths = {
        "/v1/refunds": {"post": post("PostRefunds", tags=["Money"])},
        "/v1/x": {"get": post("x")},
    }
    assert [op.tags for op in read_openapi(document(paths))] == [["Money"], []]
