"""Verdict tables and ``known_unmatched`` lists as compile documents write them.

:func:`read_verdict_table` turns one Markdown table into verdict-row drafts
(plain data for :class:`~chains.core.model.VerdictRow`, with the line and
column of each cell); tables that are not verdict tables give nothing, and
tables restating the SPEC §3 generic skeleton give an info. The cell readers
(:func:`signal_atoms`, :func:`row_verdict`, :func:`no_side_effect_flag`) and
the ``known_unmatched`` text readers (:func:`unmatched_entry`,
:func:`split_items`) are plain functions of text. Every problem is appended
to the list the caller passes; nothing here raises for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..errors import Problem, VerdictSyntaxError
from ..model import scope_from_text
from ..verdicts import VERDICT_TYPES, Verdict, format_verdict, parse_verdict
from .md_outline import Node

__all__ = [
    "RowDraft",
    "after_label",
    "inline_entries",
    "no_side_effect_flag",
    "read_verdict_table",
    "row_verdict",
    "signal_atoms",
    "split_items",
    "unmatched_entry",
]

_BACKTICK = re.compile(r"`([^`\n]+)`")
_DASHES = ("—", "-", "–")
_FIELD_OF_COLUMN = {"signal": "description"}


@dataclass
class RowDraft:
    """One verdict row as written: data for the model, and where each cell is."""

    data: dict[str, Any]
    where: dict[tuple, tuple[int, int]]
    line: int
    id: str | None


def read_verdict_table(
    node: Node, section: str, problems: list[Problem], names: frozenset[str] = frozenset()
) -> list[RowDraft]:
    """The rows of a verdict table; ``section`` is the title of the heading it sits under.

    ``names`` are the element ids the document defines: a backticked step
    name in a Signal cell is not read as an error code.
    """
    header = _cells(node.rows[0][1])
    columns = [_column(h) for h in header]
    if "verdict" not in columns:
        if "signal" in columns and ("scope" in columns or re.search(r"verdict", section, re.I)):
            problems.append(
                Problem(
                    f"table at line {node.line} has a Signal column but no Verdict column; "
                    "its rows are not imported",
                    node.line,
                    severity="warning",
                )
            )
        return []
    if not ({"signal", "scope"} & set(columns)):
        return []  # not a verdict table
    rows = node.rows[1:]
    if not rows:
        problems.append(Problem("verdict table has no rows", node.line, severity="warning"))
        return []
    ids = [(_cells(raw) + [""])[0].strip() for _, raw in rows]
    if _is_generic(section, ids, rows):
        problems.append(
            Problem(
                f"verdict table at line {node.line} restates the SPEC §3 generic skeleton "
                f"({len(rows)} rows: {', '.join(i for i in ids if i)}); not imported as "
                "domain rows (the generic rows follow every domain table)",
                node.line,
                severity="info",
            )
        )
        return []
    drafts = [_read_row(header, columns, line, raw, problems, names) for line, raw in rows]
    return [d for d in drafts if d is not None]


def _is_generic(section: str, ids: list[str], rows: list[tuple[int, str]]) -> bool:
    title = section.lower()
    if re.search(r"\b(generic|skeleton)\b|\bcore\b", title) and "domain" not in title:
        return True
    real = [i for i in ids if i and i not in _DASHES]
    if real and all(re.fullmatch(r"G?\d+", i) for i in real):
        return "unmatched" in rows[-1][1].lower()
    return False


def _fit_cells(cells: list[str], names: list[str], line: int, problems) -> list[str]:
    """Make a row as wide as its header, saying so when it was not."""
    if len(cells) == len(names):
        return cells
    if len(cells) < len(names):
        if any(c.strip() for c in cells):
            problems.append(
                Problem(
                    f"table row has {len(cells)} cells, the header {len(names)}; "
                    "the missing cells are read as empty",
                    line,
                    severity="warning",
                )
            )
        return cells + [""] * (len(names) - len(cells))
    problems.append(
        Problem(
            f"table row has {len(cells)} cells, the header {len(names)}; "
            "extra cells joined to the last column",
            line,
            severity="warning",
        )
    )
    return cells[: len(names) - 1] + [" | ".join(cells[len(names) - 1 :])]


def _read_row(header, names, line: int, raw: str, problems: list[Problem], known=frozenset()):
    cells = _fit_cells(_cells(raw), names, line, problems)
    values: dict[str, str] = {}
    extra_notes = []
    columns: dict[str, int] = {}
    for h, name, cell in zip(header, names, cells, strict=True):
        if name and name not in values:
            values[name] = cell.strip()
            columns[name] = raw.find(cell) + 1 if cell else 1
        elif cell.strip():
            extra_notes.append(f"{h.strip()}: {cell.strip()}")
    row_id = values.get("id", "").strip() or None
    signal_text = values.get("signal", "")
    verdict_text = values.get("verdict", "")
    label = f"verdict row {row_id}" if row_id else "verdict row"
    if not verdict_text and not row_id or (row_id in _DASHES and not verdict_text):
        if re.search(r"generic|skeleton|rows? 1", signal_text, re.I):
            problems.append(
                Problem(
                    "row points at the SPEC §3 generic rows; they follow every domain table "
                    "and are not imported",
                    line,
                    severity="info",
                )
            )
        elif any(c.strip() for c in cells):
            problems.append(
                Problem(f"{label} has no verdict; not imported", line, severity="warning")
            )
        return None
    where: dict[tuple, tuple[int, int]] = {(): (line, 1)}
    for name, col in columns.items():
        where[(_FIELD_OF_COLUMN.get(name, name),)] = (line, col)
    verdict, note = row_verdict(verdict_text, label, line, columns.get("verdict"), problems)
    if verdict is None:
        return None
    data = _row_data(values, cells, verdict, [note, *extra_notes], known)
    return RowDraft(data, where, line, row_id)


def _row_data(values: dict[str, str], cells: list[str], verdict: str, notes: list, known) -> dict:
    whole = " ".join(cells)
    row_id = values.get("id", "").strip() or None
    signal_text = values.get("signal", "")
    data: dict[str, Any] = {"verdict": verdict}
    if row_id:
        data["id"] = row_id
    if signal_text:
        data["description"] = signal_text
        data["signal"] = signal_atoms(signal_text, known)
    if values.get("scope"):
        data["scope"] = scope_from_text(values["scope"])
    source = values.get("source", "").strip()
    if source and source not in _DASHES:
        data["source"] = source
    if no_side_effect_flag(whole):
        data["no_side_effect"] = True
    if re.search(r"fragile|prose[- ]match", whole, re.I):
        data["fragile"] = "prose-match"
    notes = [n for n in notes if n]
    if notes:
        data["note"] = "; ".join(notes)
    return data


# --- the Verdict cell --------------------------------------------------------

_VERDICT_WORD = re.compile(rf"^({'|'.join(VERDICT_TYPES)})\b")


def row_verdict(
    text: str, label: str, line: int, column: int | None, problems: list[Problem]
) -> tuple[str | None, str]:
    """The verdict of a Verdict cell, and the prose that goes with it.

    A leading backticked verdict wins (the last of an ``a → b`` chain);
    else the last backticked verdict in the prose, else a bare verdict word.
    """
    spans = list(_BACKTICK.finditer(text))
    if spans and text.strip().lstrip("*_ ").startswith("`"):
        first = spans[0].group(1)
        try:
            verdict = parse_verdict(first)
            if re.search(r"<[^>]*>", first):
                raise VerdictSyntaxError("it names a placeholder, not a step or gate")
        except VerdictSyntaxError as exc:
            if _VERDICT_WORD.match(first.strip()):
                problems.append(
                    Problem(
                        f"{label}: verdict `{first}` cannot be read: {exc}; row not imported",
                        line,
                        column,
                        severity="error",
                    )
                )
                return None, ""
        else:
            return _verdict_chain(text, first, spans[0].end(), verdict)
    return _verdict_in_prose(text, spans, label, line, column, problems)


def _verdict_chain(text: str, first: str, end: int, verdict: Verdict) -> tuple[str, str]:
    """``a`` → ``b`` → ``c``: the last verdict, and the chain kept in the note."""
    chain = [first]
    while True:
        m = re.match(r"\s*→\s*`([^`\n]+)`", text[end:])
        if not m:
            break
        try:
            verdict = parse_verdict(m[1])
        except VerdictSyntaxError:
            break
        chain.append(m[1])
        end += m.end()
    rest = text[end:].strip().lstrip("—–-:;, ").strip()
    if len(chain) > 1:
        written = " → ".join(f"`{c}`" for c in chain)
        rest = f"as written: {written}" + (f"; {rest}" if rest else "")
    return format_verdict(verdict), rest


def _verdict_in_prose(text, spans, label, line, column, problems) -> tuple[str | None, str]:
    found: list[Verdict] = []
    for span in spans:
        try:
            found.append(parse_verdict(span.group(1)))
        except VerdictSyntaxError:
            continue
    stripped = text.strip().lstrip("*_ ")
    if not found:
        bare = _VERDICT_WORD.match(stripped)
        if bare:
            try:
                return format_verdict(parse_verdict(bare[1])), stripped[bare.end() :].strip()
            except VerdictSyntaxError:
                pass
        problems.append(
            Problem(
                f"{label}: no verdict expression in the Verdict cell ({_short(text)}); "
                "row not imported",
                line,
                column,
                severity="error",
            )
        )
        return None, ""
    chosen = found[-1]
    distinct = {format_verdict(v) for v in found}
    problems.append(
        Problem(
            f"{label}: the Verdict cell starts with prose; took `{format_verdict(chosen)}`"
            + (f" (of {len(distinct)} verdicts named)" if len(distinct) > 1 else ""),
            line,
            column,
            severity="warning" if len(distinct) > 1 else "info",
        )
    )
    return format_verdict(chosen), text.strip()


# --- cells and columns -------------------------------------------------------


def _column(header: str) -> str:
    h = re.sub(r"[*_`]", "", header).strip().lower()
    if h in ("#", "id", "row", "no", "no."):
        return "id"
    if h.startswith("signal") or h in ("condition", "trigger"):
        return "signal"
    if h in ("step scope", "scope", "applies to", "step", "steps", "step(s)"):
        return "scope"
    if h.startswith("verdict"):
        return "verdict"
    if "source" in h or "evidence" in h:
        return "source"
    return ""


def _cells(raw: str) -> list[str]:
    """Split a table row on unescaped pipes outside code spans."""
    body = raw.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, unbalanced = _split_outside(body, lambda i: body[i] == "|", nest=False)
    if unbalanced:  # an unbalanced backtick: fall back to a plain split
        cells = [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]
    return [c.strip() for c in cells]


def _split_outside(text: str, cut, *, nest: bool) -> tuple[list[str], bool]:
    """Split ``text`` where ``cut(i)`` holds, outside code spans (and brackets when ``nest``).

    ``\\|`` is kept as a literal pipe. Also says whether a code span was left open.
    """
    parts: list[str] = []
    current: list[str] = []
    depth, code, i = 0, False, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and text[i + 1 : i + 2] == "|":
            current.append("|")
            i += 2
            continue
        if ch == "`":
            code = not code
        elif nest and not code and ch in "([{":
            depth += 1
        elif nest and not code and ch in ")]}":
            depth = max(0, depth - 1)
        if not code and depth == 0 and cut(i):
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts, code


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the Signal cell ---------------------------------------------------------

ATOM = re.compile(
    r"\b(?:(?:http|code|webhook|event|type|status|probe):[\w.\-/*]+|http[: ]\d(?:\d\d|xx)\b)",
    re.I,
)


_TRANSPORT = {
    "timeout": "timeout",
    "conn_reset": "conn_reset",
    "conn_drop": "conn_drop",
    "connection_reset": "conn_reset",
    "connection_drop": "conn_drop",
}
_TRANSPORT_PROSE = re.compile(r"\b(?:conn|connection)[ _-](?P<kind>reset|drop)(?:ped)?\b", re.I)
_STATUS = re.compile(r"\d{3}|[1-5]xx")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_DOTTED = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")


def signal_atoms(text: str, names: Collection[str] = ()) -> list[str]:
    """Machine-matchable signals named in a Signal cell, in the order written.

    Backticked ``ALL_CAPS`` tokens are codes; backticked ``snake_case``
    tokens are codes when the cell names a status or code beside them, when
    a quoted message follows them, or when they end in ``_error``; dotted
    tokens are webhooks when the cell speaks of a webhook or event. A token
    in ``names`` (a step or handle of the document) is never a code.

    >>> signal_atoms("`http:410` / `SEARCH_EXPIRED` or timeout; webhook `charge.expired`")
    ['http:410', 'code:SEARCH_EXPIRED', 'timeout', 'webhook:charge.expired']
    >>> signal_atoms("`timeout` / `conn_reset` / `409 order_gone`, conn drop")
    ['timeout', 'conn_reset', 'http:409', 'code:order_gone', 'conn_drop']
    """
    coded = bool(
        ATOM.search(text)
        or re.search(r"`\s*(?:\d{3}|[1-5]xx)\b", text)
        or re.search(r"\bHTTP\s+\d{3}\b", text)
    )
    webhooky = bool(re.search(r"webhook|\bevents?\b", text, re.I))
    found: list[tuple[int, str]] = []
    for m in re.finditer(r"`([^`\n]+)`|(\b[\w:./*\-]+)", text):
        if m.group(1):
            quoted = text[m.end() :].lstrip().startswith('"')
            token = m.group(1).strip()
            spans = [] if token in names else _span_atoms(token, coded, quoted, webhooky)
            before = text[max(0, m.start() - 9) : m.start()].lower().rstrip()
            if not spans and before.endswith("webhook") and re.fullmatch(r"[\w.]+", token):
                spans = [f"webhook:{token}"]
            found.extend((m.start(), atom) for atom in spans)
        elif ATOM.fullmatch(m.group(2)):
            found.append((m.start(), _norm_atom(m.group(2))))
        elif m.group(2).lower() == "timeout":
            found.append((m.start(), "timeout"))
    found += [(m.start(), f"conn_{m['kind'].lower()}") for m in _TRANSPORT_PROSE.finditer(text)]
    found += [(m.start(), f"http:{m[1]}") for m in re.finditer(r"\bHTTP\s+(\d{3})\b", text)]
    atoms: list[str] = []
    for _, atom in sorted(found, key=lambda x: x[0]):
        if atom not in atoms:
            atoms.append(atom)
    return atoms


def _span_atoms(token: str, coded: bool, quoted: bool, webhooky: bool) -> list[str]:
    """The atoms of one backticked span: one token, or a status followed by codes."""
    words = token.split()
    if len(words) > 1:
        first = _word_atom(words[0], coded, False, webhooky)
        if first and (first.startswith("http:") or ":" in words[0]):
            rest = [_word_atom(w, True, False, webhooky) for w in words[1:]]
            if all(rest):
                return [first, *(a for a in rest if a)]
        return [_norm_atom(a) for a in ATOM.findall(token)]
    atom = _word_atom(token, coded, quoted, webhooky)
    return [atom] if atom else []


def _word_atom(word: str, coded: bool, quoted: bool, webhooky: bool) -> str | None:
    if ATOM.fullmatch(word):
        return _norm_atom(word)
    if word.lower() in _TRANSPORT:
        return _TRANSPORT[word.lower()]
    if _STATUS.fullmatch(word):
        return f"http:{word}"
    if re.fullmatch(r"[A-Z][A-Z0-9_]{2,}", word):
        return f"code:{word}"
    if _SNAKE.fullmatch(word) and (coded or quoted or word.endswith("_error")):
        return f"code:{word}"
    if _DOTTED.fullmatch(word) and webhooky:
        return f"webhook:{word}"
    return None


def _norm_atom(atom: str) -> str:
    m = re.fullmatch(r"(?i)http[: ](\S+)", atom)
    if m:
        return f"http:{m[1].lower()}"
    return atom


def no_side_effect_flag(text: str) -> bool:
    """A row declares no_side_effect (or v0.3 rejected_before_execution), not negated."""
    for m in re.finditer(r"no_side_effect|rejected_before_execution", text):
        before = text[max(0, m.start() - 40) : m.start()]
        after = text[m.end() : m.end() + 10]
        if re.search(r"\bnot\b|\bnever\b", before, re.I) or re.match(r"`?\s*:\s*false", after):
            continue
        return True
    return False


# --- known_unmatched text ----------------------------------------------------


def unmatched_entry(text: str) -> dict[str, Any]:
    """``signal`` = the first backticked token (else the text); ``note`` = the rest."""
    text = text.strip().rstrip(".").strip()
    m = _BACKTICK.search(text)
    if not m:
        return {"signal": text}
    signal = m.group(1).strip()
    rest = text[m.end() :].strip().lstrip("—–-:;, ").strip() if m.start() == 0 else text
    return {"signal": signal, "note": rest or None}


def inline_entries(text: str) -> list[dict[str, Any]]:
    """Entries of a list written as prose; a piece without a signal extends the last note."""
    entries: list[dict] = []
    for part in split_items(text):
        if "`" in part or ATOM.search(part) or not entries:
            entries.append(unmatched_entry(part))
        else:
            prev = entries[-1]
            prev["note"] = f"{prev.get('note') or ''}; {part}".strip("; ")
    return entries


def after_label(text: str) -> str:
    """The text after a ``known_unmatched (...):`` label."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            return text[i + 1 :]
    return ""


def split_items(text: str) -> list[str]:
    """Split a run-on list at commas/semicolons/sentence ends outside () and ``."""

    def cut(i: int) -> bool:
        return text[i] in ",;" or (text[i] == "." and text[i + 1 : i + 2] == " ")

    parts, _ = _split_outside(text, cut, nest=True)
    cleaned = []
    for part in parts:
        part = re.sub(r"^\s*(?:and|or|also)\s+", "", part.strip(), flags=re.I).strip()
        if part:
            cleaned.append(part)
    return cleaned
