"""Lint rules: values code cannot use — placeholders and durations that do not parse.

A compile written in a hurry leaves markers where a value should be (``TODO``,
``TBD``, ``???``, ``<that workbench's refresh>``). The loader keeps them as
text, so they save and would otherwise lint clean, yet no code can evaluate
them (SPEC §3: matchers are "evaluated by deterministic code"). The same goes
for a duration the loader could not read (``timeout: forty seconds``): the
model keeps its text with no seconds (see :class:`~chains.core.model.Duration`).

What is scanned: every value of the document except the authors' remarks
(``notes``), evidence (``source``) and unknown keys kept in ``extras``, which
describe the document rather than configure it. A placeholder in prose a
person reads (a description, a reason, an ordering note) is a warning; one in
a value code reads is an error. A rematch key that is only a placeholder is
left to ``handles.rematch-key-placeholder``, so it is reported once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..model import ChainSpec, Duration, Element, Rematch
from ..verdicts import Verdict, format_verdict
from .context import LintContext
from .registry import Found, rule

__all__ = ["is_placeholder", "names_payload_field", "placeholders", "unreadable"]


_PLACEHOLDER = re.compile(
    r"\b(?:TODO|TBD|TBC|FIXME)\b"
    r"|\?\?\?"
    # <that workbench's refresh>, <payload path>: a word right after '<' and
    # right before '>', nothing comparing in between (so `a < b and c > d` is not one).
    r"|(?<![<=!-])<(?=[A-Za-z_])[^<>=\n]{0,80}(?<=[\w.…'\")\]])>(?![=>])",
    re.IGNORECASE,
)
_NOT_SCANNED = {"notes", "source", "extras"}
# Prose fields a person reads; a placeholder there does not change behaviour.
_PROSE = {"title", "description", "reason", "note", "ordering_note", "window", "text"}


# Not placeholders: a template a value is computed from (``<token(run_id)>``),
# and a provider's message quoted with its own slot (``"product '<id>' is gone"``).
_TEMPLATE = re.compile(r"^<\w+\(.*\)>$")
_QUOTES = "'\"`‘’“”"


def placeholders(text: str) -> list[str]:
    """The placeholders written in ``text``.

    >>> placeholders("refresh at <that workbench's refresh>, TODO confirm")
    ["<that workbench's refresh>", 'TODO']
    >>> placeholders("expires_at < now and amount > 0")
    []
    >>> placeholders("409 'product <id> is unavailable'"), placeholders("<token(run_id)>")
    ([], [])
    """
    found = []
    for m in _PLACEHOLDER.finditer(text):
        before, after = text[: m.start()], text[m.end() :]
        quoted = any(before.count(q) % 2 == 1 for q in "'\"`") or any(
            before.rstrip().endswith(q) and after.lstrip().startswith(q) for q in _QUOTES
        )
        if not (_TEMPLATE.match(m.group(0)) or (m.group(0).startswith("<") and quoted)):
            found.append(m.group(0))
    return found


def is_placeholder(text: str) -> bool:
    """True when ``text`` is nothing but placeholders (and punctuation).

    >>> is_placeholder("<intent fields>"), is_placeholder("TBD"), is_placeholder("carrier")
    (True, True, False)
    """
    rest = _PLACEHOLDER.sub("", text)
    return bool(placeholders(text)) and not re.search(r"\w", rest)


def _texts(value: Any) -> Iterator[str]:
    """Every string a field value holds (lists, mappings and their keys, verdicts, durations)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Duration):
        yield value.text
    elif isinstance(value, Verdict):
        yield format_verdict(value)
    elif isinstance(value, list):
        for item in value:
            if not isinstance(item, Element):
                yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            if not isinstance(item, Element):
                yield from _texts(item)


def _field_placeholders(ctx: LintContext) -> Iterator[tuple[str, str, list[str]]]:
    """(element path, field name, placeholders) for every scanned field holding one."""
    for path, element in ctx.elements:
        for name, field in type(element).model_fields.items():
            if name in _NOT_SCANNED or (isinstance(element, Rematch) and name == "key"):
                continue
            found = [p for text in _texts(getattr(element, name)) for p in placeholders(text)]
            if found:
                yield path, field.alias or name, found


