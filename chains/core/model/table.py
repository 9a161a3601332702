"""The verdict table (SPEC §3): rows of signal, scope and verdict.

A :class:`VerdictRow` matches a signal (stored as a list of atoms any of which
matches; :func:`signal_terms` reads the ``{all: [...]}`` / ``{any: [...]}``
forms) on the attempts its :class:`Scope` names, and routes them to a verdict.
A scope written as prose in a table cell is read by :func:`scope_from_text`.
:class:`KnownUnmatched` lists signals the authors know no row matches.

A row is named by its id, or by its place when it has none, and two places
are counted differently: :func:`row_ref` (``#4``, the 4th of the chain's own
*domain* rows) is what lint elements, edits, comment anchors and the
workspace say, while a run's trace and the coverage say :func:`trace_row_ref`
(``domain#4``) because there ``#4`` is *generic* row 4 of SPEC §3
(:func:`generic_row_ref`). docs/glossary.md explains both to users.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from ..paths import item_ref
from .actions import EFFECTS
from .elements import Element, Variant
from .fields import StrList, VerdictExpr

# --- signal forms ----------------------------------------------------------

SIGNAL_TERMS_LIMIT = 64  # a product of alternatives wider than this is a typo, not a signal


def signal_terms(value: Any) -> list[str]:
    """A row signal as the list of atoms any of which matches (its stored form).

    An atom may itself be a conjunction, ``a && b``: it matches only when
    all of its parts hold. Besides a list of atoms (or one atom as a string),
    a signal may be written ``{all: [...]}`` or ``{any: [...]}``, nested;
    ``all`` of alternatives is multiplied out, so the stored form is always
    "any of these conjunctions".

    >>> signal_terms({"all": ["http:402", "code:card_declined"]})
    ['http:402 && code:card_declined']
    >>> signal_terms({"all": ["http:422", {"any": ["code:A", "code:B"]}]})
    ['http:422 && code:A', 'http:422 && code:B']
    >>> signal_terms(["timeout", {"all": ["http:409", "code:X"]}])
    ['timeout', 'http:409 && code:X']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return _any_of(value)
    if isinstance(value, dict):
        if set(value) == {"any"}:
            return _any_of(_listed(value["any"], "any"))
        if set(value) == {"all"}:
            return _all_of(_listed(value["all"], "all"))
        raise ValueError(
            f"a signal mapping takes exactly one key, all or any; got {', '.join(map(str, value))}"
        )
    raise ValueError(f"a signal is an atom, a list of atoms, or {{all|any: [...]}}; got {value!r}")


def _listed(parts: Any, key: str) -> list:
    if isinstance(parts, str):
        parts = [parts]
    if not isinstance(parts, list) or not parts:
        raise ValueError(f"signal {{{key}: [...]}} needs a non-empty list of atoms")
    return parts


def _any_of(parts: list) -> list[str]:
    terms: list[str] = []
    for part in parts:
        terms += signal_terms(part)
    return terms


def _all_of(parts: list) -> list[str]:
    terms = [""]
    for part in parts:
        options = signal_terms(part)
        terms = [f"{t} && {o}" if t else o for t in terms for o in options]
        if len(terms) > SIGNAL_TERMS_LIMIT:
            raise ValueError(
                f"signal {{all: [...]}} multiplies out to more than {SIGNAL_TERMS_LIMIT} atoms"
            )
    return terms


_SIGNAL_ITEM = {"anyOf": [{"type": "string"}, {"type": "object"}]}
_SIGNAL_SCHEMA = {
    "description": (
        "signals any of which matches: http:410, code:X, timeout, webhook:x, or a payload "
        "predicate (status == requires_action). An atom joined with && matches only when all "
        "its parts hold. Also written {all: [...]} (every part holds) or {any: [...]} "
        "(one of them), nested; stored and written as a list of atoms"
    ),
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": _SIGNAL_ITEM},
        {
            "type": "object",
            "properties": {"all": {"type": "array", "items": _SIGNAL_ITEM, "minItems": 1}},
            "required": ["all"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"any": {"type": "array", "items": _SIGNAL_ITEM, "minItems": 1}},
            "required": ["any"],
            "additionalProperties": False,
        },
    ],
    "examples": [
        ["http:410", "code:SEARCH_EXPIRED"],
        {"all": ["http:402", "code:card_declined", "decline_code in {stolen_card, lost_card}"]},
    ],
}

SignalTerms = Annotated[list[str], BeforeValidator(signal_terms), WithJsonSchema(_SIGNAL_SCHEMA)]


# --- rows and scopes -------------------------------------------------------


