"""Element paths: the one way every place in a chain is written, read and shown.

A path names a place in a chain document the way a person does: an element
that has an id by that id in brackets (``actions[book]``,
``verdict_table[F3]``), a list item without one by its 1-based position
(``verdict_table[#4]``, ``actions[book].preconditions[#2]``), and fields
with dots (``actions[book].effect``, ``policy.per_step``,
``gates[consent].outcomes.ok``). Edit refusals, load problems, lint
findings, a run's causes, references, SARIF and the API's ``location`` all
write this one spelling, and :class:`ElementPath` is the only code that
builds or reads it. The "id, else ``#n``" rule (:func:`item_ref`,
:func:`ref_position`, :func:`find_item`) and the map between an element's
kind and its document section (:data:`SECTIONS`) live here too.

This module knows the shape of a path, not the model: it never imports
:mod:`chains.core.model`, so the model can use it. Ids may hold any
character but ``]``; a path whose id holds one is refused when read back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ChainError
from .keys import GraphKey

__all__ = [
    "KINDS",
    "SECTIONS",
    "ElementPath",
    "PathError",
    "find_item",
    "item_ref",
    "ref_position",
]

# An element kind (as a graph key names it) and the document section that lists it.
SECTIONS = {"action": "actions", "handle": "handles", "gate": "gates", "row": "verdict_table"}
KINDS = {section: kind for kind, section in SECTIONS.items()}

_SECTION_PARTS = {(section,) for section in KINDS}
_FIELD = re.compile(r"[^.\[\]]+")
_ITEM = re.compile(r"\[([^\[\]]+)\]")


class PathError(ChainError, ValueError):
    """A text is not an element path; the message says what is wrong and where."""


def item_ref(ident: Any, n: int) -> str:
    """List item ``n`` (1-based) as a path names it: its id when it has one, else ``#n``.

    >>> item_ref("D3", 3), item_ref(None, 4)
    ('D3', '#4')
    """
    if n < 1:
        raise PathError(f"a list position counts from 1, got {n}")
    return ident if isinstance(ident, str) and ident else f"#{n}"


def ref_position(ref: str) -> int | None:
    """The 1-based position a ``#n`` reference names, or None for an id.

    >>> ref_position("#4"), ref_position("D4"), ref_position("#0")
    (4, None, None)
    """
    digits = ref.removeprefix("#")
    if ref.startswith("#") and digits.isdigit() and digits.isascii() and int(digits) > 0:
        return int(digits)
    return None


def _ident(item: Any) -> Any:
    return item.get("id") if isinstance(item, dict) else getattr(item, "id", None)


def find_item(items: Sequence[Any], ref: str) -> int | None:
    """The 0-based position of the item ``ref`` names (the first with that id, or ``#n``).

    Works on plain documents (dicts) and on parsed models alike.

    >>> rows = [{"id": "D1"}, {"verdict": "retry"}]
    >>> find_item(rows, "D1"), find_item(rows, "#2"), find_item(rows, "#3"), find_item(rows, "X")
    (0, 1, None, None)
    """
    n = ref_position(ref)
    if n is not None:
        return n - 1 if n <= len(items) else None
    return next((i for i, item in enumerate(items) if _ident(item) == ref), None)


@dataclass(frozen=True)
class ElementPath:
    """A place in a chain; ``str(path)`` is its one spelling.

    ``parts`` holds field names and, for list items, the item's reference
    in brackets (``"[book]"``, ``"[#2]"``).

    >>> path = ElementPath.action("book").field("effect")
    >>> str(path), path.graph_key()
    ('actions[book].effect', GraphKey(kind='action', name='book', source='', target='', verdict=''))
    >>> str(ElementPath.row("#4")), str(ElementPath.parse("gates[g].outcomes.ok").element)
    ('verdict_table[#4]', 'gates[g]')
    """

    parts: tuple[str, ...]

    # --- building ------------------------------------------------------------------

    @classmethod
    def root(cls, name: str, *fields: str) -> ElementPath:
        """A top-level field and the fields under it: ``ElementPath.root("policy", "per_step")``."""
        return cls(()).field(name, *fields)

    @classmethod
    def of(cls, kind: str, ref: str) -> ElementPath:
        """The element ``ref`` (id, or ``#n`` for a row) of ``kind`` (``action``, ``row``...)."""
        if kind not in SECTIONS:
            raise PathError(f"{kind!r} is not an element kind ({', '.join(SECTIONS)})")
        return cls.root(SECTIONS[kind]).item(ref)

    @classmethod
    def action(cls, ident: str) -> ElementPath:
        return cls.of("action", ident)

    @classmethod
    def handle(cls, ident: str) -> ElementPath:
        return cls.of("handle", ident)

    @classmethod
    def gate(cls, ident: str) -> ElementPath:
        return cls.of("gate", ident)

    @classmethod
    def row(cls, ref: str) -> ElementPath:
        """A verdict row by its id or ``#n`` (see :func:`item_ref`)."""
        return cls.of("row", ref)

    # Building never refuses a name taken from a document (a gate outcome, a per_step key,
    # an id): a finding about a chain with odd names must still be made. Such a path
    # (an id holding ``]``) is written as it is and only fails to read back.

    def field(self, *names: str) -> ElementPath:
        """This path with ``names`` below it; a dotted name is split at its dots."""
        parts = [*self.parts, *(part for name in names for part in str(name).split("."))]
        return ElementPath(tuple(parts))

    def item(self, ref: str | int) -> ElementPath:
        """The list item ``ref`` below this path: an id, ``#n``, or a 1-based position."""
        if not self.parts:
            raise PathError("a list item needs the field that holds the list")
        text = item_ref(None, ref) if isinstance(ref, int) else str(ref)
        return ElementPath((*self.parts, f"[{text}]"))

    def item_at(self, index: int, item: Any = None) -> ElementPath:
        """The item at 0-based ``index`` of this list, by its id when ``item`` has one."""
        return self.item(item_ref(_ident(item), index + 1))

    def join(self, rest: ElementPath) -> ElementPath:
        """``rest``, a path relative to this one, below it."""
        return ElementPath((*self.parts, *rest.parts))

    @classmethod
    def from_location(cls, loc: Iterable[Any], data: Any = None) -> ElementPath:
        """A validator's location (0-based positions) as a path, read against ``data``.

        ``data`` is the plain document or the models the location points
        into; a position whose item has a string id is written as that id,
        any other as ``#n``.

        >>> str(ElementPath.from_location(("actions", 1, "effect"), {"actions": [{}, {"id": "b"}]}))
        'actions[b].effect'
        >>> str(ElementPath.from_location(("verdict_table", 0, "verdict")))
        'verdict_table[#1].verdict'
        """
        path, node = cls(()), data
        for part in loc:
            child = _child(node, part)
            if isinstance(part, int) and path.parts:
                path = path.item_at(part, child)
            elif path.parts in _SECTION_PARTS and isinstance(part, str):
                path = path.item(part)  # a section written as a mapping: keyed by id
            else:
                path = path.field(str(part))
            node = child
        return path

    # --- reading -------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> ElementPath:
        """The path ``text`` writes; :class:`PathError` naming what is wrong when it is not one.

        >>> ElementPath.parse("actions[book].preconditions[#2]").parts
        ('actions', '[book]', 'preconditions', '[#2]')
        >>> ElementPath.parse("actions.book")
        Traceback (most recent call last):
        ...
        chains.core.paths.PathError: 'actions.book': elements are named in brackets: actions[book]
        """
        if not isinstance(text, str) or not text:
            raise PathError(f"{text!r} is not an element path: it is empty")
        parts: list[str] = []
        at = 0
        while at < len(text):
            if parts and text[at] == ".":
                at += 1
                if at == len(text):
                    raise PathError(f"{text!r} is not an element path: it ends with a dot")
            item = _ITEM.match(text, at)
            name = _FIELD.match(text, at)
            if item and parts:
                parts.append(item.group(0))
                at = item.end()
            elif name and (at == 0 or text[at - 1] == "."):
                parts.append(name.group(0))
                at = name.end()
            else:
                raise PathError(f"{text!r} is not an element path: {_wrong(text, at)}")
        path = cls(tuple(parts))
        if parts[0] in KINDS and len(parts) > 1 and not parts[1].startswith("["):
            example = f"{parts[0]}[{parts[1]}]"
            raise PathError(f"{text!r}: elements are named in brackets: {example}")
        return path

    def __str__(self) -> str:
        out = ""
        for part in self.parts:
            out += part if part.startswith("[") or not out else f".{part}"
        return out

    @property
    def kind(self) -> str | None:
        """The element kind (``action``, ``handle``, ``gate``, ``row``) a path lies in, if any."""
        return KINDS.get(self.parts[0]) if self.parts else None

    @property
    def ref(self) -> str | None:
        """The id (or ``#n``) of the element a path lies in, if it lies in one."""
        if self.kind and len(self.parts) > 1 and self.parts[1].startswith("["):
            return self.parts[1][1:-1]
        return None

    @property
    def element(self) -> ElementPath:
        """The element this path lies in (``actions[book]``), or its top-level field."""
        return ElementPath(self.parts[:2] if self.ref is not None else self.parts[:1])

    @property
    def fields(self) -> tuple[str, ...]:
        """What follows the element: ``('preconditions', '[#2]', 'verdict')``."""
        return self.parts[len(self.element.parts) :]

    @property
    def names(self) -> tuple[str, ...]:
        """Each part as a name: a field's, or an item's id or ``#n`` (brackets dropped)."""
        return tuple(part[1:-1] if part.startswith("[") else part for part in self.parts)

    def location(self, data: Any) -> tuple[Any, ...]:
        """The inverse of :meth:`from_location`: the keys and 0-based positions that lead
        to this place in ``data`` (plain data), as far as ``data`` goes.

        >>> data = {"actions": [{"id": "a"}, {"id": "b", "effect": "read"}]}
        >>> ElementPath.parse("actions[b].effect").location(data)
        ('actions', 1, 'effect')
        >>> ElementPath.parse("actions[#1].missing.deeper").location(data)
        ('actions', 0)
        """
        loc: list[Any] = []
        node = data
        for part, name in zip(self.parts, self.names, strict=True):
            step: Any = name
            if part.startswith("[") and isinstance(node, list):
                step = find_item(node, name)
                if step is None:
                    break
            elif not (isinstance(node, dict) and name in node):
                break  # a mapping-form section is keyed by id, so an item may be a key
            node = node[step]
            loc.append(step)
        return tuple(loc)

    def is_within(self, other: ElementPath) -> bool:
        """Whether this path is ``other`` or lies below it."""
        return self.parts[: len(other.parts)] == other.parts

    def graph_key(self) -> GraphKey | None:
        """The node the drawings and the selection give this path's element, or None.

        >>> str(ElementPath.parse("verdict_table[#4].verdict").graph_key())
        'row:#4'
        >>> ElementPath.root("policy", "per_chain").graph_key() is None
        True
        """
        kind, ref = self.kind, self.ref
        return GraphKey.node(kind, ref) if kind and ref is not None else None


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, dict):
        found = node.get(part)
        if found is None and isinstance(part, int) and 0 <= part < len(node):
            return list(node.values())[part]  # a section written as a mapping: n-th entry
        return found
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    if isinstance(part, str) and node is not None and not isinstance(node, (str, list)):
        return getattr(node, part, None)
    return None


def _wrong(text: str, at: int) -> str:
    char = text[at]
    if char == ".":
        return f"an empty field name at character {at + 1}"
    if char == "[":
        if at == 0:
            return "it starts with [ where a field name belongs"
        if "]" not in text[at:]:
            return f"the [ at character {at + 1} is never closed"
        return f"the brackets at character {at + 1} are empty or nested"
    if char == "]":
        return f"a ] at character {at + 1} closes nothing"
    return f"a field name at character {at + 1} needs a dot before it"
