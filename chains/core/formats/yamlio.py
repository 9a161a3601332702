"""Safe YAML reading with limits and line numbers for every value.

PyYAML's safe loader is the parser; this module adds what untrusted input
needs: a bound on aliases (an alias bomb expands when the data is walked
later, not when it is parsed), a bound on nesting depth, refusal of
duplicate mapping keys (PyYAML keeps the last one silently), and a map from
each value's path to the line and column where it was written, so
validation errors can point at the text.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import DocumentError, Problem

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "Located", "parse_yaml"]

MAX_ALIASES = 100
MAX_DEPTH = 50

Path = tuple[str | int, ...]
Located = tuple[Any, dict[Path, tuple[int, int]]]


class _Loader(yaml.SafeLoader):
    """Counts aliases while composing; refuses more than MAX_ALIASES."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise yaml.MarkedYAMLError(
                    problem=f"more than {MAX_ALIASES} aliases; refusing to expand them",
                    problem_mark=mark,
                )
        return super().compose_node(parent, index)


def parse_yaml(text: str, *, first_line: int = 1) -> Located:
    """Parse one YAML document into plain data plus the location of each value.

    ``first_line`` is the line number of ``text``'s first line in the file it
    came from (YAML blocks inside Markdown start mid-file). Raises
    :class:`DocumentError` with a line and column on malformed YAML, too many
    aliases, nesting deeper than :data:`MAX_DEPTH` or duplicate keys.

    >>> data, where = parse_yaml("a:\\n  b: [1, 2]\\n")
    >>> data, where[("a", "b", 1)]
    ({'a': {'b': [1, 2]}}, (2, 10))
    """
    offset = first_line - 1
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark else None
        column = mark.column + 1 if mark else None
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "malformed YAML"
        raise DocumentError([Problem(f"malformed YAML: {message}", line, column)]) from None
    except yaml.YAMLError as exc:
        raise DocumentError([Problem(f"malformed YAML: {exc}", first_line)]) from None
    finally:
        loader.dispose()
    if node is None:
        return None, {}
    where: dict[Path, tuple[int, int]] = {}
    data = _Builder(where, offset).build(node, (), 0)
    return data, where


class _Builder:
    """Turns a composed node tree into plain data, recording locations."""

    def __init__(self, where: dict[Path, tuple[int, int]], offset: int):
        self.where = where
        self.offset = offset
        self.scalars = SafeConstructor()
        self.active: set[int] = set()

    def fail(self, node: Node, message: str) -> DocumentError:
        mark = node.start_mark
        return DocumentError([Problem(message, mark.line + 1 + self.offset, mark.column + 1)])

    def build(self, node: Node, path: Path, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(node, f"nesting deeper than {MAX_DEPTH} levels")
        self.where[path] = (node.start_mark.line + 1 + self.offset, node.start_mark.column + 1)
        if isinstance(node, ScalarNode):
            value = self.scalars.construct_object(node, deep=True)
            # Dates and times stay text: documents carry them as written.
            if not isinstance(value, (str, int, float, bool, type(None))):
                return node.value
            return value
        if id(node) in self.active:
            raise self.fail(node, "a recursive alias refers to itself")
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
            if isinstance(node, MappingNode):
                return self.mapping(node, path, depth)
        finally:
            self.active.discard(id(node))
        raise self.fail(node, f"unsupported YAML node {node.tag}")

    def mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        self.scalars.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, "a mapping key must be a plain value")
            key = self.scalars.construct_object(key_node)
            key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}")
            out[key] = self.build(value_node, (*path, key), depth + 1)
        return out
