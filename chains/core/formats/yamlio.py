"""Safe YAML reading with limits and line numbers for every value.

PyYAML's safe loader is the parser; this module adds what untrusted input
needs: a bound on aliases and on how much they expand (an alias bomb is
small when parsed and huge when walked), a bound on nesting depth checked
while parsing (PyYAML's composer recurses, so a deep document would
otherwise exhaust the stack), refusal of duplicate mapping keys (PyYAML
keeps the last one silently), and a map from each value's path to the line
and column where it was written, so validation errors can point at the
text.

Depth counts nested collections: the top-level mapping is level 1, a list
inside it level 2, and so on; scalars do not add a level.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import DocumentError, Problem

__all__ = ["MAX_ALIASES", "MAX_ALIAS_EXPANSION", "MAX_DEPTH", "Located", "parse_yaml"]

MAX_ALIASES = 100
MAX_ALIAS_EXPANSION = 10_000  # values produced by repeating aliased content
MAX_DEPTH = 50
_MERGE_TAG = "tag:yaml.org,2002:merge"

Path = tuple[str | int, ...]
Located = tuple[Any, dict[Path, tuple[int, int]]]


class _LimitError(yaml.MarkedYAMLError):
    """A limit was reached: the text may be fine YAML, but it is refused."""


class _Loader(yaml.SafeLoader):
    """Counts aliases while composing; refuses more than MAX_ALIASES."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.aliases = 0
        self.depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise _LimitError(
                    problem=f"more than {MAX_ALIASES} aliases; refusing to expand them",
                    problem_mark=mark,
                )
        elif self.check_event(yaml.CollectionStartEvent):
            if self.depth >= MAX_DEPTH:
                raise _LimitError(
                    problem=f"nesting deeper than {MAX_DEPTH} levels of mappings and lists",
                    problem_mark=self.peek_event().start_mark,
                )
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1
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
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        # The reader refuses control characters before any parsing.
        at = exc.position
        place = text.count("\n", 0, at) + 1 + offset, at - (text.rfind("\n", 0, at) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        message = f"control character U+{code:04X} is not allowed in YAML text"
        raise DocumentError([Problem(message, *place)]) from None
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark else None
        column = mark.column + 1 if mark else None
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "malformed YAML"
        if not isinstance(exc, _LimitError):
            message = f"malformed YAML: {message}"
        raise DocumentError([Problem(message, line, column)]) from None
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
        self.seen: set[int] = set()
        self.expanded = 0

    def fail(self, node: Node, message: str) -> DocumentError:
        mark = node.start_mark
        return DocumentError([Problem(message, mark.line + 1 + self.offset, mark.column + 1)])

    def build(self, node: Node, path: Path, depth: int) -> Any:
        if id(node) in self.seen:  # an alias: its content is built once more
            self.expanded += 1
            if self.expanded > MAX_ALIAS_EXPANSION:
                raise self.fail(
                    node,
                    f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} values; "
                    "refusing to expand them",
                )
        self.seen.add(id(node))
        if isinstance(node, (SequenceNode, MappingNode)) and depth >= MAX_DEPTH:
            # Reached through aliases only: parsing already bounds written depth.
            raise self.fail(node, f"nesting deeper than {MAX_DEPTH} levels of mappings and lists")
        self.where.setdefault(
            path, (node.start_mark.line + 1 + self.offset, node.start_mark.column + 1)
        )
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if id(node) in self.active:
            raise self.fail(node, "a recursive alias refers to itself")
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                items = enumerate(node.value)
                return [self.build(item, (*path, i), depth + 1) for i, item in items]
            if isinstance(node, MappingNode):
                return self.mapping(node, path, depth)
        finally:
            self.active.discard(id(node))
        raise self.fail(node, f"unsupported YAML node {node.tag}")

    def scalar(self, node: ScalarNode) -> Any:
        if node.tag == "tag:yaml.org,2002:value":  # a plain ``=`` is text
            return node.value
        try:
            value = self.scalars.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, KeyError, AttributeError):
            # An explicit tag the text does not fit (``!!int abc``) or one
            # the safe loader does not know (``!!python/object``).
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise self.fail(node, f"cannot read {node.value!r} as {tag}") from None
        # Dates, times and binary stay text: documents carry them as written.
        if not isinstance(value, (str, int, float, bool, type(None))):
            return node.value
        return value

    def mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:  # ``<<: *defaults``; written keys win
                merges.append(value_node)
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, "a mapping key must be a plain value")
            key = self.scalar(key_node)
            key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}")
            out[key] = self.build(value_node, (*path, key), depth + 1)
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise self.fail(source, "'<<' merges a mapping or a list of mappings")
                for key, value in self.build(source, path, depth).items():
                    out.setdefault(key, value)
        return out
