"""The designer's two drawings of a chain, as Graphviz DOT and as inline SVG.

This module owns how a chain looks: the *handle graph* (handles, the actions
that mint and consume them, ``derived_from`` lineage, probes and
compensators) and the *flow* (steps in order, entry gates, the routes that
jump back, probes and compensation hanging off the commits). It assumes
nothing about the document's validity: a chain under edit often names
handles, actions or gates that do not exist, and those are drawn as
``undefined`` nodes instead of failing. Duplicate ids keep their first
definition, as in :mod:`chains.core.graph`. It starts no process:
:mod:`chains.core.dot` lays the DOT out.

Every node and edge carries an SVG ``id`` equal to its *graph key* and a
``class`` naming its kind (Graphviz prepends ``node`` or ``edge``), plus the
class that ``marks`` gives its key, so the page's JavaScript finds elements
by key and highlights them with CSS (``marks`` come from e.g.
:func:`chains.core.diff.graph_marks`; keys the drawing lacks are ignored).

Handle graph keys and classes:

* ``action:<id>`` — ``node action effect-<effect>`` (+ ``probe-only``)
* ``handle:<id>`` — ``node handle`` (+ ``single-use``, ``external``)
* ``edge:derived_from:<child>:<parent>`` — ``edge derived-from`` (bold, drawn
  parent → child)
* ``edge:mints:<action>:<handle>`` — ``edge mints`` (drawn action → handle)
* ``edge:consumes:<action>:<handle>`` — ``edge consumes`` (drawn handle → action)
* ``gate:<id>`` — ``node gate audience-<audience>`` (+ ``entry-gate``), named inside
* ``edge:entry_gate:<gate>:<action>`` — ``edge entry-gate``: the step waits for the gate
* ``edge:raises:<action>:<gate>`` — ``edge raises`` (dotted): a ``gate(...)`` verdict

Every arrow points the way things are made, from what exists first to what
is made from it (:func:`chains.core.keys.arrow`), so in the top-down layout
they all point down unless a step uses what a later step makes.
* ``edge:probe:<commit>:<probe>`` — ``edge probe`` (dashed)
* ``edge:compensator:<commit>:<compensator>`` — ``edge compensator`` (dashed),
  one per action of the compensation (action, chain and ladder rungs)

Flow keys and classes:

* ``action:<id>`` — ``node action effect-<effect>`` (+ ``main-line`` or
  ``off-line``; probes and compensation steps are off the main line)
* ``gate:<id>`` — ``node gate audience-<audience>`` (+ ``entry-gate``)
* ``edge:flow:<from>:<to>`` — ``edge flow``: consecutive main-line steps;
  when ``<to>`` has an entry gate the edge ends at the gate's diamond
* ``edge:entry_gate:<gate>:<action>`` — ``edge entry-gate``
* ``edge:route:<from>:<to>:<verdict-type>`` — ``edge route`` (dashed,
  labelled): a rewind, repair or reselect written on step ``<from>`` (its
  own verdicts or a verdict-table row scoped to it)
* ``edge:raises:<action>:<gate>`` — ``edge raises`` (dotted): a ``gate(...)``
  verdict on the step
* ``edge:outcome:<gate>:<to>:<verdict-type>`` — ``edge outcome`` (dashed,
  labelled): a gate outcome or timeout that routes to step ``<to>``
* ``edge:probe:<commit>:<probe>`` — ``edge probe`` (dashed)
* ``edge:compensator:<commit>:<step>`` — ``edge compensator`` (dashed): the
  compensation action, or the first step of a compensation chain or ladder rung
* ``edge:compensation:<from>:<to>`` — ``edge compensation``: the next step of
  a compensation chain

In both drawings a name that nothing defines is ``undefined`` (dashed
outline). Every user-provided string reaches the SVG as text: DOT strings are
always double-quoted (never HTML-like labels), ``&`` is pre-escaped so
Graphviz cannot read entities into them, nothing sets ``URL`` or ``href``,
and DOT node names are the key only when it is plain ASCII (else ``_<n>``),
so Graphviz's ``<title>`` and comments never carry user text it might not
escape. Control characters, which XML cannot carry, become U+FFFD.

Laying a drawing out (Graphviz ``dot``, SVG fit for a strict
Content-Security-Policy, the memory of layouts) is :mod:`chains.core.dot`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .dot import check_marks, start_picture, start_svg
from .graph import action_verdicts
from .keys import GraphKey, edge_key, node_key
from .layout import Layout, Sketch
from .lint.structure import row_element
from .model import Action, ChainSpec, Gate, Handle, compensators, first_by_id, is_external
from .signals import scope_applies_to
from .verdicts import Verdict, format_verdict

__all__ = [
    "EFFECT_FILLS",
    "flow_dot",
    "flow_sketch",
    "flow_svg",
    "handle_graph_dot",
    "handle_graph_sketch",
    "handle_graph_svg",
]

# Okabe-Ito colours: distinguishable with every common colour-vision deficiency,
# and all light enough for black text.
EFFECT_FILLS = {
    "read": "#56B4E9",  # sky blue
    "mint": "#F0E442",  # yellow
    "commit": "#E69F00",  # orange
    "compensate": "#CC79A7",  # reddish purple
    "select": "#009E73",  # bluish green
}
_UNDEFINED = "#D55E00"  # vermillion
_PROBE = "#0072B2"  # blue
_COMPENSATION = EFFECT_FILLS["compensate"]
_FONT = "Helvetica,Arial,sans-serif"
_TOOLTIP_LIMIT = 200

# What decides whether the canvas reads at first sight is the label size against
# the space around it: the page fits the whole drawing into the canvas, so a label
# shows at fontsize x (canvas / drawing). Big labels on small boxes with little space
# between ranks keep a 40-node chain at 11 CSS px or more in a 1440x900 window.
_NODE_LOOK = {
    "fontname": _FONT,
    "fontsize": "14",
    "height": "0.3",
    "width": "0.4",
    "margin": "0.08,0.02",
}
_EDGE_LOOK = {"fontname": _FONT, "fontsize": "12", "arrowsize": "0.7"}
# Top-down, with little space between ranks: one rank per step (see handle_graph_dot).
_LAYOUT = {"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.16"}
# Invisible edges that keep rows in order pull harder than any drawn edge.
_ORDER_WEIGHT = "20"
# Handles that no step of the chain mints share rows of at most this many.
_ORPHANS_PER_ROW = 4
# Rows per column before a drawing wraps into another column beside it: about
# what the canvas holds at 11 px labels in a 900 px high window.
_ROWS_PER_COLUMN = 20
# A flow's row is one step (a handle graph's is a step and its handles), so its
# columns are narrow: once a flow wraps, shorter columns, more of them, fill the
# canvas's width instead of leaving two thin columns in the middle of it.
_FLOW_ROWS_PER_WRAPPED_COLUMN = 10


# --- text that reaches Graphviz ----------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.:\-]+")


def _quote(text: str, *, breaks: bool = False) -> str:
    """A DOT double-quoted string whose escString value is exactly ``text``.

    Graphviz reads HTML entities in labels, tooltips and ids, so ``&`` is
    escaped first; ``\\\\`` then yields one backslash, which also disarms
    ``\\N`` and friends. ``breaks`` turns newlines into centred line breaks
    (labels); elsewhere they stay literal.
    """
    text = _CONTROL.sub("\ufffd", text)
    text = text.replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"')
    if breaks:
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{text}"'


def _tooltip(text: str) -> str:
    """One line of at most ``_TOOLTIP_LIMIT`` characters.

    Graphviz expands escapes in tooltips twice, so no doubling of backslashes
    survives every version; a look-alike (U+2216) keeps the text readable.
    """
    text = " ".join(text.split()).replace("\\", "\u2216")
    if len(text) > _TOOLTIP_LIMIT:
        text = text[: _TOOLTIP_LIMIT - 1].rstrip() + "…"
    return text


# --- a drawing: nodes and edges by key -----------------------------------------


@dataclass
class _Item:
    label: str | None
    classes: list[str]
    attrs: dict[str, str]
    tips: list[str] = field(default_factory=list)
    tail: str = ""
    head: str = ""


class _Drawing:
    """Nodes and edges in insertion order, so the same document gives the same DOT."""

    def __init__(self, name: str, marks: dict[str, str], **graph_attrs: str):
        self.name = name
        self.marks = marks
        self.graph_attrs = {"id": name, "bgcolor": "transparent", "fontname": _FONT, **graph_attrs}
        self.nodes: dict[str, _Item] = {}
        self.edges: dict[str, _Item] = {}
        self.names: dict[str, str] = {}
        self.rows: list[list[str]] = []  # node keys drawn side by side (one rank)
        self.order: list[tuple[str, str]] = []  # invisible edges: tail's row above head's

    def node(self, key: str, label: str, classes: list[str], tip: str, **attrs: str) -> None:
        """Add a node; the first definition of a key wins."""
        if key in self.nodes:
            return
        self.names[key] = key if _PLAIN_KEY.fullmatch(key) else f"_{len(self.names)}"
        self.nodes[key] = _Item(label, classes, attrs, [tip])

    def edge(
        self, key: str, tail: str, head: str, classes: list[str], tip: str, **attrs: str
    ) -> None:
        """Add an edge between existing nodes, or add ``tip`` to the edge already there."""
        if key in self.edges:
            if tip not in self.edges[key].tips:
                self.edges[key].tips.append(tip)
            return
        self.edges[key] = _Item(attrs.pop("label", None), classes, attrs, [tip], tail, head)

    def lay_out_rows(
        self,
        rows: list[list[str]],
        along: Mapping[str, str] | None = None,
        wrapped: int = _ROWS_PER_COLUMN,
    ) -> None:
        """Draw ``rows`` top down in order, each row's nodes side by side.

        Past ``_ROWS_PER_COLUMN`` rows the rows wrap into columns side by side
        (like a newspaper), so a long chain stays about as tall as the canvas
        instead of shrinking its labels; ``wrapped`` is the most rows a column
        then holds. Edges between two columns then stop pulling on the ranks.
        ``along`` puts nodes outside the rows (an entry gate) in the column of
        another node. Call it once every edge is in.
        """
        rows = [row for row in rows if row]
        columns = -(-len(rows) // _ROWS_PER_COLUMN)
        if columns > 1:
            columns = -(-len(rows) // min(wrapped, _ROWS_PER_COLUMN))
        height = -(-len(rows) // columns) if rows else 0
        chunks = [rows[c * height : (c + 1) * height] for c in range(columns)]
        column_of = {key: c for c, chunk in enumerate(chunks) for row in chunk for key in row}
        for key, mate in (along or {}).items():
            if mate in column_of:
                column_of.setdefault(key, column_of[mate])
        for line in range(height):
            same = [chunk[line] for chunk in chunks if line < len(chunk)]
            self.rows.append([key for row in same for key in row])
            # A flat invisible edge keeps the columns in order from left to right.
            self.order.extend((a[-1], b[0]) for a, b in zip(same, same[1:], strict=False))
        for chunk in chunks:
            self.order.extend((a[0], b[0]) for a, b in zip(chunk, chunk[1:], strict=False))
        for item in self.edges.values():
            tail, head = column_of.get(item.tail), column_of.get(item.head)
            if tail is not None and head is not None and tail != head:
                item.attrs["constraint"] = "false"

    def source(self, layout: Layout | None = None) -> str:
        """The DOT text; with ``layout``, every node pinned where it says, for ``neato -n2``.

        Edges the layout has a curve for keep it; the others are routed
        around the nodes (``splines``). The rows and their order mean nothing
        to a drawing that is already placed, so they are left out then.
        """
        graph_attrs = (
            self.graph_attrs if layout is None else {**self.graph_attrs, "splines": "true"}
        )
        lines = [f"digraph {_quote(self.name)} {{"]
        lines.append(f"  graph [{_attrs(graph_attrs)}];")
        lines.append(f"  node [{_attrs(_NODE_LOOK)}];")
        lines.append(f"  edge [{_attrs(_EDGE_LOOK)}];")
        for key, item in self.nodes.items():
            attrs = self._item_attrs(key, item)
            if layout is not None:
                x, y = layout.nodes[key]
                attrs += f', pos="{x:.2f},{y:.2f}"'
            lines.append(f"  {_quote(self.names[key])} [{attrs}];")
        for key, item in self.edges.items():
            tail, head = _quote(self.names[item.tail]), _quote(self.names[item.head])
            attrs = self._item_attrs(key, item)
            curve = layout.edges.get(key) if layout is not None else None
            if curve is not None:
                attrs += f", pos={_quote(curve.pos)}"
                attrs += f", lp={_quote(curve.label_pos)}" if curve.label_pos else ""
            lines.append(f"  {tail} -> {head} [{attrs}];")
        if layout is not None:
            lines.append("}")
            return "\n".join(lines) + "\n"
        # Graphviz writes nothing for an invisible edge, so these never reach the SVG.
        for tail, head in self.order:
            a, b = _quote(self.names[tail]), _quote(self.names[head])
            lines.append(f'  {a} -> {b} [style="invis", weight="{_ORDER_WEIGHT}"];')
        for row in self.rows:
            if len(row) > 1:
                names = "; ".join(_quote(self.names[key]) for key in row)
                lines.append(f"  {{ rank=same; {names}; }}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def sketch(self) -> Sketch:
        """The drawing to place against a layout memory: its DOT, shapes, edges' ends."""
        return Sketch(
            self.source(),
            {key: item.attrs.get("shape", "ellipse") for key, item in self.nodes.items()},
            {key: (item.tail, item.head) for key, item in self.edges.items()},
            frozenset(key for key, item in self.edges.items() if item.label is not None),
            self.source,
        )

    def _item_attrs(self, key: str, item: _Item) -> str:
        classes = [*item.classes, *self.marks.get(key, "").split()]
        out = [f"id={_quote(key)}", f"class={_quote(' '.join(classes))}"]
        if item.label is not None:
            out.append(f"label={_quote(item.label, breaks=True)}")
        out.append(f"tooltip={_quote(_tooltip('; '.join(item.tips)))}")
        return ", ".join([*out, _attrs(item.attrs)]) if item.attrs else ", ".join(out)


