"""Safe YAML reading with limits and line numbers for every value.

PyYAML's safe loader is the parser; this module adds what untrusted input
needs: a bound on aliases and on how much they expand (an alias bomb is
small when parsed and huge when walked), a bound on nesting depth checked
while parsing (PyYAML's composer recurses, so a deep document would
otherwise exhaust the stack), refusal of duplicate mapping keys (PyYAML
keeps the last one silently), and a map from each value's path to the line
and column where it was written, so validation errors can point at the
text.

PyYAML drops comments; :func:`comments` finds them (a ``#`` at the start
of a line or after a space, outside every scalar PyYAML scanned), and
:func:`comment_notes` hands each run of them to the element whose lines
hold it, which is how compile authors' remarks become ``notes``.

Depth counts nested collections: the top-level mapping is level 1, a list
inside it level 2, and so on; scalars do not add a level.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import DocumentError, Problem

__all__ = [
    "refuse_nul",
    "MAX_ALIASES",
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "Comment",
    "Located",
    "comment_notes",
    "comments",
    "json_locations",
    "parse_yaml",
]

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


# libyaml parses about fifty times faster than PyYAML's pure-Python reader, which at
# the upload limit would take most of a request's time; it is used when installed.
_FAST = hasattr(yaml, "CSafeLoader")
# Malformed text is read again by PyYAML for its messages (the ones the tests and
# the docs show), up to this size; past it libyaml's own message is given.
_FAST_MESSAGES_FROM = 200_000


def _compose_fast(text: str) -> Node | None:
    """The node tree of ``text`` composed by libyaml, with the limits checked first.

    The events are read once (flat, so a deep document cannot exhaust the
    stack) to count aliases and nesting; only then does libyaml compose.
    None when libyaml refuses a small text, so the caller composes it again
    with PyYAML for PyYAML's message.
    """
    aliases = depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise _LimitError(
                        problem=f"more than {MAX_ALIASES} aliases; refusing to expand them",
                        problem_mark=_mark(event),
                    )
            elif isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _LimitError(
                        problem=f"nesting deeper than {MAX_DEPTH} levels of mappings and lists",
                        problem_mark=_mark(event),
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.compose(text, Loader=yaml.CSafeLoader)
    except _LimitError:
        raise
    except yaml.YAMLError:
        if len(text) <= _FAST_MESSAGES_FROM:
            return None
        raise


def _mark(event: yaml.Event) -> yaml.error.Mark | None:
    """libyaml's mark of ``event`` as PyYAML's (both give the line and column)."""
    m = event.start_mark
    return yaml.error.Mark("<text>", m.index, m.line, m.column, None, 0) if m else None


def json_locations(text: str) -> dict[Path, tuple[int, int]]:
    """The location of each value of a JSON text that ``json.loads`` already read.

    JSON is YAML, so the YAML reader finds the lines; but the pure-Python
    reader costs about ten microseconds a byte, which at the upload limit is
    most of a request's time. JSON has no aliases, and the caller has
    checked its depth, so the limits :func:`parse_yaml` enforces while
    composing have nothing to catch: libyaml composes it when installed.
    Empty when the YAML reader disagrees with the JSON one.

    >>> json_locations('{"a": [1, {"b": 2}]}')[("a", 1, "b")]
    (1, 17)
    """
    loader = getattr(yaml, "CSafeLoader", _Loader)
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return {}
    where: dict[Path, tuple[int, int]] = {}
    if node is not None:
        try:
            _Builder(where, 0).build(node, (), 0)
        except DocumentError:
            return {}
    return where


def parse_yaml(text: str, *, first_line: int = 1) -> Located:
    """Parse one YAML document into plain data plus the location of each value.

    ``first_line`` is the line number of ``text``'s first line in the file it
    came from (YAML blocks inside Markdown start mid-file). A block
    collection under a key is located at its key (``room:`` rather than
    the first line inside it), so an element's span starts where it is
    named. Raises
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
        node = _compose_fast(text) if _FAST else None
        if node is None:
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
    refuse_nul(data, where)
    return data, where


