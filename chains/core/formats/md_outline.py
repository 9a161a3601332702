"""The outline of a compile document and the words that name its scopes.

:func:`outline` cuts Markdown into headings and content nodes (fenced
blocks, tables, bullet lists, paragraphs), each with its 1-based line; it
reports a fence that is never closed instead of failing. The rest of the
module reads names: which headings name a scope (``Scope 1 — x``, ``Chain
A — y``, ``Worked example B``, a nested ``Modify chain``), the short label
of a scope (``A``, ``1``), the comment lines inside a YAML block that mark
a scope (``# ──── Chain M ────``), and the chain id a heading gives.
Nothing here knows the chain grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import Problem

__all__ = [
    "Heading",
    "Node",
    "ScopeNote",
    "bare_title",
    "chain_id_from_heading",
    "is_scope_heading",
    "outline",
    "scope_label",
    "scope_marker",
    "scope_notes",
    "scope_passages",
    "slug",
]


@dataclass
class Heading:
    level: int
    title: str
    line: int
    end: int = 0  # last line of its section


@dataclass
class Node:
    """A block, table, list or paragraph, with the line it starts on."""

    kind: str  # code | table | bullets | para
    line: int
    text: str = ""
    lang: str = ""
    rows: list[tuple[int, str]] = field(default_factory=list)  # (line, raw row)
    items: list[tuple[int, str]] = field(default_factory=list)  # bullets


_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([\w+.-]*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")


def outline(text: str) -> tuple[list[Heading], list[Node], list[Problem]]:
    """Split Markdown into headings and content nodes (1-based line numbers).

    >>> headings, nodes, problems = outline("# T\\n```yaml\\na: 1\\n")
    >>> [n.kind for n in nodes], problems[0].line
    (['code'], 2)
    """
    lines = text.split("\n")
    headings: list[Heading] = []
    nodes: list[Node] = []
    problems: list[Problem] = []
    readers = (_read_fence, _read_table, _read_bullets, _read_para)
    i = 0
    while i < len(lines):
        heading = _HEADING.match(lines[i])
        if heading and not _FENCE.match(lines[i]):
            headings.append(Heading(len(heading[1]), heading[2].strip(), i + 1))
            i += 1
            continue
        for reader in readers:
            found = reader(lines, i, problems)
            if found is not None:
                node, i = found
                nodes.append(node)
                break
        else:
            i += 1
    total = len(lines)
    for k, h in enumerate(headings):
        h.end = next((x.line - 1 for x in headings[k + 1 :] if x.level <= h.level), total)
    return headings, nodes, problems


def _read_fence(lines: list[str], i: int, problems: list[Problem]):
    fence = _FENCE.match(lines[i])
    if not fence:
        return None
    marker = fence[2]
    closing = re.compile(rf"^\s{{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
    j = i + 1
    while j < len(lines) and not closing.match(lines[j]):
        j += 1
    if j >= len(lines):
        problems.append(
            Problem(
                f"code block opened with {marker} is never closed; "
                "read it to the end of the document",
                i + 1,
                len(fence[1]) + 1,
                severity="warning",
            )
        )
    node = Node("code", i + 2, "\n".join(lines[i + 1 : j]) + "\n", lang=fence[3].lower())
    return node, j + 1


def _read_table(lines: list[str], i: int, problems: list[Problem]):
    line = lines[i]
    if not (
        line.lstrip().startswith("|") and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1])
    ):
        return None
    node = Node("table", i + 1, rows=[(i + 1, line)])
    j = i + 2
    while j < len(lines) and lines[j].lstrip().startswith("|"):
        node.rows.append((j + 1, lines[j]))
        j += 1
    return node, j


def _read_bullets(lines: list[str], i: int, problems: list[Problem]):
    bullet = _BULLET.match(lines[i])
    if not bullet:
        return None
    node = Node("bullets", i + 1)
    j = i
    while j < len(lines):
        m = _BULLET.match(lines[j])
        if m and len(m[1]) <= len(bullet[1]):
            node.items.append((j + 1, m[2].strip()))
        elif lines[j].strip() and node.items and (lines[j][:1] in " \t" or m):
            ln, txt = node.items[-1]
            node.items[-1] = (ln, txt + " " + lines[j].strip())
        else:
            break
        j += 1
    return node, j


def _read_para(lines: list[str], i: int, problems: list[Problem]):
    if not lines[i].strip():
        return None
    j = i
    while (
        j < len(lines)
        and lines[j].strip()
        and not _HEADING.match(lines[j])
        and not _FENCE.match(lines[j])
        and not _BULLET.match(lines[j])
        and not lines[j].lstrip().startswith("|")
    ):
        j += 1
    return Node("para", i + 1, " ".join(s.strip() for s in lines[i:j])), max(j, i + 1)


# --- scope names -------------------------------------------------------------

_NUMBERING = re.compile(r"^(?:§\s*)?(?:\d+(?:[.\u2013-]\d+)*\.?|[A-Z]\.)\s+")
_SCOPE = re.compile(r"^(?:scope|chain|worked example)\s+(?P<label>[A-Z]{1,2}|\d+|[ivx]+)\b", re.I)
_SUB_CHAIN = re.compile(r"^[\w+/& -]*\bchain\b\s*(?:\(|—|-|:|$)", re.I)
_BACKTICK = re.compile(r"`([^`\n]+)`")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_RULE_CHARS = "-─━═=~*_—–·•"
_MARKER = re.compile(rf"^\s*#\s*[{_RULE_CHARS}]{{2,}}\s*(?P<body>.*?)\s*[{_RULE_CHARS}]*\s*$")


def bare_title(title: str) -> str:
    """A heading without emphasis marks and section numbering."""
    title = re.sub(r"[*_]{2}", "", title)
    return _NUMBERING.sub("", title).strip()


def is_scope_heading(title: str, nested: bool = False) -> bool:
    """``Scope 1 — x``, ``Chain A — ...``, ``Worked example B``; ``Modify chain`` when nested.

    >>> is_scope_heading("4. Scope A — Stay booking chain")
    True
    >>> is_scope_heading("1. Chain summaries")
    False
    >>> is_scope_heading("5.1 Modify chain", nested=True)
    True
    """
    bare = bare_title(title)
    if _SCOPE.match(bare):
        return True
    return nested and bool(_SUB_CHAIN.match(bare)) and not bare.lower().startswith("cross")


def scope_label(text: str) -> str | None:
    """The short name of a scope a title or phrase starts with, upper-cased.

    >>> scope_label("Chain M rows"), scope_label("5.1 Scope 2 — hold"), scope_label("Chains")
    ('M', '2', None)
    """
    m = _SCOPE.match(bare_title(text))
    return m["label"].upper() if m else None


def scope_marker(line: str) -> str | None:
    """Read a YAML comment line that only marks a scope.

    Returns the scope label for ``# ──── Chain M ────`` or ``# --- Scope 2 ---``,
    ``""`` for any other ruled comment (``# ---- shared probes ----``: the
    marked scope ends), and None for an ordinary line.

    >>> scope_marker("  # ───── Chain M ─────"), scope_marker("# ==== probes ====")
    ('M', '')
    >>> scope_marker("# an ordinary comment") is None
    True
    """
    m = _MARKER.match(line)
    if not m:
        return None
    return scope_label(m["body"]) or ""


def slug(text: str) -> str:
    """An id from a heading: ``Scope A — Stay booking chain`` → ``scope_a_stay_booking_chain``."""
    text = re.sub(r"\([^)]*\)", " ", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text[:80] or "chain"


def chain_id_from_heading(title: str) -> str:
    """The backticked identifier in a heading, else a slug of the heading."""
    for token in _BACKTICK.findall(title):
        if _ID.match(token.strip()):
            return token.strip()
    return slug(bare_title(title))


# --- scope names in prose ----------------------------------------------------

_BOLD_SCOPE = re.compile(
    r"\*\*(?P<kind>chain|scope)\s+(?P<label>[A-Z]{1,2}|\d+)\b(?P<inner>[^*]*)\*\*", re.I
)
_PHRASE = re.compile(r"^\s*[—–-]+\s*(?P<phrase>[^:.;(`*]+)")


@dataclass
class ScopeNote:
    """What the prose says about a scope: ``**Chain M** — manual capture``."""

    kind: str  # Chain | Scope, as written
    label: str
    phrase: str | None = None  # the short name after the dash
    summary: str | None = None  # the text of a ``**Chain M.** ...`` paragraph


def scope_passages(text: str) -> list[tuple[str, str]]:
    """``(label, text)`` for each scope a prose text names in bold, with what it says of it.

    The passage of a scope runs from its bold mention to the next one.

    >>> scope_passages("**Chain A** — buy: `a → b`. **Chain B** — `c`")
    [('A', ' — buy: `a → b`. '), ('B', ' — `c`')]
    """
    found = list(_BOLD_SCOPE.finditer(text))
    out = []
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        out.append((m["label"].upper(), text[m.end() : end]))
    return out


def scope_notes(nodes: list[Node]) -> dict[str, ScopeNote]:
    """Names and summaries of scopes given in bold: ``**Chain M** — x``, ``**Chain M.** y``.

    >>> note = scope_notes([Node("para", 1, "1. **Chain R** — refund: `create_refund`")])["R"]
    >>> note.kind, note.phrase
    ('Chain', 'refund')
    """
    notes: dict[str, ScopeNote] = {}
    for node in nodes:
        texts = [node.text] if node.kind == "para" else [t for _, t in node.items]
        for text in texts:
            for m in _BOLD_SCOPE.finditer(text):
                label = m["label"].upper()
                note = notes.setdefault(label, ScopeNote(m["kind"].capitalize(), label))
                inner = m["inner"].strip()
                phrase = _PHRASE.match(inner.rstrip(".") or text[m.end() :])
                words = phrase["phrase"].split() if phrase else []
                if note.phrase is None and 0 < len(words) <= 6:
                    note.phrase = " ".join(words)
                if inner.endswith(".") and m.start() == 0 and note.summary is None:
                    rest = text[m.end() :]
                    following = _BOLD_SCOPE.search(rest)
                    note.summary = rest[: following.start() if following else None].strip()
    return notes
