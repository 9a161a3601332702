"""The workspace's drawing: the selection at once, the graph laid out in the background."""

from __future__ import annotations

import doctest

import pytest

from chains.core import drawing
from chains.core.dot import RenderError
from chains.core.drawing import Canvas, start_drawing
from chains.core.model import ChainSpec

SPEC = ChainSpec.model_validate(
    {
        "id": "c",
        "handles": [{"id": "a", "minted_by": "s"}, {"id": "b", "derived_from": ["a"]}],
        "actions": [{"id": "s", "effect": "read", "output": {"handles": ["a"]}}],
    }
)


def test_the_module_doctests_pass():
    assert doctest.testmod(drawing).failed == 0


def test_a_selected_handle_marks_what_dies_with_it_in_the_svg():
    drawn = start_drawing(SPEC, Canvas(select="handle:a"))
    assert drawn.selection.marks == {"handle:a": "selected", "handle:b": "cascade"}
    assert 'class="node handle cascade"' in drawn.picture.result().svg


def test_elements_with_open_comments_are_marked_beside_their_selection_marks():
    drawn = start_drawing(SPEC, Canvas(select="handle:a", commented=frozenset({"handle:a"})))
    assert 'class="node handle selected has&#45;comment"' in drawn.picture.result().svg


def test_the_flow_view_draws_the_steps_not_the_handles():
    svg = start_drawing(SPEC, Canvas(view="flow")).picture.result().svg
    assert 'id="action:s"' in svg and 'id="handle:b"' not in svg


def test_a_chain_past_the_node_limit_is_not_laid_out_and_says_so():
    with pytest.raises(RenderError, match="the graph is drawn up to 2"):
        start_drawing(SPEC, Canvas(max_nodes=2)).picture.result()
