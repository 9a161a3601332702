"""Edits that went stale: what an edit based on an older revision writes, beside the head's values.

Two people edit one chain; the second save is refused because its base is
no longer the head. This module answers what the second person needs to
decide: for each field the edit writes, *yours* (the value the edit sets),
*theirs* (the head's value of the same element and field) and what it was at
the base; and whether the edit *conflicts* with what changed between base
and head. An edit conflicts when the other revision changed a field it
writes, removed (or renamed) the element it touches, added an element with
the id it adds, changed an element it deletes, or changed the same edge or
the position of the row it moves. When the element it touches changed only
in fields it does not write, that is reported too (``elsewhere``): the edit
can be re-applied as it is, but the person should know. Anything else that
changed (other elements) never stops the edit from being re-applied: the
same operation is applied to the head, which keeps theirs.

This is a three-way comparison. *Yours* is the edit applied to its own base,
read in the canonical document form (:func:`~chains.core.formats.to_document`)
like the base and the head, so a value posted in another spelling, or a
field a form posts unchanged (every form posts all it shows), is no change
of yours. Those unchanged fields are left out of the arguments to post again
(``Rebase.reapply``), so re-applying never undoes their change to them.

Assumptions: the edit is a ``chains.core.edit`` operation with its
arguments as posted (decoded JSON). When it no longer applies to its base,
the values as posted stand for yours. An operation this module does not
know, or malformed arguments, touch nothing (applying them again is what
refuses them). Rows are named by id or ``#n`` (1-based), as edits name them.

>>> base = ChainSpec.model_validate({"id": "c", "handles": [{"id": "h"}]})
>>> head = ChainSpec.model_validate({"id": "c", "handles": [{"id": "h", "description": "theirs"}]})
>>> check = rebase(base, head, "update_handle", {"id": "h", "fields": {"description": "mine"}})
>>> [(f.name, f.yours, f.theirs) for f in check.fields], check.conflicts[0].summary
([('description', 'mine', 'theirs')], 'handle h: they changed description too')
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from . import edit
from .diff import Change, diff
from .errors import ChainError
from .formats import to_document
from .model import ChainSpec
from .paths import SECTIONS, find_item

__all__ = ["ABSENT", "Conflict", "Rebase", "Written", "rebase"]


class _Absent:
    """The value of a field or element that is not there (unset, deleted, never added)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()

# The op prefix and the element it works on: add_action -> ("add", "action").
_ELEMENT_OPS = {
    f"{verb}_{kind}": (verb, kind)
    for kind in SECTIONS
    for verb in ("add", "update", "delete", "duplicate", "move")
}
# An edge of the document lives in one field of its source (and, for mints, of its target).
_EDGE_HOME = {"derived_from": "handle", "consumes": "action", "mints": "action"}


@dataclass(frozen=True)
class Written:
    """One thing the edit writes: ``yours`` beside ``theirs`` (the head) and ``base``.

    ``element`` is ``action``, ``handle``, ``gate``, ``row``, ``edge``,
    ``policy`` or ``chain``; ``name`` is the field (a dotted path in the
    policy, ``position`` for a moved row) or ``""`` for the whole element.
    A value that is not there is :data:`ABSENT`; an edge's values are whether
    it is there.
    """

    element: str
    id: str
    name: str
    yours: Any
    theirs: Any
    base: Any

    @property
    def changed_by_them(self) -> bool:
        return self.theirs != self.base

    @property
    def conflicts(self) -> bool:
        """They changed it, and not to the value the edit sets anyway."""
        return self.changed_by_them and self.theirs != self.yours


@dataclass(frozen=True)
class Conflict:
    """Why re-applying the edit needs the person's choice.

    ``kind``: ``field`` (they changed a field the edit writes), ``removed``
    (the element is gone from the head, deleted or renamed), ``added`` (the
    head has an element with the id the edit adds), ``changed`` (they changed
    the element the edit deletes or copies), ``elsewhere`` (they changed
    other fields of the element the edit touches: no clash, but worth a look).
    """

    kind: Literal["field", "removed", "added", "changed", "elsewhere"]
    element: str
    id: str
    fields: tuple[str, ...] = ()
    summary: str = ""