def _attrs(attrs: Mapping[str, str]) -> str:
    return ", ".join(f"{name}={_quote(value)}" for name, value in attrs.items())


# --- shared pieces ---------------------------------------------------------------


def _described(element: Action | Handle | Gate) -> str:
    return element.description or element.id


def _undefined(kind: str, name: str, style: str) -> tuple[list[str], str, dict[str, str]]:
    """Classes, tooltip and look of a ``kind`` node for a name the chain does not define."""
    look = {"style": style, "color": _UNDEFINED, "fontcolor": _UNDEFINED}
    return [kind, "undefined"], f"{name}: no such {kind} in this chain", look


def _action_node(
    d: _Drawing, actions: dict[str, Action], action_id: str, *extra: str, **attrs: str
) -> str:
    """Draw ``action_id`` (an ``undefined`` node when the chain lacks it); return its key."""
    key = node_key("action", action_id)
    action = actions.get(action_id)
    if action is None:
        classes, tip, look = _undefined("action", action_id, "rounded,dashed")
        d.node(key, action_id, classes, tip, shape="box", **look, **attrs)
        return key
    classes = ["action", f"effect-{action.effect}", *extra]
    style = "rounded,filled"
    if action.probe_only:
        classes.append("probe-only")
        style += ",dashed"
    d.node(
        key,
        action.id,
        classes,
        _described(action),
        shape="box",
        style=style,
        fillcolor=EFFECT_FILLS.get(action.effect, "white"),
        **attrs,
    )
    return key


