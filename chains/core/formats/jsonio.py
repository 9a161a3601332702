"""Safe JSON reading, held to the limits of :mod:`.yamlio`.

:func:`parse_json` refuses duplicate keys (``json`` keeps the last one
silently), nesting deeper than :data:`.yamlio.MAX_DEPTH` and NUL characters,
and names the line and column of each. ``json`` gives no position for the
first two, so the helpers here find it in the text; the location of every
value comes from reading the text again as YAML (JSON is YAML).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import DocumentError, Problem
from .yamlio import MAX_DEPTH, json_locations, refuse_nul

__all__ = ["parse_json"]


def parse_json(text: str, *, locations: bool = True) -> tuple[Any, dict]:
    """Parse JSON with the depth limit; locations come from reading it as YAML.

    Reading it again as YAML costs about twenty times the JSON parse; with
    ``locations=False`` there is none and no location (an empty map).
    """
    too_deep = f"nesting deeper than {MAX_DEPTH} levels of mappings and lists"
    try:
        data = json.loads(text, object_pairs_hook=_refuse_duplicates)
    except json.JSONDecodeError as exc:
        problem = Problem(f"malformed JSON: {exc.msg}", exc.lineno, exc.colno)
        raise DocumentError([problem]) from None
    except RecursionError:
        raise DocumentError([Problem(too_deep, *_deep_position(text))]) from None
    except _DuplicateKey as exc:
        raise DocumentError(
            [Problem(f"duplicate key {exc.key!r}", *_key_position(text, exc.key))]
        ) from None
    if _depth(data) > MAX_DEPTH:
        raise DocumentError([Problem(too_deep, *_deep_position(text))])
    if not locations:
        return data, {}
    where = json_locations(text)  # JSON is YAML: the YAML reader gives the lines
    refuse_nul(data, where)
    return data, where


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _key_position(text: str, key: str) -> tuple[int | None, int | None]:
    """Line and column of the second ``"key":`` in ``text`` (best effort)."""
    needle = json.dumps(key, ensure_ascii=False)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    if second < 0:
        return None, None
    return text.count("\n", 0, second) + 1, second - (text.rfind("\n", 0, second) + 1) + 1


def _deep_position(text: str) -> tuple[int | None, int | None]:
    """Line and column of the first bracket that opens level MAX_DEPTH + 1."""
    depth, in_string, escaped, line, column = 0, False, False, 1, 0
    for ch in text:
        column += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line, column
        elif ch in "]}":
            depth -= 1
        if ch == "\n":
            line, column = line + 1, 0
    return None, None


def _depth(value: Any) -> int:
    """How deeply mappings and lists nest in ``value`` (scalars add nothing)."""
    stack, deepest = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return deepest
