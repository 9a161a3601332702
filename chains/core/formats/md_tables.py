"""Verdict tables and ``known_unmatched`` lists as compile documents write them.

:func:`read_verdict_table` turns one Markdown table into verdict-row drafts
(plain data for :class:`~chains.core.model.VerdictRow`, with the line and
column of each cell); tables that are not verdict tables give nothing, and
the rows of a table restating the SPEC §3 generic skeleton are left out
with an info, while the domain rows of a shared "verdict-table core" are
kept. The Step scope cell is read by :mod:`.md_step_scope`. The cell readers
(:func:`signal_atoms`, :func:`row_verdict`, :func:`no_side_effect_flag`) and
the ``known_unmatched`` text readers (:func:`unmatched_entry`,
:func:`split_items`) are plain functions of text. Every problem is appended
to the list the caller passes; nothing here raises for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, VerdictSyntaxError
from ..verdicts import VERDICT_TYPES, Verdict, format_verdict, parse_verdict
from .md_cells import included_spans, split_top, without_remarks
from .md_outline import Node
from .md_step_scope import row_scope

__all__ = [
    "RowDraft",
    "after_label",
    "inline_entries",
    "no_side_effect_flag",
    "per_scope_verdicts",
    "read_verdict_table",
    "read_signal",
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
    per_scope: dict[str, str] = field(default_factory=dict)  # scope label → its verdict


def read_verdict_table(
    node: Node,
    section: str,
    problems: list[Problem],
    names: frozenset[str] = frozenset(),
    steps: Mapping[str, Any] | None = None,
    probes: Collection[str] | None = None,
) -> list[RowDraft]:
    """The rows of a verdict table; ``section`` is the title of the heading it sits under.

    ``names`` are the element ids the document defines: a backticked step
    name in a Signal cell is not read as an error code. ``steps`` maps its
    action ids to their data as written (default: ``names``): only those are
    steps in a Step scope cell, and their effects and probes give the words
    of such a cell their steps (:func:`~.md_step_scope.row_scope`); ``probes``
    are the steps its word "probes" names.
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
    restated: list[str] = []
    if _is_generic(section, ids, rows):
        signal_at = columns.index("signal") if "signal" in columns else None
        kept, domain = [], []
        for (line, raw), row_id in zip(rows, ids, strict=True):
            cells = _cells(raw)
            cell = cells[signal_at] if signal_at is not None and signal_at < len(cells) else ""
            if _restates_generic(cell, names):
                restated.append(row_id or f"line {line}")
            else:
                kept.append((line, raw))
                domain.append(row_id or f"line {line}")
        _report_restated(node.line, restated, domain, len(rows), problems)
        rows = kept
    earlier: dict[str, list[str]] = {}
    drafts = []
    for line, raw in rows:
        draft = _read_row(header, columns, line, raw, problems, names, earlier, steps, probes)
        if draft is not None:
            drafts.append(draft)
    return drafts


# The concepts of SPEC §3's generic rows, as a row restating one names it.
_GENERIC_CONCEPT = re.compile(
    r"\bstaleness\b|empty\.detect|\btransport (?:success|fault)|\brate[ -]limit|"
    r"\bthrottl|terms changed|deterministic reject|\bunavailable\b|\bdegrad|\bunmatched\b",
    re.I,
)


def _restates_generic(signal_cell: str, names: Collection[str]) -> bool:
    """A row of a generic-looking table that restates a SPEC §3 generic row: its
    Signal cell names a generic row's concept (staleness, transport success,
    unmatched, ...) or nothing machine-readable. Other rows are domain rows (a
    shared "verdict-table core" of a multi-chain compile, SKILL Step 6)."""
    return bool(_GENERIC_CONCEPT.search(signal_cell)) or not read_signal(signal_cell, names).terms