def _gate_node(
    d: _Drawing,
    gates: dict[str, Gate],
    gate_id: str,
    entry_gates: set[str],
    named_inside: bool = False,
    **entry: str,
) -> str:
    """Draw gate ``gate_id`` as a small diamond named beside it; return its key.

    ``named_inside`` draws a hexagon with the name in it instead (the handle
    graph's rows leave a name beside a diamond no room of its own). A gate
    some step waits for on arrival (one of ``entry_gates``) is marked
    ``entry-gate`` and takes the ``entry`` attributes.
    """
    key = node_key("gate", gate_id)
    gate = gates.get(gate_id)
    attrs = {"shape": "diamond", "width": "0.3", "height": "0.3", "fixedsize": "true"}
    if named_inside:
        attrs = {"shape": "hexagon", "fontsize": "12", "margin": "0.04,0.02"}
    if gate is None:
        classes, tip, look = _undefined("gate", gate_id, "dashed")
        attrs.update(look)
    else:
        tip = _described(gate)
        classes = ["gate", f"audience-{gate.audience}"]
        attrs.update(style="filled", fillcolor="#FFFFFF")
    if gate_id in entry_gates:
        classes.append("entry-gate")
        attrs.update(entry)
    if named_inside:
        d.node(key, gate_id, classes, tip, **attrs)
    else:
        d.node(key, "", classes, tip, xlabel=gate_id, **attrs)
    return key


