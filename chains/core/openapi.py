"""Proposed actions from a provider's OpenAPI 3 document, with the errors it documents.

The document (OpenAPI 3.0 or 3.1, YAML or JSON) is read with our safe
loader, validated by openapi-spec-validator, and walked with jsonschema-path,
which follows ``$ref``. Each operation becomes an :class:`Operation`: a
proposed action id, an effect guessed from its method and path (the person
importing confirms it), idempotency read from its headers and method, the
request fields (body properties and required parameters) as intent fields,
and the error signals it documents (``http:409 && code:X`` for each code a
4xx or 5xx response's schema enumerates or its examples show, the bare status
for a response that names none).
:func:`propose_actions` turns the chosen ones into chain actions, their
documented errors kept in ``documented_errors``, which the lint rule
``table.documented-error-uncovered`` checks against the verdict table and
``known_unmatched`` (SPEC §3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from jsonschema_path import SchemaPath
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from .errors import DocumentError, Problem
from .formats import decode, parse_json
from .formats.yamlio import parse_yaml

__all__ = ["Operation", "propose_actions", "read_openapi"]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# Words in a POST's path or operation id that say it only reads (a search, a quote).
_READING = re.compile(
    r"search|query|find|lookup|list|quote|price|pricing|availability|validate|estimate|preview",
    re.I,
)
_KEY_HEADER = re.compile(r"idempoten", re.I)
_CODE_KEYS = ("code", "error_code", "errorCode", "type")
_DEPTH = 6  # how deep an error schema is searched for enumerated codes


@dataclass(frozen=True)
class Operation:
    """One operation of the document, as a proposed action."""

    id: str
    method: str
    path: str
    summary: str
    effect: str
    why: str
    idempotency: str
    key_header: str | None
    fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_openapi(data: bytes | str, filename: str | None = None) -> list[Operation]:
    """Every operation of an OpenAPI 3 document; :class:`DocumentError` naming what is wrong."""
    text = decode(data)
    is_json = (filename or "").endswith(".json") or text.lstrip().startswith("{")
    document = (parse_json(text, locations=False) if is_json else parse_yaml(text))[0]
    if not isinstance(document, dict) or "openapi" not in document:
        raise DocumentError([Problem("not an OpenAPI 3 document: it has no `openapi` field")])
    try:
        validate(document)
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        message = str(exc.message).split("\n")[0]
        raise DocumentError([Problem(f"invalid OpenAPI document: {message}", path=where)]) from None
    root = SchemaPath.from_dict(document)
    found: list[Operation] = []
    taken: set[str] = set()
    for path, item in _items(root / "paths"):
        shared = list(item / "parameters") if "parameters" in item else []
        for method in METHODS:
            if method in item:
                operation = _operation(path, method, item / method, shared, taken)
                taken.add(operation.id)
                found.append(operation)
    return found


def propose_actions(
    operations: Iterable[Operation], chosen: Iterable[str], effects: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Chain actions (documents) for the ``chosen`` operation ids, in the document's order.

    ``effects`` overrides a guessed effect per id (what the person confirmed).
    """
    wanted = set(chosen)
    given = effects or {}
    actions = []
    for op in operations:
        if op.id not in wanted:
            continue
        effect = given.get(op.id, op.effect)
        action: dict[str, Any] = {
            "id": op.id,
            "description": f"{op.method.upper()} {op.path}"
            + (f": {op.summary}" if op.summary else ""),
            "effect": effect,
        }
        if op.fields:
            action["input"] = {"intent": {name: {} for name in op.fields}}
        if effect in ("commit", "compensate"):
            action["idempotency"] = {"mode": op.idempotency}
        if op.errors:
            action["documented_errors"] = list(op.errors)
        actions.append(action)
    unknown = sorted(wanted - {op.id for op in operations})
    if unknown:
        raise DocumentError([Problem(f"no operation {name} in the document") for name in unknown])
    return actions


def _items(node: SchemaPath) -> Iterable[tuple[str, SchemaPath]]:
    return [(key, node / key) for key in _keys(node)]


def _keys(node: SchemaPath) -> list[str]:
    """The keys of a mapping in the document (iterating a SchemaPath gives its children)."""
    return [str(key) for key in node.keys()] if node.exists() else []  # noqa: SIM118


