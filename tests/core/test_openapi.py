"""Proposed actions from a provider's OpenAPI document, and the documented errors no row covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.openapi import propose_actions, read_openapi

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
    ("operation", "mode"),
    [("create_hold", "keyed"), ("book_order", "none"), ("get_order", "natural")],
)
def test_idempotency_is_read_from_an_idempotency_key_header_and_the_method(operation, mode):
    assert OPERATIONS[operation].idempotency == mode


def test_request_body_properties_and_required_parameters_become_intent_fields():
    assert OPERATIONS["book_order"].fields == ["hold_id", "reference", "contact_email"]
    assert OPERATIONS["get_seat_map"].fields == ["offer_id"]  # `segment` is optional


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
    # search_offers: http:4xx covers its coded 400 and 429, known_unmatched its 503
    assert sorted((action.split(" ")[0], code) for code, action in uncovered) == [
        ("book_order", "http:402 && code:PAYMENT_DECLINED"),
        ("book_order", "http:409 && code:HOLD_EXPIRED"),
        ("price_offer", "http:410 && code:OFFER_EXPIRED"),
    ]


def test_proposed_actions_keep_the_documented_errors_and_take_the_confirmed_effect():
    (refund,) = propose_actions(
        OPERATIONS.values(), ["refund_payment"], effects={"refund_payment": "compensate"}
    )
    assert refund["effect"] == "compensate" and refund["idempotency"] == {"mode": "keyed"}
    assert refund["documented_errors"] == ["http:409 && code:ALREADY_REFUNDED"]


def test_choosing_an_operation_the_document_lacks_is_refused():
    with pytest.raises(DocumentError, match="no operation pay_twice"):
        propose_actions(OPERATIONS.values(), ["pay_twice"])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("openapi: 3.0.3\ninfo: {title: t}\npaths: {}\n", "version"),
        ("swagger: '2.0'\n", "no `openapi` field"),
        ("openapi: [unclosed\n", "malformed YAML"),
    ],
)
def test_a_document_that_is_not_valid_openapi_3_says_why(text, says):
    with pytest.raises(DocumentError) as caught:
        read_openapi(text, "api.yaml")
    assert says in str(caught.value.problems[0])
