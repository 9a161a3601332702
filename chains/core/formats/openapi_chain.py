"""A chain as an OpenAPI 3.1 document with ``x-chain`` extensions, and back, losing nothing.

:func:`to_openapi` writes one operation per bound action, at its method and
path. The operation *is* that action: its location gives the binding's
method and path, ``description`` the action's description, and an
``x-chain-<field>`` extension each other field (``x-chain-action`` the id,
``x-chain-effect``, ``x-chain-idempotency``, ``x-chain-http`` the rest of the
binding, ``x-chain-confirmation``, ...); a person who edits one of them
edits the chain. The top-level ``x-chain`` holds the rest of the chain
(handles, gates, verdict table, policy, ...), with ``actions`` giving the
order: a bound action by its id, every other action whole. An action travels
whole in ``x-chain`` too when OpenAPI cannot hold it as an operation: its
method and path are another bound action's (OpenAPI has one operation per
method and path), or its id is not unique (so no reference could name it).
What OpenAPI tooling reads besides (``operationId``, ``parameters``,
``requestBody``, ``responses``, ``x-chain-verdicts``, ``info``) is written
from the chain (:mod:`.openapi_operation`); :func:`load_openapi_chain`
renders it again and warns where it differs, since that edit is not read.

:func:`is_chain_openapi` tells such a document from a provider's OpenAPI
document, which the OpenAPI proposal (:mod:`chains.core.openapi`) reads.
docs/openapi-export.md is the user's account of all this.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import DocumentError, Problem
from ..model import Action, ChainSpec
from .canonical import canonical_document
from .openapi_operation import RENDERED, rendered_parts
from .result import ImportResult
from .validation import error_message, extras_problems, locate, unreadable_problems, validate_chain

__all__ = ["CHAIN_KEY", "OPENAPI_VERSION", "is_chain_openapi", "load_openapi_chain", "to_openapi"]

OPENAPI_VERSION = "3.1.0"
CHAIN_KEY = "x-chain"
_PREFIX = "x-chain-"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Action fields an operation holds in its own words, not as an x-chain-<field> extension.
_OWN = {"id": "x-chain-action", "description": "description", "http": "x-chain-http"}
_ACTION_KEYS = frozenset(f.alias or name for name, f in Action.model_fields.items())
Severity = Literal["error", "warning", "info"]
# OpenAPI counts /a/{x} and /a/{y} as the same path.
_TEMPLATE_PARAMETER = re.compile(r"\{[^}]*\}")


def is_chain_openapi(data: Any) -> bool:
    """Is ``data`` an OpenAPI document that :func:`to_openapi` wrote (it carries ``x-chain``)?

    >>> is_chain_openapi({"openapi": "3.1.0", "paths": {}}), is_chain_openapi({"id": "c"})
    (False, False)
    """
    return isinstance(data, dict) and "openapi" in data and CHAIN_KEY in data


def _extension(field: str) -> str:
    return _OWN.get(field) or _PREFIX + field.replace("_", "-")


def to_openapi(spec: ChainSpec) -> dict[str, Any]:
    """``spec`` as an OpenAPI 3.1 document; :func:`load_openapi_chain` gives the same chain back.

    >>> doc = to_openapi(ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "get_order", "effect": "read", "http": {"method": "GET", "path": "/o/{id}"}},
    ...     {"id": "pick", "effect": "select"}]}))
    >>> doc["paths"]["/o/{id}"]["get"]["x-chain-effect"], doc["x-chain"]["actions"]
    ('read', ['get_order', {'id': 'pick', 'effect': 'select'}])
    """
    document = canonical_document(spec)
    rows = document.get("verdict_table", [])
    operations = _operation_places(spec)
    paths: dict[str, dict[str, Any]] = {}
    order: list[Any] = []
    for n, (action, written) in enumerate(
        zip(spec.actions, document.get("actions", []), strict=True)
    ):
        if n not in operations:
            order.append(written)
            continue
        order.append(action.id)
        path, method = operations[n]
        paths.setdefault(path, {})[method] = _operation(spec, action, written, rows)
    rest = {key: order if key == "actions" else value for key, value in document.items()}
    return {"openapi": OPENAPI_VERSION, "info": _info(spec), "paths": paths, CHAIN_KEY: rest}


def _info(spec: ChainSpec) -> dict[str, Any]:
    info: dict[str, Any] = {"title": spec.title or spec.id, "version": spec.spec_version}
    if spec.description:
        info["description"] = spec.description
    return info


def _operation_places(spec: ChainSpec) -> dict[int, tuple[str, str]]:
    """Action position → (path, method) for each action that is an operation."""
    counted = Counter(action.id for action in spec.actions)
    taken: set[tuple[str, str]] = set()
    places = {}
    for n, action in enumerate(spec.actions):
        if action.http is None or counted[action.id] > 1:
            continue
        method = action.http.method.lower()
        same = (_TEMPLATE_PARAMETER.sub("{}", action.http.path), method)
        if same not in taken:
            taken.add(same)
            places[n] = (action.http.path, method)
    return places


def _operation(
    spec: ChainSpec, action: Action, written: dict[str, Any], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    parts = rendered_parts(spec, action, rows)
    operation: dict[str, Any] = {"operationId": parts.pop("operationId")}
    if action.description is not None:
        operation["description"] = action.description
    verdicts = parts.pop("x-chain-verdicts")
    operation.update(parts)
    operation["x-chain-action"] = action.id
    operation["x-chain-effect"] = written["effect"]
    operation["x-chain-idempotency"] = written.get("idempotency")  # null: no idempotency said
    binding = {k: v for k, v in written["http"].items() if k not in ("method", "path")}
    if binding:
        operation["x-chain-http"] = binding
    for key, value in written.items():
        if key not in ("id", "description", "effect", "idempotency", "http"):
            operation[_extension(key)] = value
    operation["x-chain-verdicts"] = verdicts
    return operation


# --- reading it back -----------------------------------------------------------------------


class _Operation:
    """One operation that holds an action: where it is, what it says, the action it gives."""

    def __init__(self, path: str, method: str, body: dict[str, Any], where: dict) -> None:
        self.path, self.method, self.body, self.where = path, method, body, where
        self.name = f"{method.upper()} {path}"
        self.action: dict[str, Any] = {}

    def problem(self, message: str, *loc: Any, severity: Severity = "error") -> Problem:
        """``message`` about field ``loc`` of this operation, named and at its line."""
        line, column = locate(self.where, ("paths", self.path, self.method, *loc))
        text = f"operation {self.name}: {_field_name(loc)}{message}"
        return Problem(text, line, column, severity=severity)


def _field_name(loc: tuple) -> str:
    """``("x-chain-http", "sends", "offer_id")`` → ``"x-chain-http.sends.offer_id: "``."""
    return ".".join(str(part) for part in loc) + ": " if loc else ""


def _refuse(message: str, where: dict, *loc: Any) -> DocumentError:
    return DocumentError([Problem(message, *locate(where, loc))])


def load_openapi_chain(document: dict[str, Any], where: dict) -> ImportResult:
    """Read the chain of an OpenAPI document :func:`to_openapi` wrote; report, never raise.

    An operation's own fields and extensions are the action; a malformed one
    is refused with the operation and the field. ``where`` places the
    document's values (the readers' location map), so problems carry a line.
    """
    result = ImportResult(format="openapi")
    try:
        operations, problems = _read_operations(document, where)
        data, placed = _assemble(document[CHAIN_KEY], operations, where, problems)
        beneath = {loc[1:]: at for loc, at in where.items() if loc[:1] == (CHAIN_KEY,)}
        spec = validate_chain(data, beneath)
    except DocumentError as exc:
        result.problems.extend(exc.problems)
        return result
    result.chains.append(spec)
    result.problems.extend(problems)
    result.problems.extend(_edited_rendering(document, spec, placed, where))
    result.problems.extend(extras_problems(spec, beneath))
    result.problems.extend(unreadable_problems(spec, beneath))
    return result


def _read_operations(
    document: dict[str, Any], where: dict
) -> tuple[list[_Operation], list[Problem]]:
    """Every operation holding an action, in document order, and warnings; errors stop it."""
    errors: list[Problem] = []
    notes: list[Problem] = []
    found: list[_Operation] = []
    paths = document.get("paths") or {}
    if not isinstance(paths, dict):
        raise _refuse("paths: expected a mapping of path to operations", where, "paths")
    for path, item in paths.items():
        for method in _METHODS if isinstance(item, dict) else ():
            if isinstance(item.get(method), dict):
                operation = _Operation(str(path), method, item[method], where)
                if "x-chain-action" not in operation.body:
                    why = "has no x-chain-action, so it is no action of the chain; left out"
                    notes.append(operation.problem(why, severity="warning"))
                    continue
                errors.extend(_read_action(operation))
                found.append(operation)
    if errors:
        raise DocumentError(errors)
    return found, notes


def _read_action(operation: _Operation) -> list[Problem]:
    """Fill ``operation.action`` from its fields and extensions; the problems found."""
    body = operation.body
    ident = body["x-chain-action"]
    if not isinstance(ident, str) or not ident:
        return [
            operation.problem(f"expected the action's id as text, got {ident!r}", "x-chain-action")
        ]
    data: dict[str, Any] = {"id": ident}
    if "description" in body:
        data["description"] = body["description"]
    binding: Any = body.get("x-chain-http", {})
    problems = []
    for key, value in body.items():
        field = key.removeprefix(_PREFIX).replace("-", "_")
        if not key.startswith(_PREFIX) or key in (*_OWN.values(), "x-chain-verdicts"):
            continue
        if field in _ACTION_KEYS and field not in _OWN:
            data[field] = value
        else:
            known = f"expected one of {_known_extensions()}"
            problems.append(operation.problem(f"no action field has this extension; {known}", key))
    if not isinstance(binding, dict):
        parts = "operation_id, idempotency_header, sends, reads"
        why = f"expected a mapping of the binding's {parts}, got {type(binding).__name__}"
        return [*problems, operation.problem(why, "x-chain-http")]
    for placed in ("method", "path") if binding else ():
        if placed in binding:
            why = f"the operation's place gives the {placed}; leave it out here"
            problems.append(operation.problem(why, "x-chain-http", placed))
    if problems:
        return problems
    data["http"] = {"method": operation.method.upper(), "path": operation.path, **binding}
    if data.get("idempotency") is None:
        data.pop("idempotency", None)
    try:
        Action.model_validate(data)
    except ValidationError as exc:
        return [_field_problem(operation, err) for err in exc.errors(include_url=False)]
    operation.action = data
    return []


def _known_extensions() -> str:
    fields = sorted(_extension(f) for f in _ACTION_KEYS if f not in _OWN)
    return ", ".join(["x-chain-action", "x-chain-http", *fields])


def _field_problem(operation: _Operation, err: Any) -> Problem:
    """A validation error of the action, named by the operation field that holds the value."""
    skip = ("function-", "list[", "dict[")
    loc = [part for part in err["loc"] if not str(part).startswith(skip)]
    head = str(loc[0]) if loc else "id"
    if head == "http" and len(loc) > 1 and loc[1] in ("method", "path"):
        return operation.problem(f"{error_message(err)} (the operation's {loc[1]})")
    return operation.problem(error_message(err), _extension(head), *loc[1:])


def _assemble(
    rest: Any, operations: list[_Operation], where: dict, notes: list[Problem]
) -> tuple[dict[str, Any], list[tuple[int, _Operation]]]:
    """The chain's data: ``x-chain`` with each reference replaced by its operation's action.

    Returns it with each operation's position among the actions. An operation
    that ``x-chain.actions`` does not name is added after the others, with a warning.
    """
    if not isinstance(rest, dict):
        kind = type(rest).__name__
        why = f"{CHAIN_KEY}: expected a mapping (the chain without its bound actions), got {kind}"
        raise _refuse(why, where, CHAIN_KEY)
    listed = rest.get("actions") or []
    if not isinstance(listed, list):
        why = f"{CHAIN_KEY}.actions: expected a list of action ids and actions"
        raise _refuse(why, where, CHAIN_KEY, "actions")
    by_id: dict[str, _Operation] = {}
    errors = []
    for operation in operations:
        ident = operation.action["id"]
        if ident in by_id:
            why = f"{by_id[ident].name} holds action {ident!r} already; an action is one operation"
            errors.append(operation.problem(why, "x-chain-action"))
        by_id.setdefault(ident, operation)
    actions: list[Any] = []
    placed: list[tuple[int, _Operation]] = []
    for n, item in enumerate(listed):
        if not isinstance(item, str):
            actions.append(item)
        elif item in by_id:
            placed.append((len(actions), by_id.pop(item)))
            actions.append(placed[-1][1].action)
        else:
            why = (
                "is listed twice"
                if any(item == o.action["id"] for _, o in placed)
                else ("names no operation's x-chain-action")
            )
            at = locate(where, (CHAIN_KEY, "actions", n))
            errors.append(Problem(f"{CHAIN_KEY}.actions[{n}]: {item!r} {why}", *at))
    for ident, operation in by_id.items():  # operations the order does not name
        why = f"{CHAIN_KEY}.actions does not list {ident!r}; added after the other actions"
        notes.append(operation.problem(why, severity="warning"))
        placed.append((len(actions), operation))
        actions.append(operation.action)
    if errors:
        raise DocumentError(errors)
    data = dict(rest)
    if actions:
        data["actions"] = actions
    return data, placed


def _edited_rendering(
    document: dict[str, Any], spec: ChainSpec, placed: list[tuple[int, _Operation]], where: dict
) -> list[Problem]:
    """A warning for each rendered part a person changed: that edit was not read."""
    found = []
    if document.get("info") != _info(spec):
        why = f"info is written from {CHAIN_KEY} (title, description, spec_version)"
        at = locate(where, ("info",))
        found.append(Problem(f"{why}; the edit was not read", *at, severity="warning"))
    rows = canonical_document(spec).get("verdict_table", [])
    for n, operation in placed:
        expected = rendered_parts(spec, spec.actions[n], rows)
        for key, source in RENDERED.items():
            if operation.body.get(key) != expected.get(key):
                why = f"written from {source}; the edit was not read"
                found.append(operation.problem(why, key, severity="warning"))
    return found
