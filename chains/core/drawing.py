"""The workspace's drawing of a chain: what is selected, and the graph laid out in the background.

A caller says what to draw with plain data (:class:`Canvas`: which graph,
which element is selected, which elements carry open comment threads, and
the limits it allows), and :func:`start_drawing` answers the selection at
once and the SVG as a future: Graphviz works in a background thread while
the caller does other work (the edit service lints the changed chain
meanwhile). It knows nothing of requests or settings; the pages pass their
limits in.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Literal, NamedTuple

from .dot import Picture, RenderError, start_picture
from .layout import Layout
from .model import ChainSpec
from .render import flow_sketch, handle_graph_sketch
from .selection import Selection, select

__all__ = ["AFRESH_AFTER", "Canvas", "Drawing", "start_drawing"]

# Edits after which a drawing is laid out afresh instead of against its memory: they
# change the order the steps' rows are drawn in, which kept positions would hide.
AFRESH_AFTER = frozenset({"move_action"})


@dataclass(frozen=True)
class Canvas:
    """What to draw: the graph (``view``), the selected key, the keys with open comments.

    ``max_nodes``: a chain with more actions, handles and gates is not laid
    out (Graphviz would spend its whole ``layout_seconds`` on every view and
    then give up). ``memory``: where the graph's nodes were last drawn; the
    drawing keeps them there (:mod:`chains.core.layout`).
    """

    view: Literal["handles", "flow"] = "handles"
    select: str | None = None
    commented: frozenset[str] = frozenset()
    max_nodes: int = 3000
    layout_seconds: float = 10.0
    memory: Layout | None = None


class Drawing(NamedTuple):
    """The selection (ready) and the graph's picture (a future: ``.result()`` waits for it)."""

    selection: Selection
    picture: Future[Picture]


def start_drawing(spec: ChainSpec, canvas: Canvas) -> Drawing:
    """The selection on ``spec`` and the layout of its graph, started at once.

    Elements with open comment threads are marked ``has-comment``. A chain
    past ``canvas.max_nodes`` gets a future that raises :class:`RenderError`
    saying so, without running Graphviz.

    >>> spec = ChainSpec.model_validate({"id": "c", "handles": [{"id": "a"}, {"id": "b"}]})
    >>> drawn = start_drawing(spec, Canvas(select="handle:a", commented=frozenset({"handle:b"})))
    >>> drawn.selection.key, 'class="node handle selected"' in drawn.picture.result().svg
    ('handle:a', True)
    >>> str(start_drawing(spec, Canvas(max_nodes=1)).picture.exception())[:47]
    'the chain has 2 actions, handles and gates; the'
    """
    selection = select(spec, canvas.select)
    marks = dict(selection.marks)
    for key in canvas.commented:
        marks[key] = f"{marks.get(key, '')} has-comment".lstrip()
    nodes = len(spec.actions) + len(spec.handles) + len(spec.gates)
    if nodes > canvas.max_nodes:
        too_big: Future[Picture] = Future()
        too_big.set_exception(
            RenderError(
                f"the chain has {nodes} actions, handles and gates; the graph is drawn up to "
                f"{canvas.max_nodes}. The tabs list every element."
            )
        )
        return Drawing(selection, too_big)
    sketch = (flow_sketch if canvas.view == "flow" else handle_graph_sketch)(spec)
    picture = start_picture(sketch.source, canvas.layout_seconds, marks, canvas.memory, sketch)
    return Drawing(selection, picture)