class Scope(Element):
    """Which attempts a verdict row applies to."""

    steps: StrList = Field(default_factory=list)
    """Ids of the actions this row applies to, e.g. `[book, confirm]`."""
    consumers_of: StrList = Field(default_factory=list)
    """Handle ids: the row applies to every step that sends one of them, e.g.
    `[search_id]`."""
    effects: StrList = Field(default_factory=list)
    """Effect classes the row applies to, e.g. `[read, mint, keyed_commit]`; write
    `keyed_commit` or `unkeyed_commit` to split the commits."""
    any: bool = False
    """True when the row applies to every step (an empty scope means the same)."""
    text: str | None = Field(None)
    """The scope as written when it was prose no other field could hold. A prose-only scope
    applies to no step until it is rewritten."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"steps": value}
        if isinstance(value, str):
            return scope_from_text(value)
        return value


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EFFECT_WORDS = {
    *EFFECTS,
    "keyed_commit",
    "unkeyed_commit",
    "keyed commit",
    "unkeyed commit",
    "any keyed",
}


def scope_from_text(text: str) -> dict[str, Any]:
    """Read a scope written as a table cell.

    >>> scope_from_text("checkout, revalidate")["steps"]
    ['checkout', 'revalidate']
    >>> scope_from_text("any consumer of `search_id`")["consumers_of"]
    ['search_id']
    >>> scope_from_text("any")["any"]
    True
    """
    raw = text.strip()
    clean = raw.replace("`", "").strip()
    if clean.lower() in ("any", "all", "any step", "all steps", "*"):
        return {"any": True}
    consumer = re.match(r"^(?:any )?consumers? of\s+(.+)$", clean, re.IGNORECASE)
    if consumer:
        names = [n.strip() for n in re.split(r"[,/]|\band\b", consumer[1]) if n.strip()]
        if all(_IDENT.match(n) for n in names):
            return {"consumers_of": names}
    parts = [p.strip() for p in re.split(r"\s*[,/;]\s*|\s+and\s+", clean) if p.strip()]
    lowered = [p.lower().replace(" ", "_") for p in parts]
    if parts and all(p.lower() in _EFFECT_WORDS or p in _EFFECT_WORDS for p in parts):
        return {"effects": lowered}
    if parts and all(_IDENT.match(p) for p in parts):
        return {"steps": parts}
    return {"text": raw}


class VerdictRow(Variant):
    """One matcher of the verdict table: signal, scope, verdict."""

    id: str | None = None
    """A short label for the row, e.g. `D1`. Without one the row is named by its place among
    the chain's rows, e.g. `#4`."""
    signal: SignalTerms = Field(default_factory=list)
    """What the attempt showed, as atoms any of which matches, e.g. `http:410`,
    `code:FARE_EXPIRED`, `timeout`; `a && b` needs both. `{all: [...]}` works too."""
    description: str | None = Field(None)
    """The signal in words when it is not written as atoms, e.g. `the fare changed`. A row
    without any atom matches nothing."""
    scope: Scope = Field(default_factory=Scope)
    """Which attempts the row applies to: named steps, consumers of a handle, or effect
    classes. An empty scope means every step."""
    verdict: VerdictExpr
    """What a match leads to, e.g. `rewind(to: search)`, `reconcile` or
    `dead_end(reason: card_declined, permanent: true)`."""
    no_side_effect: bool = False
    """True only when the provider guarantees this failure changed nothing. Only such rows
    let an unkeyed commit be sent again, up to `safe_reject_redispatch`."""
    fragile: str | None = Field(None)
    """`prose-match` when the row matches error message text rather than a code. Keep a
    known_unmatched fallback: message text can change without notice."""
    note: str | None = None
    """Why the row exists or why its verdict is right, for reviewers."""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "rejected_before_execution" in data:  # v0.3 name
                legacy = data.pop("rejected_before_execution")
                data.setdefault("no_side_effect", legacy)
            if data.get("fragile") is True:
                data["fragile"] = "prose-match"
            elif data.get("fragile") is False:
                data["fragile"] = None
            for key in ("applies_to", "step_scope"):
                if key in data:
                    data.setdefault("scope", data.pop(key))
        return data


# --- naming rows ------------------------------------------------------------


def row_ref(row: VerdictRow, n: int) -> str:
    """Domain row ``n`` (1-based, among the chain's own rows): its id, else ``#n``.

    The rule is :func:`chains.core.paths.item_ref`, the one every element path uses.

    >>> row_ref(VerdictRow(id="D3", verdict="retry"), 3), row_ref(VerdictRow(verdict="retry"), 4)
    ('D3', '#4')
    """
    return item_ref(row.id, n)


def trace_row_ref(row: VerdictRow, n: int) -> str:
    """Domain row ``n`` as a run's trace names it: its id, else ``domain#n`` (never generic)."""
    return row.id or f"domain#{n}"


def generic_row_ref(n: int) -> str:
    """Generic row ``n`` of SPEC §3 (1-12) as a run's trace names it: ``#n``."""
    return f"#{n}"


def rows_by_ref(rows: Iterable[VerdictRow]) -> dict[str, VerdictRow]:
    """Each domain row under its :func:`row_ref`; of rows sharing an id the first is kept.

    >>> sorted(rows_by_ref([VerdictRow(id="D1", verdict="ok"), VerdictRow(verdict="retry")]))
    ['#2', 'D1']
    """
    found: dict[str, VerdictRow] = {}
    for n, row in enumerate(rows, 1):
        found.setdefault(row_ref(row, n), row)
    return found


class KnownUnmatched(Element):
    signal: str
    """A documented signal deliberately left to the default rows (reconcile while a commit
    is out, else dead end), e.g. `code:4711`."""
    note: str | None = None
    """Why no row handles it, e.g. `meaning undocumented; failing closed is right`."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"signal": value}
        return value