def _report_restated(
    line: int, restated: list[str], domain: list[str], count: int, problems: list[Problem]
) -> None:
    if not domain:
        message = (
            f"verdict table at line {line} restates the SPEC §3 generic skeleton "
            f"({count} rows: {', '.join(restated)}); not imported as "
            "domain rows (the generic rows follow every domain table)"
        )
    else:
        message = (
            f"verdict table at line {line} is a shared core: rows {', '.join(restated)} "
            "restate the SPEC §3 generic skeleton and are not imported (the generic rows "
            f"follow every domain table); rows {', '.join(domain)} are "
            "domain rows and are imported"
        )
    problems.append(Problem(message, line, severity="info"))


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


def _read_row(
    header,
    names,
    line: int,
    raw: str,
    problems: list[Problem],
    known=frozenset(),
    earlier=None,
    steps=None,
    probes=None,
):
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
    data = _row_data(values, cells, verdict, [note, *extra_notes])
    if values.get("scope"):
        actions = known if steps is None else steps
        where_scope = (label, line, columns.get("scope"))
        data["scope"] = row_scope(
            values["scope"], actions, signal_text, where_scope, problems, probes
        )
    if signal_text:
        reading = read_signal(signal_text, known, earlier if earlier is not None else {})
        data["signal"] = reading.terms
        _report_signal(reading, label, signal_text, line, columns.get("signal"), problems)
        if earlier is not None:
            earlier[""] = reading.terms
            if row_id:
                earlier[row_id] = reading.terms
    return RowDraft(data, where, line, row_id, per_scope_verdicts(verdict_text))


def _report_signal(reading, label: str, text: str, line: int, column, problems) -> None:
    """A Signal cell the reader could not (fully) understand is a warning at its line."""
    if not reading.terms:
        message = (
            f"{label}: no machine-readable signal in the Signal cell ({_short(text)}); "
            "imported with the cell as its description and no signal, so it matches nothing"
        )
    elif reading.unread:
        parts = "; ".join(_short(u, 40) for u in reading.unread)
        message = f"{label}: part of the Signal cell was not read as a signal ({parts})"
    else:
        return
    problems.append(Problem(message, line, column, severity="warning", path="signal"))


def _row_data(values: dict[str, str], cells: list[str], verdict: str, notes: list) -> dict:
    whole = " ".join(cells)
    row_id = values.get("id", "").strip() or None
    signal_text = values.get("signal", "")
    data: dict[str, Any] = {"verdict": verdict}
    if row_id:
        data["id"] = row_id
    if signal_text:
        data["description"] = signal_text
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


_PER_SCOPE = re.compile(
    r"`([^`\n]+)`\s*\(\s*(?:for\s+)?(?:chain|scope)\s+([A-Z]{1,2}|\d+)\s*\)", re.I
)


def per_scope_verdicts(text: str) -> dict[str, str]:
    """A Verdict cell that gives each scope its own verdict: label → verdict.

    >>> per_scope_verdicts("`rewind(to: a)` (Chain A) / `rewind(to: b)` (Chain C)")
    {'A': 'rewind(to: a)', 'C': 'rewind(to: b)'}
    """
    found: dict[str, str] = {}
    for m in _PER_SCOPE.finditer(text):
        try:
            found.setdefault(m[2].upper(), format_verdict(parse_verdict(m[1])))
        except VerdictSyntaxError:
            continue
    return found if len(found) > 1 else {}


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


@dataclass
class SignalReading:
    """What a Signal cell says: the atoms any of which matches, and what was not read.

    Each term is one atom or a conjunction ``a && b`` (all parts must hold);
    ``unread`` holds the alternatives or conditions of the cell that gave no
    atom, so the caller can report them.
    """

    terms: list[str]
    unread: list[str]