def _written_on(spec: ChainSpec, action: Action) -> list[tuple[object, Verdict]]:
    """Every verdict that applies at ``action``: its own, and the table rows scoped to it."""
    written: list[tuple[object, Verdict]] = list(action_verdicts(action))
    written += [
        (row_element(row, i), row.verdict)
        for i, row in enumerate(spec.verdict_table, 1)
        if scope_applies_to(row.scope, action) is True
    ]
    return written


def _raises(d: _Drawing, action_id: str, gate_key: str, tip: str) -> None:
    """A dotted edge from the step to the gate a verdict on it raises."""
    d.edge(
        edge_key("raises", action_id, GraphKey.parse(gate_key).name),
        node_key("action", action_id),
        gate_key,
        ["raises"],
        tip,
        style="dotted",
    )


def _entry(d: _Drawing, gate_key: str, action_id: str, **look: str) -> None:
    """The edge from an entry gate to the step that waits for it on every arrival."""
    gate_id = GraphKey.parse(gate_key).name
    d.edge(
        edge_key("entry_gate", gate_id, action_id),
        gate_key,
        node_key("action", action_id),
        ["entry-gate"],
        f"{action_id} waits for gate {gate_id} on every arrival",
        **look,
    )


# --- the handle graph -------------------------------------------------------------