def refuse_nul(data: Any, where: dict[Path, tuple[int, int]]) -> None:
    """Refuse a document with a NUL character in any key or string (a ``\\0`` escape).

    No database we store in can hold one (PostgreSQL refuses it in text and
    JSON), so it is a problem of the document, named where it is.

    >>> refuse_nul({"a": ["ok", "b\\x00d"]}, {("a", 1): (3, 5)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.errors.DocumentError: line 3, column 5: a[1]: a NUL character ...
    """
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                stack.append(((*path, key), value))
                if isinstance(key, str) and "\x00" in key:
                    stack.append(((*path, key), key))
        elif isinstance(node, list):
            stack.extend(((*path, i), item) for i, item in enumerate(node))
        elif isinstance(node, str) and "\x00" in node:
            shown = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
            message = "a NUL character (\\u0000 or \\0) cannot be stored; remove it"
            line, column = where.get(path, (None, None))
            raise DocumentError([Problem(message, line, column, path=shown)])


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
            if isinstance(value_node, (MappingNode, SequenceNode)) and (
                value_node.start_mark.line > key_node.start_mark.line
            ):
                mark = key_node.start_mark
                self.where.setdefault((*path, key), (mark.line + 1 + self.offset, mark.column + 1))
            out[key] = self.build(value_node, (*path, key), depth + 1)
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise self.fail(source, "'<<' merges a mapping or a list of mappings")
                for key, value in self.build(source, path, depth).items():
                    out.setdefault(key, value)
        return out


# --- comments --------------------------------------------------------------


@dataclass(frozen=True)
class Comment:
    """One comment: its file line and column, its text without ``#``.

    ``key`` is the mapping key its line starts with when the comment trails
    a ``key: value`` line (``effect: read  # why``); ``trailing`` says the
    comment follows content on its line, and ``indent`` is the column that
    content starts at (the comment's own column otherwise).
    """

    line: int
    column: int
    text: str
    trailing: bool = False
    key: str | None = None
    indent: int = 1


_SPANNING = (
    yaml.ScalarToken,
    yaml.AnchorToken,
    yaml.AliasToken,
    yaml.TagToken,
    yaml.DirectiveToken,
)
_RULE = re.compile(r"^\s*[=\-─━═~*_]{3,}|[=\-─━═~*_]{3,}\s*$")  # ``=== COMMIT #1 ===``
_HASH = re.compile(r"(?:^|(?<=[ \t]))#", re.MULTILINE)