_ALTERNATIVE = re.compile(r"\s+/\s+|\s+or\s+|\s*\|\s*|;\s+", re.I)
_CONJUNCTION = re.compile(r"\s+\+\s+|,\s+|\s+with\s+", re.I)
_PREDICATE_OP = re.compile(r"==|!=|<=|>=|=~|∈|∉|(?<![=!<>])=(?!=)|<|>")
_PREDICATE = re.compile(
    r"(?P<field>[A-Za-z_][\w.\[\]*/]*)\s*(?P<op>==|!=|<=|>=|∈|∉|=|<|>)\s*"
    r"(?P<value>\{[^}]*\}|'[^']*'|\"[^\"]*\"|[\w.\-]+(?:\s+[a-z_][\w.\-]*)*)"
)
_SAME = re.compile(
    r"^same(?:\s+signals?)?(?:\s+as\s+(?P<row>[\w.\-]+))?(?:\s*[,;:]\s*|\s+[—–-]\s+|\s*$)", re.I
)
_BARE_STATUS = re.compile(r"^(?:ambiguous\s+|transport\s+|http\s+)?(\d{3}|[1-5]xx)$", re.I)
_FAULTS = ("timeout", "conn_reset", "conn_drop")


def read_signal(
    text: str, names: Collection[str] = (), earlier: dict[str, list[str]] | None = None
) -> SignalReading:
    """Read a Signal cell into "any of these terms", each term "all of these atoms".

    Alternatives are written with ``/``, ``or`` or ``|``; conditions joined
    with ``+``, a comma or ``with`` (or inside one backticked span, like
    ``http:402 card_declined``) must all hold. Two conditions that cannot
    hold at once (two statuses, two codes, a transport fault and anything
    else) are alternatives after all. A backticked span with an operator
    (``status == requires_action``), or an unbackticked ``field ∈ {…}`` /
    ``field = value``, is a predicate atom. ``same, …`` starts from the
    previous row's signal (``same as D12``: that row's), whose predicates on
    a field the cell names again are replaced. Remarks in parentheses are
    not signals, but the code spans of one that says what the row includes
    (``(incl. `decline_code == x`)``) are. ``earlier`` maps row ids (and
    ``""``, the previous row) to their terms.

    >>> read_signal("`http:402 card_error card_declined`, reason ∈ {lost, stolen}").terms
    ['http:402 && type:card_error && code:card_declined && reason ∈ {lost, stolen}']
    >>> read_signal("`409` + `order_gone` / timeout").terms
    ['http:409 && code:order_gone', 'timeout']
    >>> read_signal("same, reason = expired", earlier={"": ["http:402 && reason ∈ {a}"]}).terms
    ['http:402 && reason = expired']
    """
    coded = bool(
        ATOM.search(text)
        or re.search(r"`\s*(?:\d{3}|[1-5]xx)\b", text)
        or re.search(r"\bHTTP\s+\d{3}\b", text)
    )
    webhooky = bool(re.search(r"webhook|\bevents?\b", text, re.I))
    body = text.strip()
    base: list[str] | None = None
    same = _SAME.match(body)
    if same and earlier is not None:
        base = earlier.get(same["row"] or "", None)
        if base is not None:
            body = body[same.end() :]
    terms: list[str] = []
    unread: list[str] = []
    before: str = ""
    for alternative in split_top(without_remarks(body), _ALTERNATIVE):
        found = _conjunction(alternative, names, coded, webhooky, unread)
        if found is None:
            if alternative.strip(" .,:;") and not _names_a_step(alternative, names):
                unread.append(alternative.strip())
            continue
        if before and all(_is_message(t) for t in found):
            # `code` "message A" / "message B": the second message keeps the code
            found = [_join(before, t) for t in found]
        parts = found[0].split(" && ")
        before = " && ".join(p for p in parts if not _is_message(p))
        terms += found
    for span in included_spans(body):  # "(incl. `decline_code == x`)": the row covers it too
        terms += _conjunction(span, names, coded, webhooky, []) or []
    if base is not None:
        terms = [_join(b, t) for b in base for t in terms] if terms else list(base)
    return SignalReading(list(dict.fromkeys(terms)), unread)


