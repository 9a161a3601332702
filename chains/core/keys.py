"""Graph keys: the one name the drawings, the selection, findings and comments give an element.

A key names a node, ``<kind>:<id>`` (``action:book``, ``handle:offer_id``,
``gate:consent``, ``row:D3`` or ``row:#4`` for an id-less domain row, see
:func:`~chains.core.model.row_ref`, and ``intent:dates``), or an edge,
``edge:<kind>:<source>:<target>``, where the flow's ``route`` and
``outcome`` edges add the verdict type as a fifth part
(``edge:route:pay:search:rewind``). That text is what SVG ids, ``?select=``
URLs and stored comment anchors carry, so its shape never changes;
:class:`GraphKey` is the only code that writes or reads it (the page's
JavaScript reads the parts from data attributes, :func:`key_attributes`).

Ids may contain ``:`` (the grammar allows any string). A node key splits at
its first colon, so it always reads back; an edge key whose
``<source>:<target>`` splits in more than one place reads back only when the
caller knows which names exist (``names``), and is refused otherwise rather
than guessed.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

from .errors import ChainError
from .words import article

__all__ = [
    "DOCUMENT_EDGE_KINDS",
    "EDGE_KINDS",
    "NODE_KINDS",
    "GraphKey",
    "GraphKeyError",
    "arrow",
    "edge_key",
    "key_attributes",
    "node_key",
]

NODE_KINDS = ("action", "handle", "gate", "row", "intent")
EDGE_KINDS = (
    "derived_from",
    "mints",
    "consumes",
    "probe",
    "compensator",
    "flow",
    "entry_gate",
    "route",
    "raises",
    "outcome",
    "compensation",
)
# The edges the document itself writes (``derived_from``, ``input.handles``,
# ``output.handles``): the ones an edit adds or removes and a diff compares.
DOCUMENT_EDGE_KINDS = ("derived_from", "consumes", "mints")
# Edges drawn for a verdict: the verdict type tells two of them between the same steps apart.
_VERDICT_EDGES = ("route", "outcome")
EDGE = "edge"


class GraphKeyError(ChainError, ValueError):
    """A text is not a graph key (unknown kind, missing part, or an ambiguous edge)."""


@dataclass(frozen=True)
class GraphKey:
    """A parsed graph key; ``str(key)`` is its text.

    For a node, ``kind`` is the node kind and ``name`` its id. For an edge,
    ``kind`` is ``"edge"``, ``name`` the edge's own kind (``mints``,
    ``derived_from``...), and ``source``, ``target`` (and ``verdict`` for
    route and outcome edges) its ends.

    >>> GraphKey.parse("edge:route:pay:search:rewind")
    GraphKey(kind='edge', name='route', source='pay', target='search', verdict='rewind')
    >>> str(GraphKey.node("handle", "offer_id"))
    'handle:offer_id'
    """

    kind: str
    name: str
    source: str = ""
    target: str = ""
    verdict: str = ""

    @classmethod
    def node(cls, kind: str, name: str) -> GraphKey:
        if kind not in NODE_KINDS:
            raise GraphKeyError(f"{kind!r} is not a node kind ({', '.join(NODE_KINDS)})")
        return cls(kind, name)

    @classmethod
    def edge(cls, kind: str, source: str, target: str, verdict: str = "") -> GraphKey:
        if kind not in EDGE_KINDS:
            raise GraphKeyError(f"{kind!r} is not an edge kind ({', '.join(EDGE_KINDS)})")
        if (kind in _VERDICT_EDGES) != bool(verdict) or ":" in verdict:
            wants = "ends with" if kind in _VERDICT_EDGES else "takes no"
            raise GraphKeyError(f"{article(kind)} edge {wants} a verdict type, got {verdict!r}")
        return cls(EDGE, kind, source, target, verdict)

    @property
    def is_edge(self) -> bool:
        return self.kind == EDGE

    @property
    def arrow(self) -> tuple[str, str]:
        """An edge's ends in the direction its arrow points (see :func:`arrow`)."""
        return arrow(self.name, self.source, self.target)

    def __str__(self) -> str:
        if not self.is_edge:
            return f"{self.kind}:{self.name}"
        tail = f":{self.verdict}" if self.verdict else ""
        return f"{EDGE}:{self.name}:{self.source}:{self.target}{tail}"

    @classmethod
    def parse(cls, text: str, names: Container[str] | None = None) -> GraphKey:
        """The key ``text`` writes; :class:`GraphKeyError` when it is not one.

        ``names`` (the ids that exist) settles an edge whose ends contain
        ``:``; without it such an edge is refused.

        >>> GraphKey.parse("edge:derived_from:b:x:a", names={"b:x", "a"}).source
        'b:x'
        """
        kind, colon, rest = text.partition(":")
        if kind != EDGE:
            if not colon:
                raise GraphKeyError(f"{text!r} is not a graph key: expected <kind>:<id>")
            return cls.node(kind, rest)
        edge_kind, _, ends = rest.partition(":")
        verdict = ""
        if edge_kind in _VERDICT_EDGES:
            ends, _, verdict = ends.rpartition(":")
            if not verdict:
                raise GraphKeyError(
                    f"{text!r}: {article(edge_kind)} edge ends with its verdict type"
                )
        source, target = _split_ends(text, ends, names)
        return cls.edge(edge_kind, source, target, verdict)


