"""The layout memory: a changed drawing keeps every node it had where it was."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pytest

from chains.core import dot, edit, formats
from chains.core.layout import (
    Edge,
    Layout,
    LayoutError,
    Sketch,
    keep,
    place,
    read_graphviz_json,
    routed,
)
from chains.core.model import ChainSpec
from chains.core.render import flow_sketch, handle_graph_sketch

FLIGHT = Path(__file__).resolve().parents[2] / "fixtures" / "flight-roundtrip.yaml"
BOX = (60.0, 20.0)


def laid(nodes: dict[str, tuple[float, float]], edges: dict[str, Edge] | None = None) -> Layout:
    return Layout(nodes, {key: BOX for key in nodes}, edges or {})


# --- placing against a memory -------------------------------------------------------


def test_nodes_the_memory_knows_stay_where_it_had_them():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -40.0)})
    natural = laid({"a": (200.0, 300.0), "b": (260.0, 300.0), "c": (200.0, 200.0)})
    placed = place(natural, memory)
    assert placed.nodes["a"] == (0.0, 0.0) and placed.nodes["b"] == (0.0, -40.0)


def test_a_new_node_goes_where_the_fresh_layout_has_it_beside_the_node_it_shares_an_edge_with():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -200.0)})
    edges = {"e": Edge("b", "c", "0,0")}
    # Fresh, c is nearer a; but it is b's neighbour, so it keeps its place beside b.
    natural = laid({"a": (0.0, 0.0), "b": (0.0, -60.0), "c": (100.0, -40.0)}, edges)
    assert place(natural, memory).nodes["c"] == (100.0, -180.0)


def test_a_new_node_that_would_overlap_moves_to_the_nearest_free_spot_in_its_row():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -36.0), "c": (0.0, 36.0)})
    natural = laid(
        {"a": (0.0, 0.0), "b": (0.0, -36.0), "c": (0.0, 36.0), "n": (10.0, 0.0)},
        {"e": Edge("a", "n", "0,0")},
    )
    x, y = place(natural, memory).nodes["n"]
    assert y == 0.0  # rows above and below are taken: it keeps its row
    assert abs(x) >= BOX[0] + 18.0  # and sits clear of a, with the gap between nodes


def test_a_new_node_with_no_edge_takes_room_inside_the_drawing():
    memory = laid({"a": (0.0, 0.0), "b": (200.0, 0.0), "c": (0.0, -36.0)})
    natural = laid({**memory.nodes, "n": (0.0, 72.0)})  # fresh, it is drawn on top
    assert place(natural, memory).nodes["n"] == (78.0, 0.0)  # in a's row, between a and b


def test_a_new_node_with_no_edge_and_no_room_inside_goes_right_of_the_drawing():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -36.0)})
    natural = laid({**memory.nodes, "n": (0.0, 72.0)})
    x, y = place(natural, memory).nodes["n"]
    assert x >= 30.0 + 18.0 + 30.0 and y == 0.0  # the top row, a gap right of its edge


def test_new_nodes_overlap_neither_kept_nodes_nor_each_other():
    memory = laid({f"k{i}": (0.0, -36.0 * i) for i in range(5)})
    natural = laid({**memory.nodes, **{f"n{i}": (5.0, -36.0 * i) for i in range(5)}})
    placed = place(natural, memory)
    boxes = [placed.box(key) for key in placed.nodes]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_an_edge_between_kept_nodes_keeps_its_curve():
    curve = "e,0,-30 0,-10 0,-15 0,-20 0,-25"
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -40.0)}, {"e": Edge("a", "b", curve, "5,-20")})
    natural = laid(
        {"a": (9.0, 9.0), "b": (9.0, -31.0)}, {"e": Edge("a", "b", "e,1,1 1,1 1,1 1,1 1,1")}
    )
    assert place(natural, memory).edges["e"] == Edge("a", "b", curve, "5,-20")


def test_an_edge_a_new_node_now_sits_on_is_left_for_graphviz_to_route_again():
    # A long straight curve whose control points lie only at its ends.
    curve = "0,0 0,-100 0,-200 0,-300"
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -300.0)}, {"e": Edge("a", "b", curve)})
    natural = laid(
        {"a": (0.0, 0.0), "b": (0.0, -300.0), "n": (0.0, -150.0)},
        {"e": Edge("a", "b", curve), "f": Edge("a", "n", "0,0")},
    )
    placed = place(natural, memory)
    assert placed.nodes["n"] == (0.0, -150.0)
    assert "e" not in placed.edges


def test_an_edge_whose_end_changed_size_takes_the_fresh_curve():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -40.0)}, {"e": Edge("a", "b", "0,-10 0,-30")})
    fresh = Edge("a", "b", "0,-10 0,-26")
    natural = Layout(
        {"a": (0.0, 0.0), "b": (0.0, -40.0)},
        {"a": BOX, "b": (BOX[0] + 8, BOX[1] + 8)},  # b became single-use: a second ring
        {"e": fresh},
    )
    assert place(natural, memory).edges == {"e": fresh.moved(0, 0)}  # written to two places


def test_the_edge_to_a_new_node_is_the_fresh_curve_moved_along_with_both_ends():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -200.0)})
    natural = laid(
        {"a": (0.0, 0.0), "b": (0.0, -60.0), "c": (100.0, -60.0)},
        {"e": Edge("b", "c", "e,70,-60 30,-60 40,-60 50,-60 60,-60", "50,-50")},
    )
    assert place(natural, memory).edges["e"] == Edge(
        "b",
        "c",
        "e,70.00,-200.00 30.00,-200.00 40.00,-200.00 50.00,-200.00 60.00,-200.00",
        "50.00,-190.00",
    )


def test_an_edit_that_adds_no_node_is_drawn_where_the_memory_has_each_node():
    memory = laid({"a": (0.0, 0.0), "b": (0.0, -40.0)}, {"e": Edge("a", "b", "0,-10 0,-30")})
    sketch = Sketch(
        "", {"a": "box", "b": "box"}, {"e": ("a", "b"), "f": ("b", "a")}, frozenset(), str
    )
    kept = keep(sketch, memory)
    assert kept.nodes == memory.nodes and kept.edges == memory.edges  # f is not drawn yet
    assert keep(sketch._replace(nodes={**sketch.nodes, "c": "box"}), memory) is None


def test_an_edge_with_no_curve_gets_one_from_outline_to_outline_with_its_arrowhead():
    layout = laid({"a": (0.0, 0.0), "b": (0.0, -100.0)})
    sketch = Sketch("", {"a": "box", "b": "ellipse"}, {"e": ("a", "b")}, frozenset(), str)
    edge = routed(layout, sketch).edges["e"]
    assert edge.pos.startswith("e,0.00,-90.00 0.00,-10.00 ")  # the tip on b, the start on a
    assert edge.pos.endswith(" 0.00,-83.00")  # the arrowhead is 7 points long


def test_a_new_curve_bends_around_a_node_in_its_way():
    layout = laid({"a": (0.0, 0.0), "m": (0.0, -50.0), "b": (0.0, -100.0)})
    sketch = Sketch("", {k: "box" for k in "amb"}, {"e": ("a", "b")}, frozenset(), str)
    edge = routed(layout, sketch).edges["e"]
    assert not any(-30 <= x <= 30 and -60 <= y <= -40 for x, y in edge.points())


def test_a_memory_that_knows_less_than_half_the_nodes_leaves_the_fresh_layout():
    memory = laid({"a": (0.0, 0.0)})
    natural = laid({"a": (0.0, 0.0), "b": (0.0, 40.0), "c": (0.0, 80.0)})
    assert place(natural, memory) is None
    assert place(natural, None) is None


def test_a_curve_is_sampled_between_its_control_points():
    points = Edge("a", "b", "e,0,-310 0,0 0,-100 0,-200 0,-300").points()
    assert (0.0, -310.0) in points
    assert any(-160 < y < -140 for _, y in points)


# --- stored and read -----------------------------------------------------------------


def test_a_layout_reads_back_from_its_json_form():
    layout = laid({"a": (1.25, -3.5)}, {"e": Edge("a", "a", "e,1,2 3,4 5,6 7,8 9,10", "4,5")})
    again = Layout.from_json(json.loads(json.dumps(layout.as_json())))
    assert again == layout


@pytest.mark.parametrize(
    "stored",
    [
        None,
        [],
        {"nodes": {}},
        {"nodes": {"a": [1, 2]}, "edges": {}},
        {"nodes": {"a": ["x", 2, 3, 4]}, "edges": {}},
        {"nodes": {"a": [1e400, 2, 3, 4]}, "edges": {}},
        {"nodes": {}, "edges": {"e": ["a", "b"]}},
    ],
)
def test_a_stored_layout_that_does_not_read_is_refused(stored):
    with pytest.raises(LayoutError, match="not a stored layout"):
        Layout.from_json(stored)


def test_graphviz_output_without_a_layout_is_refused():
    with pytest.raises(LayoutError, match="no layout"):
        read_graphviz_json("this is not json")


# --- drawn by Graphviz ---------------------------------------------------------------


@cache
def flight() -> ChainSpec:
    return formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]


def drawn(spec: ChainSpec, view: str, memory: Layout | None = None) -> Layout:
    sketch = (flow_sketch if view == "flow" else handle_graph_sketch)(spec)
    return dot.lay_out(sketch.source, 10.0, memory, sketch).layout


def shifts(before: Layout, after: Layout) -> set[tuple[float, float]]:
    """How far each node both have moved (Graphviz may shift the whole drawing)."""
    return {
        (round(after.nodes[k][0] - x, 1), round(after.nodes[k][1] - y, 1))
        for k, (x, y) in before.nodes.items()
        if k in after.nodes
    }


EDITS = [
    ("handles", "add_handle", {"id": "loyalty_ref", "minted_by": "price_quote"}),
    ("handles", "add_handle", {"id": "visa_ref"}),
    (
        "handles",
        "add_edge",
        {"kind": "derived_from", "source": "seatmap_ref", "target": "outbound_pick"},
    ),
    ("handles", "add_action", {"id": "check_visa", "effect": "read"}),
    ("handles", "delete_handle", {"id": "seatmap_ref"}),
    (
        "handles",
        "remove_edge",
        {"kind": "derived_from", "source": "quote_id", "target": "return_pick"},
    ),
    ("flow", "add_action", {"id": "check_visa", "effect": "read"}),
    ("flow", "add_gate", {"id": "visa_consent", "audience": "user"}),
    ("flow", "update_action", {"id": "seat_map", "fields": {"effect": "mint"}}),
]


@pytest.mark.parametrize(("view", "op", "args"), EDITS, ids=[f"{v}-{o}" for v, o, _ in EDITS])
def test_an_edit_of_the_flight_chain_moves_no_node_it_kept(view, op, args):
    before = drawn(flight(), view)
    changed = edit.apply(flight(), op, args)
    after = drawn(changed, view, before)
    assert len(shifts(before, after)) == 1  # every kept node moved alike: not at all


@pytest.mark.parametrize("view", ["handles", "flow"])
def test_a_node_an_edit_adds_overlaps_no_other(view):
    before = drawn(flight(), view)
    changed = edit.apply(flight(), "add_action", {"id": "check_visa", "effect": "read"})
    after = drawn(changed, view, before)
    new = after.box("action:check_visa")
    for key in after.nodes:
        if key != "action:check_visa":
            other = after.box(key)
            apart = new[2] <= other[0] or other[2] <= new[0]
            assert apart or new[3] <= other[1] or other[3] <= new[1], key


def test_a_drawing_laid_out_against_its_own_layout_is_the_same_drawing():
    first = drawn(flight(), "handles")
    again = drawn(flight(), "handles", first)
    assert len(shifts(first, again)) == 1
    assert again.edges.keys() == first.edges.keys()


def test_an_edit_that_adds_no_node_runs_no_fresh_layout(monkeypatch):
    before = drawn(flight(), "handles")
    monkeypatch.setattr(dot, "DOT_EXECUTABLE", "no-such-graphviz-dot")
    args = {"kind": "derived_from", "source": "seatmap_ref", "target": "return_pick"}
    after = drawn(edit.apply(flight(), "add_edge", args), "handles", before)
    assert "edge:derived_from:seatmap_ref:return_pick" in after.edges


def test_a_placed_drawing_neato_cannot_draw_is_laid_out_afresh(monkeypatch):
    before = drawn(flight(), "handles")
    monkeypatch.setattr(dot, "NEATO_EXECUTABLE", "no-such-graphviz-neato")
    changed = edit.apply(flight(), "add_handle", {"id": "visa_ref"})
    after = drawn(changed, "handles", before)
    assert "handle:visa_ref" in after.nodes
    assert math.isfinite(after.nodes["handle:visa_ref"][0])