def signal_atoms(text: str, names: Collection[str] = ()) -> list[str]:
    """The terms of a Signal cell (see :func:`read_signal`), in the order written.

    >>> signal_atoms("`http:410` / `SEARCH_EXPIRED` or timeout; webhook `charge.expired`")
    ['http:410', 'code:SEARCH_EXPIRED', 'timeout', 'webhook:charge.expired']
    >>> signal_atoms("`timeout` / `conn_reset` / `409 order_gone`, conn drop")
    ['timeout', 'conn_reset', 'http:409 && code:order_gone', 'conn_drop']
    """
    return read_signal(text, names).terms


def _conjunction(
    text: str, names, coded: bool, webhooky: bool, unread: list[str]
) -> list[str] | None:
    """The terms of one alternative: its conditions joined, or split when they conflict."""
    pieces = split_top(text, _CONJUNCTION)
    groups: list[list[str]] = []
    empty = []
    for piece in pieces:
        options = _piece_options(piece, names, coded, webhooky)
        if options:
            groups.append(options)
        else:
            empty.append(piece)
    if not groups:
        return None
    unread.extend(p.strip() for p in empty if p.strip(" .,:;") and not _names_a_step(p, names))
    if len(groups) > 1 and _conflicting([g[0] for g in groups if len(g) == 1]):
        return [t for g in groups for t in g]  # cannot all hold: read as alternatives
    terms = [""]
    for options in groups:
        terms = [_join(t, o) for t in terms for o in options]
    return terms


_MESSAGE = re.compile(r'"([^"\n]{3,})"|“([^”\n]{3,})”')


def _message_atom(text: str) -> str | None:
    """``message contains "…"`` for a quoted provider message, cut before a placeholder.

    Rows told apart only by their message (SPEC §3 ``fragile: prose-match``)
    stay apart; lint judges the fragility.
    """
    kept = re.split(r"<|…|\.\.\.", text)[0].strip(" '\":;,")
    return f'message contains "{kept}"' if len(kept) >= 3 else None


def _is_message(term: str) -> bool:
    return term.startswith('message contains "') and " && " not in term


def _names_a_step(text: str, names) -> bool:
    """Prose about where a signal arrives (`` `commit_x` itself``), not a signal."""
    return any(t.strip() in names for t in re.findall(r"`([^`\n]+)`", text))


