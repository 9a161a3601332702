"""Layout memory: a drawing laid out again keeps its nodes where they were.

Graphviz's ``dot`` lays a graph out from scratch, so one new handle can move
half the nodes of a chain under the pointer. This module keeps what a drawing
looked like (a :class:`Layout`: each node's centre and size and each edge's
curve, by graph key) and places a changed drawing against it
(:func:`place`): every node the memory knows stays where it was, an edge
between two such nodes keeps its curve unless a new node now sits on it, and
each new node goes where ``dot`` put it relative to its nearest placed
neighbour, moved to the nearest free spot, inside the old drawing when
there is room nearby. Graphviz's ``neato -n2`` then draws exactly that,
routing only the edges left without a curve (:mod:`chains.core.dot` runs
it). An edit that replaces most of a chain is laid out afresh instead.

Positions are Graphviz points with ``y`` up, as its JSON output gives them
(:func:`read_graphviz_json`). A layout is stored as plain JSON
(:meth:`Layout.as_json`, :meth:`Layout.from_json`), so a stored one that does
not read is refused with :class:`LayoutError` rather than drawn wrongly.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import ChainError

__all__ = [
    "Edge",
    "Layout",
    "LayoutError",
    "Sketch",
    "keep",
    "place",
    "read_graphviz_json",
    "routed",
]

# Space kept free between a placed node and its neighbours, in points: the
# drawings' nodesep (0.25 in) across, and a little less than their ranksep
# (0.16 in) down, so a node fits between two rows that dot drew.
GAP_ACROSS = 18.0
GAP_DOWN = 10.0
# Candidate spots for a new node lie on a grid this fine, out to this far.
_STEP = 9.0
_REACH = 720.0
# A spot outside the old drawing costs this much more than its distance: of two
# spots about as near, the one that does not grow the drawing. (A new node with no
# edge has no place of its own: it takes any room inside, see _room_inside.)
_OUTSIDE = 9.0
# Moving a new node up or down costs this many times moving it across: the
# drawings read in rows (a step and what it mints), so a node should keep its row.
_DOWN_COST = 2.5
# Below this share of the new drawing's nodes known to the memory, the memory
# no longer says where things are: the drawing is laid out afresh.
_KEPT_AT_LEAST = 0.5
# How far (points) a node's size may change and its edges still keep their curves.
_SIZE_SLACK = 0.5

# Points sampled along each Bézier piece of an edge to see whether a new node sits on it.
_SAMPLES = 12

# A node's box: left, bottom, right, top.
Box = tuple[float, float, float, float]

_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class LayoutError(ChainError):
    """Graphviz output or a stored layout that does not read as a layout."""


@dataclass(frozen=True)
class Edge:
    """An edge of a laid-out drawing: its ends' keys and Graphviz's curve (``pos``, ``lp``)."""

    tail: str
    head: str
    pos: str
    label_pos: str | None = None

    def moved(self, dx: float, dy: float) -> Edge:
        """The same edge, its curve and label moved by ``dx``, ``dy``."""

        def move(text: str) -> str:
            return " ".join(_moved_point(part, dx, dy) for part in text.split())

        label = move(self.label_pos) if self.label_pos else None
        return Edge(self.tail, self.head, move(self.pos), label)

    def points(self) -> list[tuple[float, float]]:
        """Points along the curve (a dozen per Bézier piece), its arrow tips and its label.

        ``pos`` is Graphviz's: optional ``s,x,y`` and ``e,x,y`` arrow tips, then
        the control points of cubic Bézier pieces (1 + 3n of them).
        """
        tips: list[tuple[float, float]] = []
        control: list[tuple[float, float]] = []
        for part in self.pos.split():
            (tips if part[:2] in ("e,", "s,") else control).extend(_xy(part.lstrip("es,")))
        points = [*tips, *control[:1]]
        for i in range(0, len(control) - 3, 3):
            (ax, ay), (bx, by), (cx, cy), (dx, dy) = control[i : i + 4]
            for step in range(1, _SAMPLES + 1):
                t = step / _SAMPLES
                a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t**3
                points.append(
                    (a * ax + b * bx + c * cx + d * dx, a * ay + b * by + c * cy + d * dy)
                )
        return points + _xy(self.label_pos or "")


def _moved_point(part: str, dx: float, dy: float) -> str:
    """``x,y`` (or ``e,x,y``, ``s,x,y``) moved by ``dx``, ``dy``."""
    prefix = part[:2] if part[:2] in ("e,", "s,") else ""
    x, y = (float(n) for n in part[len(prefix) :].split(",")[:2])
    return f"{prefix}{x + dx:.2f},{y + dy:.2f}"


def _xy(text: str) -> list[tuple[float, float]]:
    """The point ``x,y`` in ``text`` as a one-item list; empty when there is none."""
    numbers = [float(n) for n in _NUMBER.findall(text)]
    return [(numbers[0], numbers[1])] if len(numbers) >= 2 else []


@dataclass(frozen=True)
class Layout:
    """Where a drawing's nodes sit (centre and size) and how its edges run, by graph key."""

    nodes: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    sizes: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    edges: Mapping[str, Edge] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The layout as plain JSON (rounded to a hundredth of a point)."""
        return {
            "nodes": {
                k: [round(x, 2), round(y, 2), *map(_r, self.sizes.get(k, (0.0, 0.0)))]
                for k, (x, y) in self.nodes.items()
            },
            "edges": {k: [e.tail, e.head, e.pos, e.label_pos] for k, e in self.edges.items()},
        }

    @classmethod
    def from_json(cls, data: Any) -> Layout:
        """The layout :meth:`as_json` wrote; :class:`LayoutError` for anything else."""
        try:
            nodes, sizes = {}, {}
            for key, (x, y, w, h) in data["nodes"].items():
                nodes[str(key)] = (float(x), float(y))
                sizes[str(key)] = (float(w), float(h))
            edges = {
                str(key): Edge(str(tail), str(head), str(pos), None if lp is None else str(lp))
                for key, (tail, head, pos, lp) in data["edges"].items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LayoutError(f"not a stored layout: {exc}") from None
        if not all(
            map(math.isfinite, (v for xy in [*nodes.values(), *sizes.values()] for v in xy))
        ):
            raise LayoutError("not a stored layout: a position is not a finite number")
        return cls(nodes, sizes, edges)

    def box(self, key: str) -> Box:
        """``key``'s node as (left, bottom, right, top)."""
        (x, y), (w, h) = self.nodes[key], self.sizes.get(key, (0.0, 0.0))
        return x - w / 2, y - h / 2, x + w / 2, y + h / 2


