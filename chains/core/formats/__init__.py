"""Reading and writing chain documents.

One entry point reads anything a user may hand us (:func:`load`: a YAML or
JSON chain document, or a compile document in Markdown holding several
chains) and returns an :class:`ImportResult` that lists every chain found
and every fragment that was not understood, with its line. It never raises
for bad input. Writing is :func:`dump` (canonical YAML or JSON, or the
Markdown design document of :mod:`.design_doc`).

Refused outright, before any parsing: more than :data:`MAX_BYTES` bytes and
bytes that are not UTF-8.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import DocumentError, Problem
from ..model import ChainSpec
from .yamlio import MAX_DEPTH, comment_notes, comments, parse_yaml, refuse_nul

__all__ = [
    "MAX_BYTES",
    "ImportResult",
    "decode",
    "detect_format",
    "dump",
    "from_document",
    "json_schema",
    "load",
    "parse_json",
    "to_document",
    "validate_chain",
]

MAX_BYTES = 2 * 1024 * 1024

Format = Literal["auto", "yaml", "json", "md"]


@dataclass
class ImportResult:
    """What an import found: the chains, and every problem with its place."""

    chains: list[ChainSpec] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    format: str | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def report(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "chains": [
                {
                    "id": c.id,
                    "handles": len(c.handles),
                    "actions": len(c.actions),
                    "gates": len(c.gates),
                    "verdict_rows": len(c.verdict_table),
                }
                for c in self.chains
            ],
            "problems": [p.as_dict() for p in self.problems],
        }


def decode(data: bytes | str) -> str:
    """Return the text of ``data``, refusing oversized or non-UTF-8 input."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise DocumentError(
            [Problem(f"document is {len(raw):,} bytes; the limit is {MAX_BYTES:,} bytes (2 MB)")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise DocumentError(
            [Problem(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} is invalid", line, column)]
        ) from None
    if "\x00" in text:
        at = text.index("\x00")
        line, column = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
        raise DocumentError([Problem("not a text document: it contains a NUL byte", line, column)])
    return text.removeprefix("\ufeff")


def detect_format(text: str, filename: str | None = None) -> Literal["yaml", "json", "md"]:
    """Guess the format from the file name, else from the content."""
    name = (filename or "").lower()
    if name.endswith((".md", ".markdown")):
        return "md"
    if name.endswith(".json"):
        return "json"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return "json"
    if stripped.startswith("#") and "```" in text or stripped.startswith("```"):
        return "md"
    return "yaml"


def load(data: bytes | str, format: Format = "auto", filename: str | None = None) -> ImportResult:
    """Read chains from ``data``; report every problem instead of raising.

    A YAML or JSON document holds one chain; a Markdown compile document may
    hold several. A chain whose document does not validate is not returned.
    """
    try:
        text = decode(data)
    except DocumentError as exc:
        return ImportResult(problems=exc.problems)
    fmt = detect_format(text, filename) if format == "auto" else format
    if fmt == "md":
        from .markdown import load_markdown

        result = load_markdown(text)
        result.format = "md"
        return result
    result = ImportResult(format=fmt)
    try:
        if fmt == "json":
            data_, where = parse_json(text)
        else:
            data_, where = parse_yaml(text)
            data_ = _with_comment_notes(data_, where, text)
        chain = validate_chain(data_, where)
    except DocumentError as exc:
        result.problems.extend(exc.problems)
        return result
    result.chains.append(chain)
    result.problems.extend(extras_problems(chain, where))
    result.problems.extend(unreadable_problems(chain, where))
    return result


NOTED_SECTIONS = ("handles", "actions", "gates", "verdict_table")


def _with_comment_notes(data: Any, where: dict, text: str) -> Any:
    """``data`` with the YAML comments inside each element added to its ``notes``."""
    found = comments(text)
    if not found or not isinstance(data, dict):
        return data
    data = dict(data)
    for section in NOTED_SECTIONS:
        body = data.get(section)
        if isinstance(body, dict):
            copied: Any = dict(body)
        elif isinstance(body, list):
            copied = list(body)
        else:
            continue
        keys = list(body) if isinstance(body, dict) else list(range(len(body)))
        notes = comment_notes(found, where, [(section, k) for k in keys], text.count("\n") + 1)
        for (_, key), extra in notes.items():
            empty = isinstance(body, dict) and copied[key] is None  # ``name:`` alone
            copied[key] = with_notes({} if empty else copied[key], extra)
        data[section] = copied
    return data


def with_notes(element: Any, notes: list[str]) -> Any:
    """A copy of an element's data with ``notes`` added after any it gives."""
    if not notes or not isinstance(element, dict):
        return element
    given = element.get("notes")
    if isinstance(given, str):
        given = [given]
    if given is not None and not isinstance(given, list):
        return element  # not notes we understand: validation reports it
    return {**element, "notes": [*(given or []), *notes]}


def parse_json(text: str) -> tuple[Any, dict]:
    """Parse JSON with the depth limit; locations come from reading it as YAML."""
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
    try:  # JSON is YAML: reuse the YAML reader for locations only.
        _, where = parse_yaml(text)
    except DocumentError:
        where = {}
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


def validate_chain(
    data: Any, where: dict | None = None, *, first_line: int | None = None
) -> ChainSpec:
    """Validate plain data as a chain; problems carry the path and line.

    >>> validate_chain({"id": "c", "actions": [{"id": "a", "effect": "x"}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.errors.DocumentError: actions[0].effect: expected read | mint | commit | ...
    """
    if not isinstance(data, dict):
        kind = "nothing" if data is None else type(data).__name__
        raise DocumentError([Problem(f"a chain document is a mapping, got {kind}", first_line)])
    try:
        return ChainSpec.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(validation_problems(exc, data, where or {})) from None


def validation_problems(exc: ValidationError, data: Any, where: dict) -> list[Problem]:
    """Turn pydantic errors into problems with a dotted path and a line."""
    problems = []
    for err in exc.errors(include_url=False):
        loc = _source_path(data, tuple(err["loc"]))
        line, column = _locate(where, loc)
        problems.append(Problem(f"{_message(err)}", line, column, path=format_path(loc)))
    return problems


def _source_path(data: Any, loc: tuple) -> tuple:
    """Map a model path back onto the input (mapping-form collections)."""
    out: list[Any] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, int) and part not in node:
            # handles/gates given as a mapping: the n-th key is element n.
            keys = list(node)
            if part < len(keys):
                part = keys[part]
        # A union or validator branch name (e.g. 'function-before'), not a key.
        if (
            isinstance(node, dict)
            and not isinstance(part, int)
            and part not in node
            and str(part).startswith(("function-", "list[", "dict[", "literal[", "str", "int"))
        ):
            continue
        out.append(part)
        node = _child(node, part)
    return tuple(out)


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and part < len(node):
        return node[part]
    return None


def _locate(where: dict, loc: tuple) -> tuple[int | None, int | None]:
    for n in range(len(loc), -1, -1):
        if loc[:n] in where:
            return where[loc[:n]]
    return None, None


def format_path(loc: tuple) -> str:
    """``('actions', 3, 'idempotency', 'mode')`` → ``actions[3].idempotency.mode``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _message(err: Any) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "literal_error":
        expected = ctx.get("expected", "").replace("'", "").replace(" or ", ", ")
        return "expected " + " | ".join(x.strip() for x in expected.split(","))
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    msg = err["msg"].removeprefix("Value error, ")
    given = err.get("input")
    if kind.endswith("_type") and not isinstance(given, (dict, list)):
        return f"{msg[0].lower()}{msg[1:]} (got {given!r})"
    return msg[0].lower() + msg[1:] if msg else kind


def extras_problems(
    chain: ChainSpec, where: dict | None = None, *, line: int | None = None
) -> list:
    """List the keys the grammar does not know, kept in ``extras``: one info each."""
    found: list[Problem] = []

    def walk(obj: Any, path: tuple) -> None:
        from pydantic import BaseModel

        if isinstance(obj, BaseModel):
            extras = getattr(obj, "extras", None)
            if extras:
                for key in extras:
                    loc = (*path, key)
                    # Written as an unknown key, or already under ``extras:``.
                    written = where.get((*path, "extras", key)) if where else None
                    at = written or (_locate(where, loc) if where else (line, None))
                    found.append(
                        Problem(
                            f"unknown key {key!r} kept in extras",
                            at[0],
                            at[1],
                            path=format_path(loc),
                            severity="info",
                        )
                    )
            for name in type(obj).model_fields:
                if name != "extras":
                    walk(getattr(obj, name), (*path, name))
        elif isinstance(obj, list):
            for i, item in enumerate(obj):
                walk(item, (*path, i))
        elif isinstance(obj, dict):
            for key, item in obj.items():
                walk(item, (*path, key))

    walk(chain, ())
    return found


_STEP_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def unreadable_problems(element: Any, where: dict | None = None) -> list[Problem]:
    """Auto-repairs and probes kept but not understood: one warning each, at its line.

    An auto-repair whose transform is prose (``fields: "pick a later date"``)
    or empty would never fire; a probe that is not a step id cannot run. Both
    are imported as written, and said (never an empty ``{}`` in silence).
    """
    from pydantic import BaseModel

    from ..model import AutoRepair, Confirmation
    from ..sim.classifier import auto_repair_transform

    found: list[Problem] = []

    def report(message: str, loc: tuple) -> None:
        at = _locate(where, loc) if where else (None, None)
        found.append(Problem(message, at[0], at[1], path=format_path(loc), severity="warning"))

    def walk(obj: Any, path: tuple) -> None:
        if isinstance(obj, AutoRepair) and not auto_repair_transform(obj, 1):
            report(
                f"auto-repair transform {obj.fields!r} cannot be read, so the auto-repair "
                "would never fire; write `drop <field>`, `<field> := <how>`, a list of "
                "fields to clear or a mapping of field: value",
                (*path, "fields"),
            )
        if isinstance(obj, Confirmation) and obj.probe and not _STEP_ID.match(obj.probe):
            report(
                f"confirmation probe {obj.probe!r} is not a step id; name the read that "
                "confirms the commit",
                (*path, "probe"),
            )
        if isinstance(obj, BaseModel):
            for name in type(obj).model_fields:
                walk(getattr(obj, name), (*path, name))
        elif isinstance(obj, list):
            for i, item in enumerate(obj):
                walk(item, (*path, i))

    walk(element, ())
    return found


def to_document(chain: ChainSpec) -> dict[str, Any]:
    """The JSON-ready document of ``chain`` (what is stored and exported).

    Canonical: key order fixed, defaults left out (see :mod:`.canonical`).
    """
    from .canonical import canonical_document

    return canonical_document(chain)


def from_document(document: dict[str, Any]) -> ChainSpec:
    """Validate a stored document; raises :class:`DocumentError`."""
    return validate_chain(document)


def dump(chain: ChainSpec, format: Literal["yaml", "json", "md"] = "yaml") -> str:
    """Write ``chain`` as canonical YAML or JSON, or as its Markdown design document.

    Re-importing any of them gives an equal chain (``md``: see :mod:`.design_doc`).
    """
    from .canonical import dump_json, dump_yaml

    if format == "json":
        return dump_json(chain)
    if format == "yaml":
        return dump_yaml(chain)
    if format == "md":
        from .design_doc import design_document

        return design_document(chain)
    raise ValueError(f"cannot dump to {format!r}; expected yaml, json or md")


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a chain document, from the pydantic models."""
    schema = ChainSpec.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Chain document (chain-re-action SPEC v0.4)"
    return schema