def _operation(
    path: str, method: str, node: SchemaPath, shared: list[SchemaPath], taken: set[str]
) -> Operation:
    with node.open() as raw:
        operation_id = raw.get("operationId")
        summary = str(raw.get("summary") or "")
    ident = _unique(_snake(operation_id or f"{method}_{path}"), taken)
    parameters = [*shared, *(list(node / "parameters") if "parameters" in node else [])]
    key_header = None
    fields: list[str] = []
    for parameter in parameters:
        with parameter.open() as p:
            where, name = p.get("in"), str(p.get("name", ""))
            if where == "header" and _KEY_HEADER.search(name):
                key_header = name
            elif where in ("path", "query") and (where == "path" or p.get("required")):
                fields.append(_snake(name))
    fields += _body_fields(node)
    effect, why = _effect(method, path, operation_id or "")
    if key_header:
        idempotency = "keyed"
    elif method in ("get", "head", "put", "delete", "options"):
        idempotency = "natural"
    else:
        idempotency = "none"
    return Operation(
        id=ident,
        method=method,
        path=path,
        summary=summary,
        effect=effect,
        why=why,
        idempotency=idempotency,
        key_header=key_header,
        fields=list(dict.fromkeys(fields)),
        errors=_errors(node),
    )


def _effect(method: str, path: str, operation_id: str) -> tuple[str, str]:
    if method in ("get", "head", "options"):
        return "read", f"{method.upper()} reads"
    if method == "post" and _READING.search(f"{path} {operation_id}"):
        return "read", "a POST whose name says it searches, prices or validates"
    if method == "delete":
        return "compensate", "DELETE undoes something: a compensator, if it undoes a commit"
    return "commit", f"{method.upper()} changes something at the provider"


def _body_fields(node: SchemaPath) -> list[str]:
    body = node / "requestBody" / "content"
    for media in _keys(body):
        schema = body / media / "schema"
        if schema.exists() and "properties" in schema:
            return [_snake(name) for name in _keys(schema / "properties")]
    return []


def _errors(node: SchemaPath) -> list[str]:
    """Each error response as signals: ``http:409 && code:X`` per code it names, else the status."""
    found: list[str] = []
    responses = node / "responses"
    for status in _keys(responses):
        text = str(status).upper()
        if re.fullmatch(r"[45]\d\d", text):
            signal = f"http:{text}"
        elif re.fullmatch(r"[45]XX", text):
            signal = f"http:{text[0]}xx"
        else:
            continue
        codes: list[str] = []
        content = responses / status / "content"
        for media in _keys(content):
            entry = content / media
            if (entry / "schema").exists():
                codes += _codes(entry / "schema", _DEPTH)
            codes += _example_codes(entry)
        found += [f"{signal} && code:{c}" for c in dict.fromkeys(codes)] or [signal]
    return list(dict.fromkeys(found))


def _codes(schema: SchemaPath, depth: int) -> list[str]:
    """Codes an error schema enumerates, in properties named like a code, nested or in lists."""
    if depth == 0:
        return []
    codes: list[str] = []
    if "properties" in schema:
        properties = schema / "properties"
        for name in _keys(properties):
            child = properties / name
            if name in _CODE_KEYS and "enum" in child:
                with (child / "enum").open() as values:
                    codes += [str(v) for v in values if v is not None]
            else:
                codes += _codes(child, depth - 1)
    if "items" in schema:
        codes += _codes(schema / "items", depth - 1)
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in schema:
            for part in schema / combined:
                codes += _codes(part, depth - 1)
    return codes


def _example_codes(entry: SchemaPath) -> list[str]:
    examples: list[Any] = []
    if "example" in entry:
        with (entry / "example").open() as value:
            examples.append(value)
    if "examples" in entry:
        for name in _keys(entry / "examples"):
            one = entry / "examples" / name
            if "value" in one:
                with (one / "value").open() as value:
                    examples.append(value)
    return [c for example in examples for c in _codes_in(example, _DEPTH)]


def _codes_in(value: Any, depth: int) -> list[str]:
    if depth == 0:
        return []
    if isinstance(value, dict):
        found = [str(value[k]) for k in _CODE_KEYS if isinstance(value.get(k), str)]
        return found + [c for v in value.values() for c in _codes_in(v, depth - 1)]
    if isinstance(value, list):
        return [c for v in value for c in _codes_in(v, depth - 1)]
    return []


def _snake(name: str) -> str:
    """An id from an operation id or a path: ``createOrder`` -> ``create_order``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text or "operation"


def _unique(ident: str, taken: set[str]) -> str:
    if ident not in taken:
        return ident
    n = 2
    while f"{ident}_{n}" in taken:
        n += 1
    return f"{ident}_{n}"
