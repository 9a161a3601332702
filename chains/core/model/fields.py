"""Field types shared by every element: durations, verdict expressions, string lists.

A document writes a duration as text (``30m``, ``~5m``, ``10-15m``, ``unknown``)
and a verdict as an expression (``repair(to: search, fields: [dates])``); these
annotated types read that text into a :class:`Duration` or a
:class:`~chains.core.verdicts.Verdict`, write it back as its canonical text,
and give the JSON Schema a plain string with examples. ``StrList`` accepts one
string where a list is meant. The element modules build their fields from these
types and nothing else here knows about elements.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer, WithJsonSchema

from ..errors import VerdictSyntaxError
from ..verdicts import Verdict, format_verdict, parse_verdict

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(
    r"^(?P<mark>[~<>≥≤]|>=|<=)?\s*(?P<lo>\d+(?:\.\d+)?)\s*(?P<lounit>ms|s|min|m|h|d|w)?"
    r"(?:\s*[-–]\s*(?P<hi>\d+(?:\.\d+)?)\s*(?P<hiunit>ms|s|min|m|h|d|w)?)?$"
)


class Duration(BaseModel):
    """A duration as written (``30m``, ``~5m``, ``>25m``, ``10-15m``, ``unknown``).

    ``seconds`` is the (lower) value when the text states one; ``upper`` is
    the top of a range; ``bound`` tells whether the number is exact,
    approximate, a lower or an upper bound. Text that states no number
    (``unknown``, ``n/a``, ``per-payment``) keeps ``seconds`` empty.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    seconds: float | None = None
    upper: float | None = None
    bound: Literal["exact", "approx", "at_least", "at_most", "none"] = "none"

    def __str__(self) -> str:
        return self.text


def parse_duration(value: Any) -> Duration:
    """Read a duration from a document value.

    >>> parse_duration("~5m").seconds, parse_duration("~5m").bound
    (300.0, 'approx')
    >>> parse_duration("10-15m").upper
    900.0
    >>> parse_duration("unknown").seconds is None
    True
    """
    if isinstance(value, Duration):
        return value
    if isinstance(value, dict) and "text" in value:
        return parse_duration(value["text"])
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("expected a duration such as 30s, 15m, 24h, ~5m, unknown or n/a")
    text = str(value).strip()
    if not text:
        raise ValueError("expected a duration, got an empty string")
    m = _DURATION.match(text)
    if not m:
        return Duration(text=text)
    lounit = m["lounit"] or m["hiunit"] or "s"
    seconds = float(m["lo"]) * _UNITS[lounit]
    upper = float(m["hi"]) * _UNITS[m["hiunit"] or lounit] if m["hi"] else None
    mark = m["mark"]
    bound = {"~": "approx", ">": "at_least", ">=": "at_least", "≥": "at_least"}.get(
        mark or "", "at_most" if mark in ("<", "<=", "≤") else "exact"
    )
    return Duration(text=text, seconds=seconds, upper=upper, bound=bound)


DurationText = Annotated[
    Duration,
    BeforeValidator(parse_duration),
    PlainSerializer(lambda d: d.text, return_type=str),
    WithJsonSchema({"type": "string", "examples": ["30s", "15m", "~5m", ">25m", "unknown"]}),
]


def _verdict(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return parse_verdict(value)
        except VerdictSyntaxError as exc:
            raise ValueError(str(exc)) from None
    return value


VerdictExpr = Annotated[
    Verdict,
    BeforeValidator(_verdict),
    PlainSerializer(format_verdict, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "description": "verdict expression, e.g. repair(to: search, fields: [dates])",
            "pattern": r"^(ok|retry|rewind|repair|reselect|gate|reconcile|dead_end|escalate)\b",
        }
    ),
]


def _str_list(value: Any) -> Any:
    """Accept a single string where a list of strings is meant."""
    if isinstance(value, str):
        return [value]
    return value


StrList = Annotated[list[str], BeforeValidator(_str_list)]
