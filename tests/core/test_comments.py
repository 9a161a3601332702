"""What a comment may be anchored to, and the mentions it makes."""

from __future__ import annotations

import doctest

import pytest

from chains.core import comments
from chains.core.comments import UnknownAnchor, anchors, check_anchor, mentions, split_mentions
from chains.core.model import ChainSpec

SMALL = ChainSpec.model_validate(
    {
        "id": "small",
        "handles": [
            {"id": "search_id", "minted_by": "search"},
            {"id": "pick", "minted_by": "choose", "derived_from": ["search_id"]},
        ],
        "actions": [
            {"id": "search", "effect": "read", "output": {"handles": ["search_id"]}},
            {
                "id": "choose",
                "effect": "select",
                "input": {"handles": ["search_id"], "intent": ["dates"]},
                "output": {"handles": ["pick"]},
                "entry_gate": "consent",
            },
        ],
        "gates": [{"id": "consent", "audience": "user"}],
        "verdict_table": [
            {"id": "R1", "signal": ["http:410"], "verdict": "rewind(to: search)"},
            {"signal": ["http:409"], "verdict": "dead_end"},
        ],
    }
)


def test_the_module_doctests_pass():
    assert doctest.testmod(comments).failed == 0


@pytest.mark.parametrize(
    "key",
    [
        "chain",
        "action:choose",
        "handle:pick",
        "gate:consent",
        "row:R1",
        "row:#2",
        "intent:dates",
        "edge:derived_from:pick:search_id",
        "edge:consumes:choose:search_id",
        "edge:flow:search:choose",
        "edge:entry_gate:consent:choose",
    ],
)
def test_every_element_and_every_drawn_edge_is_an_anchor(key):
    assert key in anchors(SMALL)


def test_the_drawings_own_ids_are_not_anchors():
    assert not {"handle-graph", "flow-graph"} & anchors(SMALL)


def test_an_element_the_chain_lacks_is_refused_by_name():
    with pytest.raises(
        UnknownAnchor, match="small has no element 'edge:derived_from:search_id:pick'"
    ):
        check_anchor(SMALL, "edge:derived_from:search_id:pick")


def test_a_mention_ends_before_trailing_punctuation():
    assert mentions("thanks @ana. And @bo_b, @c-d!") == ["ana", "bo_b", "c-d"]


def test_an_email_address_is_no_mention():
    assert mentions("write to ops@example.com") == []


def test_text_without_known_mentions_is_one_plain_piece():
    assert split_mentions("ask @nobody", {"ana"}) == [("ask @nobody", False)]
