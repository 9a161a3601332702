"""Graph keys: one text form, written and read by GraphKey alone."""

from __future__ import annotations

import doctest

import pytest

from chains.core import keys
from chains.core.keys import GraphKey, GraphKeyError, edge_key, key_attributes, node_key


def test_the_module_examples_hold():
    assert doctest.testmod(keys).failed == 0


@pytest.mark.parametrize(
    "text",
    [
        "action:book_trip",
        "handle:search_token",
        "gate:consent",
        "row:D3",
        "row:#4",
        "intent:dates",
        "edge:derived_from:outbound_pick:search_token",
        "edge:mints:price_quote:quote_id",
        "edge:route:pay:search:rewind",
        "edge:outcome:consent:search:repair",
        "edge:route:pay::rewind",
    ],
)
def test_a_key_reads_back_as_the_text_it_was_read_from(text):
    assert str(GraphKey.parse(text)) == text


def test_a_node_key_names_its_kind_and_id():
    key = GraphKey.parse("handle:search_token")
    assert (key.kind, key.name, key.is_edge) == ("handle", "search_token", False)


def test_an_edge_key_names_its_kind_source_and_target():
    key = GraphKey.parse("edge:consumes:book_trip:price_lock")
    assert (key.kind, key.name, key.source, key.target) == (
        "edge",
        "consumes",
        "book_trip",
        "price_lock",
    )


def test_a_route_edge_keeps_its_verdict_type_apart_from_its_ends():
    key = GraphKey.parse("edge:route:pay:search:rewind")
    assert (key.source, key.target, key.verdict) == ("pay", "search", "rewind")


def test_a_node_id_with_colons_splits_at_the_first_colon_only():
    assert GraphKey.parse("handle:urn:offer:1").name == "urn:offer:1"


def test_an_edge_whose_ends_contain_colons_is_refused_without_the_names():
    with pytest.raises(GraphKeyError, match="ambiguous"):
        GraphKey.parse("edge:derived_from:b:x:a")


def test_the_names_that_exist_settle_an_edge_whose_ends_contain_colons():
    key = GraphKey.parse("edge:derived_from:b:x:a", names={"b:x", "a"})
    assert (key.source, key.target) == ("b:x", "a")


def test_an_edge_the_names_cannot_settle_is_still_refused():
    with pytest.raises(GraphKeyError, match="ambiguous"):
        GraphKey.parse("edge:derived_from:a:a:a", names={"a", "a:a"})


def test_a_key_with_colons_in_its_ends_round_trips_when_the_names_are_known():
    key = GraphKey.edge("mints", "ns:mint", "ns:token")
    assert GraphKey.parse(str(key), names={"ns:mint", "ns:token"}) == key


@pytest.mark.parametrize(
    "text",
    [
        "",
        "search_token",
        "colour:red",
        "edge:",
        "edge:mints",
        "edge:mints:only_one_end",
        "edge:teleports:a:b",
        "edge:route:pay:search",
        "edge:mints:a:b:rewind",
    ],
)
def test_a_malformed_key_is_refused(text):
    with pytest.raises(GraphKeyError):
        GraphKey.parse(text)


def test_a_key_cannot_be_built_with_an_unknown_kind():
    with pytest.raises(GraphKeyError):
        GraphKey.node("colour", "red")


def test_the_text_helpers_write_what_graph_key_writes():
    assert node_key("action", "book") == str(GraphKey.node("action", "book")) == "action:book"
    assert edge_key("route", "a", "b", "rewind") == "edge:route:a:b:rewind"


def test_an_edge_carries_its_parts_as_data_attributes():
    data = key_attributes(GraphKey.parse("edge:route:pay:search:rewind"))
    assert data == {
        "data-key": "edge:route:pay:search:rewind",
        "data-kind": "edge",
        "data-edge-kind": "route",
        "data-source": "pay",
        "data-target": "search",
        "data-verdict": "rewind",
    }
