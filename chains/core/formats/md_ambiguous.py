"""Rows for an "ambiguous" status class, and the statuses of it the table documents.

A compile writes a commit's ambiguous-failure row as ``timeout / ambiguous
5xx`` and may write, below it, a row for one status of that class the
provider documents as rejected before execution (``503`` → ``retry``,
``rejected_before_execution``). The cell is read as ``http:5xx``, and first
match wins (SPEC §3), so the documented row would never match; yet the word
"ambiguous" says the author did not mean the documented status. The grammar
has no "except" in a matcher; it says it by order: :func:`unambiguous_first`
places each such documented row just before the ambiguous row, with an info.
A later row of the class that is not documented as no side effect stays
where it is (lint reports it shadowed).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..model import ChainSpec, VerdictRow
from ..signals import scope_covers, variants_cover

__all__ = ["unambiguous_first"]

_AMBIGUOUS = re.compile(r"\bambiguous\s+(?:http\s+)?([1-5])xx\b", re.I)


def unambiguous_first(
    spec: ChainSpec, lines: list[int | None], problem: Callable[..., None]
) -> ChainSpec:
    """``chain`` with each row documented as no side effect for a status of an
    "ambiguous" class placed before the row of that class above it.

    ``lines`` are the rows' lines in the document, in table order.
    """
    if len(lines) != len(spec.verdict_table):
        return spec
    rows = list(zip(spec.verdict_table, lines, strict=True))
    k = 0
    moved_any = False
    while k < len(rows):
        row, line = rows[k]
        m = _AMBIGUOUS.search(row.description or "")
        if m is None or f"http:{m[1]}xx" not in row.signal:
            k += 1
            continue
        later = [j for j in range(k + 1, len(rows)) if _documented(rows[j][0], m[1], row, spec)]
        if later:
            picked = [rows[j] for j in later]
            rest = [r for j, r in enumerate(rows) if j not in later]
            rows = rest[:k] + picked + rest[k:]
            moved_any = True
            names = ", ".join(_name(r) for r, _ in picked)
            problem(
                f"verdict row {_name(row)} reads 'ambiguous {m[1]}xx': {names}, documented as no "
                f"side effect, is not ambiguous, so it is placed before {_name(row)} (first "
                "match wins; a matcher cannot say 'except')",
                line,
                "info",
            )
            k += len(picked)
        k += 1
    if not moved_any:
        return spec
    return spec.model_copy(update={"verdict_table": [r for r, _ in rows]})


def _documented(row: VerdictRow, klass: str, ambiguous: VerdictRow, spec: ChainSpec) -> bool:
    """Is ``row`` a status of ``klass`` documented as no side effect, within the
    ambiguous row's scope and variants?"""
    return (
        row.no_side_effect
        and bool(row.signal)
        and all(re.fullmatch(rf"http:{klass}\d\d", atom) for atom in row.signal)
        and scope_covers(ambiguous.scope, row.scope, spec)
        and variants_cover(ambiguous.only, row.only)
    )


def _name(row: VerdictRow) -> str:
    return row.id or "(unnamed)"