def _r(value: float) -> float:
    return round(value, 2)


def read_graphviz_json(text: str | bytes) -> Layout:
    """The layout in Graphviz's ``-Tjson`` output, keyed by each node's and edge's ``id``.

    Nodes and edges without an ``id`` (invisible ordering edges) are left out.

    >>> out = json.dumps({"objects": [
    ...     {"_gvid": 0, "id": "handle:a", "pos": "27,18", "width": "0.75", "height": "0.5"},
    ...     {"_gvid": 1, "id": "handle:b", "pos": "27,90", "width": "0.75", "height": "0.5"}],
    ...     "edges": [{"tail": 1, "head": 0, "id": "edge:x", "pos": "e,27,36 27,72 27,60 27,48"}]})
    >>> laid = read_graphviz_json(out)
    >>> laid.nodes["handle:a"], laid.sizes["handle:a"], laid.edges["edge:x"].tail
    ((27.0, 18.0), (54.0, 36.0), 'handle:b')
    """
    try:
        data = json.loads(text)
        keys: dict[int, str] = {}
        nodes, sizes = {}, {}
        for item in data.get("objects", []):
            if "nodes" in item or "subgraphs" in item or "pos" not in item or "id" not in item:
                continue  # a subgraph (rank=same), or a node Graphviz did not place
            x, y = (float(n) for n in item["pos"].split(",")[:2])
            key = str(item["id"])
            keys[int(item["_gvid"])] = key
            nodes[key] = (x, y)
            sizes[key] = (float(item["width"]) * 72, float(item["height"]) * 72)
        edges = {
            str(item["id"]): Edge(
                keys[int(item["tail"])], keys[int(item["head"])], item["pos"], item.get("lp")
            )
            for item in data.get("edges", [])
            if "id" in item and "pos" in item and item["tail"] in keys and item["head"] in keys
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LayoutError(f"Graphviz wrote no layout this reads: {exc}") from None
    return Layout(nodes, sizes, edges)


def place(natural: Layout, memory: Layout | None) -> Layout | None:
    """``natural`` (a fresh ``dot`` layout) placed against ``memory``; None to keep ``natural``.

    Nodes both know keep the memory's centre; the others are placed one by
    one in reading order (top down, left to right), each where ``natural``
    has it relative to its nearest node already placed of those it shares an
    edge with, then moved to the nearest spot where it overlaps nothing
    (:func:`_free_spot`); a node with no edge takes the room inside the
    drawing nearest where ``natural`` has it, or else a place just right of
    the drawing (:func:`_room_inside`). Edges keep
    the memory's curve when both ends kept their place and size and no new
    node lies on the curve; the rest carry no curve, for Graphviz to route.
    None when the memory knows less than half of ``natural``'s nodes (or
    nothing): then the fresh layout is the better picture.

    >>> size = (40.0, 20.0)
    >>> old = Layout({"a": (0.0, 0.0)}, {"a": size})
    >>> nodes, edges = {"a": (100.0, 100.0), "b": (100.0, 60.0)}, {"e": Edge("a", "b", "")}
    >>> place(Layout(nodes, {"a": size, "b": size}, edges), old).nodes
    {'a': (0.0, 0.0), 'b': (0.0, -40.0)}
    """
    if memory is None:
        return None
    kept = [key for key in natural.nodes if key in memory.nodes]
    if not kept or len(kept) < _KEPT_AT_LEAST * len(natural.nodes):
        return None
    nodes = {key: memory.nodes[key] for key in kept}
    placed = Layout(nodes, natural.sizes)
    # The old drawing's extent: its nodes, and the curves between them that stay.
    curves = [e for k, e in memory.edges.items() if k in natural.edges]
    bounds = _bounds([*(placed.box(key) for key in kept), *_point_boxes(curves)])
    neighbours: dict[str, set[str]] = {}
    for edge in natural.edges.values():
        neighbours.setdefault(edge.tail, set()).add(edge.head)
        neighbours.setdefault(edge.head, set()).add(edge.tail)
    boxes = [placed.box(key) for key in kept]
    for key in sorted(
        (k for k in natural.nodes if k not in nodes),
        key=lambda k: (-natural.nodes[k][1], natural.nodes[k][0]),
    ):
        (x, y) = natural.nodes[key]
        known = [k for k in neighbours.get(key, ()) if k in nodes] or list(nodes)
        anchor = min(known, key=lambda k: math.dist(natural.nodes[k], (x, y)))
        (ax, ay), (nx, ny) = nodes[anchor], natural.nodes[anchor]
        want, size = (ax + x - nx, ay + y - ny), natural.sizes[key]
        if key in neighbours:
            nodes[key] = _free_spot(want, size, boxes, bounds)
        else:  # nothing ties it anywhere: room inside the drawing, else beside it
            nodes[key] = _room_inside(want, size, boxes, bounds) or _free_spot(
                (bounds[2] + GAP_ACROSS + size[0] / 2, bounds[3] - size[1] / 2), size, boxes, bounds
            )
        boxes.append(placed.box(key))
    new = [placed.box(key) for key in nodes if key not in memory.nodes]
    resized = {
        key
        for key in kept
        if math.dist(memory.sizes.get(key, (0.0, 0.0)), natural.sizes[key]) > _SIZE_SLACK
    }
    edges = {}
    for key, edge in natural.edges.items():
        old = memory.edges.get(key)
        ends_kept = edge.tail in memory.nodes and edge.head in memory.nodes
        stays = ends_kept and not {edge.tail, edge.head} & resized
        if old is not None and stays and not _crosses(old, new):
            edges[key] = Edge(edge.tail, edge.head, old.pos, old.label_pos)
            continue
        # Both ends moved alike from where dot drew them: dot's own curve, moved along.
        (tx, ty), (hx, hy) = (_shift(nodes, natural, k) for k in (edge.tail, edge.head))
        if abs(tx - hx) < 0.01 and abs(ty - hy) < 0.01:
            moved = edge.moved(tx, ty)
            if not _crosses(moved, _boxes_but(placed, edge)):
                edges[key] = moved
    return Layout(nodes, natural.sizes, edges)


def _shift(nodes: Mapping[str, tuple[float, float]], natural: Layout, key: str) -> tuple:
    (x, y), (nx, ny) = nodes[key], natural.nodes[key]
    return x - nx, y - ny


def _boxes_but(layout: Layout, edge: Edge) -> list[Box]:
    """Every node's box in ``layout`` but ``edge``'s ends (which its curve touches)."""
    return [layout.box(k) for k in layout.nodes if k not in (edge.tail, edge.head)]


def _bounds(boxes: Iterable[Box]) -> Box:
    left, bottom, right, top = zip(*boxes, strict=True)
    return min(left), min(bottom), max(right), max(top)


def _point_boxes(edges: Iterable[Edge]) -> list[Box]:
    return [(x, y, x, y) for edge in edges for x, y in edge.points()]


def _free_spot(
    want: tuple[float, float], size: tuple[float, float], boxes: list[Box], bounds: Box
) -> tuple[float, float]:
    """The spot nearest ``want`` where a node of ``size`` keeps its gaps to every box.

    Spots are tried ring by ring on a grid; a move up or down costs
    ``_DOWN_COST`` times a move across, and a spot outside ``bounds`` (the
    old drawing) ``_OUTSIDE`` more. Past ``_REACH`` the node goes where it
    was wanted.
    """
    reach = _REACH + size[0] + GAP_ACROSS
    near = [b for b in boxes if abs((b[0] + b[2]) / 2 - want[0]) < reach + (b[2] - b[0])]
    best: tuple[float, tuple[float, float]] | None = None
    for ring in range(int(_REACH / _STEP) + 1):
        if best is not None and best[0] <= ring * _STEP:
            break
        for i in range(-ring, ring + 1):
            for dx, dy in {(i, -ring), (i, ring), (-ring, i), (ring, i)}:
                spot = (want[0] + dx * _STEP, want[1] + dy * _STEP)
                if not _fits(spot, size, near):
                    continue
                cost = math.hypot(dx * _STEP, _DOWN_COST * dy * _STEP)
                cost += 0.0 if _inside(spot, size, bounds) else _OUTSIDE
                if best is None or cost < best[0]:
                    best = (cost, spot)
    return best[1] if best is not None else want


def _room_inside(
    want: tuple[float, float], size: tuple[float, float], boxes: list[Box], bounds: Box
) -> tuple[float, float] | None:
    """The free spot inside ``bounds`` nearest ``want`` beside one of ``boxes``, if any.

    A spot beside a box (right of it, left, above or below, a gap away) is
    where a node fits in a row or a column of the drawing; there are four
    per box, so this costs little however large the drawing.
    """
    across, down = (size[0] + GAP_ACROSS) / 2, (size[1] + GAP_DOWN) / 2
    spots = []
    for left, bottom, right, top in boxes:
        x, y = (left + right) / 2, (bottom + top) / 2
        spots += [(right + GAP_ACROSS / 2 + across, y), (left - GAP_ACROSS / 2 - across, y)]
        spots += [(x, top + GAP_DOWN / 2 + down), (x, bottom - GAP_DOWN / 2 - down)]
    free = [s for s in spots if _inside(s, size, bounds) and _fits(s, size, boxes)]
    return min(free, key=lambda s: math.dist(s, want)) if free else None


def _fits(spot: tuple[float, float], size: tuple[float, float], boxes: list[Box]) -> bool:
    """Whether a node of ``size`` at ``spot`` keeps the gaps to every box."""
    (x, y), w, h = spot, size[0] / 2 + GAP_ACROSS, size[1] / 2 + GAP_DOWN
    return not any(
        x - w < r and left < x + w and y - h < t and b < y + h for left, b, r, t in boxes
    )


def _inside(spot: tuple[float, float], size: tuple[float, float], bounds: Box) -> bool:
    (x, y), w, h = spot, size[0] / 2, size[1] / 2
    return bounds[0] <= x - w and x + w <= bounds[2] and bounds[1] <= y - h and y + h <= bounds[3]


def _crosses(edge: Edge, boxes: list[Box]) -> bool:
    """Whether a point of ``edge``'s curve or label lies in (or right by) one of ``boxes``."""
    return any(
        b[0] - 2 <= x <= b[2] + 2 and b[1] - 2 <= y <= b[3] + 2
        for x, y in edge.points()
        for b in boxes
    )


# --- what a drawing holds before it is laid out -----------------------------------------


class Sketch(NamedTuple):
    """A drawing before layout: its DOT, its nodes' shapes and edges' ends, and how to pin it.

    ``nodes`` maps each node's key to its Graphviz shape (``box``, ``ellipse``,
    ``diamond``); ``edges`` each edge's key to its (tail, head) keys; ``labelled``
    names the edges with a label; ``pinned`` writes the DOT with every node where
    a layout says (:mod:`chains.core.render` makes these).
    """

    source: str
    nodes: Mapping[str, str]
    edges: Mapping[str, tuple[str, str]]
    labelled: frozenset[str]
    pinned: Callable[[Layout], str]


def keep(sketch: Sketch, memory: Layout | None) -> Layout | None:
    """``sketch`` drawn where ``memory`` has every one of its nodes; None if it lacks one.

    An edit that adds no node (an edge drawn, a field changed) needs no fresh
    layout: each node stays put and each edge the memory has keeps its curve.
    """
    if memory is None or not sketch.nodes or any(k not in memory.nodes for k in sketch.nodes):
        return None
    edges = {
        key: Edge(tail, head, memory.edges[key].pos, memory.edges[key].label_pos)
        for key, (tail, head) in sketch.edges.items()
        if key in memory.edges
    }
    nodes = {key: memory.nodes[key] for key in sketch.nodes}
    return Layout(nodes, {key: memory.sizes.get(key, (0.0, 0.0)) for key in nodes}, edges)


def routed(layout: Layout, sketch: Sketch) -> Layout:
    """``layout`` with a curve for every edge of ``sketch`` it has none for (:func:`_route`).

    Graphviz would route them itself (``neato -n2`` with ``splines``), but that
    builds a map of every node around each curve: a quarter of a second on a
    40-node chain, for one new edge. These curves are simpler: straight, or
    bent aside when a node is in the way.
    """
    edges = dict(layout.edges)
    for key, (tail, head) in sketch.edges.items():
        if key not in edges and tail in layout.nodes and head in layout.nodes:
            edges[key] = _route(layout, sketch, tail, head, key in sketch.labelled)
    return Layout(layout.nodes, layout.sizes, edges)


# The length of an arrowhead as the drawings draw it (10 points at arrowsize 0.7).
_ARROW = 7.0
# How far aside a straight curve is bent, in turn, until it passes every node in its way.
_BENDS = (0.0, 30.0, -30.0, 60.0, -60.0)
# How far right (then left) of both ends a curve swings round what lies between them.
_SWINGS = (24.0, 60.0, 120.0, 200.0, 320.0)

Point = tuple[float, float]


def _route(layout: Layout, sketch: Sketch, tail: str, head: str, labelled: bool) -> Edge:
    """A curve from ``tail``'s outline to an arrowhead on ``head``'s, clear of other nodes.

    Tried in turn: straight, bent a little aside, then swung round the right
    and then the left of both ends, further each time (as ``dot`` draws a
    long edge past the rows between); the first that crosses no other node.
    """
    others = [layout.box(k) for k in layout.nodes if k not in (tail, head)]
    first = None
    for start, one, two, tip in _candidates(layout, sketch, tail, head):
        edge = _curve(tail, head, start, one, two, tip, labelled)
        if not _crosses(edge, others):
            return edge
        first = first or edge
    return first or Edge(tail, head, "")


def _candidates(
    layout: Layout, sketch: Sketch, tail: str, head: str
) -> Iterator[tuple[Point, Point, Point, Point]]:
    """Curves to try from ``tail`` to ``head``: start, two control points, arrow tip."""
    (tx, ty), (hx, hy) = layout.nodes[tail], layout.nodes[head]
    (tw, th), (hw, hh) = ((w / 2, h / 2) for w, h in (layout.sizes[tail], layout.sizes[head]))
    if tail == head:  # a loop on the node's right side
        right, top, bottom = tx + tw, ty + th / 2, ty - th / 2
        yield (right, top), (right + 30, top + 18), (right + 30, bottom - 18), (right, bottom)
        return
    length = math.dist((tx, ty), (hx, hy)) or 1.0
    ux, uy = (hx - tx) / length, (hy - ty) / length
    start = _outline(layout, sketch, tail, (ux, uy))
    tip = _outline(layout, sketch, head, (-ux, -uy))
    for bend in _BENDS:
        nx, ny = -uy * bend, ux * bend
        one = (start[0] + (tip[0] - start[0]) / 3 + nx, start[1] + (tip[1] - start[1]) / 3 + ny)
        two = (
            start[0] + 2 * (tip[0] - start[0]) / 3 + nx,
            start[1] + 2 * (tip[1] - start[1]) / 3 + ny,
        )
        yield start, one, two, tip
    for side in (1, -1):
        edge = max(tx + side * tw, hx + side * hw) if side > 0 else min(tx - tw, hx - hw)
        for swing in _SWINGS:
            x = edge + side * swing
            yield (tx + side * tw, ty), (x, ty), (x, hy), (hx + side * hw, hy)


def _curve(
    tail: str, head: str, start: Point, one: Point, two: Point, tip: Point, labelled: bool
) -> Edge:
    """The edge of one cubic piece ending in an arrowhead at ``tip`` (label at its middle)."""
    length = math.dist(two, tip) or 1.0
    end = (
        tip[0] - _ARROW * (tip[0] - two[0]) / length,
        tip[1] - _ARROW * (tip[1] - two[1]) / length,
    )
    points = " ".join(f"{x:.2f},{y:.2f}" for x, y in (start, one, two, end))
    label = None
    if labelled:
        x = (start[0] + 3 * one[0] + 3 * two[0] + end[0]) / 8
        y = (start[1] + 3 * one[1] + 3 * two[1] + end[1]) / 8
        label = f"{x + 10:.2f},{y:.2f}"
    return Edge(tail, head, f"e,{tip[0]:.2f},{tip[1]:.2f} {points}", label)


def _outline(
    layout: Layout, sketch: Sketch, key: str, towards: tuple[float, float]
) -> tuple[float, float]:
    """Where a ray from ``key``'s centre in direction ``towards`` leaves its shape."""
    (x, y), (w, h) = layout.nodes[key], (size / 2 for size in layout.sizes[key])
    dx, dy = towards
    if not w or not h:
        return x, y
    shape = sketch.nodes.get(key, "box")
    if shape == "ellipse":
        t = 1 / math.hypot(dx / w, dy / h)
    elif shape == "diamond":
        t = 1 / (abs(dx) / w + abs(dy) / h)
    else:
        t = min(w / abs(dx) if dx else math.inf, h / abs(dy) if dy else math.inf)
    return x + t * dx, y + t * dy