def _piece_options(piece: str, names, coded: bool, webhooky: bool) -> list[str]:
    """One condition as alternatives of terms (usually one term)."""
    spread = re.fullmatch(r"\s*`([^`]+)`\s*∈\s*\{(.*)\}\s*", piece)
    if spread and not _PREDICATE_OP.search(spread[1]):
        left = _span_atoms(spread[1].strip(), coded, False, webhooky)
        items = [i.strip().strip("`").strip() for i in spread[2].split(",") if i.strip()]
        right = [_word_atom(i, True, False, webhooky) for i in items if i not in ("…", "...")]
        if left and right and all(right):
            return [_join(" && ".join(left), r) for r in right if r]
    atoms: list[str] = []
    predicates = False
    for m in re.finditer(r"`([^`\n]+)`", piece):
        token = m.group(1).strip()
        if token in names:
            continue
        if _PREDICATE_OP.search(token) and not ATOM.fullmatch(token):
            atoms.append(" ".join(token.split()))
            predicates = True
            continue
        quoted = piece[m.end() :].lstrip().startswith(('"', "“"))
        spans = _span_atoms(token, coded, quoted, webhooky)
        before = piece[max(0, m.start() - 9) : m.start()].lower().rstrip()
        if not spans and before.endswith("webhook") and re.fullmatch(r"[\w.]+", token):
            spans = [f"webhook:{token}"]
        atoms += spans
    prose = re.sub(r"`[^`\n]*`", " ", piece)
    messages = [m[1] or m[2] for m in _MESSAGE.finditer(prose)]
    prose = _MESSAGE.sub(" ", prose)
    for m in re.finditer(r"\b[\w:./*\-]+", prose):
        word = m.group(0)
        if ATOM.fullmatch(word):
            atoms.append(_norm_atom(word))
        elif word.lower() == "timeout":
            atoms.append("timeout")
    atoms += [f"conn_{m['kind'].lower()}" for m in _TRANSPORT_PROSE.finditer(prose)]
    atoms += [f"http:{m[1]}" for m in re.finditer(r"\bHTTP\s+(\d{3})\b", prose)]
    bare = _BARE_STATUS.match(prose.strip(" .:"))
    if bare:
        atoms.append(f"http:{bare[1].lower()}")
    if not predicates and not atoms:
        plain = piece.replace("`", "")
        found = _PREDICATE.search(plain)
        # Prose has "is > 24h old": only a field-like name (``decline_code``,
        # ``refund.status``) or a backticked one starts a predicate.
        fieldlike = found and (
            re.search(r"[_.]", found["field"])
            or found["op"] in ("∈", "∉")
            or (found["op"] in ("=", "==", "!=") and " " not in found["value"])
            or f"`{found['field']}`" in piece
        )
        if found and fieldlike:
            atoms.append(" ".join(found.group(0).split()))
    message = _message_atom(messages[0]) if messages else None
    if message and not any(a in _FAULTS for a in atoms):
        atoms.append(message)
    atoms = list(dict.fromkeys(atoms))
    if len(atoms) > 1 and _conflicting(atoms):
        return atoms  # e.g. ``code:2560`` beside "timeout": alternatives, as written
    return [" && ".join(_typed(atoms))] if atoms else []


def _typed(atoms: list[str]) -> list[str]:
    """Two codes in one condition: the one ending in ``_error`` is the error type."""
    codes = [a for a in atoms if a.startswith("code:")]
    if len(codes) < 2:
        return atoms
    return [f"type:{a[5:]}" if a in codes and a.endswith("_error") else a for a in atoms]


def _kind(atom: str) -> str:
    if atom in _FAULTS or atom.startswith("http:"):
        return "transport"
    m = re.match(r"^(code|webhook|type):", atom)
    return m[1] if m else "predicate"


def _conflicting(atoms: list[str]) -> bool:
    """Can these atoms not all hold of one response (two statuses, codes, a fault)?"""
    parts = [p for a in atoms for p in a.split(" && ")]
    if any(p in _FAULTS for p in parts) and len(parts) > 1:
        return True
    kinds = [_kind(p) for p in _typed(parts)]
    return any(kinds.count(k) > 1 for k in ("transport", "code", "webhook", "type"))


def _join(term: str, more: str) -> str:
    """``term && more``, where a predicate in ``more`` replaces one on the same field."""
    if not term:
        return more
    new_fields = {_field(p) for p in more.split(" && ")} - {None}
    kept = [p for p in term.split(" && ") if _field(p) not in new_fields or _field(p) is None]
    return " && ".join(dict.fromkeys([*kept, *more.split(" && ")]))


def _field(part: str) -> str | None:
    m = _PREDICATE.match(part)
    return m["field"] if m and ":" not in m["field"] else None


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
    statuses = re.fullmatch(r"(?i)http:(\d{3}|[1-5]xx)((?:/(?:\d{3}|[1-5]xx))+)", token)
    if statuses:  # `http:401/403`: two statuses, which cannot both hold (alternatives)
        return [f"http:{c.lower()}" for c in [statuses[1], *statuses[2].split("/")[1:]]]
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
    if _SNAKE.fullmatch(word) and word.endswith("_error"):
        return f"type:{word}"  # an error type (SPEC §2.1 ``error.type``), not a code
    if _SNAKE.fullmatch(word) and (coded or quoted):
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
