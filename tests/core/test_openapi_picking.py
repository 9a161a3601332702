"""Choosing a provider's operations by id, tag or path (chains/core/openapi/picking.py)."""

from __future__ import annotations

import doctest
import functools
import json

import pytest

from chains.core.errors import DocumentError
from chains.core.openapi import Operation, picking, read_openapi
from chains.core.openapi.picking import document_tags, pick, search

OK = {"200": {"description": "ok"}}


def operation(operation_id: str, tags: list[str], summary: str = "") -> dict:
    found = {"operationId": operation_id, "responses": OK, "tags": tags}
    return {**found, "summary": summary} if summary else found


# A small payments-and-air provider of our own: tagged operations, one untagged.
PATHS = {
    "/v1/payment_intents": {
        "get": operation("GetPaymentIntents", ["Payments"], "List payment intents"),
        "post": operation("PostPaymentIntents", ["Payments"]),
    },
    "/v1/payment_intents/{intent}/capture": {
        "post": operation("PostPaymentIntentsIntentCapture", ["Payments"]),
    },
    "/v1/refunds": {"post": operation("PostRefunds", ["Refunds", "Payments"])},
    "/v1/charges/{charge}/refund": {"post": operation("PostChargesChargeRefund", ["refunds"])},
    "/air/orders/{order_id}": {
        "get": operation("getOrder", ["Air Orders"]),
        "delete": operation("cancelOrder", ["Air Orders"]),
    },
    "/air/orders": {"post": operation("createOrder", ["Air Orders"], "Book the held offer")},
    "/health": {"get": {"responses": OK}},
}


@functools.cache
def provider() -> tuple[Operation, ...]:
    text = json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": PATHS})
    return tuple(read_openapi(text))


def ids(operations) -> list[str]:
    return [op.id for op in operations]


def refused(**patterns) -> list[str]:
    with pytest.raises(DocumentError) as caught:
        pick(provider(), **patterns)
    return [p.message for p in caught.value.problems]


def test_the_examples_in_the_module_run():
    assert doctest.testmod(picking).failed == 0


def test_no_pattern_picks_every_operation_in_the_documents_order():
    assert pick(provider()) == list(provider())


def test_a_tag_picks_the_operations_that_carry_it_whatever_its_case():
    assert ids(pick(provider(), tags=["REFUNDS"])) == ["post_refunds", "post_charges_charge_refund"]


def test_a_tag_with_a_space_is_matched_whole():
    assert ids(pick(provider(), tags=["air orders"])) == [
        "get_order",
        "cancel_order",
        "create_order",
    ]


def test_a_path_glob_picks_every_path_below_a_prefix():
    assert ids(pick(provider(), paths=["/v1/payment_intents*"])) == [
        "get_payment_intents",
        "post_payment_intents",
        "post_payment_intents_intent_capture",
    ]


def test_a_path_with_a_template_parameter_is_matched_as_written():
    assert ids(pick(provider(), paths=["/air/orders/{order_id}"])) == ["get_order", "cancel_order"]


def test_a_path_glob_minds_case_as_a_url_does():
    assert refused(paths=["/V1/*"]) == ["no operation's path matches `/V1/*`"]


def test_an_id_glob_matches_the_action_id_or_the_operation_id():
    assert ids(pick(provider(), ids=["*refund*"])) == ["post_refunds", "post_charges_charge_refund"]
    assert ids(pick(provider(), ids=["*Order"])) == ["get_order", "cancel_order", "create_order"]


def test_a_plain_id_picks_that_operation_by_action_id_or_operation_id():
    assert ids(pick(provider(), ids=["get_order"])) == ids(pick(provider(), ids=["getOrder"]))


def test_patterns_of_one_kind_are_a_union():
    chosen = pick(provider(), ids=["create_order", "*capture*"])
    assert ids(chosen) == ["post_payment_intents_intent_capture", "create_order"]


def test_kinds_given_together_are_an_intersection():
    chosen = pick(provider(), tags=["Payments"], paths=["/v1/refunds", "/v1/payment_intents"])
    assert ids(chosen) == ["get_payment_intents", "post_payment_intents", "post_refunds"]


def test_an_id_pattern_narrows_a_tag():
    assert ids(pick(provider(), tags=["Payments"], ids=["get_*"])) == ["get_payment_intents"]


def test_a_tag_no_operation_carries_is_refused_naming_the_documents_tags():
    assert refused(tags=["Billing"]) == [
        "no operation has the tag `Billing` (the document's tags: Payments, Refunds, Air Orders)"
    ]


def test_a_plain_id_the_document_lacks_is_refused_by_name():
    assert refused(ids=["pay_twice"]) == ["no operation pay_twice in the document"]


def test_an_id_glob_that_matches_nothing_is_refused_by_name():
    assert refused(ids=["*teleport*"]) == ["no operation id matches `*teleport*`"]


def test_every_pattern_that_matches_nothing_is_named_at_once():
    assert len(refused(ids=["*teleport*", "get_order"], paths=["/v2/*"], tags=["x"])) == 3


def test_a_combination_that_leaves_nothing_is_refused_naming_each_kind():
    assert refused(tags=["Air Orders"], paths=["/v1/*"]) == [
        "no operation has the tag `Air Orders` and a path matching `/v1/*`, "
        "though each matches some on its own"
    ]


def test_the_documents_tags_are_listed_once_each_in_order():
    assert document_tags(provider()) == ["Payments", "Refunds", "Air Orders"]


def test_a_document_without_tags_says_so_when_a_tag_is_asked_for():
    untagged = [op for op in provider() if not op.tags]
    with pytest.raises(DocumentError, match="the document tags no operation"):
        pick(untagged, tags=["Payments"])


def test_search_holds_every_word_anywhere_in_id_path_summary_or_tags():
    assert ids(search(provider(), "payment list")) == ["get_payment_intents"]
    assert ids(search(provider(), "AIR book")) == ["create_order"]


def test_search_reads_a_word_starting_with_a_slash_as_a_path_prefix():
    assert ids(search(provider(), "/air/")) == ["get_order", "cancel_order", "create_order"]
    assert ids(search(provider(), "/orders")) == []


def test_search_reads_a_glob_as_a_whole_id_or_path():
    assert ids(search(provider(), "*capture")) == ["post_payment_intents_intent_capture"]


def test_empty_search_text_lists_everything():
    assert search(provider(), "  ") == list(provider())
