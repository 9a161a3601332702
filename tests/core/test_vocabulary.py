"""One vocabulary: effect classes and verdict row names are defined once, in the model."""

from __future__ import annotations

import doctest
from typing import get_args

from chains.core.model import (
    COMMIT_CLASS_EFFECTS,
    EFFECTS,
    Action,
    ChainSpec,
    generic_row_ref,
    row_ref,
    rows_by_ref,
    trace_row_ref,
)
from chains.core.model import table as table_module
from chains.core.paths import ref_position
from chains.core.render import EFFECT_FILLS

TABLE = ChainSpec.model_validate(
    {
        "id": "c",
        "verdict_table": [
            {"id": "D1", "signal": ["http:409"], "verdict": "retry"},
            {"signal": ["http:500"], "verdict": "reconcile"},
            {"id": "D1", "signal": ["http:410"], "verdict": "dead_end"},
        ],
    }
).verdict_table


def test_the_table_module_examples_hold():
    assert doctest.testmod(table_module).failed == 0


def test_the_effect_classes_are_the_ones_an_action_accepts():
    assert get_args(Action.model_fields["effect"].annotation) == EFFECTS
    assert EFFECTS == ("read", "mint", "commit", "compensate", "select")


def test_the_commit_classes_are_effect_classes():
    assert set(COMMIT_CLASS_EFFECTS) <= set(EFFECTS)


def test_every_effect_class_has_a_fill_in_the_drawing():
    assert set(EFFECT_FILLS) == set(EFFECTS)


def test_a_row_with_an_id_is_named_by_its_id():
    assert row_ref(TABLE[0], 1) == "D1"


def test_a_row_without_an_id_is_named_by_its_place_among_the_domain_rows():
    assert row_ref(TABLE[1], 2) == "#2"


def test_a_trace_names_an_id_less_domain_row_so_it_never_reads_as_a_generic_row():
    assert trace_row_ref(TABLE[1], 2) == "domain#2"
    assert generic_row_ref(2) == "#2"


def test_rows_by_ref_finds_rows_by_id_and_by_place():
    found = rows_by_ref(TABLE)
    assert found["#2"] is TABLE[1]
    assert list(found) == ["D1", "#2"]


def test_of_two_rows_sharing_an_id_the_first_is_the_one_found():
    assert rows_by_ref(TABLE)["D1"] is TABLE[0]


def test_a_place_reference_reads_back_as_its_position():
    assert ref_position("#12") == 12


def test_an_id_or_a_malformed_place_is_not_a_position():
    assert [ref_position(r) for r in ("D1", "#", "#0", "#-1", "#1a", "#٣")] == [None] * 6