def handle_graph_dot(spec: ChainSpec, marks: Mapping[str, str] | None = None) -> str:
    """The handle graph of ``doc`` as DOT: who mints, consumes and derives from what.

    Handles are ovals, actions boxes filled by effect class, laid out top
    down with one row per step in chain order: the step, then the handles it
    mints beside it. ``marks`` maps graph keys (see the module
    docstring) to extra CSS classes. Names that nothing defines are drawn
    as ``undefined`` nodes. The same document always gives the same text.

    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "h", "minted_by": "a"}],
    ...     "actions": [{"id": "a", "effect": "read", "output": {"handles": ["h"]}}]})
    >>> dot = handle_graph_dot(doc, {"handle:h": "cascade"})
    >>> 'id="edge:mints:a:h"' in dot, 'class="handle cascade"' in dot
    (True, True)
    """
    return _handle_drawing(spec, marks).source()


def handle_graph_sketch(spec: ChainSpec) -> Sketch:
    """The handle graph of ``spec`` to lay out against a memory (:mod:`chains.core.layout`)."""
    return _handle_drawing(spec).sketch()


def _handle_drawing(spec: ChainSpec, marks: Mapping[str, str] | None = None) -> _Drawing:
    d = _Drawing("handle-graph", check_marks(marks), **_LAYOUT)
    actions = first_by_id(spec.actions)
    handles = first_by_id(spec.handles)

    def handle_node(handle_id: str) -> str:
        key = node_key("handle", handle_id)
        handle = handles.get(handle_id)
        if handle is None:
            classes, tip, look = _undefined("handle", handle_id, "dashed")
            d.node(key, handle_id, classes, tip, shape="ellipse", **look)
            return key
        classes, attrs = ["handle"], {"style": "filled", "fillcolor": "white"}
        if handle.single_use:
            classes.append("single-use")
            attrs["peripheries"] = "2"
        if is_external(handle):
            classes.append("external")
            attrs.update(style="filled,dashed", fillcolor="#EEEEEE")
        d.node(key, handle_id, classes, _described(handle), shape="ellipse", **attrs)
        return key

    # Chain order: what a step consumes, the step, what it mints.
    for action in actions.values():
        for handle_id in action.input.handles:
            handle_node(handle_id)
        _action_node(d, actions, action.id)
        for handle_id in action.output.handles:
            handle_node(handle_id)
    for handle_id in handles:
        handle_node(handle_id)

    for handle in handles.values():
        for parent in handle.derived_from:
            d.edge(
                edge_key("derived_from", handle.id, parent),
                handle_node(parent),
                handle_node(handle.id),
                ["derived-from"],
                f"{handle.id} derives from {parent}",
                style="bold",
                penwidth="2.2",
            )
    for handle in handles.values():
        if handle.minted_by and not is_external(handle):
            _mints(d, _action_node(d, actions, handle.minted_by), handle_node(handle.id))
    for action in actions.values():
        key = node_key("action", action.id)
        for handle_id in action.input.handles:
            d.edge(
                edge_key("consumes", action.id, handle_id),
                handle_node(handle_id),
                key,
                ["consumes"],
                f"{action.id} consumes {handle_id}",
                color="#555555",
            )
        for handle_id in action.output.handles:
            _mints(d, key, handle_node(handle_id))
        probe = action.confirmation.probe if action.confirmation else None
        if probe:
            _probe(d, action.id, _action_node(d, actions, probe))
        for compensator in compensators(action):
            _compensator(d, action.id, _action_node(d, actions, compensator))
    gates = first_by_id(spec.gates)
    entry_gates = {a.entry_gate for a in actions.values() if a.entry_gate}

    def gate_node(gate_id: str) -> str:
        return _gate_node(d, gates, gate_id, entry_gates, named_inside=True)

    for action in actions.values():
        if action.entry_gate:
            _entry(d, gate_node(action.entry_gate), action.id)
        for where, verdict in _written_on(spec, action):
            if verdict.gate:
                tip = f"{where}: {format_verdict(verdict)}"
                _raises(d, action.id, gate_node(verdict.gate), tip)
    for gate_id in gates:
        gate_node(gate_id)
    _handle_rows(d, actions, handles)
    return d