@dataclass(frozen=True)
class Rebase:
    """An edit on ``base`` measured against ``head``; see :func:`rebase`.

    ``reapply`` is the arguments to post again on the head: ``args`` less the
    fields an update left as they were at the base (a form posts every field
    it shows), so the fields only they changed keep their values.
    """

    op: str
    args: dict[str, Any]
    written: tuple[Written, ...]
    conflicts: tuple[Conflict, ...]
    changes: tuple[Change, ...] = field(default=())
    reapply: dict[str, Any] = field(default_factory=dict)

    @property
    def fields(self) -> tuple[Written, ...]:
        return self.written

    @property
    def clean(self) -> bool:
        """Re-applying the edit on the head keeps everything both people changed."""
        return not self.conflicts

    @property
    def clashes(self) -> tuple[Conflict, ...]:
        """The conflicts where re-applying would undo or fail on their change."""
        return tuple(c for c in self.conflicts if c.kind != "elsewhere")

    def summary(self) -> str:
        """One line for an API message: what clashes, or that nothing does."""
        if not self.conflicts:
            return "nothing you edit changed in between; post it again with the new base"
        return "; ".join(c.summary for c in self.conflicts)


def rebase(base: ChainSpec, head: ChainSpec, op: str, args: Any) -> Rebase:
    """What the edit ``op(args)`` written on ``base`` writes, beside ``head``, and its conflicts.

    ``changes`` is the whole difference from ``base`` to ``head``
    (:func:`~chains.core.diff.diff`), for showing what the other person did.

    >>> base = ChainSpec.model_validate({"id": "c", "title": "T", "description": "d"})
    >>> head = base.model_copy(update={"title": "New"})
    >>> rebase(base, head, "update_chain", {"fields": {"description": "mine"}}).clean
    True
    >>> rebase(base, head, "update_chain", {"fields": {"title": "Mine"}}).conflicts[0].kind
    'field'
    """
    if not isinstance(base, ChainSpec) or not isinstance(head, ChainSpec):
        raise TypeError("rebase needs two chains (ChainSpec)")
    before, after = to_document(base), to_document(head)
    args = args if isinstance(args, dict) else {}
    try:
        # The edit on its own base is "yours" in the document's canonical form.
        mine: dict | None = to_document(edit.apply(base, op, args))
    except ChainError:
        mine = None  # it no longer applies to its base: compare the values as posted
    written: list[Written] = []
    conflicts: list[Conflict] = []
    for w, c in _measure(before, after, mine, op, args):
        written.extend(w)
        conflicts.extend(c)
    reapply = _reapply(op, args, {w.name for w in written})
    return Rebase(op, args, tuple(written), tuple(conflicts), tuple(diff(base, head)), reapply)


def _reapply(op: str, args: dict[str, Any], changed: set[str]) -> dict[str, Any]:
    fields = args.get("fields")
    if not op.startswith("update_") or not isinstance(fields, dict):
        return args
    if op == "update_policy":
        return {**args, "fields": _pick(fields, changed)}
    return {**args, "fields": {k: v for k, v in fields.items() if k in changed}}


def _pick(fields: dict, paths: set[str], prefix: str = "") -> dict:
    """The parts of a nested ``fields`` whose leaf paths are in ``paths``."""
    picked = {}
    for key, value in fields.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            inner = _pick(value, paths, path)
            if inner:
                picked[key] = inner
        elif path in paths:
            picked[key] = value
    return picked


# --- what each kind of edit touches --------------------------------------------

Measured = Iterator[tuple[list[Written], list[Conflict]]]


def _measure(before: dict, after: dict, mine: dict | None, op: str, args: dict) -> Measured:
    if op in ("add_edge", "remove_edge"):
        yield _edge(before, after, op == "add_edge", args)
    elif op == "update_policy":
        yield _policy(before, after, mine, args.get("fields"))
    elif op == "update_chain":
        chain_id = str(after.get("id", ""))
        yield _fields("chain", chain_id, args.get("fields"), before, after, mine)
    elif op in _ELEMENT_OPS:
        verb, kind = _ELEMENT_OPS[op]
        yield from _element_edit(before, after, mine, verb, kind, args)