def comments(text: str, *, first_line: int = 1) -> list[Comment]:
    """The comments of a YAML text, in order; ``[]`` when it does not scan.

    A ``#`` starts a comment at the start of a line or after a space or tab,
    and never inside a scalar (quoted, plain or block).

    >>> [(c.line, c.key, c.text) for c in comments("a: 'x # y'  # why\\nb: u#v\\n# own\\n")]
    [(1, 'a', 'why'), (3, None, 'own')]
    """
    offset = first_line - 1
    if not _HASH.search(text):
        return []  # nothing could start a comment: no need to scan
    inside = bytearray(len(text) + 1)
    first_key: dict[int, str | None] = {}  # the key each line starts with, if any
    try:
        tokens = list(yaml.scan(text, Loader=yaml.CSafeLoader if _FAST else yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    for k, token in enumerate(tokens):
        start, end = token.start_mark, token.end_mark
        if isinstance(token, _SPANNING):
            inside[start.index : end.index] = b"\x01" * (end.index - start.index)
        if start.line in first_key:
            continue
        if isinstance(token, yaml.KeyToken):
            following = tokens[k + 1] if k + 1 < len(tokens) else None
            scalar = isinstance(following, yaml.ScalarToken)
            first_key[start.line] = str(following.value) if scalar else None  # type: ignore[union-attr]
        elif start.index < end.index:  # ``- {a: b}``, a bare value
            first_key[start.line] = None
    found: list[Comment] = []
    line, counted, last_line = 0, 0, -1
    for match in _HASH.finditer(text):
        at = match.start()
        line, counted = line + text.count("\n", counted, at), at
        if inside[at] or line == last_line:
            continue
        last_line = line
        begin = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        body = _RULE.sub("", text[at : end if end >= 0 else len(text)].lstrip("#")).strip()
        before = text[begin:at]
        trailing = bool(before.strip())
        key = first_key.get(line) if trailing else None
        indent = len(before) - len(before.lstrip()) + 1
        found.append(Comment(line + 1 + offset, at - begin + 1, body, trailing, key, indent))
    return found


def comment_notes(
    found: list[Comment], where: dict[Path, tuple[int, int]], elements: list[Path], last_line: int
) -> dict[Path, list[str]]:
    """The notes of each element: the comments inside its lines, one per run.

    An element's lines run from where it is named to the line before the
    next thing ``where`` locates outside it (a sibling, the next section),
    or to ``last_line``; a comment below the element's last value that is
    indented less than the element belongs to what follows, not to it.
    A comment line that goes on with the one above (see :func:`_continues`)
    joins its note; a trailing comment on a ``key:`` line inside the element
    is prefixed with that key's path (``effect: another cached result set``).

    >>> text = "a:\\n  x: 1  # about x\\n        # more\\nb: 2  # about b\\n"
    >>> data, where = parse_yaml(text)
    >>> comment_notes(comments(text), where, [("a",), ("b",)], 4)
    {('a',): ['x: about x more'], ('b',): ['about b']}
    """
    located = sorted(((line, path) for path, (line, _) in where.items()), key=_shallow_first)
    lines = [line for line, _ in located]
    found = sorted(found, key=lambda c: c.line)
    comment_lines = [c.line for c in found]
    out: dict[Path, list[str]] = {}
    for element in elements:
        if element not in where:
            continue
        start, column = where[element]
        n = len(element)
        end, last_value = last_line, start
        keyed: dict[int, Path] = {}  # the shallowest path inside the element on each line
        for k in range(bisect_left(lines, start), len(located)):
            line, path = located[k]
            if path[:n] == element:
                last_value = max(last_value, line)
                keyed.setdefault(line, path[n:])
            elif line > start:  # content is contiguous: the first outsider ends it
                end = line - 1
                break
        mine = [
            c
            for c in found[bisect_left(comment_lines, start) : bisect_right(comment_lines, end)]
            if c.line <= last_value or c.column >= column
        ]
        notes = _runs(mine, start, keyed)
        if notes:
            out[element] = notes
    return out


def _runs(found: list[Comment], first: int, keyed: dict[int, Path]) -> list[str]:
    """Join comment runs into notes; ``keyed`` is the shallowest path on each line."""
    notes: list[str] = []
    previous: Comment | None = None
    for c in found:
        if previous is not None and c.text and _continues(previous, c, notes[-1]):
            notes[-1] = f"{notes[-1]} {c.text}"
        elif c.text:
            prefix = f"{_dotted(keyed.get(c.line), c.key)}: " if c.key and c.line != first else ""
            notes.append(prefix + c.text)
        previous = c if c.text else None
    return notes


_CONNECTIVES = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "as",
        "on",
        "in",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "but",
        "that",
        "is",
        "are",
        "when",
        "while",
        "if",
        "every",
    }
)


def _continues(previous: Comment, c: Comment, so_far: str) -> bool:
    """Whether ``c`` goes on with the remark ``previous`` began on the line above.

    Comment lines at one column go on with each other; a comment line hung
    to the right of the code goes on with the trailing comment above it; a
    trailing comment goes on with the one above it (same column) only when
    that one is plainly unfinished: it ends in ``,``, a dash, an open
    parenthesis or a word such as ``of`` or ``every``.
    """
    if c.line != previous.line + 1:
        return False
    if not c.trailing:
        return c.column > previous.indent if previous.trailing else c.column == previous.column
    if not previous.trailing or c.column != previous.column:
        return False
    words = so_far.split()
    return (
        so_far.endswith((",", "—", "–", "-", "/", "+", "(", "→"))
        or bool(words)
        and words[-1].lower() in _CONNECTIVES
        or so_far.count("(") > so_far.count(")")
    )


def _shallow_first(entry: tuple[int, Path]) -> tuple[int, int]:
    return entry[0], len(entry[1])


def _dotted(path: Path | None, key: str) -> str:
    """``('confirmation', 'probe')`` → ``confirmation.probe``; the bare key otherwise."""
    if not path or path[-1] != key:
        return key
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
