"""Verdict expressions: parse every spelling in use, print one canonical form.

A verdict is a structured value (:class:`Verdict`); in documents it is written
as a small call expression such as ``repair(to: search, fields: [dates,
cabin])``. SPEC v0.4 and real compiles spell the same verdict several ways
(positional or named arguments, quoted or bare strings, ``rejected``
argument names from older drafts); :func:`parse_verdict` accepts them all and
:func:`format_verdict` prints the one canonical spelling, so a parsed and
printed verdict re-parses to an equal value.

>>> v = parse_verdict("repair(to: search, fields: [dates, cabin])")
>>> v.type, v.to, v.fields
('repair', 'search', ['dates', 'cabin'])
>>> format_verdict(parse_verdict("dead_end(insufficient_balance)"))
'dead_end(reason: insufficient_balance)'
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import VerdictSyntaxError
from .memo import by_identity, lru_short

__all__ = [
    "GENERIC_ROWS",
    "POSITIONAL",
    "VERDICT_TYPES",
    "Verdict",
    "build_verdict",
    "format_verdict",
    "parse_verdict",
]

VerdictType = Literal[
    "ok", "retry", "rewind", "repair", "reselect", "gate", "reconcile", "dead_end", "escalate"
]
VERDICT_TYPES: tuple[str, ...] = VerdictType.__args__  # type: ignore[attr-defined]

# Names older drafts and compiles use for the same verdicts.
_TYPE_ALIASES = {"dead-end": "dead_end", "deadend": "dead_end", "escalate_operator": "escalate"}

# The argument a verdict takes when it is written positionally: ``gate(x)``.
POSITIONAL = {
    "rewind": "to",
    "repair": "to",
    "reselect": "to",
    "gate": "gate",
    "dead_end": "reason",
    "escalate": "audience",
}
_ARG_ALIASES = {"id": "gate", "target": "to", "step": "to", "operator": "audience"}
_NEEDS_TARGET = {"rewind", "repair", "reselect"}


class Verdict(BaseModel):
    """One classified outcome: what the run does next."""

    # A docstring under a field is its description: the verdict builder's help reads it.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    type: VerdictType
    """What the run does next: ok, retry, rewind, repair, reselect, gate, reconcile, dead_end
    or escalate. An unkeyed commit is never retried: a lost answer is reconciled."""
    empty: bool = False
    """ok(empty): a valid answer that found nothing; the action's empty route decides next."""
    to: str | None = None
    """For rewind, repair and reselect: the step to go back to, usually the one that mints
    the dead handle again (e.g. quote)."""
    fields: list[str] = Field(default_factory=list)
    """For repair: the intent fields the model or user may change, e.g. dates, cabin."""
    gate: str | None = None
    """For gate: the gate the run pauses at, e.g. price_consent."""
    reason: str | None = None
    """For dead_end: a short machine-readable reason, e.g. sold_out or card_declined."""
    permanent: bool | None = None
    """For dead_end: true when trying again later cannot help."""
    retry_after_hint: str | None = None
    """For dead_end: when trying again may help, e.g. 1h."""
    audience: str | None = None
    """For escalate: who is asked, usually operator."""
    extras: dict[str, Any] = Field(default_factory=dict)
    """Arguments kept as written that the grammar does not know."""

    @model_validator(mode="after")
    def _check_arguments(self) -> Verdict:
        if self.type in _NEEDS_TARGET and not self.to:
            raise ValueError(f"{self.type} needs a target step: {self.type}(to: <step>)")
        if self.type == "gate" and not self.gate:
            raise ValueError("gate needs a gate id: gate(<id>)")
        if self.empty and self.type != "ok":
            raise ValueError("only ok can be ok(empty)")
        return self

    def __str__(self) -> str:
        return format_verdict(self)


