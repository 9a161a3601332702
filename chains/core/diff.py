"""Semantic diff between two revisions of one chain, for review.

This module owns the answer to "what did this revision change?", element by
element: chain fields, handles, the edges between handles and actions,
actions, verdict rows, gates, policy, and the rest (variants, known-unmatched
notes, independence answers). It compares the canonical documents
(:func:`chains.core.formats.to_document`), so spelling differences that load
to the same chain are no change, and a field reset to its default reads as
unset.

Identity is the element id: a handle, action, gate or row *renamed* shows as
one removed and one added element (and its edges as removed and added
edges); nothing guesses that two differently named elements are the same
one. Edges are first-class (``derived_from`` child → parent, ``consumes``
action → handle, ``mints`` action → handle, from ``output.handles``) and
carry the keys the graph drawing uses (see :func:`graph_marks`); the lists
that define them (``derived_from``, ``input.handles``, ``output.handles``) are
therefore not reported again as changed fields of their handle or action.
Order is meaningful for actions (the flow) and verdict rows (first match
wins), so a move is a change; a move is found against the longest run of
elements that kept their relative order, so inserting one row does not
report every row after it as moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .formats import to_document
from .keys import DOCUMENT_EDGE_KINDS, GraphKey, node_key
from .model import ChainSpec
from .signals import normalize_atom

__all__ = ["Change", "diff", "graph_marks"]

# Top-level keys that are collections or blocks of their own, not chain fields.
_BLOCKS = (
    "handles",
    "actions",
    "gates",
    "verdict_table",
    "known_unmatched",
    "policy",
    "independence",
    "variants",
)
_MISSING = object()
_VALUE_WIDTH = 60


@dataclass(frozen=True)
class Change:
    """One difference a reviewer reads.

    ``element`` is ``chain``, ``handle``, ``edge``, ``action``, ``row``,
    ``gate``, ``policy``, ``variants``, ``known_unmatched`` or
    ``independence``; ``id`` is the element's id (an edge's id is its graph
    key, ``edge:consumes:book:price_lock``); ``fields`` are the changed field
    paths (``staleness.detect``, ``position`` for a move).
    """

    kind: Literal["added", "removed", "changed"]
    element: str
    id: str
    fields: tuple[str, ...] = ()
    summary: str = ""


def diff(old: ChainSpec, new: ChainSpec) -> list[Change]:
    """What changed from ``old`` to ``new``, in a stable order.

    Chain fields first, then handles, edges, actions, rows, gates, policy,
    variants, known-unmatched notes and independence answers; within a kind,
    removed elements (in ``old``'s order) come before added and changed ones
    (in ``new``'s order). Identical chains give ``[]``.

    >>> a = ChainSpec.model_validate({"id": "c", "verdict_table": [
    ...     {"id": "R1", "signal": ["http:410"], "verdict": "rewind(to: s)"}]})
    >>> b = ChainSpec.model_validate({"id": "c", "verdict_table": [
    ...     {"id": "R1", "signal": ["http:410"], "verdict": "dead_end"}]})
    >>> [c.summary for c in diff(a, b)]
    ['row R1: verdict rewind(to: s) → dead_end']
    >>> diff(a, a)
    []
    """
    before, after = to_document(old), to_document(new)
    changes = _chain_fields(before, after, new.id)
    changes += _collection(
        "handle", _keyed(before.get("handles", [])), _keyed(after.get("handles", [])), _strip_handle
    )
    changes += _edges(old, new)
    changes += _collection(
        "action",
        _keyed(before.get("actions", [])),
        _keyed(after.get("actions", [])),
        _strip_action,
        ordered=True,
    )
    changes += _collection(
        "row",
        _keyed(before.get("verdict_table", []), _row_key),
        _keyed(after.get("verdict_table", []), _row_key),
        ordered=True,
        describe=_describe_row,
    )
    changes += _collection("gate", _keyed(before.get("gates", [])), _keyed(after.get("gates", [])))
    changes += _block("policy", "policy", before.get("policy", {}), after.get("policy", {}))
    changes += _variants(before.get("variants"), after.get("variants"))
    changes += _collection(
        "known_unmatched",
        _keyed(before.get("known_unmatched", []), _unmatched_key),
        _keyed(after.get("known_unmatched", []), _unmatched_key),
    )
    changes += _collection(
        "independence",
        _keyed(before.get("independence", []), _pair_key),
        _keyed(after.get("independence", []), _pair_key),
    )
    return changes


def graph_marks(changes: Iterable[Change]) -> dict[str, str]:
    """Graph keys → ``added`` | ``removed`` | ``changed``, for drawing a diff.

    Keys are ``action:<id>``, ``handle:<id>``,
    ``edge:derived_from:<child>:<parent>``, ``edge:consumes:<action>:<handle>``
    and ``edge:mints:<action>:<handle>``; changes to elements the graph does
    not draw (rows, gates, policy) are left out.

    >>> graph_marks([Change("removed", "edge", "edge:mints:quote:quote_id"),
    ...              Change("changed", "action", "quote"), Change("added", "row", "R9")])
    {'edge:mints:quote:quote_id': 'removed', 'action:quote': 'changed'}
    """
    marks: dict[str, str] = {}
    for change in changes:
        if change.element in ("action", "handle"):
            marks[node_key(change.element, change.id)] = change.kind
        elif change.element == "edge":
            marks[change.id] = change.kind
    return marks


# --- elements ----------------------------------------------------------------

Keyed = dict[str, tuple[str, dict[str, Any]]]  # key → (display id, canonical element)


def _keyed(
    items: list[dict[str, Any]], key: Callable[[dict[str, Any]], str] | None = None
) -> Keyed:
    """Elements by identity, in document order; a repeated id gets ``#2``, ``#3`` ..."""
    out: Keyed = {}
    for item in items:
        name = key(item) if key else str(item.get("id"))
        unique, n = name, 1
        while unique in out:
            n += 1
            unique = f"{name}#{n}"
        out[unique] = (unique, item)
    return out


def _row_key(row: dict[str, Any]) -> str:
    # Rows without an id are known by what they match, not by their position.
    if row.get("id"):
        return str(row["id"])
    return "[" + ", ".join(normalize_atom(s) for s in row.get("signal", [])) + "]"


def _unmatched_key(item: dict[str, Any]) -> str:
    return normalize_atom(str(item.get("signal", "")))


def _pair_key(item: dict[str, Any]) -> str:
    return "+".join(sorted(item.get("handles", [])))


def _strip_handle(handle: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in handle.items() if k != "derived_from"}


def _strip_action(action: dict[str, Any]) -> dict[str, Any]:
    out = dict(action)
    for block in ("input", "output"):
        if isinstance(out.get(block), dict):
            rest = {k: v for k, v in out[block].items() if k != "handles"}
            if rest:
                out[block] = rest
            else:
                del out[block]
    return out


def _describe_row(row: dict[str, Any]) -> str:
    signals = ", ".join(row.get("signal", [])) or row.get("description", "")
    return f" ({signals} → {row.get('verdict')})"


def _collection(
    element: str,
    old: Keyed,
    new: Keyed,
    strip: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    *,
    ordered: bool = False,
    describe: Callable[[dict[str, Any]], str] | None = None,
) -> list[Change]:
    changes = [
        Change("removed", element, name, summary=f"{element} {name} removed")
        for key, (name, _) in old.items()
        if key not in new
    ]
    moved = _moves(list(old), list(new)) if ordered else {}
    for key, (name, item) in new.items():
        if key not in old:
            detail = describe(item) if describe else ""
            changes.append(
                Change("added", element, name, summary=f"{element} {name} added{detail}")
            )
            continue
        before, after = old[key][1], item
        if strip is not None:
            before, after = strip(before), strip(after)
        paths = _changed_paths(before, after)
        notes = [_path_note(p, before, after) for p in paths]
        if key in moved:
            paths = ["position", *paths]
            notes = [f"moved from {moved[key][0]} to {moved[key][1]}", *notes]
        if paths:
            sep = " " if notes[0].startswith("moved") and len(notes) == 1 else ": "
            changes.append(
                Change(
                    "changed",
                    element,
                    name,
                    tuple(paths),
                    f"{element} {name}{sep}{'; '.join(notes)}",
                )
            )
    return changes


def _block(element: str, name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    paths = _changed_paths(old, new)
    if not paths:
        return []
    notes = "; ".join(_path_note(p, old, new) for p in paths)
    return [Change("changed", element, name, tuple(paths), f"{element}: {notes}")]


def _chain_fields(old: dict[str, Any], new: dict[str, Any], name: str) -> list[Change]:
    before = {k: v for k, v in old.items() if k not in _BLOCKS}
    after = {k: v for k, v in new.items() if k not in _BLOCKS}
    return _block("chain", name, before, after)


def _variants(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[Change]:
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        return [Change("added", "variants", new["axis"], summary=_variants_text(new, "added"))]
    if new is None:
        return [Change("removed", "variants", old["axis"], summary=_variants_text(old, "removed"))]
    return _block("variants", new["axis"], old, new)


def _variants_text(block: dict[str, Any], kind: str) -> str:
    return f"variants {block['axis']} [{', '.join(block.get('values', []))}] {kind}"


def _moves(old: list[str], new: list[str]) -> dict[str, tuple[int, int]]:
    """Keys that left the longest common order, with their 1-based old and new positions."""
    common = set(old) & set(new)
    a, b = [k for k in old if k in common], [k for k in new if k in common]
    # Longest common subsequence; the lists are a chain's rows or actions, so small.
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
            )
    kept: set[str] = set()
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            kept.add(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return {k: (old.index(k) + 1, new.index(k) + 1) for k in b if k not in kept}


# --- edges -------------------------------------------------------------------


def _edge_list(spec: ChainSpec) -> dict[GraphKey, str]:
    """Graph key → summary text of every edge, in document order."""
    out: dict[GraphKey, str] = {}
    for handle in spec.handles:
        for parent in handle.derived_from:
            key = GraphKey.edge("derived_from", handle.id, parent)
            out.setdefault(key, f"edge derived_from {parent} → {handle.id}")
    for action in spec.actions:
        for h in action.input.handles:
            key = GraphKey.edge("consumes", action.id, h)
            out.setdefault(key, f"edge consumes {h} → {action.id}")
    for action in spec.actions:
        for h in action.output.handles:
            out.setdefault(GraphKey.edge("mints", action.id, h), f"edge mints {action.id} → {h}")
    return out


def _edges(old: ChainSpec, new: ChainSpec) -> list[Change]:
    before, after = _edge_list(old), _edge_list(new)
    changes = []
    for kind in DOCUMENT_EDGE_KINDS:
        changes += [
            Change("removed", "edge", str(key), summary=f"{text} removed")
            for key, text in before.items()
            if key.name == kind and key not in after
        ]
        changes += [
            Change("added", "edge", str(key), summary=f"{text} added")
            for key, text in after.items()
            if key.name == kind and key not in before
        ]
    return changes


# --- field paths -------------------------------------------------------------


def _changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths where ``old`` and ``new`` differ; lists of elements by index."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        paths = []
        for key in [*old, *(k for k in new if k not in old)]:
            sub = f"{prefix}.{key}" if prefix else str(key)
            paths += _changed_paths(old.get(key, _MISSING), new.get(key, _MISSING), sub)
        return paths
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and len(old) == len(new)
        and all(isinstance(x, dict) for x in [*old, *new])
    ):
        paths = []
        for i, (x, y) in enumerate(zip(old, new, strict=True)):
            paths += _changed_paths(x, y, f"{prefix}[{i}]")
        return paths
    return [prefix]


def _lookup(data: Any, path: str) -> Any:
    node = data
    for part in path.replace("[", ".[").split("."):
        if part.startswith("["):
            index = int(part[1:-1])
            node = node[index] if isinstance(node, list) and index < len(node) else _MISSING
        else:
            node = node.get(part, _MISSING) if isinstance(node, dict) else _MISSING
        if node is _MISSING:
            break
    return node


def _path_note(path: str, old: Any, new: Any) -> str:
    before, after = _lookup(old, path), _lookup(new, path)
    if before is _MISSING:
        shown = _show(after)
        return f"{path} set to {shown}" if shown else f"{path} set"
    if after is _MISSING:
        return f"{path} unset"
    a, b = _show(before), _show(after)
    return f"{path} {a} → {b}" if a and b else f"{path} changed"


def _show(value: Any) -> str:
    """A short rendering of a plain value; ``""`` when it would not fit on a line."""
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        text = "[" + ", ".join(str(v) for v in value) + "]"
    elif isinstance(value, (dict, list)):
        return ""
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + "…"
