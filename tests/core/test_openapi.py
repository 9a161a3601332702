"""Proposed actions from a provider's OpenAPI document, and the documented errors no row covers."""

from __future__ import annotations

import contextlib
import http.server
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chains.core import formats, openapi
from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.openapi import propose_actions, read_openapi
from chains.core.openapi.effects import guess_effect

SKYLOOM = Path(__file__).resolve().parents[2] / "fixtures" / "openapi" / "skyloom-air.yaml"
OPERATIONS = {o.id: o for o in read_openapi(SKYLOOM.read_bytes(), SKYLOOM.name)}


def test_every_operation_of_the_document_is_read():
    assert len(OPERATIONS) == 13
    assert (OPERATIONS["cancel_order"].method, OPERATIONS["cancel_order"].path) == (
        "delete",
        "/orders/{order_id}",
    )


@pytest.mark.parametrize(
    ("operation", "effect"),
    [
        ("get_offer", "read"),
        ("search_offers", "read"),  # a POST that searches
        ("price_offer", "read"),
        ("book_order", "commit"),
        ("create_payment", "commit"),
        ("cancel_order", "compensate"),
    ],
)
def test_the_effect_is_guessed_from_the_method_and_the_path(operation, effect):
    assert OPERATIONS[operation].effect == effect


@pytest.mark.parametrize(
    ("method", "path", "operation_id", "override", "summary", "effect"),
    [
        ("post", "/v1/refunds", "PostRefunds", "", "Create a refund", "compensate"),
        ("post", "/v1/intents/{id}/cancel", "PostIntentsIdCancel", "", "", "compensate"),
        ("post", "/v1/charges/{charge}/void", "voidCharge", "", "", "compensate"),
        ("post", "/v1/prices", "PostPrices", "", "Create a price", "commit"),
        ("post", "/v1/quotes/{quote}/accept", "PostQuotesQuoteAccept", "", "", "commit"),
        ("post", "/shopping/seatmaps", "getSeatmapFromFlightOffer", "GET", "", "read"),
        ("post", "/shopping/flight-offers/pricing", "quoteAirOffers", "", "", "read"),
        ("post", "/paymentMethods", "post-paymentMethods", "", "Get a list of methods", "read"),
        ("post", "/payments", "post-payments", "", "Start a transaction", "commit"),
    ],
)
def test_the_effect_reads_the_words_of_real_operations(
    method, path, operation_id, override, summary, effect
):
    got, why = guess_effect(method, path, operation_id, override, summary)
    assert got == effect, why


def test_a_post_that_overrides_its_method_to_get_is_a_read():
    text = """
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /shopping/seatmaps:
    post:
      operationId: createSeatmapRequest
      parameters:
        - {name: X-HTTP-Method-Override, in: header, required: true,
           schema: {type: string, enum: [GET]}}
      responses: {"200": {description: ok}}
"""
    (op,) = read_openapi(text, "amadeus.yaml")
    assert (op.effect, op.why) == ("read", "POST with X-HTTP-Method-Override: GET reads")


@pytest.mark.parametrize(
    ("operation", "mode"),
    [("create_hold", "keyed"), ("book_order", "none"), ("get_order", "natural")],
)
def test_idempotency_is_read_from_an_idempotency_key_header_and_the_method(operation, mode):
    assert OPERATIONS[operation].idempotency == mode


def test_only_required_fields_that_are_no_ids_become_intent_fields_with_their_types():
    assert OPERATIONS["book_order"].fields == ["reference"]  # contact_email is optional
    assert OPERATIONS["book_order"].types == {"reference": "string"}
    assert OPERATIONS["get_seat_map"].fields == []  # `segment` is optional


def test_ids_in_the_path_the_query_or_the_body_become_handles():
    assert OPERATIONS["book_order"].handles == ["hold_id"]
    assert OPERATIONS["get_seat_map"].handles == ["offer_id"]


def test_documented_errors_follow_refs_combined_schemas_and_examples():
    assert OPERATIONS["price_offer"].errors == [
        "http:409 && code:FARE_PRICE_CHANGED",  # allOf
        "http:410 && code:OFFER_EXPIRED",  # an example
    ]
    assert OPERATIONS["search_offers"].errors == [
        "http:400 && code:INVALID_REQUEST",  # a $ref'd response
        "http:429 && code:RATE_LIMITED",
        "http:503",  # names no code
    ]
    assert "http:5xx" in OPERATIONS["book_order"].errors
    assert "http:409 && code:HOLD_EXPIRED" in OPERATIONS["book_order"].errors  # an enum


