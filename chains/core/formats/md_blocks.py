"""The fenced YAML blocks of a compile document, read into items.

:func:`parse_block` reads one block through the pseudo-YAML rewrite
(:mod:`.pseudo_yaml`) and the strict YAML reader, with file line numbers.
:func:`is_grammar` spots blocks that illustrate the grammar (placeholders
such as ``read | mint`` or ``<verdict>``) rather than define a chain.
:class:`BlockReader` turns a parsed block into :class:`~.md_items.Item`
objects: it knows the chain sections, a block that continues the list or
mapping an earlier block began, and the comment lines that mark a scope
inside a block (``# ──── Chain R ────``); where an item goes is asked of
the ``route`` callback the importer gives it. The other comments inside
an element become its ``notes`` (:func:`~.yamlio.comment_notes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..errors import DocumentError, Problem
from .arrows import read_arrow_verdicts
from .md_items import SECTIONS, Context, Item
from .md_outline import Node, scope_marker
from .notes import NOTED_SECTIONS, with_notes
from .pseudo_yaml import Fix, rewrite
from .yamlio import Comment, comment_notes, comments, parse_yaml

__all__ = [
    "CHAIN_KEYS",
    "BlockReader",
    "defined_actions",
    "defined_names",
    "defines_actions",
    "is_grammar",
    "is_yaml",
    "markers",
    "parse_block",
]

CHAIN_KEYS = (
    "id",
    "title",
    "description",
    "run_key",
    "spec_version",
    "independence",
    "source",
    "extras",
)
SECTION_ALIASES = {"verdict_rows": "verdict_table", "verdicts": "verdict_table"}
_SINGULAR = {"action", "handle", "gate", "verdict", "row", "outcome"}

Parsed = tuple[Any, dict, list[Comment]]
Route = Callable[[int | None], Context]


def is_yaml(node: Node) -> bool:
    if node.lang in ("yaml", "yml"):
        return True
    if node.lang:
        return False
    return bool(re.match(r"^\s*(?:#.*\n\s*)*(handles|actions|gates|policy|variants):", node.text))


def parse_block(node: Node, problems: list[Problem]) -> Parsed | DocumentError:
    """The data of a YAML block, the file line of each path in it, its comments."""
    rewritten, fixes = rewrite(node.text)
    try:
        data, where = parse_yaml(rewritten, first_line=node.line)
    except DocumentError as exc:
        return exc
    for fix in fixes:
        if fix.kind == "quoted-mapping":
            _split_pairs(data, where, node.line + fix.line - 1, fix.text, problems)
    found = _comments(node, rewritten, [f for f in fixes if f.kind == "comment"])
    problems.extend(read_arrow_verdicts(data, where, found))
    return data, where, found


def _comments(node: Node, rewritten: str, blanked: list[Fix]) -> list[Comment]:
    """The comments of a block, scope markers left out, at their columns in the file."""
    written, read = node.text.split("\n"), rewritten.split("\n")
    ruled = {line for line, _ in markers(node)}
    found = []
    for c in comments(rewritten, first_line=node.line):
        if c.line in ruled:
            continue
        k = c.line - node.line  # a comment runs to the end of its line: quoting shifts it
        found.append(replace(c, column=c.column - len(read[k]) + len(written[k])))
    for fix in blanked:  # inside a verdict broken over lines: about that value
        line = written[fix.line - 1]
        indent = len(line) - len(line.lstrip()) + 1
        found.append(Comment(node.line + fix.line - 1, fix.column, fix.text, True, None, indent))
    return sorted(found, key=lambda c: c.line)


def _split_pairs(data: Any, where: dict, line: int, text: str, problems: list[Problem]) -> None:
    """``mode: keyed, key_scope: run`` written on one line: read it as two keys."""
    parts = [p.strip() for p in text.split(",")]
    matches = [re.fullmatch(r"([A-Za-z_][\w.\-]*):\s*(.+)", p) for p in parts[1:]]
    for path, (at, _) in list(where.items()):
        if at != line or not path:
            continue
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if not isinstance(parent, dict) or parent.get(path[-1]) != text:
            continue
        pairs = [m for m in matches if m is not None]
        if ":" in parts[0] or len(pairs) < len(matches) or any(m[1] in parent for m in pairs):
            break
        parent[path[-1]] = parts[0]
        for m in pairs:
            parent[m[1]] = m[2]
            where[(*path[:-1], m[1])] = where[path]
        message = f"read {text!r} as {len(parts)} keys of one mapping"
        problems.append(Problem(message, line, path=".".join(map(str, path)), severity="info"))
        return
    message = f"read {text!r} as one text value (it holds 'key: value' pairs)"
    problems.append(Problem(message, line, severity="info"))


def is_grammar(node: Node, data: Any) -> bool:
    """A block of placeholders (``effect: read | mint``), not of values."""
    if isinstance(data, dict) and data and set(data) <= _SINGULAR:
        return True
    # A quoted scalar is a value whatever it says ("read | write" in a description).
    body = re.sub(r"""(?<![^\s\[{,])(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*')""", '""', node.text)
    body = re.sub(r"(^|\s)#.*", "", body)
    markers_ = len(
        re.findall(
            r"\b(?:read|mint|keyed|natural|user|operator|webhook|run|reverse|model|"
            r"reexecutes|string|int|bool|duration)\s*\|",
            body,
        )
    )
    markers_ += len(re.findall(r"<[a-z][\w ]* [\w ]*>", body))
    markers_ += len(
        re.findall(
            r":[ \t]*(?:int|bool|duration|string|action_id|handle_id|gate_id)[ \t]*$", body, re.M
        )
    )
    return markers_ >= 3


def markers(node: Node) -> list[tuple[int, str]]:
    """``(file line, scope label)`` of each scope-marker comment in a block.

    The label is ``""`` for a ruled comment that names no scope (it ends the
    marked scope).
    """
    found = []
    for offset, text in enumerate(node.text.split("\n")):
        label = scope_marker(text)
        if label is not None:
            found.append((node.line + offset, label))
    return found


def defines_actions(data: Any) -> bool:
    if isinstance(data, dict) and "actions" in data:
        return True
    return isinstance(data, list) and bool(data) and all(isinstance(x, dict) for x in data)


class BlockReader:
    """Reads parsed blocks into items, remembering the lists blocks begin."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        self.last_list: str | None = None
        self.last_map: str | None = None
        self.comments: list[Comment] = []
        self.last_line = 0

    def problem(self, message: str, line: int | None, severity: str = "warning", **kw) -> None:
        self.problems.append(Problem(message, line, severity=severity, **kw))  # type: ignore[arg-type]

    def read(self, node: Node, parsed: Parsed, context: Context, route: Route) -> None:
        """Take the sections of one block; ``route(line)`` is the context of an item."""
        what = f"YAML block at line {node.line}"
        data, where, self.comments = parsed
        self.last_line = node.line + node.text.count("\n") - 1
        if data is None:
            self.problem(f"{what} is empty", node.line, "info")
            return
        if isinstance(data, list):
            self.read_list(node, data, where, route)
            return
        if not isinstance(data, dict):
            self.problem(
                f"{what} holds a single value, not chain sections; not imported", node.line
            )
            return
        known = [k for k in data if SECTION_ALIASES.get(k, k) in SECTIONS or k in CHAIN_KEYS]
        indented = bool(re.match(r"^(?:\s*#.*\n)*[ \t]+\S", node.text))
        if not known and indented and self.last_map:
            self.problem(
                f"{what} continues the '{self.last_map}' mapping of an earlier block",
                node.line,
                "info",
            )
            self.take_section(route, self.last_map, data, where, (), node.line)
            return
        if not known:
            keys = ", ".join(map(str, data))
            self.problem(f"{what} holds no chain section (keys: {keys}); not imported", node.line)
            return
        for key, value in data.items():
            line = where.get((key,), (node.line, None))[0]
            section = SECTION_ALIASES.get(key, key)
            if section in SECTIONS:
                self.take_section(route, section, value, where, (key,), line)
            elif key in CHAIN_KEYS:
                context.keys[key] = value
            else:
                message = f"unknown top-level key {key!r} in {what}; not imported"
                self.problem(message, line, path=str(key))

    def read_list(self, node: Node, data: list, where: dict, route: Route) -> None:
        """A block that is a bare list continues the list an earlier block began."""
        what = f"YAML block at line {node.line}"
        looks_like_actions = bool(data) and all(isinstance(x, dict) and "effect" in x for x in data)
        section = self.last_list or ("actions" if looks_like_actions else None)
        if section is None:
            message = f"{what} is a list but no earlier block began one; not imported"
            self.problem(message, node.line)
            return
        self.problem(
            f"{what} continues the '{section}' list of an earlier block", node.line, "info"
        )
        self.take_section(route, section, data, where, (), node.line)

    def notes(self, section: str, where: dict, elements: list[tuple]) -> dict[tuple, list]:
        """Comments inside handles, actions, gates and verdict rows (none for others)."""
        if section not in NOTED_SECTIONS:
            return {}
        return comment_notes(self.comments, where, elements, self.last_line)

    def take_section(self, route: Route, section: str, value, where, path, line) -> None:
        if value is None:
            return
        if section in ("policy", "variants"):
            route(None).items[section].append(Item(section, value, where, path, line))
            return
        if isinstance(value, dict) and section in ("handles", "gates", "actions"):
            self.last_map = section
            notes = self.notes(section, where, [(*path, key) for key in value])
            for key, body in value.items():
                at = where.get((*path, key), (line, None))[0]
                data = (
                    {"id": key, **(body or {})} if isinstance(body, dict) or body is None else body
                )
                data = with_notes(data, notes.get((*path, key), []))
                item = Item(section, data, where, (*path, key), at, str(key))
                route(at).items[section].append(item)
            return
        if isinstance(value, list):
            self.last_list = section
            notes = self.notes(section, where, [(*path, i) for i in range(len(value))])
            for i, body in enumerate(value):
                at = where.get((*path, i), (line, None))[0]
                key = body.get("id") if isinstance(body, dict) else None
                data = with_notes(body, notes.get((*path, i), []))
                route(at).items[section].append(Item(section, data, where, (*path, i), at, key))
            return
        self.problem(
            f"'{section}' should be a list or mapping, got {type(value).__name__}; not imported",
            line,
            "error",
            path=section,
        )


def defined_names(blocks: dict[int, Parsed | DocumentError]) -> frozenset[str]:
    """Every id the parsed blocks define: ``- id: x`` items and handle/gate keys."""
    names: set[str] = set()
    stack = [p[0] for p in blocks.values() if isinstance(p, tuple)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("id"), str):
                names.add(node["id"])
            for key, value in node.items():
                if key in ("handles", "gates", "actions") and isinstance(value, dict):
                    names.update(str(k) for k in value)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def defined_actions(blocks: dict[int, Parsed | DocumentError]) -> dict[str, dict]:
    """The action ids the parsed blocks define (``actions:`` items, continued lists too),
    each with its data as first written with an ``effect`` (else as first written).

    A block that continues an earlier list starts with ``- id: x`` items: those
    are counted when they look like actions (they give an ``effect``).
    """
    found: dict[str, dict] = {}

    def add(name: str, data: Any) -> None:
        body = data if isinstance(data, dict) else {}
        if name not in found or ("effect" in body and "effect" not in found[name]):
            found[name] = body

    for parsed in blocks.values():
        if not isinstance(parsed, tuple):
            continue
        data = parsed[0]
        items = data.get("actions") if isinstance(data, dict) else data
        if isinstance(items, dict):
            for key, body in items.items():
                add(str(key), body)
            continue
        for item in items if isinstance(items, list) else []:
            listed = isinstance(data, dict) or (isinstance(item, dict) and "effect" in item)
            if listed and isinstance(item, dict) and isinstance(item.get("id"), str):
                add(item["id"], item)
    return found
