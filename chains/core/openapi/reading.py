"""Reading a provider's OpenAPI document into :class:`Operation` proposals (the package's
docstring says what is read and how the work is bounded)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import ValidatorDetectError

from ..errors import DocumentError, Problem
from ..formats import decode
from ..model import Effect
from .documented import MAX_STEPS, Walker
from .effects import guess_effect
from .references import bundle, parsed, references
from .swagger import from_swagger, is_swagger

__all__ = [
    "MAX_OPERATIONS",
    "MAX_STEPS",
    "OPENAPI_MAX_BYTES",
    "Operation",
    "Provider",
    "STATED_KEY",
    "read_openapi",
    "read_document",
    "read_provider",
    "resource_tag",
]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# A document with more operations is refused: each page showing it reads it again whole.
MAX_OPERATIONS = 5_000
# The largest provider document read (a setting of its own on the site,
# OPENAPI_UPLOAD_MAX_BYTES): real ones are larger than any chain (Stripe's is 4 MB).
OPENAPI_MAX_BYTES = 10 * 1024 * 1024
STATED_KEY = "you stated it"  # where a provider-wide key header comes from when a person gave it
MAX_WARNINGS = 50  # places where the document breaks the OpenAPI schema, listed at most
_KEY_NAME = re.compile(r"idempoten", re.I)
# A header name in prose that carries an idempotency key (``Idempotency-Key``).
_KEY_IN_PROSE = re.compile(r"\b((?:[A-Za-z]+-)*Idempotency(?:-[A-Za-z]+)+)\b", re.I)
# Request fields no caller decides: the provider's own options for the answer.
_NOT_INTENT = frozenset({"expand", "metadata", "fields", "include"})
_ID_NAME = re.compile(r"(?:^|_)ids?$|[a-z0-9]Ids?$")
_VERSION = re.compile(r"v\d+(?:\.\d+)*|api|rest", re.I)  # path prefixes that name no resource
_BODY_DEPTH = 3  # envelopes (``data``, ``data.attributes``) looked through at most


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
    # Intent fields: what a caller must decide (required, not ids), by name.
    fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    operation_id: str = ""
    # Where each field and handle goes in the request, as the binding writes it (``path:id``).
    places: dict[str, str] = field(default_factory=dict)
    # The document's tags of the operation, in its order (what the page and ``--tag`` filter
    # on); where the document tags no operation, the resource its path names (resource_tag).
    tags: list[str] = field(default_factory=list)
    # Each intent field's type (``integer``, ``date``, ``enum[a, b]``).
    types: dict[str, str] = field(default_factory=dict)
    # Handles it sends: the ids in its path and body, by the handle's name.
    handles: list[str] = field(default_factory=list)
    # Handles its answer mints (a POST on a collection mints the id of what it made).
    mints: dict[str, str] = field(default_factory=dict)
    # Why its idempotency is what it is, where that is not its method alone.
    key_why: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Operation:
        """The operation :meth:`as_dict` gave; TypeError when the fields differ (another
        version of this class wrote it)."""
        names = {f.name for f in fields(cls)}
        if set(stored) != names:
            raise TypeError(f"operation fields {sorted(stored)} are not {sorted(names)}")
        return cls(**stored)


@dataclass(frozen=True)
class Provider:
    """What a provider's document says: its operations, where it breaks the OpenAPI schema
    (each a warning at its pointer; the operations around it still import), and the
    header it states every POST takes for its key, if it states one (or the person did)."""

    title: str
    operations: list[Operation]
    warnings: list[Problem] = field(default_factory=list)
    key_header: str | None = None
    key_source: str = ""
    converted: bool = False  # read from Swagger 2.0


def read_openapi(
    data: bytes | str,
    filename: str | None = None,
    *,
    beside: Path | None = None,
    limit: int = OPENAPI_MAX_BYTES,
    key_header: str | None = None,
) -> list[Operation]:
    """Every operation of an OpenAPI document (:func:`read_provider`'s operations)."""
    return read_provider(
        data, filename, beside=beside, limit=limit, key_header=key_header
    ).operations


def read_provider(
    data: bytes | str,
    filename: str | None = None,
    *,
    beside: Path | None = None,
    limit: int = OPENAPI_MAX_BYTES,
    key_header: str | None = None,
) -> Provider:
    """An OpenAPI 3 or Swagger 2.0 document read; :class:`DocumentError` naming what is wrong.

    With ``beside`` (the command line's ``--resolve-local``, never the web), a
    ``$ref`` to a relative file path is read from that directory (see
    :func:`~.references.bundle`); a URL, an absolute path or a way out of it is refused still.
    ``key_header`` states that every POST takes its idempotency key in that header
    (Stripe says so in its prose, not per operation); without it, the document's own
    statement is used where it makes one.

    A reference to anything outside the document is refused, with where it is:

    >>> text = '{"openapi": "3.0.3", "components": {"schemas": {"A": {"$ref": "/etc/x"}}}}'
    >>> try:
    ...     read_openapi(text)
    ... except DocumentError as exc:
    ...     print(exc.problems[0].path, exc.problems[0].message.split(";")[0])
    /components/schemas/A `$ref: /etc/x` points outside the document
    """
    document, converted = read_document(data, filename, limit)
    if beside is not None:
        bundle(document, beside)
    _Reader(document, {}).count_operations()  # those written in place, before the whole walk
    reader = _Reader(document, references(document))
    reader.count_operations()
    warnings = _check_structure(document, converted)
    source = STATED_KEY if key_header else ""
    if not key_header:
        key_header, source = _stated_key(document)
    return Provider(
        title=str(_get(document, "info", "title") or ""),
        operations=reader.operations(key_header, source),
        warnings=warnings,
        key_header=key_header,
        key_source=source,
        converted=converted,
    )


def read_document(
    data: bytes | str, filename: str | None = None, limit: int = OPENAPI_MAX_BYTES
) -> tuple[dict[str, Any], bool]:
    """The document as OpenAPI 3 data (Swagger 2.0 converted), and whether it was converted;
    :class:`DocumentError` for one too large, malformed, or not OpenAPI. Its ``$ref``s are
    left as written (:func:`~.references.references` checks them)."""
    text = decode(data, limit)
    is_json = (filename or "").endswith(".json") or text.lstrip().startswith("{")
    document = parsed(text, is_json)
    converted = is_swagger(document)
    if converted:
        document = from_swagger(document)
    if not isinstance(document, dict) or "openapi" not in document:
        raise DocumentError(
            [Problem("not an OpenAPI document: it has no `openapi` (3.x) or `swagger` (2.0) field")]
        )
    return document, converted


def _stated_key(document: dict[str, Any]) -> tuple[str | None, str]:
    """The idempotency header the document's prose says requests take, and where it says so.

    >>> _stated_key({"info": {"description": "Send an `Idempotency-Key` header on POST."}})
    ('Idempotency-Key', '/info/description')
    """
    places: list[tuple[str, Any]] = [("/info/description", _get(document, "info", "description"))]
    for n, tag in enumerate(document.get("tags") or []):
        places.append(
            (f"/tags/{n}/description", tag.get("description") if isinstance(tag, dict) else None)
        )
    for where, text in places:
        found = _KEY_IN_PROSE.search(text) if isinstance(text, str) else None
        if found:
            return found[1], where
    return None, ""


def _get(tree: Any, *keys: str) -> Any:
    for key in keys:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def _check_structure(document: dict[str, Any], converted: bool) -> list[Problem]:
    """The document against the OpenAPI JSON Schema of its version, its references unexpanded.

    openapi-spec-validator's full check follows every reference without a bound
    (exponential on shared ``allOf``, a RecursionError on a long chain); its
    JSON Schema of the document is linear in the text and follows nothing.
    A break at the document's top (no ``paths``, ``info`` of the wrong kind) is
    refused; one inside an operation or a component (a bad ``format``, a
    pattern the validator rejects) is a warning at its pointer.
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
    after = " (as converted from Swagger 2.0)" if converted else ""
    warnings: list[Problem] = []
    for error in validator.iter_errors(document):
        where = "/" + "/".join(
            str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path
        )
        message = str(error.message).split("\n")[0]
        if len(error.absolute_path) < 2:
            raise DocumentError(
                [Problem(f"invalid OpenAPI document{after}: {message}", path=where)]
            )
        warnings.append(
            Problem(f"not valid OpenAPI{after}: {message[:300]}", path=where, severity="warning")
        )
        if len(warnings) >= MAX_WARNINGS:
            break
    return warnings


class _Reader(Walker):
    """The operations of a document whose references all lead inside it (``targets``)."""

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

    def operations(self, key_header: str | None = None, key_source: str = "") -> list[Operation]:
        found: list[Operation] = []
        taken: set[str] = set()
        # Each collection's item path (``/orders`` -> ``/orders/{id}``), for what a POST mints.
        items: dict[str, str] = {}
        for path in self.mapping(self.document.get("paths")):
            item = re.fullmatch(r"(.*)/\{[^}/]+\}", str(path))
            if item:
                items.setdefault(item[1], str(path))
        for path, method, node, shared in self.items():
            operation = self.operation(path, method, node, shared, taken, items)
            if key_header and method == "post" and operation.idempotency != "keyed":
                why = f"every POST takes {key_header} ({key_source})"
                operation = _keyed(operation, key_header, why)
            taken.add(operation.id)
            found.append(operation)
        if not any(op.tags for op in found):  # Stripe's tags none: its resources stand in
            found = [_tagged(op, [resource_tag(op.path)]) for op in found]
        return found

    def operation(
        self,
        path: str,
        method: str,
        node: dict[str, Any],
        shared: list[Any],
        taken: set[str],
        items: dict[str, str],
    ) -> Operation:
        operation_id = str(node.get("operationId") or "")
        summary = str(node.get("summary") or "")
        ident = _unique(_snake(operation_id or f"{method}_{path}"), taken)
        key_header = None
        key_why = ""
        override = ""
        places: dict[str, str] = {}
        types: dict[str, str] = {}
        handles: list[str] = []
        for parameter in [*shared, *self.listing(node.get("parameters"))]:
            p = self.mapping(parameter)
            where, name = p.get("in"), str(p.get("name", ""))
            if where == "header" and name.lower() == "x-http-method-override":
                schema = self.mapping(p.get("schema"))
                given = [*self.listing(schema.get("enum")), schema.get("default"), p.get("example")]
                override = next((str(v) for v in given if isinstance(v, str)), "")
            elif where == "header" and _KEY_NAME.search(name):
                key_header, key_why = name, f"it takes the header {name}"
            elif where == "path":
                handle = _handle_name(path, name)
                handles.append(handle)
                places.setdefault(handle, f"path:{name}")
            elif where == "query" and p.get("required") and _ID_NAME.search(name):
                handles.append(_snake(name))
                places.setdefault(_snake(name), f"query:{name}")
            elif where == "query" and p.get("required") and _snake(name) not in _NOT_INTENT:
                places.setdefault(_snake(name), f"query:{name}")
                types[_snake(name)] = self.value_type(p.get("schema") or p)
        key_field = None
        for name, pointer, schema, required in self.body_fields(node):
            snake = _snake(name)
            if _KEY_NAME.search(name):
                key_field = name
            elif _ID_NAME.search(name) and required:
                handles.append(snake)
                places.setdefault(snake, f"body:{pointer}")
            elif required and snake not in _NOT_INTENT:
                places.setdefault(snake, f"body:{pointer}")
                types[snake] = self.value_type(schema)
        effect, why = guess_effect(method, path, operation_id, override, summary)
        if key_header:
            idempotency = "keyed"
        elif key_field:
            idempotency, key_why = "keyed", f"its body takes the key in `{key_field}`"
        elif method in ("get", "head", "put", "delete", "options"):
            idempotency = "natural"
        else:
            idempotency = "none"
        mints = self.minted(path, method, node, items)
        return Operation(
            id=ident,
            method=method,
            path=path,
            summary=summary,
            effect=effect,
            why=why,
            idempotency=idempotency,
            key_header=key_header,
            fields=list(types),
            errors=self.errors(node),
            operation_id=operation_id,
            places=places,
            tags=[str(t) for t in self.listing(node.get("tags")) if isinstance(t, str | int)],
            types=types,
            handles=list(dict.fromkeys(handles)),
            mints=mints,
            key_why=key_why,
        )

    def body_fields(self, node: dict[str, Any]) -> list[tuple[str, str, Any, bool]]:
        """The request body's fields as (name, JSON pointer, schema, required), looking
        through an envelope of one object property (``data``, JSON:API's
        ``data.attributes``) to the fields a caller fills in."""
        content = self.mapping(self.mapping(node.get("requestBody")).get("content"))
        for entry in content.values():
            schema = self.mapping(self.mapping(entry).get("schema"))
            pointer = ""
            for _ in range(_BODY_DEPTH):
                properties = self.mapping(schema.get("properties"))
                inner = [
                    (k, self.mapping(v))
                    for k, v in properties.items()
                    if k != "type" and "properties" in self.mapping(v)
                ]
                plain = [k for k in properties if k not in ("type", "id")]
                if (
                    len(inner) == 1
                    and plain == [inner[0][0]]
                    or (len(inner) == 1 and inner[0][0] == "attributes")
                ):
                    name, schema = inner[0]
                    pointer += f"/{_escaped(name)}"
                    continue
                break
            if "properties" in schema:
                required = set(self.listing(schema.get("required")))
                return [
                    (str(name), f"{pointer}/{_escaped(str(name))}", value, name in required)
                    for name, value in self.mapping(schema["properties"]).items()
                ]
        return []

    def value_type(self, schema: Any) -> str:
        """A field's type as the chain writes it: ``integer``, ``date``, ``enum[a, b]``."""
        node = self.mapping(schema)
        values = [v for v in self.listing(node.get("enum")) if isinstance(v, str | int)]
        if values:
            shown = ", ".join(str(v) for v in values[:8]) + (", ..." if len(values) > 8 else "")
            return f"enum[{shown}]"
        kind = node.get("format") if isinstance(node.get("format"), str) else node.get("type")
        if isinstance(kind, list):  # 3.1: ["string", "null"]
            kind = next((k for k in kind if k != "null"), None)
        if not isinstance(kind, str):
            parts = [p for c in ("anyOf", "oneOf") for p in self.listing(node.get(c))]
            return self.value_type(parts[0]) if parts else "string"
        return kind

    def minted(
        self, path: str, method: str, node: dict[str, Any], items: dict[str, str]
    ) -> dict[str, str]:
        """The handle a POST on a collection mints (``POST /orders`` mints what
        ``/orders/{order_id}`` names: ``items`` maps each collection to its item path),
        read from its answer's ``id``."""
        item = items.get(path.rstrip("/")) if method == "post" else None
        if item is None:
            return {}
        handle = _handle_name(item, item.rsplit("{", 1)[1].rstrip("}"))
        for status, response in self.mapping(node.get("responses")).items():
            if not str(status).startswith("2"):
                continue
            for entry in self.mapping(self.mapping(response).get("content")).values():
                schema = self.mapping(self.mapping(entry).get("schema"))
                properties = self.mapping(schema.get("properties"))
                if "id" in properties:
                    return {handle: "body:/id"}
                data = self.mapping(properties.get("data"))
                if "id" in self.mapping(data.get("properties")):
                    return {handle: "body:/data/id"}
        return {handle: "body:/id"}


def resource_tag(path: str) -> str:
    """The resource a path is about, as a tag for a document that tags no operation: its
    first segment that is no version and no parameter.

    >>> resource_tag("/v1/payment_intents/{intent}/cancel"), resource_tag("/air/orders")
    ('payment_intents', 'air')
    """
    for segment in path.strip("/").split("/"):
        if segment and not segment.startswith("{") and not _VERSION.fullmatch(segment):
            return segment
    return "/"


def _tagged(op: Operation, tags: list[str]) -> Operation:
    fields = op.as_dict()
    fields["tags"] = tags
    return Operation(**fields)


def _keyed(op: Operation, header: str, why: str) -> Operation:
    fields = op.as_dict()
    fields.update(idempotency="keyed", key_header=header, key_why=why)
    return Operation(**fields)


def _handle_name(path: str, parameter: str) -> str:
    """The handle a path parameter carries: its own name, or, when it is only ``id``,
    the thing the segment before it names (``/air/orders/{id}``: ``order_id``).

    >>> _handle_name("/v1/payment_intents/{intent}/cancel", "intent")
    'intent'
    >>> _handle_name("/air/orders/{id}", "id")
    'order_id'
    """
    snake = _snake(parameter)
    if snake not in ("id", "ids", "key", "uuid"):
        return snake
    before = path.split("{" + parameter + "}")[0].rstrip("/").rsplit("/", 1)[-1]
    word = _snake(before)
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return f"{word}_id" if word and word != "operation" else snake


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