# The edges whose key names the ends against the direction of the arrow: a
# derived_from key is child then parent, a consumes key is action then handle.
_AGAINST_THE_ARROW = ("derived_from", "consumes")


def arrow(kind: str, source: str, target: str) -> tuple[str, str]:
    """``(tail, head)`` of an edge ``kind`` from ``source`` to ``target``, as drawn.

    One convention everywhere (drawings, the edge panel, quick fixes, diffs):
    an arrow points the way things are made, from what exists first to what
    is made from it. A parent handle points at the handle derived from it,
    an action at the handle it mints, a handle at the action that consumes
    it. A key keeps the order the document writes (a ``derived_from`` key is
    child then parent), so only this function turns it into an arrow.

    >>> arrow("derived_from", "hold", "quote_id")
    ('quote_id', 'hold')
    >>> arrow("mints", "quote", "quote_id")
    ('quote', 'quote_id')
    """
    if kind in _AGAINST_THE_ARROW:
        return target, source
    return source, target


def node_key(kind: str, name: str) -> str:
    """The text of a node's key: ``node_key("action", "book") == "action:book"``."""
    return str(GraphKey.node(kind, name))


def edge_key(kind: str, source: str, target: str, verdict: str = "") -> str:
    """The text of an edge's key: ``edge_key("mints", "s", "h") == "edge:mints:s:h"``."""
    return str(GraphKey.edge(kind, source, target, verdict))


def _split_ends(text: str, ends: str, names: Container[str] | None) -> tuple[str, str]:
    colons = [i for i, char in enumerate(ends) if char == ":"]
    splits = [(ends[:i], ends[i + 1 :]) for i in colons]
    if len(splits) > 1 and names is not None:
        splits = [(s, t) for s, t in splits if s in names and t in names]
    if len(splits) == 1:
        return splits[0]
    if not colons:
        raise GraphKeyError(f"{text!r} is not a graph key: expected edge:<kind>:<source>:<target>")
    raise GraphKeyError(f"{text!r} is ambiguous: its ends contain ':' and cannot be told apart")


def key_attributes(key: GraphKey) -> dict[str, str]:
    """The ``data-*`` attributes that carry ``key``'s parts to the page's JavaScript.

    >>> key_attributes(GraphKey.parse("handle:a"))
    {'data-key': 'handle:a', 'data-kind': 'handle', 'data-name': 'a'}
    """
    if not key.is_edge:
        return {"data-key": str(key), "data-kind": key.kind, "data-name": key.name}
    found = {
        "data-key": str(key),
        "data-kind": EDGE,
        "data-edge-kind": key.name,
        "data-source": key.source,
        "data-target": key.target,
    }
    if key.verdict:
        found["data-verdict"] = key.verdict
    return found