def test_the_lint_names_every_documented_code_no_row_and_no_known_unmatched_covers():
    actions = propose_actions(OPERATIONS.values(), ["search_offers", "price_offer", "book_order"])
    chain = ChainSpec.model_validate(
        {
            "id": "skyloom",
            "actions": actions,
            "verdict_table": [
                {"id": "R1", "signal": ["http:4xx"], "scope": {"steps": ["search_offers"]},
                 "verdict": "dead_end"},
                {"id": "R2", "signal": ["code:FARE_PRICE_CHANGED"],
                 "verdict": "rewind(to: search_offers)"},
                {"id": "R3", "signal": ["http:5xx", "http:409 && code:DUPLICATE_BOOKING"],
                 "scope": {"steps": ["book_order"]}, "verdict": "reconcile"},
            ],
            "known_unmatched": [{"signal": "http:503", "note": "the search is retried by hand"}],
        }
    )  # fmt: skip
    uncovered = [
        f.message.split(" is documented for ")
        for f in lint(chain).findings
        if f.rule == "table.documented-error-uncovered"
    ]
    # search_offers: known_unmatched covers its 503; the catch-all http:4xx row names
    # neither of its codes, so it decides nothing for them
    assert sorted((action.split(" ")[0], code) for code, action in uncovered) == [
        ("book_order", "http:402 && code:PAYMENT_DECLINED"),
        ("book_order", "http:409 && code:HOLD_EXPIRED"),
        ("price_offer", "http:410 && code:OFFER_EXPIRED"),
        ("search_offers", "http:400 && code:INVALID_REQUEST"),
        ("search_offers", "http:429 && code:RATE_LIMITED"),
    ]


def test_a_status_class_row_covers_a_documented_status_that_names_no_code():
    actions = propose_actions(OPERATIONS.values(), ["search_offers"])
    chain = ChainSpec.model_validate(
        {
            "id": "skyloom",
            "actions": actions,
            "verdict_table": [
                {"id": "R1", "signal": ["http:5xx", "code:INVALID_REQUEST", "code:RATE_LIMITED"],
                 "verdict": "dead_end"},
            ],
        }
    )  # fmt: skip
    rules = [f.rule for f in lint(chain).findings]
    assert "table.documented-error-uncovered" not in rules


def test_proposed_actions_keep_the_documented_errors_and_take_the_confirmed_effect():
    (refund,) = propose_actions(
        OPERATIONS.values(), ["refund_payment"], effects={"refund_payment": "compensate"}
    )
    assert refund["effect"] == "compensate" and refund["idempotency"] == {"mode": "keyed"}
    assert refund["documented_errors"] == ["http:409 && code:ALREADY_REFUNDED"]


def test_a_proposed_action_is_bound_to_its_call_with_its_key_header_and_each_field_s_place():
    book, refund = propose_actions(OPERATIONS.values(), ["refund_payment", "book_order"])
    assert refund["http"] == {
        "method": "POST",
        "path": "/payments/{payment_id}/refunds",
        "operation_id": "refundPayment",
        "idempotency_header": "Idempotency-Key",
        "sends": {"payment_id": "path:payment_id"},
    }
    assert book["http"]["sends"] == {"hold_id": "body:/hold_id", "reference": "body:/reference"}
    assert "idempotency_header" not in book["http"]  # the document names none for it


def test_proposed_actions_lint_without_a_binding_finding():
    actions = propose_actions(OPERATIONS.values(), list(OPERATIONS))
    spec = formats.from_document({"id": "skyloom", "actions": actions})
    assert [f for f in lint(spec).findings if f.rule.startswith("binding.")] == []


def test_a_confirmed_effect_that_is_not_an_effect_of_the_model_is_refused_by_name():
    with pytest.raises(DocumentError, match="refund_payment: 'undo' is not an effect"):
        propose_actions(OPERATIONS.values(), ["refund_payment"], effects={"refund_payment": "undo"})


def test_choosing_an_operation_the_document_lacks_is_refused():
    with pytest.raises(DocumentError, match="no operation pay_twice"):
        propose_actions(OPERATIONS.values(), ["pay_twice"])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("openapi: 3.0.3\ninfo: {title: t}\npaths: {}\n", "version"),
        ("asyncapi: '2.6.0'\n", "no `openapi` (3.x) or `swagger` (2.0) field"),
        ("swagger: '2.0'\n", "as converted from Swagger 2.0"),
        ("openapi: [unclosed\n", "malformed YAML"),
    ],
)
def test_a_document_that_is_not_valid_openapi_3_says_why(text, says):
    with pytest.raises(DocumentError) as caught:
        read_openapi(text, "api.yaml")
    assert says in str(caught.value.problems[0])


