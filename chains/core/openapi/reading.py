"""Reading a provider's OpenAPI document into :class:`Operation` proposals (the package's
docstring says what is read and how the work is bounded)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import ValidatorDetectError

from ..errors import DocumentError, Problem
from ..formats import decode
from ..model import Effect
from .effects import guess_effect
from .references import bundle, parsed, references

__all__ = ["MAX_OPERATIONS", "MAX_STEPS", "OPENAPI_MAX_BYTES", "Operation", "read_openapi"]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# A document with more operations is refused: each page showing it reads it again whole.
MAX_OPERATIONS = 5_000
# Schema nodes and codes visited while searching error responses for codes, per document.
MAX_STEPS = 200_000
# The largest provider document read (a setting of its own on the site,
# OPENAPI_UPLOAD_MAX_BYTES): real ones are larger than any chain (Stripe's is 4 MB).
OPENAPI_MAX_BYTES = 10 * 1024 * 1024
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
    effect: Effect
    why: str
    idempotency: str
    key_header: str | None
    fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    operation_id: str = ""
    # Where each field goes in the request, as the action's binding writes it (``path:id``).
    places: dict[str, str] = field(default_factory=dict)
    # The document's tags of the operation, in its order (what the page and ``--tag`` filter on).
    tags: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_openapi(
    data: bytes | str,
    filename: str | None = None,
    *,
    beside: Path | None = None,
    limit: int = OPENAPI_MAX_BYTES,
) -> list[Operation]:
    """Every operation of an OpenAPI 3 document; :class:`DocumentError` naming what is wrong.

    With ``beside`` (the command line's ``--resolve-local``, never the web), a
    ``$ref`` to a relative file path is read from that directory (see
    :func:`~.references.bundle`); a URL, an absolute path or a way out of it is refused still.

    A reference to anything outside the document is refused, with where it is:

    >>> text = '{"openapi": "3.0.3", "components": {"schemas": {"A": {"$ref": "/etc/x"}}}}'
    >>> try:
    ...     read_openapi(text)
    ... except DocumentError as exc:
    ...     print(exc.problems[0].path, exc.problems[0].message.split(";")[0])
    /components/schemas/A `$ref: /etc/x` points outside the document
    """
    text = decode(data, limit)
    is_json = (filename or "").endswith(".json") or text.lstrip().startswith("{")
    document = parsed(text, is_json)
    if not isinstance(document, dict) or "openapi" not in document:
        raise DocumentError([Problem("not an OpenAPI 3 document: it has no `openapi` field")])
    if beside is not None:
        bundle(document, beside)
    _Reader(document, {}).count_operations()  # those written in place, before the whole walk
    reader = _Reader(document, references(document))
    reader.count_operations()
    _check_structure(document)
    return reader.operations()


def _check_structure(document: dict[str, Any]) -> None:
    """The document against the OpenAPI JSON Schema of its version, its references unexpanded.

    openapi-spec-validator's full check follows every reference without a bound
    (exponential on shared ``allOf``, a RecursionError on a long chain); its
    JSON Schema of the document is linear in the text and follows nothing.
    """
    version = document["openapi"]
    try:
        validator = (
            get_validator_cls(document).schema_validator if isinstance(version, str) else None
        )
    except ValidatorDetectError:
        validator = None
    if validator is None:
        raise DocumentError(
            [Problem(f"openapi {version!r}: not an OpenAPI version this reads (3.0, 3.1)")]
        )
    error = next(iter(validator.iter_errors(document)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        message = str(error.message).split("\n")[0]
        raise DocumentError([Problem(f"invalid OpenAPI document: {message}", path=where)])


class _Reader:
    """The operations of a document whose references all lead inside it (``targets``)."""

    def __init__(self, document: dict[str, Any], targets: dict[int, Any]):
        self.document = document
        self.targets = targets
        self.steps = 0
        self.schema_codes: dict[tuple[int, int], tuple[str, ...]] = {}
        self.example_codes: dict[tuple[int, int], tuple[str, ...]] = {}

    def at(self, node: Any) -> Any:
        """``node``, or what it refers to."""
        return self.targets.get(id(node), node)

    def mapping(self, node: Any) -> dict[str, Any]:
        found = self.at(node)
        return found if isinstance(found, dict) else {}

    def listing(self, node: Any) -> list[Any]:
        found = self.at(node)
        return found if isinstance(found, list) else []

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise DocumentError(
                [
                    Problem(
                        f"the document is too complex: its error responses take more than "
                        f"{MAX_STEPS:,} steps through schema nodes and codes to search"
                    )
                ]
            )

    def items(self) -> Iterator[tuple[str, str, dict[str, Any], list[Any]]]:
        """Each operation as (path, method, operation, the path's shared parameters)."""
        for path, item in self.mapping(self.document.get("paths")).items():
            item = self.mapping(item)
            shared = self.listing(item.get("parameters"))
            for method in METHODS:
                if method in item:
                    yield str(path), method, self.mapping(item[method]), shared

    def count_operations(self) -> None:
        count = sum(1 for _ in self.items())
        if count > MAX_OPERATIONS:
            why = (
                f"the document has {count:,} operations; at most {MAX_OPERATIONS:,} are read "
                "at once: upload the part you need (some paths or tags)"
            )
            raise DocumentError([Problem(why, path="/paths")])

    def operations(self) -> list[Operation]:
        found: list[Operation] = []
        taken: set[str] = set()
        for path, method, node, shared in self.items():
            operation = self.operation(path, method, node, shared, taken)
            taken.add(operation.id)
            found.append(operation)
        return found

    def operation(
        self, path: str, method: str, node: dict[str, Any], shared: list[Any], taken: set[str]
    ) -> Operation:
        operation_id = str(node.get("operationId") or "")
        summary = str(node.get("summary") or "")
        ident = _unique(_snake(operation_id or f"{method}_{path}"), taken)
        key_header = None
        override = ""
        places: dict[str, str] = {}
        for parameter in [*shared, *self.listing(node.get("parameters"))]:
            p = self.mapping(parameter)
            where, name = p.get("in"), str(p.get("name", ""))
            if where == "header" and name.lower() == "x-http-method-override":
                schema = self.mapping(p.get("schema"))
                given = [*self.listing(schema.get("enum")), schema.get("default"), p.get("example")]
                override = next((str(v) for v in given if isinstance(v, str)), "")
            elif where == "header" and _KEY_HEADER.search(name):
                key_header = name
            elif where in ("path", "query") and (where == "path" or p.get("required")):
                places.setdefault(_snake(name), f"{where}:{name}")
        for name in self.body_fields(node):
            places.setdefault(_snake(name), f"body:/{_escaped(name)}")
        effect, why = guess_effect(method, path, operation_id, override, summary)
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
            fields=list(places),
            errors=self.errors(node),
            operation_id=operation_id,
            tags=[str(t) for t in self.listing(node.get("tags")) if isinstance(t, str | int)],
            places=places,
        )

    def body_fields(self, node: dict[str, Any]) -> list[str]:
        content = self.mapping(self.mapping(node.get("requestBody")).get("content"))
        for entry in content.values():
            schema = self.mapping(self.mapping(entry).get("schema"))
            if "properties" in schema:
                return [str(name) for name in self.mapping(schema["properties"])]
        return []

    def errors(self, node: dict[str, Any]) -> list[str]:
        """Each error response as signals: ``http:409 && code:X`` per code it names, else
        the status."""
        found: list[str] = []
        for status, response in self.mapping(node.get("responses")).items():
            text = str(status).upper()
            if re.fullmatch(r"[45]\d\d", text):
                signal = f"http:{text}"
            elif re.fullmatch(r"[45]XX", text):
                signal = f"http:{text[0]}xx"
            else:
                continue
            codes: list[str] = []
            for entry in self.mapping(self.mapping(response).get("content")).values():
                entry = self.mapping(entry)
                if "schema" in entry:
                    codes += self.codes(entry["schema"], _DEPTH)
                codes += self.examples(entry)
            found += [f"{signal} && code:{c}" for c in dict.fromkeys(codes)] or [signal]
        return list(dict.fromkeys(found))

    def codes(self, schema: Any, depth: int) -> tuple[str, ...]:
        """Codes an error schema enumerates, in properties named like a code, nested or in lists.

        Memoised per schema and depth, so a schema reached along many paths (or
        round a cycle of references) is searched once at each depth.
        """
        node = self.at(schema)
        if depth == 0 or not isinstance(node, dict):
            return ()
        key = (id(node), depth)
        if key in self.schema_codes:
            return self.schema_codes[key]
        properties = self.mapping(node.get("properties"))
        parts = [p for c in ("allOf", "oneOf", "anyOf") for p in self.listing(node.get(c))]
        self.spend(1 + len(properties) + len(parts))
        codes: list[str] = []
        for name, child in properties.items():
            child = self.at(child)
            if name in _CODE_KEYS and isinstance(child, dict) and "enum" in child:
                values = self.listing(child["enum"])
                self.spend(len(values))
                codes += [
                    str(v) for v in values if v is not None and not isinstance(v, dict | list)
                ]
            else:
                codes += self.codes(child, depth - 1)
        if "items" in node:
            codes += self.codes(node["items"], depth - 1)
        for part in parts:
            codes += self.codes(part, depth - 1)
        self.spend(len(codes))
        found = self.schema_codes[key] = tuple(dict.fromkeys(codes))
        return found

    def examples(self, entry: dict[str, Any]) -> list[str]:
        """Codes the examples of a response's media type show."""
        values = [entry["example"]] if "example" in entry else []
        for one in self.mapping(entry.get("examples")).values():
            one = self.mapping(one)
            if "value" in one:
                values.append(one["value"])
        return [code for value in values for code in self.codes_in(value, _DEPTH)]

    def codes_in(self, value: Any, depth: int) -> tuple[str, ...]:
        """Codes an example value shows, memoised per value and depth like :meth:`codes`."""
        if depth == 0 or not isinstance(value, dict | list):
            return ()
        key = (id(value), depth)
        if key in self.example_codes:
            return self.example_codes[key]
        children = list(value.values()) if isinstance(value, dict) else value
        self.spend(1 + len(children))
        codes = (
            [str(value[k]) for k in _CODE_KEYS if isinstance(value.get(k), str)]
            if isinstance(value, dict)
            else []
        )
        for child in children:
            codes += self.codes_in(child, depth - 1)
        self.spend(len(codes))
        found = self.example_codes[key] = tuple(dict.fromkeys(codes))
        return found


def _escaped(name: str) -> str:
    """``name`` as one JSON pointer token (RFC 6901: ``~`` and ``/`` escaped)."""
    return name.replace("~", "~0").replace("/", "~1")


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
