"""Edits of a chain document: small pure functions ``spec -> spec``, and one dispatcher.

This module owns every change the designer makes to a chain: adding,
updating, renaming and deleting actions, handles, gates and verdict rows,
the three kinds of graph edge (``derived_from``, ``consumes``, ``mints``),
and the policy and top-level fields. Each function works on the document
form (:func:`~chains.core.formats.to_document`) of its input, validates the
result again and returns a new :class:`~chains.core.model.ChainSpec`; the input
is never changed. Anything it cannot do is an :class:`EditError` naming the
place (an element path, :mod:`chains.core.paths`: ``actions[book].effect``,
``handles[search_token]``, or for a malformed call the argument) and saying what to do about it.

Assumptions: arguments may come straight from JSON a browser posted, so
every one is type-checked here; a rename rewrites every reference the model
knows of (verdict expressions through :mod:`chains.core.verdicts`, never by
text substitution) but not prose such as a precondition's ``when``; and
references written inside ``fields`` are the linter's business
(``structure.dangling-reference``), except a ``derived_from`` cycle, which
is refused. Rows without an id are addressed by position as ``#n``
(1-based), the way the linter names them.

>>> doc = ChainSpec(id="c")
>>> doc = add_action(doc, "search", output={"handles": []})
>>> doc = add_handle(doc, "search_id", minted_by="search")
>>> doc.action("search").output.handles
['search_id']
>>> doc = update_action(doc, "search", {"id": "find"})
>>> doc.handle("search_id").minted_by
'find'
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable
from typing import Any

import networkx as nx
from pydantic import BaseModel

from .errors import ChainError, DocumentError, Problem
from .formats import from_document, to_document
from .graph import derivation_cycles, derivation_graph
from .keys import DOCUMENT_EDGE_KINDS
from .lint.structure import EXTERNAL
from .model import (
    EFFECTS,
    Action,
    ChainSpec,
    Gate,
    Handle,
    Policy,
    VerdictRow,
    external_minter,
)
from .paths import KINDS, ElementPath, find_item
from .references import (
    Slot,
    action_slots,
    gate_slots,
    handle_slots,
    places_using,
    rename,
)
from .words import article

__all__ = [
    "OPS",
    "EditError",
    "add_action",
    "add_edge",
    "add_gate",
    "add_handle",
    "add_row",
    "apply",
    "delete_action",
    "delete_gate",
    "delete_handle",
    "dropped_with_handle",
    "delete_row",
    "duplicate_row",
    "move_action",
    "move_row",
    "remove_edge",
    "update_action",
    "update_chain",
    "update_gate",
    "update_handle",
    "update_policy",
    "update_row",
]

Data = dict[str, Any]

EDGE_KINDS = DOCUMENT_EDGE_KINDS  # the edges an edit adds or removes
# Ids the document already gives a meaning: ``minted_by: external``,
# ``compensation: none``, and the effect classes that key policy.per_step.
RESERVED_ACTION_IDS = frozenset({EXTERNAL, "none", *EFFECTS})
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
# Chain fields with ops of their own; update_chain refuses them.
_EDITED_ELSEWHERE = {
    "actions": "add_action, update_action, delete_action",
    "handles": "add_handle, update_handle, delete_handle, add_edge, remove_edge",
    "gates": "add_gate, update_gate, delete_gate",
    "verdict_table": "add_row, update_row, duplicate_row, delete_row, move_row",
    "policy": "update_policy",
}


class EditError(ChainError):
    """An edit was refused: ``path`` says where, ``message`` what to do about it.

    ``path`` is an element path (``actions[book].effect``, ``verdict_table[#2]``,
    see :class:`~chains.core.paths.ElementPath`) or, when the call itself is
    malformed, the argument's name (``op``, ``id``). ``problems`` lists every
    validation problem when there were several.
    """

    def __init__(
        self, path: ElementPath | str, message: str, problems: list[Problem] | None = None
    ):
        self.path = str(path)
        self.message = message
        self.problems = problems or [Problem(message, path=self.path or None)]
        super().__init__(f"{self.path}: {message}" if self.path else message)


def _noun(section: str) -> str:
    """What an element of ``section`` is called in a message: ``action``, ``verdict row``."""
    kind = KINDS[section]
    return "verdict row" if kind == "row" else kind


def _at(section: str, ident: str) -> ElementPath:
    """The path of element ``ident`` (an id, or ``#n`` for a row) of ``section``."""
    return ElementPath.of(KINDS[section], ident)


# --- arguments ---------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _need_str(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise EditError(name, f"{name} must be a non-empty string, got {_json_type(value)}")
    return value


def _need_index(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise EditError(name, f"{name} must be a whole number, got {_json_type(value)}")
    return value


def _need_flag(value: Any, name: str = "replace") -> bool:
    if not isinstance(value, bool):
        raise EditError(name, f"{name} must be true or false, got {_json_type(value)}")
    return value


def _known_keys(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def _need_fields(
    fields: Any, model: type[BaseModel], where: ElementPath, name: str = "fields"
) -> Data:
    """A deep copy of ``fields`` once it is an object whose keys ``model`` knows.

    Unknown keys would otherwise land in ``extras`` unnoticed; a typo must fail.
    """
    if not isinstance(fields, dict):
        raise EditError(name, f"{name} must be an object, got {_json_type(fields)}")
    known = _known_keys(model)
    for key in fields:
        if key not in known:
            kind = re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()  # VerdictRow
            listed = ", ".join(sorted(known))
            raise EditError(
                where.field(str(key)), f"{kind} has no field {key!r}; known fields: {listed}"
            )
    return copy.deepcopy(fields)


def _check_new_id(
    data: Data, section: str, new_id: Any, name: ElementPath | str, renaming: bool = False
) -> str:
    """``new_id`` once it is a well-formed id not yet used in ``section``.

    A new element's taken id is refused at the element that holds it; a
    rename's, at the id field that was typed (``name``), so a form shows the
    refusal beside that field.
    """
    _need_str(str(name), new_id)
    if not _ID.fullmatch(new_id) or len(new_id) > 200:
        raise EditError(
            name,
            f"{new_id!r} is not a valid id: use letters, digits, '_', '.' and '-', "
            "starting with a letter, digit or '_'",
        )
    if section == "actions" and new_id in RESERVED_ACTION_IDS:
        raise EditError(name, f"{new_id!r} already means something in a chain; pick another id")
    if _find(data, section, new_id) is not None:
        raise EditError(
            name if renaming else _at(section, new_id),
            f"{article(_noun(section))} with id {new_id!r} already exists",
        )
    return new_id


# --- the document ------------------------------------------------------------


def _document(doc: Any) -> Data:
    if not isinstance(doc, ChainSpec):
        raise EditError("doc", f"expected a chain, got {type(doc).__name__}")
    return to_document(doc)


def _validated(data: Data) -> ChainSpec:
    try:
        return from_document(data)
    except DocumentError as exc:
        first = exc.problems[0]
        raise EditError(first.path or "", first.message, exc.problems) from None


def _find(data: Data, section: str, ident: str) -> int | None:
    """Position of the first element of ``section`` with ``ident`` (or ``#n``)."""
    return find_item(data.get(section) or [], ident)


def _position(data: Data, section: str, ident: Any, name: str = "id") -> int:
    """Like :func:`_find` for an id given as argument ``name``; refuses a missing one."""
    _need_str(name, ident)
    index = _find(data, section, ident)
    if index is None:
        raise EditError(_at(section, ident), f"{_noun(section)} {ident!r} does not exist")
    return index


def _element(data: Data, section: str, ident: Any, name: str = "id") -> Data:
    at = _position(data, section, ident, name)  # before data[section], which may be missing
    element: Data = data[section][at]
    return element


def _list_at(element: Data, *keys: str) -> list[Any]:
    """The list at ``element[k1][k2]...``, created empty when missing."""
    node = element
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    found: list[Any] = node.setdefault(keys[-1], [])
    return found


def _replace(element: Data, fields: Data, whole: bool = False) -> None:
    """Top-level keys of ``fields`` replace the element's; ``None`` removes a key.

    ``whole`` makes ``fields`` the element's every key (the YAML editor shows
    them all, so a key deleted there is meant gone): the others are dropped.
    """
    if whole:
        for key in [k for k in element if k != "id" and k not in fields]:
            del element[key]
    for key, value in fields.items():
        if value is None:
            element.pop(key, None)
        else:
            element[key] = value


# --- references: every place in the document that names an element (references.py) ---


def _still_used(kind: str, ident: str, uses: list[Slot], path: ElementPath) -> EditError:
    places = ", ".join(dict.fromkeys(str(s.place) for s in uses))
    return EditError(path, f"{kind} {ident!r} is still used by: {places}")


def _refuse_new_cycles(before: ChainSpec, after: ChainSpec, path: ElementPath) -> None:
    old = derivation_cycles(before)
    new = [c for c in derivation_cycles(after) if c not in old]
    if new:
        text = " → ".join([*new[0], new[0][0]])
        raise EditError(path, f"that would make a derived_from cycle: {text}")


# --- actions -----------------------------------------------------------------


def add_action(spec: ChainSpec, id: str, effect: str = "read", **fields: Any) -> ChainSpec:
    """Append an action; ``fields`` are other keys of its document form."""
    data = _document(spec)
    _check_new_id(data, "actions", id, "id")
    _need_str("effect", effect)
    action = {"id": id, "effect": effect, **_need_fields(fields, Action, _at("actions", id))}
    _list_at(data, "actions").append(action)
    return _validated(data)


def _changes(data: Data, section: str, id: str, fields: Any, model: type[BaseModel]) -> Data:
    """The element's validated field changes, its rename (if ``id`` changes) already done."""
    _element(data, section, id)
    changes = _need_fields(fields, model, _at(section, id))
    new_id = changes.pop("id", id)
    if new_id != id:
        _check_new_id(data, section, new_id, _at(section, id).field("id"), renaming=True)
        _RENAMES[section](data, id, new_id)
        _element(data, section, id)["id"] = new_id
    changes["id"] = new_id
    return changes


def _rename_handle(data: Data, old: str, new: str) -> None:
    rename(handle_slots(data), old, new)
    _rebind(data, old, new)


def _rebind(data: Data, old: str, new: str | None) -> None:
    """Handle ``old`` renamed to ``new`` (or dropped, with None) in every binding.

    A binding names a handle by key (``sends: {order_id: path:id}``), not in a
    slot; a key that is also the action's intent field or request invariant
    names that, and stays.
    """
    for action in data.get("actions") or []:
        http = action.get("http") or {}
        own = {
            *((action.get("input") or {}).get("intent") or {}),
            *(action.get("request_invariants") or {}),
        }
        for part in ("sends", "reads"):
            places = http.get(part)
            if not places or old not in places or (part == "sends" and old in own):
                continue
            if new is None:
                http[part] = {k: v for k, v in places.items() if k != old}
            else:
                http[part] = {new if k == old else k: v for k, v in places.items()}


def _rename_action(data: Data, old: str, new: str) -> None:
    rename(action_slots(data), old, new)
    policy = data.get("policy") or {}
    per_step = policy.get("per_step")
    if per_step and old in per_step and old not in EFFECTS:
        policy["per_step"] = {new if k == old else k: v for k, v in per_step.items()}


def update_action(
    spec: ChainSpec, id: str, fields: dict[str, Any], replace: bool = False
) -> ChainSpec:
    """Replace top-level keys of an action; a new ``id`` renames it everywhere.

    With ``replace`` the keys left out of ``fields`` are removed too.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "get", "effect": "read"},
    ...     {"id": "book", "effect": "commit", "confirmation": {"probe": "get"}}]})
    >>> update_action(doc, "get", {"id": "lookup"}).action("book").confirmation.probe
    'lookup'
    """
    data = _document(spec)
    changes = _changes(data, "actions", id, fields, Action)
    action = _element(data, "actions", changes.pop("id"))
    before = set((action.get("output") or {}).get("handles") or [])
    _replace(action, changes, _need_flag(replace))
    _sync_minters(data, action, before)
    return _validated(data)


def _sync_minters(data: Data, action: Data, before: set[str]) -> None:
    """Output handles changed by an update move ``minted_by`` along, as a mints edge would."""
    after = (action.get("output") or {}).get("handles") or []
    for handle in data.get("handles") or []:
        if handle["id"] in after and handle["id"] not in before:
            _set_minter(data, handle, action["id"])
        elif handle["id"] in before - set(after) and handle.get("minted_by") == action["id"]:
            handle.pop("minted_by")


def delete_action(spec: ChainSpec, id: str) -> ChainSpec:
    """Remove an action nothing else names; otherwise list every place that does.

    The handles it mints name it too (``minted_by``): they are listed, not
    silently orphaned.
    """
    data = _document(spec)
    at = _position(data, "actions", id)
    uses = places_using(action_slots(data), id, _at("actions", id))
    per_step = (data.get("policy") or {}).get("per_step") or {}
    if id in per_step and id not in EFFECTS:
        uses.append(Slot(ElementPath.root("policy", "per_step").field(id), per_step, id))
    if uses:
        raise _still_used("action", id, uses, _at("actions", id))
    del data["actions"][at]
    return _validated(data)


# --- handles -----------------------------------------------------------------


def _set_minter(data: Data, handle: Data, minter: str | None) -> None:
    """Make ``minter`` the handle's only minter: ``minted_by`` and ``output.handles`` agree.

    ``None`` and ``external`` leave no action minting it.
    """
    hid = handle["id"]
    path = _at("handles", hid).field("minted_by")
    if minter is not None:
        _need_str("minted_by", minter)
        if not external_minter(minter) and _find(data, "actions", minter) is None:
            raise EditError(path, f"action {minter!r} does not exist")
    for action in data.get("actions") or []:
        outputs = (action.get("output") or {}).get("handles") or []
        if action["id"] != minter and hid in outputs:
            outputs[:] = [h for h in outputs if h != hid]
    if minter is None:
        handle.pop("minted_by", None)
        return
    handle["minted_by"] = minter
    if not external_minter(minter):
        outputs = _list_at(_element(data, "actions", minter), "output", "handles")
        if hid not in outputs:
            outputs.append(hid)


def add_handle(spec: ChainSpec, id: str, minted_by: str | None = None, **fields: Any) -> ChainSpec:
    """Append a handle; when ``minted_by`` names an action, that action outputs it."""
    data = _document(spec)
    _check_new_id(data, "handles", id, "id")
    handle = {"id": id, **_need_fields(fields, Handle, _at("handles", id))}
    _list_at(data, "handles").append(handle)
    if minted_by is not None:
        _set_minter(data, handle, minted_by)
    after = _validated(data)
    _refuse_new_cycles(spec, after, _at("handles", id).field("derived_from"))
    return after


def update_handle(
    spec: ChainSpec, id: str, fields: dict[str, Any], replace: bool = False
) -> ChainSpec:
    """Replace top-level keys of a handle; a new ``id`` renames it everywhere.

    A new ``minted_by`` moves the handle to that action's ``output.handles``
    (``None`` or ``external``: out of every action's). With ``replace`` the
    keys left out of ``fields`` are removed too (no ``minted_by``: no minter).
    """
    data = _document(spec)
    changes = _changes(data, "handles", id, fields, Handle)
    new_id = changes.pop("id")
    handle = _element(data, "handles", new_id)
    if _need_flag(replace) and "minted_by" not in changes:
        changes["minted_by"] = None
    if "minted_by" in changes:
        _set_minter(data, handle, changes.pop("minted_by"))
    _replace(handle, changes, replace)
    after = _validated(data)
    _refuse_new_cycles(spec, after, _at("handles", new_id).field("derived_from"))
    return after


def dropped_with_handle(spec: ChainSpec, id: str) -> list[str]:
    """The places :func:`delete_handle` would drop ``id`` from, as element paths.

    What a person deleting it should hear first: the derivation edges and the
    inputs and outputs that go with it.

    >>> doc = ChainSpec.model_validate({"id": "c", "handles": [
    ...     {"id": "quote", "minted_by": "price"}, {"id": "hold", "derived_from": ["quote"]}],
    ...     "actions": [{"id": "price", "effect": "mint", "output": {"handles": ["quote"]}}]})
    >>> dropped_with_handle(doc, "quote")
    ['handles[hold].derived_from', 'actions[price].output.handles']
    """
    data = _document(spec)
    own = _at("handles", id)
    return [str(s.place) for s in places_using(handle_slots(data), id, own) if s.cleanable]


def delete_handle(spec: ChainSpec, id: str) -> ChainSpec:
    """Remove a handle and the edges to it; refuse while a scope or ``mutates`` names it.

    Other handles' ``derived_from``, actions' input and output handles, the
    places bindings send it to or read it from, and ``independence`` answers
    about it are dropped with it; a verdict row's
    ``consumers_of`` or an action's ``mutates`` would change meaning, so those
    must be edited first.
    """
    data = _document(spec)
    at = _position(data, "handles", id)
    own = _at("handles", id)
    blocking = [s for s in places_using(handle_slots(data), id, own) if not s.cleanable]
    if blocking:
        raise _still_used("handle", id, blocking, own)
    del data["handles"][at]
    for h in data.get("handles") or []:
        if id in h.get("derived_from", []):
            h["derived_from"] = [p for p in h["derived_from"] if p != id]
    for a in data.get("actions") or []:
        for side in ("input", "output"):
            block = a.get(side) or {}
            if id in block.get("handles", []):
                block["handles"] = [h for h in block["handles"] if h != id]
    if data.get("independence"):
        data["independence"] = [p for p in data["independence"] if id not in p.get("handles", [])]
    _rebind(data, id, None)
    return _validated(data)


# --- edges -------------------------------------------------------------------


def _need_kind(kind: Any) -> str:
    _need_str("kind", kind)
    if kind not in EDGE_KINDS:
        raise EditError("kind", f"unknown edge kind {kind!r}; expected {', '.join(EDGE_KINDS)}")
    return kind


def _cycle_text(spec: ChainSpec, child: str, parent: str) -> str | None:
    """The cycle ``child derived_from parent`` would close, parent to child, or ``None``."""
    graph = derivation_graph(spec)
    if child not in graph or parent not in graph or not nx.has_path(graph, child, parent):
        return None
    path = nx.shortest_path(graph, child, parent)
    return " → ".join([parent, *path])


def add_edge(spec: ChainSpec, kind: str, source: str, target: str) -> ChainSpec:
    """Add one graph edge: ``derived_from`` (child → parent), ``consumes`` or ``mints``.

    ``consumes`` and ``mints`` go from an action to a handle; minting a
    handle another action minted moves it to ``source``.

    >>> spec = ChainSpec.model_validate({"id": "c", "handles": [
    ...     {"id": "a"}, {"id": "b", "derived_from": ["a"]}]})
    >>> add_edge(spec, "derived_from", "a", "b")
    Traceback (most recent call last):
    ...
    chains.core.edit.EditError: handles[a].derived_from: a cannot derive from b: that would make a derived_from cycle b → a → b
    """  # noqa: E501
    data = _document(spec)
    _need_kind(kind)
    if kind == "derived_from":
        child = _element(data, "handles", source, "source")
        _element(data, "handles", target, "target")
        path = _at("handles", source).field("derived_from")
        if source == target:
            raise EditError(path, f"handle {source!r} cannot derive from itself")
        parents = _list_at(child, "derived_from")
        if target in parents:
            raise EditError(path, f"edge already exists: {source} derives from {target}")
        cycle = _cycle_text(spec, source, target)
        if cycle:
            raise EditError(
                path,
                f"{source} cannot derive from {target}: that would make a "
                f"derived_from cycle {cycle}",
            )
        parents.append(target)
        return _validated(data)
    action = _element(data, "actions", source, "source")
    handle = _element(data, "handles", target, "target")
    if kind == "consumes":
        inputs = _list_at(action, "input", "handles")
        if target in inputs:
            raise EditError(
                _at("actions", source).field("input", "handles"),
                f"edge already exists: {source} consumes {target}",
            )
        inputs.append(target)
    else:
        outputs = (action.get("output") or {}).get("handles") or []
        if target in outputs and handle.get("minted_by") == source:
            raise EditError(
                _at("actions", source).field("output", "handles"),
                f"edge already exists: {source} mints {target}",
            )
        _set_minter(data, handle, source)
    return _validated(data)


def remove_edge(spec: ChainSpec, kind: str, source: str, target: str) -> ChainSpec:
    """Remove one graph edge added by :func:`add_edge` (or written in the document)."""
    data = _document(spec)
    _need_kind(kind)
    _need_str("target", target)
    section = "handles" if kind == "derived_from" else "actions"
    element = _element(data, section, source, "source")
    if kind == "derived_from":
        path, names, verb = (
            _at("handles", source).field("derived_from"),
            "derived_from",
            "derives from",
        )
        holder = element
    else:
        side = "input" if kind == "consumes" else "output"
        path, names, verb = _at("actions", source).field(side, "handles"), "handles", kind
        holder = element.get(side) or {}
    listed = holder.get(names) or []
    handle = _element(data, "handles", target, "target") if kind == "mints" else {}
    minted_here = handle.get("minted_by") == source
    if target not in listed and not minted_here:
        raise EditError(path, f"there is no edge {source} {verb} {target}")
    holder[names] = [n for n in listed if n != target]
    if minted_here:
        handle.pop("minted_by")
    return _validated(data)


# --- verdict rows --------------------------------------------------------------


def _row_fields(data: Data, fields: Any, where: ElementPath) -> Data:
    changes = _need_fields(fields, VerdictRow, where)
    if "id" in changes:
        _check_new_id(data, "verdict_table", changes["id"], where.field("id"))
    return changes


def _need_position(name: str, index: Any, size: int) -> int:
    _need_index(name, index)
    if not 0 <= index <= size:
        raise EditError(name, f"{name} must be between 0 and {size}, got {index}")
    return int(index)


def add_row(spec: ChainSpec, fields: dict[str, Any], index: int | None = None) -> ChainSpec:
    """Insert a verdict row at ``index`` (appended when ``None``); ``fields`` needs an ``id``."""
    data = _document(spec)
    if isinstance(fields, dict) and "id" not in fields:
        raise EditError("fields.id", "a new verdict row needs an id")
    row = _row_fields(data, fields, ElementPath.root("verdict_table"))
    rows = _list_at(data, "verdict_table")
    at = len(rows) if index is None else _need_position("index", index, len(rows))
    rows.insert(at, row)
    return _validated(data)


def update_row(
    spec: ChainSpec, id: str, fields: dict[str, Any], replace: bool = False
) -> ChainSpec:
    """Replace top-level keys of a verdict row (``id`` or ``#n``); ``replace``: all of them."""
    data = _document(spec)
    at = _position(data, "verdict_table", id)
    row = data["verdict_table"][at]
    where = ElementPath.root("verdict_table").item_at(at, row)
    changes = _need_fields(fields, VerdictRow, where)
    if changes.get("id", row.get("id")) != row.get("id"):
        _check_new_id(data, "verdict_table", changes["id"], where.field("id"), renaming=True)
    _replace(row, changes, _need_flag(replace))
    return _validated(data)


def _fresh_row_id(data: Data, base: str) -> str:
    n = 1
    while _find(data, "verdict_table", candidate := f"{base}_copy{n if n > 1 else ''}") is not None:
        n += 1
    return candidate


def duplicate_row(spec: ChainSpec, id: str, new_id: str | None = None) -> ChainSpec:
    """Copy a verdict row right after itself, as ``new_id`` or ``<id>_copy``, ``<id>_copy2`` ...

    A row without an id is copied without one unless ``new_id`` is given.
    """
    data = _document(spec)
    at = _position(data, "verdict_table", id)
    row = copy.deepcopy(data["verdict_table"][at])
    if new_id is not None:
        row["id"] = _check_new_id(data, "verdict_table", new_id, "new_id")
    elif row.get("id"):
        row["id"] = _fresh_row_id(data, row["id"])
    data["verdict_table"].insert(at + 1, row)
    return _validated(data)


def delete_row(spec: ChainSpec, id: str) -> ChainSpec:
    """Remove a verdict row (``id`` or ``#n``); nothing else refers to rows."""
    data = _document(spec)
    at = _position(data, "verdict_table", id)
    del data["verdict_table"][at]
    return _validated(data)


def move_row(spec: ChainSpec, id: str, index: int) -> ChainSpec:
    """Move a verdict row so that it ends up at ``index`` (counted once it is taken out).

    >>> doc = ChainSpec.model_validate({"id": "c", "verdict_table": [
    ...     {"id": "A", "verdict": "retry"}, {"id": "B", "verdict": "retry"},
    ...     {"id": "C", "verdict": "retry"}]})
    >>> [r.id for r in move_row(doc, "A", 2).verdict_table]
    ['B', 'C', 'A']
    """
    return _moved(spec, "verdict_table", id, index)


def move_action(spec: ChainSpec, id: str, index: int) -> ChainSpec:
    """Move an action so that it ends up at ``index`` of the actions (counted once it is out).

    The actions' order is the steps' order (SPEC §2.1): a run walks the main
    steps as they are listed, so this is how a step is moved before or after
    another. Probes and compensators may sit anywhere; they run where they act.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "quote", "effect": "mint"}, {"id": "search", "effect": "read"},
    ...     {"id": "book", "effect": "commit"}]})
    >>> [a.id for a in move_action(doc, "search", 0).actions]
    ['search', 'quote', 'book']
    """
    return _moved(spec, "actions", id, index)


def _moved(spec: ChainSpec, section: str, id: str, index: int) -> ChainSpec:
    data = _document(spec)
    items = data.get(section, [])
    item = items.pop(_position(data, section, id))
    items.insert(_need_position("index", index, len(items)), item)
    return _validated(data)


# --- gates -------------------------------------------------------------------


def add_gate(spec: ChainSpec, id: str, **fields: Any) -> ChainSpec:
    """Append a gate; ``fields`` are other keys of its document form (``audience`` is required)."""
    data = _document(spec)
    _check_new_id(data, "gates", id, "id")
    _list_at(data, "gates").append({"id": id, **_need_fields(fields, Gate, _at("gates", id))})
    return _validated(data)


def update_gate(
    spec: ChainSpec, id: str, fields: dict[str, Any], replace: bool = False
) -> ChainSpec:
    """Replace top-level keys of a gate; a new ``id`` renames its ``gate(...)`` verdicts too.

    With ``replace`` the keys left out of ``fields`` are removed too.
    """
    data = _document(spec)
    changes = _changes(data, "gates", id, fields, Gate)
    _replace(_element(data, "gates", changes.pop("id")), changes, _need_flag(replace))
    return _validated(data)


def delete_gate(spec: ChainSpec, id: str) -> ChainSpec:
    """Remove a gate nothing raises; otherwise list every place that does."""
    data = _document(spec)
    at = _position(data, "gates", id)
    uses = places_using(gate_slots(data), id, _at("gates", id))
    if uses:
        raise _still_used("gate", id, uses, _at("gates", id))
    del data["gates"][at]
    return _validated(data)


# --- policy and the chain's own fields ---------------------------------------


def _merge(base: Data, patch: Data) -> None:
    for key, value in patch.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, dict):
            # A form posts every box: a section whose boxes are all empty is no section,
            # and an empty mapping (an add row with nothing chosen) changes nothing.
            found = base.get(key)
            node: Data = found if isinstance(found, dict) else {}
            _merge(node, value)
            if node:
                base[key] = node
            else:
                base.pop(key, None)
        else:
            base[key] = value


def update_policy(spec: ChainSpec, fields: dict[str, Any]) -> ChainSpec:
    """Deep-merge ``fields`` into the policy; a ``None`` value removes its key.

    >>> doc = ChainSpec.model_validate({"id": "c", "policy": {"per_step": {
    ...     "commit": {"attempts": 1, "keyed": {"attempts": 3}}}}})
    >>> new = update_policy(doc, {"per_step": {"commit": {"keyed": None, "unkeyed": {"attempts": 1}}}})
    >>> new.policy.per_step["commit"].keyed is None, new.policy.per_step["commit"].attempts
    (True, 1)
    """  # noqa: E501
    data = _document(spec)
    patch = _need_fields(fields, Policy, ElementPath.root("policy"))
    policy = data.setdefault("policy", {})
    _merge(policy, patch)
    return _validated(data)


def update_chain(spec: ChainSpec, fields: dict[str, Any]) -> ChainSpec:
    """Replace the chain's own fields (title, description, run_key, known_unmatched ...).

    Handles, actions, gates, verdict rows and the policy have edits of their own.
    """
    if isinstance(fields, dict):
        for key, ops in _EDITED_ELSEWHERE.items():
            if key in fields:
                raise EditError(key, f"{key} cannot be replaced wholesale; use {ops}")
    data = _document(spec)
    _replace(data, _need_fields(fields, ChainSpec, ElementPath.root("chain")))
    return _validated(data)


_RENAMES: dict[str, Callable[[Data, str, str], None]] = {
    "actions": _rename_action,
    "handles": _rename_handle,
    "gates": lambda data, old, new: rename(gate_slots(data), old, new),
}


# --- dispatch ----------------------------------------------------------------

OPS: dict[str, Callable[..., ChainSpec]] = {
    f.__name__: f
    for f in (
        add_action,
        update_action,
        move_action,
        delete_action,
        add_handle,
        update_handle,
        delete_handle,
        add_edge,
        remove_edge,
        add_row,
        update_row,
        duplicate_row,
        delete_row,
        move_row,
        add_gate,
        update_gate,
        delete_gate,
        update_policy,
        update_chain,
    )
}


def apply(spec: ChainSpec, op: str, args: dict[str, Any]) -> ChainSpec:
    """Run the edit ``op`` with ``args`` (decoded JSON): the one entry point for the web.

    >>> apply(ChainSpec(id="c"), "add_action", {"id": "search", "colour": "red"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.edit.EditError: actions[search].colour: action has no field 'colour'; known fields: ...
    """  # noqa: E501
    if not isinstance(op, str) or op not in OPS:
        raise EditError("op", f"unknown edit {op!r}; known edits: {', '.join(OPS)}")
    if not isinstance(args, dict):
        raise EditError("args", f"args must be an object, got {_json_type(args)}")
    func = OPS[op]
    params = list(inspect.signature(func).parameters.values())[1:]
    named = [p.name for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    open_ended = len(named) < len(params)
    for key in args:
        if not isinstance(key, str) or key == "doc" or (key not in named and not open_ended):
            raise EditError(
                str(key), f"{op} takes no argument {key!r}; it takes {', '.join(named)}"
            )
    missing = [p.name for p in params if p.default is p.empty and p.name in named]
    missing = [name for name in missing if name not in args]
    if missing:
        raise EditError(missing[0], f"{op} needs {', '.join(missing)}")
    return func(spec, **args)