# Documents that reach outside themselves, and shapes that cost a walk dear.


@contextmanager
def recording_listener() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 answering a schema to anything; (its URL, the paths asked)."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's API)
            asked.append(self.path)
            body = b'{"type": "object", "properties": {"code": {"enum": ["FETCHED"]}}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for the loop's next look at its flag: 0.01 s, not the default 0.5 s
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def with_error_schema(schema: object, version: str = "3.0.3", **top: object) -> str:
    """A one-operation document whose 409 response has ``schema``, as JSON text."""
    response = {"description": "Conflict", "content": {"application/json": {"schema": schema}}}
    document = {
        "openapi": version,
        "info": {"title": "Test", "version": "1"},
        "paths": {
            "/orders": {"post": {"operationId": "createOrder", "responses": {"409": response}}}
        },
        **top,
    }
    return json.dumps(document)


def self_referring(count: int) -> dict:
    """Schemas S1..S<count>, each with properties error1..error<count> referring to
    S1..S<count> (searched, as every property holding the error is)."""
    return {
        f"S{i}": {
            "type": "object",
            "properties": {
                f"error{j}": {"$ref": f"#/components/schemas/S{j}"} for j in range(1, count + 1)
            },
        }
        for i in range(1, count + 1)
    }


def refused(text: str) -> list[str]:
    with pytest.raises(DocumentError) as caught:
        read_openapi(text, "api.json")
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize("key", ["$ref", "$dynamicRef"])
def test_a_reference_to_a_url_is_refused_by_name_and_place_and_nothing_is_fetched(key):
    with recording_listener() as (url, asked):
        problems = refused(with_error_schema({"type": "object", "properties": {"a": {key: url}}}))
    assert asked == []
    where = "/paths/~1orders/post/responses/409/content/application~1json/schema/properties/a"
    assert problems == [
        f"{where}: `{key}: {url}` points outside the document; "
        "only references inside it (`#/...`) are followed"
    ]


def test_a_reference_to_a_url_anywhere_is_refused_before_the_document_is_checked():
    with recording_listener() as (url, asked):
        document = json.loads(with_error_schema({"$ref": "#/components/schemas/E"}))
        document["paths"]["/offers"] = {"$ref": f"{url}/paths.json"}
        document["components"] = {
            "schemas": {"E": {"properties": {"a": {"$ref": f"{url}/a"}}, "default": {"a": 1}}}
        }
        problems = refused(json.dumps(document))
    assert asked == []
    assert [p.split(":")[0] for p in problems] == [
        "/paths/~1offers",
        "/components/schemas/E/properties/a",
    ]


@pytest.mark.parametrize(
    "where",
    [
        {"schema": {"$id": "{url}/id/", "properties": {"a": {"$ref": "#/components/schemas/A"}}}},
        {"schema": {"$schema": "{url}/dialect", "type": "object"}},
        {"schema": {"type": "object"}, "jsonSchemaDialect": "{url}/dialect"},
    ],
    ids=["$id", "$schema", "jsonSchemaDialect"],
)
def test_an_id_or_dialect_naming_a_url_fetches_nothing(where):
    with recording_listener() as (url, asked):
        given = json.loads(json.dumps(where).replace("{url}", url))
        schema = given.pop("schema")
        text = with_error_schema(
            schema, "3.1.0", components={"schemas": {"A": {"type": "string"}}}, **given
        )
        with contextlib.suppress(DocumentError):  # an unknown dialect is refused
            read_openapi(text, "api.json")
    assert asked == []


def test_a_reference_to_a_file_is_refused_and_the_file_is_never_read(tmp_path, monkeypatch):
    secret = secrets.token_hex(16)
    marker = tmp_path / "secret.yaml"
    marker.write_text(f"type: object\ndescription: {secret}\n")
    monkeypatch.chdir(tmp_path)
    for ref in (marker.as_uri(), str(marker), "secret.yaml", "./secret.yaml#/description"):
        problems = refused(with_error_schema({"$ref": ref}))
        assert f"`$ref: {ref}` points outside the document" in problems[0]
        assert secret not in " ".join(problems)


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("#/components/schemas/Missing", "points at nothing in the document"),
        ("#Anchor", "is not a JSON pointer"),
        ("#/components/schemas/Loop", "leads round a circle of references"),
    ],
)
def test_a_reference_inside_the_document_that_leads_nowhere_is_refused_by_name(ref, says):
    loop = {"Loop": {"$ref": "#/components/schemas/Back"}, "Back": {"$ref": ref}}
    problems = refused(with_error_schema({"$ref": ref}, components={"schemas": loop}))
    assert f"`$ref: {ref}` {says}" in problems[0]


