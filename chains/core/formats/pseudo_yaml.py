"""Rewrite the "pseudo-YAML" of compile documents into YAML PyYAML accepts.

Compile documents (SPEC v0.4 worked examples, chain-compile output) write
verdicts and types the way a person reads them, not the way YAML parses
them: ``route: repair(to: search, fields: [dates])`` inside a flow mapping,
``{type: enum[a, b], required: false}``, ``old: money?``, ``mode: keyed,
key_scope: run``. This module quotes exactly those scalars so the strict
reader in :mod:`.yamlio` can parse the block, and nothing else.

Assumptions worth knowing before editing:

* The rewrite never adds or removes a line: every quoted span keeps its line
  breaks (a double-quoted YAML scalar folds them into spaces), so line
  numbers reported by the parser stay those of the original file.
* Only scalars that would not parse, or would parse into something else,
  are touched; valid YAML passes through unchanged (columns after a quoted
  span on the same line shift by the added quote characters).
* Comments inside a quoted span (a verdict broken over lines with a comment
  after the comma) are blanked to spaces and listed as ``comment`` fixes,
  so they can still become notes; comments elsewhere stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Fix", "normalize", "rewrite"]


@dataclass(frozen=True)
class Fix:
    """One rewrite: where it starts (1-based, relative to the text) and why."""

    line: int
    column: int
    kind: str  # "quoted-mapping" | "comment" (blanked inside a quoted span)
    text: str


_KEY = re.compile(
    r"""(?P<key>"[^"\n]*"|'[^'\n]*'|[^\s#'"{}\[\],&*!|>%@`-][^\n#]*?|-[^\s\n#][^\n#]*?)
        [ \t]*:(?=[ \t]|$)""",
    re.VERBOSE,
)
_IDENT_CALL = re.compile(r"[A-Za-z_][\w.\-]*[(\[]")


def normalize(text: str) -> str:
    """Return ``text`` with the dialect's unparseable scalars quoted.

    >>> normalize("a: {route: repair(to: s, fields: [x])}")
    'a: {route: "repair(to: s, fields: [x])"}'
    >>> normalize("t: {type: enum[a, b], required: false}")
    't: {type: "enum[a, b]", required: false}'
    """
    return rewrite(text)[0]


def rewrite(text: str) -> tuple[str, list[Fix]]:
    """Like :func:`normalize`, also listing each rewrite that changed meaning.

    Quoting a verdict or a type changes nothing a reader meant, so only
    rewrites a reader may want to check are listed: a block value holding
    ``key: value`` pairs, read as one string, and a comment blanked inside a
    quoted span (its text, without ``#``).
    """
    scanner = _Scanner(text)
    scanner.run()
    out, pos = [], 0
    for start, end, replacement in sorted(scanner.edits):
        if start < pos:  # overlapping edit: keep the first
            continue
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    result = "".join(out)
    assert result.count("\n") == text.count("\n"), "rewrite must keep line numbers"
    return result, scanner.fixes


def _quote(span: str) -> str:
    return '"' + span.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Scanner:
    """A small hand-written scanner: block lines, flow collections, quotes."""

    def __init__(self, text: str):
        self.text = text
        self.n = len(text)
        self.edits: list[tuple[int, int, str]] = []
        self.fixes: list[Fix] = []

    # --- helpers ---------------------------------------------------------

    def where(self, pos: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return line, column

    def eol(self, pos: int) -> int:
        end = self.text.find("\n", pos)
        return self.n if end < 0 else end

    def skip_quoted(self, pos: int) -> int:
        """``pos`` at a quote; return the position after its closing quote."""
        quote = self.text[pos]
        i = pos + 1
        while i < self.n:
            ch = self.text[i]
            if quote == '"' and ch == "\\":
                i += 2
                continue
            if ch == quote:
                if quote == "'" and self.text[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return self.n

    def comment_at(self, pos: int) -> bool:
        return self.text[pos] == "#" and (pos == 0 or self.text[pos - 1] in " \t\n")

    def quote_span(self, start: int, end: int, comments: list[tuple[int, int]]) -> None:
        span = list(self.text[start:end])
        for c_start, c_end in comments:  # blank comments inside the span
            for k in range(c_start - start, c_end - start):
                span[k] = " "
            line, column = self.where(c_start)
            text = self.text[c_start:c_end].lstrip("#").strip()
            self.fixes.append(Fix(line, column, "comment", text))
        body = "".join(span).rstrip()
        self.edits.append((start, start + len(body), _quote(body)))

    # --- block context ---------------------------------------------------

    def run(self) -> None:
        pos = 0
        while pos < self.n:
            pos = self.line(pos)

    def line(self, pos: int) -> int:
        """Scan one block-context line starting at ``pos``; return the next position."""
        end = self.eol(pos)
        i = pos
        while i < end and self.text[i] in " \t":
            i += 1
        indent = i - pos
        # Sequence dashes ("- - key: value") and explicit key indicators ("? key", ": value").
        while i < end and self.text[i] in "-?:" and (i + 1 == end or self.text[i + 1] in " \t"):
            i += 1
            while i < end and self.text[i] in " \t":
                i += 1
        if i >= end or self.comment_at(i):
            return end + 1
        m = _KEY.match(self.text, i, end)
        if m and self.text[i] not in "{[":
            i = m.end()
            while i < end and self.text[i] in " \t":
                i += 1
            if i >= end or self.comment_at(i):
                return end + 1
        return self.value(i, end, indent)

    def value(self, i: int, end: int, indent: int) -> int:
        ch = self.text[i]
        if ch in "{[":
            after = self.flow(i)
            return self.eol(after) + 1
        if ch in "\"'":
            after = self.skip_quoted(i)
            return self.eol(after) + 1
        if ch in "|>":
            return self.block_scalar(end, indent)
        if ch in "&*!":
            return end + 1
        if _IDENT_CALL.match(self.text, i):
            stop, comments = self.pseudo_scalar(i, in_flow=False)
            self.quote_span(i, stop, comments)
            return self.eol(stop) + 1 if stop < self.n else self.n
        # A plain value running to the end of the line (minus its comment).
        j = i
        while j < end and not self.comment_at(j):
            j += 1
        value = self.text[i:j].rstrip()
        if ch in "`@%" or re.search(r":[ \t]", value):
            if re.search(r":[ \t]", value) and ch not in "`@%":
                line, column = self.where(i)
                self.fixes.append(Fix(line, column, "quoted-mapping", value))
            self.edits.append((i, i + len(value), _quote(value)))
        return end + 1

    def block_scalar(self, end: int, indent: int) -> int:
        """Skip a literal/folded scalar: the lines indented deeper than its key."""
        pos = end + 1
        while pos < self.n:
            line_end = self.eol(pos)
            body = self.text[pos:line_end]
            if body.strip() and len(body) - len(body.lstrip(" ")) <= indent:
                return pos
            pos = line_end + 1
        return self.n

    # --- flow context ----------------------------------------------------

    def flow(self, pos: int) -> int:
        """``pos`` at ``{`` or ``[``; quote pseudo scalars up to the matching close."""
        depth = 0
        i = pos
        expect_scalar = False
        opened: list[int] = []
        while i < self.n:
            ch = self.text[i]
            if ch in "{[":
                depth += 1
                opened.append(i)
                expect_scalar = True
                i += 1
            elif ch in "}]":
                depth -= 1
                start = opened.pop() if opened else pos
                i += 1
                if depth == 0:
                    return i
                if self.text[i : i + 1] == "?":  # an optional nested type: {a: b}?
                    i += 1
                    self.edits.append((start, i, _quote(self.text[start:i])))
                expect_scalar = False
            elif ch == "," or ch == ":" and (i + 1 >= self.n or self.text[i + 1] in " \t\n"):
                expect_scalar = True
                i += 1
            elif ch in " \t\n\r":
                i += 1
            elif self.comment_at(i):
                i = self.eol(i)
            elif ch in "\"'":
                i = self.skip_quoted(i)
                expect_scalar = False
            else:
                if not expect_scalar:
                    i += 1
                    continue
                stop, comments = self.pseudo_scalar(i, in_flow=True)
                span = self.text[i:stop].rstrip()
                if re.search(r"[()?`@]|[\w\]]\[", span) or span[:1] in "`@%|>":
                    self.quote_span(i, stop, comments)
                i = stop
                expect_scalar = False
        return self.n

    def pseudo_scalar(self, pos: int, *, in_flow: bool) -> tuple[int, list[tuple[int, int]]]:
        """Scan a scalar that may hold balanced ``(...)``/``[...]``; return its end.

        At nesting depth 0 a flow scalar ends at ``,``, ``]``, ``}``, a key's
        ``:`` or a comment; a block scalar at the end of the line or a
        comment. Inside parentheses it may cross lines; comments met there
        are returned so the quoted span can blank them.
        """
        depth = 0
        i = pos
        comments: list[tuple[int, int]] = []
        while i < self.n:
            ch = self.text[i]
            if depth == 0:
                if in_flow and ch in ",]}":
                    return i, comments
                if in_flow and ch == ":" and (i + 1 >= self.n or self.text[i + 1] in " \t\n"):
                    return i, comments
                if self.comment_at(i):
                    return i, comments
                if ch == "\n" and not in_flow:
                    return i, comments
                if ch == "(" or (ch == "[" and i > pos and re.match(r"[\w\]]", self.text[i - 1])):
                    depth += 1
                elif ch in "\"'" and i > pos and self.text[i - 1] in ":=":
                    i = self.skip_quoted(i)
                    continue
                i += 1
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch in "\"'":
                i = self.skip_quoted(i)
                continue
            elif self.comment_at(i):
                c_end = self.eol(i)
                comments.append((i, c_end))
                i = c_end
                continue
            i += 1
        return self.n, comments
