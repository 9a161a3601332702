"""The text of one Markdown table cell: remarks, code spans, quotes and splits.

Verdict-table cells (:mod:`.md_tables`) mix signals with prose: remarks in
parentheses, code spans, quoted provider messages, sets in braces. These
helpers split such a cell only where the author's separators stand outside
code, quotes and brackets, drop its remarks, and find the code spans of a
remark that says what the row includes. They read text only; what a piece
means is :mod:`.md_tables`' business.
"""

from __future__ import annotations

import re

__all__ = ["guarded", "included_spans", "split_top", "without_remarks"]

_INCLUDES = re.compile(r"\(\s*(?:incl\.|including|includes)\s+([^()]*)\)", re.I)


def included_spans(text: str) -> list[str]:
    """The code spans of the remarks that say what the row includes (``(incl. `a == b`
    …)``): cases of the row written as a remark, so signals of it.

    >>> included_spans("fraud block (incl. `reason == masked` hiding theft) (see `x == y`)")
    ['`reason == masked`']
    """
    return [span for m in _INCLUDES.finditer(text) for span in re.findall(r"`[^`]+`", m[1])]


def without_remarks(text: str) -> str:
    """The text with parenthesised remarks and bold markers removed (code spans and
    quoted messages kept).

    >>> without_remarks("**timeout** (after 30 s) / `http:503`")
    'timeout  / `http:503`'
    """
    out: list[str] = []
    depth, code, quoted = 0, False, False
    for ch in text:
        if ch == "`":
            code = not code
        if not code and ch == '"' and depth == 0:
            quoted = not quoted
        if not code and not quoted and ch == "(":
            depth += 1
            continue
        if not code and not quoted and ch == ")" and depth:
            depth -= 1
            continue
        if depth == 0:
            out.append(ch)
    return re.sub(r"\*\*|__", "", "".join(out)).strip()


def split_top(text: str, separator: re.Pattern) -> list[str]:
    """Split at ``separator`` outside code spans, quotes, braces and brackets."""
    inside = guarded(text)
    parts, last = [], 0
    for m in separator.finditer(text):
        if any(inside[i] for i in range(m.start(), m.end())):
            continue
        parts.append(text[last : m.start()])
        last = m.end()
    parts.append(text[last:])
    return [p for p in parts if p.strip()]


def guarded(text: str) -> list[bool]:
    """For each character of ``text``: is it inside a code span, a quote or brackets?"""
    flags = []
    code, quote, depth = False, "", 0
    for ch in text:
        inside = code or bool(quote) or depth > 0
        if ch == "`" and not quote:
            code = not code
            inside = True
        elif not code and ch in '"“”' and not depth:
            if quote and (ch == quote or (quote == "“" and ch == "”")):
                quote = ""
            elif not quote and ch in '"“':
                quote = ch
            inside = True
        elif not code and not quote and ch in "{[":
            depth += 1
        elif not code and not quote and ch in "}]" and depth:
            depth -= 1
            inside = True
        flags.append(inside)
    return flags