def _handle_rows(d: _Drawing, actions: dict[str, Action], handles: dict[str, Handle]) -> None:
    """One row per step, top to bottom in chain order: the step, then the handles it mints.

    A long chain then grows downwards one short row at a time instead of one
    very wide line, which keeps its labels readable when the page fits it to
    the canvas; and a chain without a single edge still reads top-down in
    order. A probe-only read and the steps of a compensation are drawn where
    they act: their rows follow the row of the commit they confirm or undo,
    wherever the list has them. A gate sits at the end of the row of the
    first step that waits for it or raises it. Handles no step of the chain
    mints (external, undefined, not yet minted) and gates no step names sit
    in short rows above the first step.
    """
    row_of: dict[str, str] = {}  # handle id -> the step whose row it joins
    for handle in handles.values():
        if handle.minted_by in actions and not is_external(handle):
            row_of[handle.id] = handle.minted_by
    for action in actions.values():
        for handle_id in action.output.handles:
            row_of.setdefault(handle_id, action.id)
    rows = {action_id: [node_key("action", action_id)] for action_id in actions}
    for handle_id, action_id in row_of.items():
        rows[action_id].append(node_key("handle", handle_id))
    placed = {node_key("handle", h) for h in row_of}
    for item in d.edges.values():  # a gate joins the row of the first step that names it
        if "raises" in item.classes:
            step_key, gate_key = item.tail, item.head
        elif "entry-gate" in item.classes:
            gate_key, step_key = item.tail, item.head
        else:
            continue
        step = GraphKey.parse(step_key).name
        if gate_key not in placed and step in rows:
            rows[step].append(gate_key)
            placed.add(gate_key)
    orphans = [
        k for k in d.nodes if GraphKey.parse(k).kind in ("handle", "gate") and k not in placed
    ]
    all_rows = [orphans[i : i + _ORPHANS_PER_ROW] for i in range(0, len(orphans), _ORPHANS_PER_ROW)]
    d.lay_out_rows([*all_rows, *(rows[a] for a in _where_they_act(actions))])


def _where_they_act(actions: dict[str, Action]) -> list[str]:
    """The actions in list order, each probe-only read and compensation step after its commit."""
    host: dict[str, str] = {}
    for action in actions.values():
        probe = action.confirmation.probe if action.confirmation else None
        served = [probe] if probe and probe in actions and actions[probe].probe_only else []
        for step in [*served, *compensators(action)]:
            if step in actions and step != action.id:
                host.setdefault(step, action.id)
    order: list[str] = []

    def visit(action_id: str) -> None:
        if action_id in order:
            return
        order.append(action_id)
        for hosted, by in host.items():
            if by == action_id:
                visit(hosted)

    for action_id in actions:
        if action_id not in host or host[action_id] not in actions:
            visit(action_id)
    order += [a for a in actions if a not in order]  # hosts that host each other
    return order


