"""What a review comment may point at, and who it mentions.

A comment is anchored to the chain as a whole (``chain``) or to one element
by its graph key, the same key the workspace selects and the SVG carries as
an ``id`` (:class:`chains.core.keys.GraphKey`, :mod:`chains.core.render`):
``action:<id>``, ``handle:<id>``, ``gate:<id>``, ``row:<id>`` (``row:#n``
for a row without an id), ``intent:<field>`` and every edge either drawing
has (``edge:derived_from:<child>:<parent>`` and the rest). The drawings are
the authority on edges, so their keys are read from the DOT they produce
rather than defined a second time here. Mentions are ``@username`` words;
which of them name real people is the caller's question.
"""

from __future__ import annotations

import re

from .errors import ChainError
from .keys import node_key
from .model import ChainSpec, rows_by_ref
from .render import flow_dot, handle_graph_dot
from .selection import intent_fields

__all__ = ["CHAIN", "UnknownAnchor", "anchors", "check_anchor", "mentions", "split_mentions"]

# The anchor of a comment about the chain as a whole.
CHAIN = "chain"

# Every node and edge statement of our DOT starts its attributes with its key.
_DOT_ID = re.compile(r'\[id="((?:[^"\\]|\\.)*)"')
_DOT_ESCAPE = re.compile(r"\\(.)")
_GRAPH_IDS = {"handle-graph", "flow-graph"}
# ``@name`` not inside a word or an e-mail address; Django usernames allow ``.@+-_``.
_MENTION = re.compile(r"(?<![\w.+@-])@([\w.+-]*[\w+-])")


class UnknownAnchor(ChainError):
    """A comment names an element the revision does not have."""


def anchors(spec: ChainSpec) -> set[str]:
    """Every key a comment on ``doc`` may be anchored to, ``chain`` included.

    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "a", "minted_by": "s"}, {"id": "b", "derived_from": ["a"]}],
    ...     "actions": [{"id": "s", "effect": "read", "output": {"handles": ["a"]}}]})
    >>> sorted(k for k in anchors(doc) if k.startswith("edge:"))
    ['edge:derived_from:b:a', 'edge:mints:s:a']
    """
    keys = {CHAIN}
    keys |= {node_key("action", a.id) for a in spec.actions}
    keys |= {node_key("handle", h.id) for h in spec.handles}
    keys |= {node_key("gate", g.id) for g in spec.gates}
    keys |= {node_key("row", ref) for ref in rows_by_ref(spec.verdict_table)}
    keys |= {node_key("intent", name) for name in intent_fields(spec)}
    for dot in (handle_graph_dot(spec), flow_dot(spec)):
        for match in _DOT_ID.finditer(dot):
            key = _DOT_ESCAPE.sub(r"\1", match.group(1)).replace("&amp;", "&")
            if key not in _GRAPH_IDS:
                keys.add(key)
    return keys


def check_anchor(spec: ChainSpec, key: str) -> str:
    """``key`` when ``doc`` has that element; :class:`UnknownAnchor` naming it otherwise."""
    if key not in anchors(spec):
        raise UnknownAnchor(f"anchor: {spec.id} has no element {key!r} in this revision")
    return key


def mentions(text: str) -> list[str]:
    """The usernames ``text`` mentions with ``@``, in order, each once.

    >>> mentions("@ana, see this (cc @bo.b). Not mail@example.com or @ana again.")
    ['ana', 'bo.b']
    """
    return list(dict.fromkeys(_MENTION.findall(text)))


def split_mentions(text: str, known: set[str]) -> list[tuple[str, bool]]:
    """``text`` in pieces, each with whether it is a mention of one of the ``known`` names.

    Unknown names stay plain text, so a page can mark up mentions without
    ever treating the text itself as markup.

    >>> split_mentions("hi @ana and @nobody", {"ana"})
    [('hi ', False), ('@ana', True), (' and @nobody', False)]
    """
    parts: list[tuple[str, bool]] = []
    plain = 0
    for match in _MENTION.finditer(text):
        if match.group(1) not in known:
            continue
        if match.start() > plain:
            parts.append((text[plain : match.start()], False))
        parts.append((match.group(0), True))
        plain = match.end()
    if plain < len(text):
        parts.append((text[plain:], False))
    return parts
