"""An action's HTTP binding: the call it stands for, validated and kept as written."""

from __future__ import annotations

import pytest

from chains.core import edit, formats
from chains.core.design_doc import design_document
from chains.core.errors import DocumentError
from chains.core.formats import json_schema, validate_chain

BOUND = """
id: duffel
handles:
  - {id: offer_id, minted_by: search}
  - {id: order_id, minted_by: create_order}
actions:
  - id: search
    effect: read
    output: {handles: [offer_id]}
    http: {method: post, path: /air/offer_requests, operation_id: createOfferRequest,
           reads: {offer_id: "body:/data/offers/0/id"}}
  - id: create_order
    effect: commit
    input: {handles: [offer_id], intent: [passengers]}
    output: {handles: [order_id]}
    idempotency: {mode: keyed, key_scope: intent}
    http:
      method: POST
      path: /air/orders/{order_id}/actions
      idempotency_header: Idempotency-Key
      sends: {offer_id: "body:/data/selected_offers/0", passengers: "body:/data/passengers",
              order_id: "path:order_id", trace: "header:X-Trace"}
      reads: {order_id: "header:Location"}
"""


def load(text: str):
    return formats.load(text, format="yaml").chains[0]


def bound(action_http: dict) -> dict:
    return {"id": "c", "actions": [{"id": "a", "effect": "read", "http": action_http}]}


def test_a_bound_chain_reads_its_calls():
    http = load(BOUND).actions[1].http
    assert (http.method, http.path, http.idempotency_header) == (
        "POST",
        "/air/orders/{order_id}/actions",
        "Idempotency-Key",
    )
    assert http.sends["offer_id"] == "body:/data/selected_offers/0"
    assert http.parameters() == ["order_id"]


def test_a_method_written_in_lower_case_is_kept_upper_case():
    assert load(BOUND).actions[0].http.method == "POST"


def test_a_binding_round_trips_through_the_document_unchanged():
    spec = load(BOUND)
    again = formats.from_document(formats.to_document(spec))
    assert again == spec
    assert formats.to_document(again)["actions"][1]["http"]["reads"] == {
        "order_id": "header:Location"
    }


def test_an_unbound_action_writes_no_binding():
    document = formats.to_document(load("id: c\nactions: [{id: a, effect: read}]\n"))
    assert "http" not in document["actions"][0]


@pytest.mark.parametrize(
    ("http", "where", "says"),
    [
        ({"method": "FETCH", "path": "/x"}, "http.method", "GET"),
        ({"method": "GET", "path": "x/y"}, "http.path", "starts with '/'"),
        ({"method": "GET", "path": "/x/{id"}, "http.path", "{name}"),
        ({"method": "GET", "path": "/x/{}"}, "http.path", "{name}"),
        ({"method": "GET", "path": "/x", "sends": {"a": "cookie:a"}}, "http.sends.a", "no place"),
        ({"method": "GET", "path": "/x", "sends": {"a": "body:data"}}, "http.sends.a", "pointer"),
        ({"method": "GET", "path": "/x", "sends": {"a": "query:"}}, "http.sends.a", "name the"),
        ({"method": "GET", "path": "/x", "reads": {"a": "query:a"}}, "http.reads.a", "no place"),
    ],
)
def test_a_binding_that_does_not_read_is_refused_at_its_place(http, where, says):
    with pytest.raises(DocumentError) as refused:
        validate_chain(bound(http))
    problem = refused.value.problems[0]
    assert problem.path.endswith(where) and says in problem.message, problem


def test_a_bound_chain_round_trips_through_its_design_document_with_a_call_column():
    spec = load(BOUND)
    text = design_document(spec)
    assert "| Call |" in text and "`POST /air/orders/{order_id}/actions`" in text
    again = formats.load(text, format="md").chains[0]
    assert again.actions[1].http == spec.actions[1].http


def test_the_json_schema_describes_the_binding():
    schema = json_schema()
    binding = schema["$defs"]["HttpBinding"]
    assert set(binding["required"]) == {"method", "path"}
    assert "JSON pointer" in binding["properties"]["sends"]["description"]


def binding_edits_chain():
    return formats.from_document(
        {
            "id": "orders",
            "handles": [{"id": "order_id", "minted_by": "book"}],
            "actions": [
                {"id": "book", "effect": "commit", "idempotency": {"mode": "none"},
                 "output": {"handles": ["order_id"]},
                 "http": {"method": "POST", "path": "/orders",
                          "reads": {"order_id": "body:/id"}}},
                {"id": "look", "effect": "read",
                 "input": {"handles": ["order_id"], "intent": {"fields": {}}},
                 "http": {"method": "GET", "path": "/orders/{id}",
                          "sends": {"order_id": "path:id", "fields": "query:fields"}}},
            ],
        }
    )  # fmt: skip


def test_renaming_a_handle_renames_it_in_every_binding():
    spec = edit.apply(
        binding_edits_chain(), "update_handle", {"id": "order_id", "fields": {"id": "booking"}}
    )
    assert spec.action("book").http.reads == {"booking": "body:/id"}
    assert spec.action("look").http.sends == {"booking": "path:id", "fields": "query:fields"}


def test_deleting_a_handle_drops_it_from_every_binding_and_keeps_the_rest():
    spec = edit.apply(binding_edits_chain(), "delete_handle", {"id": "order_id"})
    assert spec.action("book").http.reads == {}
    assert spec.action("look").http.sends == {"fields": "query:fields"}


def test_a_binding_key_that_is_also_an_intent_field_stays_when_a_handle_of_that_name_goes():
    doc = formats.to_document(binding_edits_chain())
    doc["handles"].append({"id": "fields", "minted_by": "book"})
    spec = edit.apply(formats.from_document(doc), "delete_handle", {"id": "fields"})
    assert spec.action("look").http.sends["fields"] == "query:fields"
