"""Elements as a compile document writes them, and their one-by-one validation.

An :class:`Item` is one handle, action, gate, verdict row, ``known_unmatched``
entry, policy or variants block, with the data as written and where each
part of it sits in the file. A :class:`Context` holds the items of one chain
scope (or of the parts every chain shares). :func:`validate_item` checks an
item against its model and salvages what it can: an invalid field is dropped
with an error naming its path and line, an element missing a required field
is left out; unknown keys stay in ``extras`` with an info.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import Problem
from ..model import Action, Gate, Handle, KnownUnmatched, Policy, Variants, VerdictRow
from ..paths import ElementPath
from .md_outline import Heading
from .validation import error_message, extras_problems, locate, source_path, unreadable_problems

__all__ = ["MODELS", "SECTIONS", "Context", "Item", "item_name", "validate_item"]

LIST_SECTIONS = ("handles", "actions", "gates", "verdict_table", "known_unmatched")
SECTIONS = (*LIST_SECTIONS, "policy", "variants")
MODELS: dict[str, type[BaseModel]] = {
    "handles": Handle,
    "actions": Action,
    "gates": Gate,
    "verdict_table": VerdictRow,
    "known_unmatched": KnownUnmatched,
    "policy": Policy,
    "variants": Variants,
}


@dataclass
class Item:
    """One element as written: its data and where each part of it is."""

    section: str
    data: Any
    where: dict
    path: tuple
    line: int | None
    key: str | None = None  # the id, when known
    value: Any = None  # the validated model, once validated
    checked: bool = False
    per_scope: dict[str, str] = field(default_factory=dict)  # a row's verdict per scope label


@dataclass
class Context:
    """The definitions of one chain scope (or of the shared parts).

    ``label`` is the scope's short name (``M`` of ``Chain M``); ``line`` is
    where the scope is first named (its heading, or a marker comment).
    """

    name: str
    heading: Heading | None = None
    label: str | None = None
    line: int | None = None
    title: str | None = None
    description: str | None = None
    items: dict[str, list[Item]] = field(default_factory=lambda: {s: [] for s in SECTIONS})
    keys: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> dict[str, Item]:
        """This scope's verdict rows by id."""
        return {
            i.value.id: i for i in self.items["verdict_table"] if i.value is not None and i.value.id
        }

    def ids(self, section: str) -> dict[str, Item]:
        out: dict[str, Item] = {}
        for item in self.items[section]:
            if item.value is not None and getattr(item.value, "id", None):
                out.setdefault(item.value.id, item)
        return out


def item_path(item: Item) -> ElementPath:
    """Where ``item`` lands in the chain: ``actions[book]``, ``policy``; its section when
    it has no key yet."""
    section = ElementPath.root(item.section)
    return section.item(item.key) if item.key and item.section not in _WHOLE else section


def item_name(item: Item) -> str:
    """``item`` as messages name it: its path, or its section and line when it has no key."""
    if item.key or item.section in _WHOLE:
        return str(item_path(item))
    return f"{item.section} at line {item.line}"


_WHOLE = ("policy", "variants")


def validate_item(item: Item, problems: list[Problem]) -> Any:
    """Validate ``item`` once; returns its model value, or None when left out."""
    if item.checked:
        return item.value
    item.checked = True
    model = MODELS[item.section]
    name = item_name(item)
    if item.section in ("handles", "actions", "gates") and not isinstance(item.data, dict):
        problems.append(
            Problem(
                f"{name} should be a mapping, got {type(item.data).__name__}; not imported",
                item.line,
                path=str(item_path(item)),
            )
        )
        return None
    data = copy.deepcopy(item.data)
    salvage = _Salvage(item, name, model, data, problems)
    for _ in range(12):
        try:
            item.value = model.model_validate(data)
            break
        except ValidationError as exc:
            if not salvage.prune(exc):
                return None
    else:
        return None
    rel = {
        k[len(item.path) :]: v for k, v in item.where.items() if k[: len(item.path)] == item.path
    }
    base = item_path(item)
    found = [
        *extras_problems(item.value, rel, base=base),
        *unreadable_problems(item.value, rel, base),
    ]
    problems += [replace(p, line=p.line or item.line) for p in found]
    return item.value


class _Salvage:
    """Drops the invalid parts of one element's data, reporting each once."""

    def __init__(self, item: Item, name: str, model, data: Any, problems: list[Problem]):
        self.item, self.name, self.model, self.data = item, name, model, data
        self.problems = problems
        self.origin = _origins(data)
        self.reported: set[tuple] = set()

    def prune(self, exc: ValidationError) -> bool:
        """Drop what ``exc`` names; False when the element cannot be kept."""
        pruned = False
        for err in exc.errors(include_url=False):
            loc = source_path(self.data, tuple(err["loc"]))
            parent, key, orig = _target(self.data, loc, self.origin)
            line, column = locate(self.item.where, (*self.item.path, *orig))
            path = str(item_path(self.item).join(ElementPath.from_location(orig, self.item.data)))
            fields = self.model.model_fields
            required = (
                parent is self.data
                and isinstance(key, str)
                and key in fields
                and fields[key].is_required()
            )
            if parent is None or required or key is None:
                message = f"{error_message(dict(err))}; {self.name} not imported"
                self.problems.append(Problem(message, line or self.item.line, column, path))
                return False
            if orig not in self.reported:
                self.reported.add(orig)
                message = (
                    f"{error_message(dict(err))}; the value is dropped, "
                    f"the rest of {self.name} imported"
                )
                self.problems.append(Problem(message, line or self.item.line, column, path))
            try:
                del parent[key]
                pruned = True
            except (KeyError, IndexError, TypeError):
                continue
        return pruned


def _origins(data: Any) -> dict[int, tuple]:
    """``id(container) → its path`` in ``data``, to report paths after pruning."""
    out: dict[int, tuple] = {}
    stack: list[tuple[Any, tuple]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            out[id(node)] = path
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list):
            out[id(node)] = path
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
    return out


def _target(data: Any, loc: tuple, origin: dict[int, tuple]):
    """The container and key to drop for an error at ``loc``, and its original path.

    The key is the deepest part of ``loc`` that exists in ``data`` (a missing
    field's error drops the mapping that lacks it).
    """
    if not loc:
        return None, None, ()
    node, parent, key = data, None, None
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            parent, key, node = node, part, node[part]
        else:
            break
    if parent is None:
        return None, None, ()
    base = origin.get(id(parent), ())
    return parent, key, (*base, key)