def _element_edit(
    before: dict, after: dict, mine: dict | None, verb: str, kind: str, args: dict
) -> Measured:
    if verb == "add":
        given = args.get("fields") if kind == "row" else args
        if isinstance(given, dict) and isinstance(given.get("id"), str):
            yield _added(before, after, kind, given["id"], given)
        return
    ident = args.get("id")
    if not isinstance(ident, str):
        return
    old, new = _find(before, kind, ident), _find(after, kind, ident)
    if new is ABSENT and old is ABSENT:
        return  # not in either revision: applying it again is what refuses it
    if new is ABSENT:
        w = [Written(kind, ident, "", _yours_for(verb, old, args), ABSENT, old)]
        yield (
            w,
            [Conflict("removed", kind, ident, (), f"{kind} {ident}: they deleted or renamed it")],
        )
        return
    if verb == "update":
        fields = args.get("fields")
        renamed = fields.get("id", ident) if isinstance(fields, dict) else ident
        yours = (
            _find(mine, kind, renamed) if mine is not None and isinstance(renamed, str) else None
        )
        yield _fields(kind, ident, fields, old or {}, new, yours or None)
    elif verb == "delete":
        clash = old is not ABSENT and old != new
        note = f"{kind} {ident}: they changed what you delete"
        yield (
            [Written(kind, ident, "", ABSENT, new, old)],
            [Conflict("changed", kind, ident, _changed_keys(old, new), note)] if clash else [],
        )
    elif verb == "duplicate":
        copy_id = args.get("new_id")
        w = [Written(kind, ident, "", new, new, old)]
        c = []
        if old != new:
            note = f"{kind} {ident}: they changed the row you copy"
            c.append(Conflict("changed", kind, ident, _changed_keys(old, new), note))
        if isinstance(copy_id, str):
            w2, c2 = _added(before, after, kind, copy_id, {**new, "id": copy_id})
            w, c = w + w2, c + c2
        yield w, c
    elif verb == "move":
        was, now = _row_index(before, ident), _row_index(after, ident)
        yours = args.get("index")
        w = [Written(kind, ident, "position", yours, now, was)]
        moved = was != now and now != yours
        note = f"row {ident}: the rows were reordered in between (it was at {was}, is at {now})"
        yield w, [Conflict("field", kind, ident, ("position",), note)] if moved else []


def _added(before: dict, after: dict, kind: str, ident: str, yours: Any) -> tuple[list, list]:
    old, new = _find(before, kind, ident), _find(after, kind, ident)
    w = [Written(kind, ident, "", yours, new, old)]
    if old is ABSENT and new is not ABSENT:
        note = f"{kind} {ident}: they added one with the same id"
        return w, [Conflict("added", kind, ident, (), note)]
    return w, []


def _fields(
    kind: str, ident: str, fields: Any, old: dict, new: dict, mine: dict | None
) -> tuple[list[Written], list[Conflict]]:
    """An update of some top-level fields of one element (or of the chain itself).

    Only the fields the edit changed count as yours: a form posts every field
    it shows, and one left as it was must not undo their change to it.
    """
    if not isinstance(fields, dict):
        return [], []
    written = [
        Written(
            kind,
            ident,
            str(k),
            mine.get(k, ABSENT) if mine is not None else _plain(v),
            new.get(k, ABSENT),
            old.get(k, ABSENT),
        )
        for k, v in fields.items()
    ]
    written = [w for w in written if w.yours != w.base]
    clashing = tuple(w.name for w in written if w.conflicts)
    conflicts = []
    if clashing:
        text = f"{kind} {ident}: they changed {', '.join(clashing)} too"
        conflicts.append(Conflict("field", kind, ident, clashing, text))
    # The chain's other fields are other people's business; an element's are worth a word.
    yours = {w.name for w in written}
    other = tuple(k for k in _changed_keys(old, new) if k not in yours)
    if other and kind != "chain":
        text = f"{kind} {ident}: they changed {', '.join(other)} (fields you did not edit)"
        conflicts.append(Conflict("elsewhere", kind, ident, other, text))
    return written, conflicts


