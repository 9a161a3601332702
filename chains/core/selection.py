"""What the designer highlights when something is selected, and where findings point.

The web canvas and the API name elements by graph key
(:class:`~chains.core.keys.GraphKey`: ``action:<id>``, ``handle:<id>``,
``gate:<id>``, ``row:<id>``, ``intent:<field>``,
``edge:<kind>:<source>:<target>``). This module turns a selection into
marks on those keys (a handle's invalidation cascade, an intent field's
repair scope) and a lint finding's ``element`` into the key it concerns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import GraphError, cascade, repair_scope
from .keys import GraphKey, GraphKeyError, node_key
from .model import ChainSpec
from .paths import ElementPath, PathError

__all__ = ["Selection", "finding_key", "intent_fields", "select"]


@dataclass
class Selection:
    """The selected key, the marks it puts on the graph, and what it explains."""

    key: str | None = None
    marks: dict[str, str] = field(default_factory=dict)
    invalidated: list[str] = field(default_factory=list)
    survives: list[str] = field(default_factory=list)
    step: str | None = None
    problem: str | None = None


def finding_key(element: str) -> str | None:
    """The graph key a finding's ``element`` points at, or None for the chain as a whole.

    >>> finding_key("actions[book_trip].compensation"), finding_key("policy.per_chain")
    ('action:book_trip', None)
    """
    try:
        key = ElementPath.parse(element).graph_key()
    except PathError:
        return None
    return str(key) if key else None


def intent_fields(spec: ChainSpec) -> dict[str, str]:
    """Each intent field and the first action that takes it (where a repair of it starts)."""
    fields: dict[str, str] = {}
    for action in spec.actions:
        for name in action.input.intent:
            fields.setdefault(name, action.id)
    return fields


def select(spec: ChainSpec, key: str | None) -> Selection:
    """Marks for ``key``: a handle shows what dies if it is re-minted (I1, facts kept by I5);
    an intent field shows its repair scope (I6); anything else is marked selected.

    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "a", "minted_by": "s"}, {"id": "b", "derived_from": ["a"]}],
    ...     "actions": [{"id": "s", "effect": "read", "output": {"handles": ["a"]}}]})
    >>> select(doc, "handle:a").marks
    {'handle:a': 'selected', 'handle:b': 'cascade'}
    """
    if not key:
        return Selection()
    try:
        parsed = GraphKey.parse(key)
    except GraphKeyError:  # an edge with ':' in its ends, or no key at all: mark it as it is
        return Selection(key, {key: "selected"})
    kind, name = parsed.kind, parsed.name
    if kind == "handle":
        try:
            c = cascade(spec, name)
        except GraphError as exc:
            return Selection(key, {key: "selected"}, problem=str(exc))
        marks = {key: "selected"}
        marks.update({node_key("handle", h): "cascade" for h in c.invalidated})
        marks.update({node_key("handle", h): "fact" for h in c.facts})
        return Selection(key, marks, list(c.invalidated), list(c.facts))
    if kind == "intent":
        step = intent_fields(spec).get(name)
        if step is None:
            return Selection(key, problem=f"no action takes intent field {name!r}")
        try:
            scope = repair_scope(spec, step, [name])
        except GraphError as exc:
            return Selection(key, problem=str(exc))
        marks = {node_key("action", step): "selected"}
        marks.update({node_key("handle", h): "repair-scope" for h in scope.invalidated})
        return Selection(key, marks, list(scope.invalidated), list(scope.survives), step)
    return Selection(key, {key: "selected"})