def _mints(d: _Drawing, action_key: str, handle_key: str) -> None:
    action_id, handle_id = GraphKey.parse(action_key).name, GraphKey.parse(handle_key).name
    d.edge(
        edge_key("mints", action_id, handle_id),
        action_key,
        handle_key,
        ["mints"],
        f"{action_id} mints {handle_id}",
        color="#555555",
    )


def _probe(d: _Drawing, commit_id: str, probe_key: str) -> None:
    probe_id = GraphKey.parse(probe_key).name
    d.edge(
        edge_key("probe", commit_id, probe_id),
        node_key("action", commit_id),
        probe_key,
        ["probe"],
        f"{probe_id} is the confirmation probe of {commit_id}",
        style="dashed",
        color=_PROBE,
    )


def _compensator(d: _Drawing, commit_id: str, step_key: str, label: str | None = None) -> None:
    step_id = GraphKey.parse(step_key).name
    attrs = {"label": label} if label else {}
    d.edge(
        edge_key("compensator", commit_id, step_id),
        node_key("action", commit_id),
        step_key,
        ["compensator"],
        f"{step_id} compensates {commit_id}",
        style="dashed",
        color=_COMPENSATION,
        **attrs,
    )


# --- the flow ---------------------------------------------------------------------


def flow_dot(spec: ChainSpec, marks: Mapping[str, str] | None = None) -> str:
    """The chain as a flow, as DOT: steps in order, gates, routes back, probes, compensation.

    The main line holds the steps that are neither ``probe_only`` nor part
    of any compensation, in chain order, each behind its entry gate's small
    diamond. Rewinds, repairs and reselects (the step's own verdicts and
    the verdict-table rows scoped to it) and gate outcomes that route to a
    step are curved dashed edges labelled with the verdict type; probes and
    compensation steps hang off their commit. Keys and classes are listed in
    the module docstring; ``marks`` adds a CSS class to a key.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "a", "effect": "read"},
    ...     {"id": "b", "effect": "read", "output": {"empty": {"route": "rewind(to: a)"}}}]})
    >>> dot = flow_dot(doc)
    >>> 'id="edge:flow:a:b"' in dot, 'id="edge:route:b:a:rewind"' in dot
    (True, True)
    """
    return _flow_drawing(spec, marks).source()


def flow_sketch(spec: ChainSpec) -> Sketch:
    """The flow of ``spec`` to lay out against a memory (:mod:`chains.core.layout`)."""
    return _flow_drawing(spec).sketch()


def _flow_drawing(spec: ChainSpec, marks: Mapping[str, str] | None = None) -> _Drawing:
    d = _Drawing("flow-graph", check_marks(marks), **_LAYOUT)
    actions = first_by_id(spec.actions)
    gates = first_by_id(spec.gates)
    compensating = {c for action in actions.values() for c in compensators(action)}
    main = [a for a in actions.values() if not a.probe_only and a.id not in compensating]
    entry_gates = {a.entry_gate for a in actions.values() if a.entry_gate}

    def gate_node(gate_id: str) -> str:
        # An entry gate's group keeps the main line straight through the diamond.
        return _gate_node(d, gates, gate_id, entry_gates, group="main")

    previous: Action | None = None
    for action in main:
        into = gate_node(action.entry_gate) if action.entry_gate else None
        key = _action_node(d, actions, action.id, "main-line", group="main")
        if previous is not None:
            d.edge(
                edge_key("flow", previous.id, action.id),
                node_key("action", previous.id),
                into or key,
                ["flow"],
                f"{previous.id}, then {action.id}",
                weight="10",
                penwidth="1.5",
            )
        if into is not None:
            _entry(d, into, action.id, weight="10", penwidth="1.5")
        previous = action
    for action in actions.values():
        _action_node(d, actions, action.id, "off-line")
    for gate_id in gates:
        gate_node(gate_id)

    for action in actions.values():
        _flow_offshoots(d, actions, action)
    for action in actions.values():
        for where, verdict in _written_on(spec, action):
            tip = f"{where}: {format_verdict(verdict)}"
            if verdict.to:
                _route(d, actions, "route", action.id, node_key("action", action.id), verdict, tip)
            if verdict.gate:
                _raises(d, action.id, gate_node(verdict.gate), tip)
    for gate in gates.values():
        outcomes = [(f"outcomes.{name}", o.verdict) for name, o in gate.outcomes.items()]
        if gate.timeout is not None and gate.timeout.verdict is not None:
            outcomes.append(("timeout", gate.timeout.verdict))
        for part, verdict in outcomes:
            tip = f"{gate.id} {part}: {format_verdict(verdict)}"
            if verdict.to:
                _route(d, actions, "outcome", gate.id, node_key("gate", gate.id), verdict, tip)
    _beside_the_main_line(d, main, entry_gates)
    return d