def _policy(
    before: dict, after: dict, mine: dict | None, fields: Any
) -> tuple[list[Written], list[Conflict]]:
    """``update_policy`` deep-merges: each leaf it sets is compared at its own path."""
    if not isinstance(fields, dict):
        return [], []
    old, new = before.get("policy", {}), after.get("policy", {})
    yours = mine.get("policy", {}) if mine is not None else None
    written = [
        Written(
            "policy",
            "policy",
            path,
            _at(yours, path) if yours is not None else value,
            _at(new, path),
            _at(old, path),
        )
        for path, value in _leaves(fields)
    ]
    written = [w for w in written if w.yours != w.base]
    clashing = tuple(w.name for w in written if w.conflicts)
    conflicts = []
    if clashing:
        text = f"policy: they changed {', '.join(clashing)} too"
        conflicts.append(Conflict("field", "policy", "policy", clashing, text))
    elif old != new:
        conflicts.append(
            Conflict("elsewhere", "policy", "policy", (), "policy: they changed other settings")
        )
    return written, conflicts


def _edge(before: dict, after: dict, adding: bool, args: dict) -> tuple[list, list]:
    kind, source, target = args.get("kind"), args.get("source"), args.get("target")
    if kind not in _EDGE_HOME or not isinstance(source, str) or not isinstance(target, str):
        return [], []
    ident = f"{kind} {source} → {target}"
    was, now = _has_edge(before, kind, source, target), _has_edge(after, kind, source, target)
    written = [Written("edge", ident, "", adding, now, was)]
    home = _EDGE_HOME[kind]
    for end_kind, end in ((home, source), ("handle", target)):
        if _find(before, end_kind, end) is not ABSENT and _find(after, end_kind, end) is ABSENT:
            text = f"edge {ident}: they deleted or renamed {end_kind} {end}"
            return written, [Conflict("removed", end_kind, end, (), text)]
    if was != now and now != adding:
        text = f"edge {ident}: they {'added' if now else 'removed'} it"
        return written, [Conflict("field", "edge", ident, (), text)]
    return written, []


# --- reading documents ---------------------------------------------------------------


def _find(data: dict, kind: str, ident: str) -> Any:
    """The element ``ident`` of ``kind`` in a document, or ABSENT (rows by id or ``#n``)."""
    items = data.get(SECTIONS[kind]) or []
    at = find_item(items, ident)
    return ABSENT if at is None else items[at]


def _row_index(data: dict, ident: str) -> Any:
    """A row's 0-based position, the way ``move_row`` counts; ABSENT when it is gone."""
    row = _find(data, "row", ident)
    rows = data.get("verdict_table") or []
    return next((i for i, r in enumerate(rows) if r is row), ABSENT)


def _has_edge(data: dict, kind: str, source: str, target: str) -> bool:
    if kind == "derived_from":
        handle = _find(data, "handle", source)
        return bool(handle) and target in handle.get("derived_from", [])
    action = _find(data, "action", source)
    side = "input" if kind == "consumes" else "output"
    return bool(action) and target in (action.get(side) or {}).get("handles", [])


def _changed_keys(old: Any, new: Any) -> tuple[str, ...]:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return ()
    keys = [*old, *(k for k in new if k not in old)]
    return tuple(str(k) for k in keys if old.get(k, ABSENT) != new.get(k, ABSENT))


def _leaves(fields: dict, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in fields.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            yield from _leaves(value, path)
        else:
            yield path, _plain(value)


def _at(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return ABSENT
        data = data[part]
    return data


def _plain(value: Any) -> Any:
    """The edit's value as the document would hold it: ``None`` removes the field."""
    return ABSENT if value is None else value


def _yours_for(verb: str, old: Any, args: dict) -> Any:
    if verb == "update" and isinstance(args.get("fields"), dict) and isinstance(old, dict):
        return {**old, **args["fields"]}
    return ABSENT if verb == "delete" else old