def test_a_pointer_into_a_list_by_a_digit_that_is_no_number_is_refused_by_name():
    schemas = {"Listed": {"allOf": [{"properties": {"code": {"enum": ["X"]}}}]}}
    ref = "#/components/schemas/Listed/allOf/²"
    problems = refused(with_error_schema({"$ref": ref}, components={"schemas": schemas}))
    assert f"`$ref: {ref}` points at nothing in the document" in problems[0]


def test_a_pointer_is_read_with_its_escapes():
    schemas = {"a/b~c": {"properties": {"code": {"enum": ["ESCAPED"]}}}}
    text = with_error_schema(
        {"$ref": "#/components/schemas/a~1b~0c"}, components={"schemas": schemas}
    )
    assert read_openapi(text, "api.json")[0].errors == ["http:409 && code:ESCAPED"]


def test_a_schema_whose_properties_all_refer_back_is_searched_once_at_each_depth():
    schemas = self_referring(12)  # 12**6 paths to depth 6: refused as too complex unless memoised
    schemas["S12"]["properties"]["code"] = {"enum": ["DEEP"]}
    text = with_error_schema({"$ref": "#/components/schemas/S1"}, components={"schemas": schemas})
    assert read_openapi(text, "api.json")[0].errors == ["http:409 && code:DEEP"]


def test_a_schema_that_includes_itself_through_all_of_is_read():
    schemas = {
        "A": {
            "allOf": [
                {"$ref": "#/components/schemas/A"},
                {"properties": {"code": {"enum": ["SELF"]}}},
            ],
            "required": ["code"],
        }
    }
    text = with_error_schema({"$ref": "#/components/schemas/A"}, components={"schemas": schemas})
    assert read_openapi(text, "api.json")[0].errors == ["http:409 && code:SELF"]


def test_shared_all_of_parts_and_long_chains_of_references_are_read():
    diamond = {
        f"D{i}": {"allOf": [{"$ref": f"#/components/schemas/D{i + 1}"}] * 2, "required": ["x"]}
        for i in range(40)
    }  # 2**40 paths for a walk that follows each part
    chain = {
        f"C{i}": {"properties": {"next": {"$ref": f"#/components/schemas/C{i + 1}"}}}
        for i in range(3000)
    }  # deeper than Python's stack for a recursive walk
    schemas = {**diamond, "D40": {"type": "object"}, **chain, "C3000": {"type": "string"}}
    for start in ("D0", "C0"):
        text = with_error_schema(
            {"$ref": f"#/components/schemas/{start}"}, components={"schemas": schemas}
        )
        assert read_openapi(text, "api.json")[0].errors == ["http:409"]


def test_a_document_past_the_step_budget_is_refused_as_too_complex(monkeypatch):
    monkeypatch.setattr(openapi.documented, "MAX_STEPS", 100)
    text = with_error_schema(
        {"$ref": "#/components/schemas/S1"}, components={"schemas": self_referring(12)}
    )
    assert "the document is too complex" in refused(text)[0]


def test_a_document_with_more_operations_than_are_read_at_once_is_refused(monkeypatch):
    monkeypatch.setattr(openapi.reading, "MAX_OPERATIONS", 12)
    with pytest.raises(DocumentError, match="has 13 operations; at most 12 are read"):
        read_openapi(SKYLOOM.read_bytes(), SKYLOOM.name)


def test_an_alias_bomb_in_the_document_itself_is_refused():
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    text = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nx-bomb:\n  " + "\n  ".join(
        levels
    )
    with pytest.raises(DocumentError, match="aliases"):
        read_openapi(text, "api.yaml")


@pytest.mark.parametrize("version", ["4.0.0", 3, None])
def test_an_openapi_version_this_does_not_read_is_refused_by_its_value(version):
    text = json.dumps({"openapi": version, "info": {"title": "t", "version": "1"}, "paths": {}})
    assert "not an OpenAPI version this reads" in refused(text)[0]