def _beside_the_main_line(d: _Drawing, main: list[Action], entry_gates: set[str]) -> None:
    """One row per main-line step, with its probe and first compensation steps beside it."""
    taken = {node_key("action", a.id) for a in main}
    rows = []
    along = {}
    for action in main:
        if action.entry_gate in entry_gates:
            along[node_key("gate", action.entry_gate)] = node_key("action", action.id)
        comp = action.compensation
        firsts = [action.confirmation.probe if action.confirmation else None]
        if comp is not None:
            firsts += [comp.action, *comp.chain[:1]]
            firsts += [rung.action or next(iter(rung.chain), None) for rung in comp.ladder]
        row = [node_key("action", action.id)]
        for step in firsts:
            key = node_key("action", step) if step and step != "none" else None
            if key in d.nodes and key not in taken:
                row.append(key)
                taken.add(key)
        rows.append(row)
    d.lay_out_rows(rows, along, wrapped=_FLOW_ROWS_PER_WRAPPED_COLUMN)


def _flow_offshoots(d: _Drawing, actions: dict[str, Action], action: Action) -> None:
    """Draw ``action``'s probe and its compensation (action, chain, ladder rungs)."""
    probe = action.confirmation.probe if action.confirmation else None
    if probe:
        _probe(d, action.id, _action_node(d, actions, probe, "off-line"))
    comp = action.compensation
    if comp is None:
        return
    sequences: list[tuple[list[str], str | None]] = []
    if comp.action and comp.action != "none":
        sequences.append(([comp.action], None))
    if comp.chain:
        sequences.append((comp.chain, None))
    for i, rung in enumerate(comp.ladder, 1):
        steps = ([rung.action] if rung.action else []) + rung.chain
        if steps:
            sequences.append((steps, f"rung {i}"))
    for steps, label in sequences:
        keys = [_action_node(d, actions, step, "off-line") for step in steps]
        _compensator(d, action.id, keys[0], label)
        for before, after in zip(keys, keys[1:], strict=False):
            a, b = GraphKey.parse(before).name, GraphKey.parse(after).name
            d.edge(
                edge_key("compensation", a, b),
                before,
                after,
                ["compensation"],
                f"compensation: {a}, then {b}",
                color=_COMPENSATION,
            )


def _route(
    d: _Drawing,
    actions: dict[str, Action],
    kind: str,
    source_id: str,
    source_key: str,
    verdict: Verdict,
    tip: str,
) -> None:
    """A dashed, curved edge for a verdict that sends the run to step ``verdict.to``."""
    target = verdict.to or ""
    d.edge(
        edge_key(kind, source_id, target, verdict.type),
        source_key,
        _action_node(d, actions, target, "off-line"),
        [kind],
        tip,
        label=verdict.type,
        style="dashed",
        constraint="false",
        color="#777777",
        fontcolor="#555555",
    )


def handle_graph_svg(
    spec: ChainSpec,
    marks: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    memory: Layout | None = None,
) -> str:
    """:func:`handle_graph_dot` laid out as an inline ``<svg>`` element (see :func:`start_picture`).

    ``memory`` (where the workspace drew the nodes) keeps them there, so every page
    shows the graph as the workspace does.
    """
    sketch = handle_graph_sketch(spec)
    return start_picture(sketch.source, timeout, marks, memory, sketch).result().svg


def flow_svg(spec: ChainSpec, marks: Mapping[str, str] | None = None, timeout: float = 10.0) -> str:
    """:func:`flow_dot` laid out as an inline ``<svg>`` element (see :func:`start_svg`)."""
    return start_svg(flow_dot(spec), timeout, marks).result()