# --- parsing ---------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<punct>[()\[\]{},:])
      | (?P<word>[^\s()\[\]{},:"']+(?:\s+[^\s()\[\]{},:"']+)*)
    )""",
    re.VERBOSE | re.DOTALL,
)
# ``/* ... */`` notes inside an expression (compiles write them) are dropped;
# quoted strings are matched first so a ``/*`` inside one survives.
_COMMENT = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|/\*.*?\*/""", re.DOTALL)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), literal[1:-1], flags=re.DOTALL)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = _COMMENT.sub(lambda m: m[1] or " ", text).strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise VerdictSyntaxError(f"unexpected character {text[pos]!r} in verdict {text!r}")
        pos = m.end()
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "str":
            value = _unquote(value)
        out.append((kind, value))
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            want = f"{value!r}" if value else "more"
            raise VerdictSyntaxError(f"expected {want} in verdict {self.text!r}")
        self.i += 1
        return tok

    def value(self) -> Any:
        kind, val = self.take()
        if (kind, val) == ("punct", "["):
            items = []
            while self.peek() and self.peek() != ("punct", "]"):
                items.append(self.value())
                if self.peek() == ("punct", ","):
                    self.take(",")
            self.take("]")
            return items
        if kind == "punct":
            raise VerdictSyntaxError(f"unexpected {val!r} in verdict {self.text!r}")
        if kind == "word":
            if val in ("true", "false"):
                return val == "true"
            if val in ("null", "none", "~"):
                return None
            if re.fullmatch(r"-?\d+", val):
                return int(val)
        return val

    def expression(self) -> tuple[str, list[Any], dict[str, Any]]:
        kind, name = self.take()
        if kind != "word":
            raise VerdictSyntaxError(f"a verdict starts with its name, not {name!r}")
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        if self.peek() == ("punct", "("):
            self.take("(")
            while (tok := self.peek()) and tok != ("punct", ")"):
                nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
                if tok[0] == "word" and nxt == ("punct", ":"):
                    key = self.take()[1]
                    self.take(":")
                    kwargs[key] = self.value()
                else:
                    args.append(self.value())
                if self.peek() == ("punct", ","):
                    self.take(",")
            self.take(")")
        if (extra := self.peek()) is not None:
            raise VerdictSyntaxError(f"unexpected {extra[1]!r} after the verdict in {self.text!r}")
        return name, args, kwargs


def parse_verdict(text: str) -> Verdict:
    """Parse a verdict expression in any spelling SPEC or the compiles use.

    Raises :class:`VerdictSyntaxError` with a message naming the problem.
    Each distinct text is parsed once: a document is validated on every edit
    and holds the same few dozen verdicts each time. The result is frozen and
    shared, so never change its ``fields`` or ``extras`` in place. A text
    longer than ``memo.SHORT_CHARS`` is parsed every time, never kept.

    >>> parse_verdict("gate(price_change_consent)").gate
    'price_change_consent'
    >>> parse_verdict("ok(empty)").empty
    True
    """
    if not isinstance(text, str) or not text.strip():
        raise VerdictSyntaxError("a verdict must be a non-empty expression such as 'retry'")
    return _parse_once(text)


@lru_short(maxsize=4096)
def _parse_once(text: str) -> Verdict:
    name, args, kwargs = _Parser(text.strip().strip("`")).expression()
    name = _TYPE_ALIASES.get(name, name)
    if name not in VERDICT_TYPES:
        raise VerdictSyntaxError(
            f"unknown verdict {name!r}; expected one of {', '.join(VERDICT_TYPES)}"
        )
    data: dict[str, Any] = {"type": name}
    if name == "ok":
        if args == ["empty"] or kwargs.pop("empty", False) is True:
            data["empty"] = True
        elif args:
            raise VerdictSyntaxError(f"ok takes no argument but 'empty', got {args!r}")
    elif args:
        if len(args) > 1 or name not in POSITIONAL:
            raise VerdictSyntaxError(f"{name} takes named arguments, got {args!r}")
        data[POSITIONAL[name]] = args[0]
    extras: dict[str, Any] = {}
    for key, val in kwargs.items():
        key = _ARG_ALIASES.get(key, key)
        if key in ("to", "gate", "reason", "audience", "retry_after_hint"):
            data[key] = None if val is None else _text(val)
        elif key == "fields":
            data["fields"] = [_text(v) for v in (val if isinstance(val, list) else [val])]
        elif key == "permanent" and isinstance(val, bool):
            data["permanent"] = val
        else:
            extras[key] = val
    if extras:
        data["extras"] = extras
    try:
        return Verdict(**data)
    except ValueError as exc:
        raise VerdictSyntaxError(_first_error(exc)) from None


def _text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return _atom(value)
    return str(value)


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        msg = errors()[0]["msg"]
        return msg.removeprefix("Value error, ")
    return str(exc)


# --- printing --------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def _atom(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_atom(v) for v in value) + "]"
    text = str(value)
    if _BARE.fullmatch(text) and text not in ("true", "false", "null", "none"):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


# Named arguments in the order they are printed, after the positional one.
_NAMED = ("to", "fields", "gate", "reason", "permanent", "retry_after_hint", "audience")