def _where(path: str, name: str) -> str:
    return name if path == "chain" else f"{path}.{name}"


@rule(
    "values.placeholder",
    "error",
    "SPEC §3",
    hint="Write the value, or if nobody knows it yet, leave the field out and ask the "
    "question in the document's UNKNOWNs (SKILL Step 6 §10).",
)
def placeholder(spec: ChainSpec, ctx: LintContext) -> Found:
    """A value code evaluates is a placeholder (TODO, TBD, ???, <…>)."""
    for path, name, found in _field_placeholders(ctx):
        if name not in _PROSE:
            where = _where(path, name)
            yield where, f"{where} holds {', '.join(map(repr, found))}, which no code can use."


@rule(
    "values.placeholder-in-prose",
    "warning",
    "SKILL Step 6",
    hint="Finish the sentence, or move the open question to the document's UNKNOWNs.",
)
def placeholder_in_prose(spec: ChainSpec, ctx: LintContext) -> Found:
    """A description, reason or note a reviewer reads still holds a placeholder."""
    for path, name, found in _field_placeholders(ctx):
        if name in _PROSE:
            where = _where(path, name)
            yield where, f"{where} still holds {', '.join(map(repr, found))}."


# Durations that deliberately state no number (SPEC §2.1 ``key_retention:
# duration | unlimited``, §2.2 ``ttl_hint: duration | unknown``), the first
# word counting when a remark follows (``n/a (dies with workbench)``).
_NO_NUMBER = {
    "unknown",
    "n/a",
    "na",
    "none",
    "never",
    "unlimited",
    "infinite",
    "indefinite",
    "permanent",
    "durable",
}
# A deadline the response carries, named by its payload path (SPEC §2.1 allows
# evaluating those): ``next_action.display_details.expires_at``.
_PAYLOAD_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_HINTS = {"ttl_hint", "latency_hint"}


def names_payload_field(duration: Duration) -> bool:
    """True when a duration is written as a payload path, not a length of time.

    >>> from chains.core.model import parse_duration
    >>> names_payload_field(parse_duration("next_action.expires_at"))
    True
    >>> names_payload_field(parse_duration("30m")), names_payload_field(parse_duration("unknown"))
    (False, False)
    """
    return duration.seconds is None and bool(_PAYLOAD_PATH.match(duration.text.strip()))


def unreadable(duration: Duration) -> bool:
    """True when ``duration`` states neither a number nor one of the no-number words."""
    if duration.seconds is not None:
        return False
    text = duration.text.strip().lower()
    first = re.split(r"[\s(,;:]+", text, maxsplit=1)[0]
    return not (
        text in _NO_NUMBER
        or first in _NO_NUMBER
        or re.fullmatch(r"per[- ]\w+", text)
        or names_payload_field(duration)
    )


def _durations(ctx: LintContext) -> Iterator[tuple[str, str, Duration]]:
    for path, element in ctx.elements:
        for name, field in type(element).model_fields.items():
            value = getattr(element, name)
            if isinstance(value, Duration) and unreadable(value):
                yield _where(path, field.alias or name), name, value


@rule(
    "values.duration-unparsed",
    "error",
    "SPEC §2.1",
    hint="Write the duration as a number and a unit (40s, 15m, 24h, ~5m, 10-15m), or "
    "unknown / unlimited where the grammar allows it.",
)
def duration_unparsed(spec: ChainSpec, ctx: LintContext) -> Found:
    """A timeout, deadline, retention, interval or budget is not a duration code can read."""
    for where, name, duration in _durations(ctx):
        if name not in _HINTS:
            yield (
                where,
                f"{where} is {duration.text!r}, which is not a duration: the runtime has no "
                "number to enforce.",
            )


@rule(
    "values.hint-unparsed",
    "warning",
    "SPEC §2.2",
    hint="Write the hint as a duration (15m, ~30s, 10-15m) or unknown; hints plan, they never "
    "enforce (P2).",
)
def hint_unparsed(spec: ChainSpec, ctx: LintContext) -> Found:
    """A ttl_hint or latency_hint states no number and is not ``unknown`` or ``n/a``."""
    for where, name, duration in _durations(ctx):
        if name in _HINTS and not re.search(r"\d", duration.text):
            yield where, f"{where} is {duration.text!r}, which no planner can read as a duration."
