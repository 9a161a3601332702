"""Validation of plain data as a chain, with problems that point at the text.

:func:`validate_chain` turns a parsed document into a :class:`ChainSpec` or
raises :class:`DocumentError`; :func:`validation_problems` is the step that
turns pydantic's errors into problems with an element path
(:meth:`~chains.core.paths.ElementPath.from_location`: ids where the items
have them, else ``#n``),
a line and column (:func:`locate` in the ``where`` map the YAML and JSON
readers build) and a plain message (:func:`error_message`). A chain that
validates can still hold what the grammar does not know or the runtime
cannot read: :func:`extras_problems` and :func:`unreadable_problems` list
those as info and warnings. The compile-document reader uses the same
helpers for each element it validates on its own.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ..errors import DocumentError, Problem
from ..model import AutoRepair, ChainSpec, Confirmation, auto_repair_transform
from ..paths import ElementPath

__all__ = [
    "error_message",
    "extras_problems",
    "locate",
    "source_path",
    "unreadable_problems",
    "validate_chain",
    "validation_problems",
]


def validate_chain(
    data: Any, where: dict | None = None, *, first_line: int | None = None
) -> ChainSpec:
    """Validate plain data as a chain; problems carry the path and line.

    >>> validate_chain({"id": "c", "actions": [{"id": "a", "effect": "x"}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.errors.DocumentError: actions[a].effect: expected read | mint | commit | ...
    """
    if not isinstance(data, dict):
        kind = "nothing" if data is None else type(data).__name__
        raise DocumentError([Problem(f"a chain document is a mapping, got {kind}", first_line)])
    try:
        return ChainSpec.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(validation_problems(exc, data, where or {})) from None


def validation_problems(exc: ValidationError, data: Any, where: dict) -> list[Problem]:
    """Turn pydantic errors into problems with an element path and a line."""
    problems = []
    for err in exc.errors(include_url=False):
        loc = source_path(data, tuple(err["loc"]))
        line, column = locate(where, loc)
        problem = _problem(error_message(err), (line, column), loc, data, "error", _TOP)
        problems.append(problem)
    return problems


def source_path(data: Any, loc: tuple) -> tuple:
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
    if isinstance(node, BaseModel) and isinstance(part, str):
        return getattr(node, part, None)
    if isinstance(node, list) and isinstance(part, int) and part < len(node):
        return node[part]
    return None


def locate(where: dict, loc: tuple) -> tuple[int | None, int | None]:
    """Line and column of ``loc``, else of the nearest value around it that ``where`` places."""
    for n in range(len(loc), -1, -1):
        if loc[:n] in where:
            return where[loc[:n]]
    return None, None


Severity = Literal["error", "warning", "info"]
_TOP = ElementPath(())


def _problem(
    message: str, at: tuple, loc: tuple, data: Any, severity: Severity, base: ElementPath
) -> Problem:
    """A problem at ``loc`` (below ``base``), its positions named by the ids in ``data``."""
    path = base.join(ElementPath.from_location(loc, data))
    return Problem(message, at[0], at[1], str(path) or None, severity)


def error_message(err: Any) -> str:
    """One pydantic error in the words of the grammar (``expected read | mint | ...``)."""
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
    chain: Any, where: dict | None = None, *, line: int | None = None, base: ElementPath = _TOP
) -> list:
    """List the keys the grammar does not know, kept in ``extras``: one info each.

    ``chain`` is a chain or one element of it, at ``base``.
    """
    found: list[Problem] = []

    def walk(obj: Any, path: tuple) -> None:
        if isinstance(obj, BaseModel):
            extras = getattr(obj, "extras", None)
            if extras:
                for key in extras:
                    loc = (*path, key)
                    # Written as an unknown key, or already under ``extras:``.
                    written = where.get((*path, "extras", key)) if where else None
                    at = written or (locate(where, loc) if where else (line, None))
                    message = f"unknown key {key!r} kept in extras"
                    found.append(_problem(message, at, loc, chain, "info", base))
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


def unreadable_problems(
    element: Any, where: dict | None = None, base: ElementPath = _TOP
) -> list[Problem]:
    """Auto-repairs and probes kept but not understood: one warning each, at its line.

    An auto-repair whose transform is prose (``fields: "pick a later date"``)
    or empty would never fire; a probe that is not a step id cannot run. Both
    are imported as written, and said (never an empty ``{}`` in silence).
    """
    found: list[Problem] = []

    def report(message: str, loc: tuple) -> None:
        at = locate(where, loc) if where else (None, None)
        found.append(_problem(message, at, loc, element, "warning", base))

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