@by_identity(limit=4096)  # verdicts are frozen; a run prints its rows' verdicts again and again
def format_verdict(verdict: Verdict) -> str:
    """Print the canonical spelling of ``verdict``.

    The argument a verdict takes positionally (``gate(x)``, ``escalate(x)``,
    ``ok(empty)``) is written that way; every other argument that is set is
    written by name in a fixed order, then unknown arguments sorted by name.

    >>> format_verdict(parse_verdict("dead_end(permanent: true, reason: fraud)"))
    'dead_end(reason: fraud, permanent: true)'
    """
    v = verdict
    args: list[tuple[str | None, Any]] = []
    positional = None
    if v.type == "ok" and v.empty:
        args.append((None, "empty"))
    elif v.type in ("gate", "escalate") and POSITIONAL[v.type] and getattr(v, POSITIONAL[v.type]):
        positional = POSITIONAL[v.type]
        args.append((None, getattr(v, positional)))
    for key in _NAMED:
        if key == positional:
            continue
        value = getattr(v, key)
        if key == "fields":
            if value or v.type == "repair":
                args.append((key, list(value)))
        elif value is not None:
            args.append((key, value))
    args += sorted(v.extras.items())
    if not args:
        return v.type
    inner = ", ".join(_atom(val) if key is None else f"{key}: {_atom(val)}" for key, val in args)
    return f"{v.type}({inner})"


def build_verdict(parts: dict[str, Any], keep: Verdict | None = None) -> str:
    """The canonical text of a verdict given as parts (what a verdict builder form posts).

    ``parts`` holds ``type`` and any of ``to``, ``gate``, ``fields`` (a list
    or a comma-separated string), ``reason``, ``permanent``,
    ``retry_after_hint``, ``audience``; empty values are left out. Raises
    :class:`VerdictSyntaxError` naming what is missing or wrong. ``keep`` is
    the verdict the builder edits: when the type stays, its arguments that
    are no key of ``parts`` (the builder does not show them: ``audience``,
    ``ok(empty)``, unknown ones) stay.

    >>> build_verdict({"type": "repair", "to": "search", "fields": "dates, cabin", "gate": ""})
    'repair(to: search, fields: [dates, cabin])'
    >>> stored = parse_verdict("escalate(audience: billing)")
    >>> build_verdict({"type": "escalate", "reason": ""}, stored)
    'escalate(billing)'
    """
    given = {k: v for k, v in parts.items() if v not in (None, "", [])}
    if keep is not None and keep.type == given.get("type"):
        kept = {k: getattr(keep, k) for k in _NAMED if k not in parts}
        given = {**{k: v for k, v in kept.items() if v not in (None, [])}, **given}
        if keep.empty or keep.extras:
            given.update(empty=keep.empty, extras=dict(keep.extras))
    if isinstance(given.get("fields"), str):
        given["fields"] = [f.strip() for f in given["fields"].split(",") if f.strip()]
    if isinstance(given.get("permanent"), str):
        given["permanent"] = given["permanent"].lower() in ("1", "true", "yes", "on")
    unknown = sorted(set(given) - {"type", "empty", "extras", *_NAMED})
    if unknown:
        raise VerdictSyntaxError(f"a verdict has no argument {', '.join(unknown)}")
    try:
        return format_verdict(Verdict(**given))
    except ValueError as exc:
        raise VerdictSyntaxError(_first_error(exc)) from None


# The generic skeleton of SPEC §3, evaluated after the domain rows: (number,
# signal, applies to, verdict). Rows 11 and 12 are fixed: no config may move them.
GENERIC_ROWS: tuple[tuple[int, str, str, str], ...] = (
    (
        1,
        "a staleness signal of a consumed handle, HTTP status or in the payload",
        "any consumer of the handle",
        "rewind(to: the handle's refresh), shallowest dead first",
    ),
    (
        2,
        "empty.detect matches, on success or on a declared error shape",
        "actions with a valid empty",
        "ok(empty), then empty.route",
    ),
    (3, "transport success, once no payload-level row matched", "any", "ok"),
    (4, "rate limit (429 or a throttle code)", "read, mint, keyed commit", "retry"),
    (
        5,
        "rate limit or documented safe rejection",
        "unkeyed commit",
        "retry only if declared no_side_effect (within safe_reject_redispatch), else reconcile",
    ),
    (6, "transport fault: 5xx, timeout, connection reset", "read, mint, keyed commit", "retry"),
    (
        7,
        "transport fault: timeout, dropped connection, ambiguous 5xx",
        "unkeyed commit",
        "reconcile",
    ),
    (8, "provider changed the terms (price, schedule)", "per config", "gate(consent)"),
    (9, "deterministic reject (validation, policy, fraud)", "any", "dead_end"),
    (
        10,
        "a sub-resource is gone but the chain can go on degraded",
        "per config",
        "gate(degrade consent), or degrade and ok",
    ),
    (11, "anything unmatched", "a commit is in flight", "reconcile"),
    (12, "anything unmatched", "otherwise", "dead_end (never the model's call)"),
)
