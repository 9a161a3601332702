"""Element paths: one spelling for every place in a chain, written, read and keyed."""

from __future__ import annotations

import doctest

import pytest

from chains.core import paths as paths_module
from chains.core.keys import GraphKey
from chains.core.model import ChainSpec
from chains.core.paths import SECTIONS, ElementPath, PathError, find_item, item_ref


def test_the_module_examples_hold():
    assert doctest.testmod(paths_module).failed == 0


@pytest.mark.parametrize(
    "text",
    [
        "actions[book]",
        "actions[book].effect",
        "handles[search_token]",
        "gates[amount_consent].outcomes.ok",
        "verdict_table[F3]",
        "verdict_table[#4].verdict",
        "actions[book].preconditions[#2].verdict",
        "policy.per_step",
        "known_unmatched[#1]",
        "actions[a.b:c].effect",
    ],
)
def test_a_path_reads_back_as_the_text_it_was_read_from(text):
    assert str(ElementPath.parse(text)) == text


def test_a_built_path_is_written_in_the_one_spelling():
    built = ElementPath.action("book").field("preconditions").item(2).field("verdict")
    assert str(built) == "actions[book].preconditions[#2].verdict"
    assert ElementPath.parse(str(built)) == built


def test_an_item_with_an_id_is_named_by_its_id_and_one_without_by_its_place_from_one():
    rows = ElementPath.root("verdict_table")
    assert str(rows.item_at(2, {"id": "F3"})) == "verdict_table[F3]"
    assert str(rows.item_at(3, {"verdict": "retry"})) == "verdict_table[#4]"
    assert (item_ref("F3", 3), item_ref(None, 4)) == ("F3", "#4")


def test_a_validator_location_counts_from_one_or_names_the_id():
    data = {"actions": [{"id": "search"}, {"id": "book", "preconditions": [{}, {}]}]}
    loc = ("actions", 1, "preconditions", 1, "verdict")
    assert str(ElementPath.from_location(loc, data)) == "actions[book].preconditions[#2].verdict"


def test_a_mapping_form_section_is_named_by_its_keys():
    loc = ("handles", "h", "staleness")
    assert str(ElementPath.from_location(loc, {"handles": {"h": {}}})) == "handles[h].staleness"


def test_a_path_into_a_parsed_chain_names_the_ids_of_its_models():
    chain = ChainSpec.model_validate({"id": "c", "actions": [{"id": "pay", "effect": "commit"}]})
    assert str(ElementPath.from_location(("actions", 0, "effect"), chain)) == "actions[pay].effect"


def test_a_path_in_an_element_turns_into_that_elements_graph_key():
    assert ElementPath.parse("actions[book].effect").graph_key() == GraphKey.node("action", "book")
    assert str(ElementPath.parse("verdict_table[#4].verdict").graph_key()) == "row:#4"
    assert str(ElementPath.gate("g").graph_key()) == "gate:g"


def test_a_path_outside_any_element_has_no_graph_key():
    assert ElementPath.parse("policy.per_chain.wall_clock").graph_key() is None


def test_a_path_knows_the_element_it_lies_in_and_the_fields_below_it():
    path = ElementPath.parse("gates[g].outcomes.ok")
    assert (path.kind, path.ref, str(path.element)) == ("gate", "g", "gates[g]")
    assert path.fields == ("outcomes", "ok")
    assert path.is_within(ElementPath.gate("g"))
    assert not path.is_within(ElementPath.gate("gg"))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("actions.book.effect", "elements are named in brackets: actions[book]"),
        ("actions[book", "the [ at character 8 is never closed"),
        ("actions[].effect", "the brackets at character 8 are empty or nested"),
        ("actions[book]effect", "a field name at character 14 needs a dot before it"),
        ("policy..per_step", "an empty field name at character 8"),
        ("policy.", "it ends with a dot"),
        ("[book]", "it starts with [ where a field name belongs"),
        ("", "it is empty"),
    ],
)
def test_a_malformed_path_is_refused_naming_what_is_wrong(text, says):
    with pytest.raises(PathError) as refused:
        ElementPath.parse(text)
    assert says in str(refused.value)


def test_paths_are_values_that_can_be_compared_and_hashed():
    assert {ElementPath.action("a"), ElementPath.parse("actions[a]")} == {ElementPath.action("a")}


def test_an_unknown_element_kind_is_refused():
    with pytest.raises(PathError, match="'step' is not an element kind"):
        ElementPath.of("step", "book")


def test_every_element_kind_has_its_section():
    assert {k: str(ElementPath.of(k, "x")) for k in SECTIONS} == {
        "action": "actions[x]",
        "handle": "handles[x]",
        "gate": "gates[x]",
        "row": "verdict_table[x]",
    }


def test_an_item_is_found_by_its_id_or_its_place_from_one():
    rows = [{"id": "D1"}, {"verdict": "retry"}]
    found = [find_item(rows, ref) for ref in ("D1", "#2", "#3", "#0", "X")]
    assert found == [0, 1, None, None, None]
