"""A provider stand-in made from the provider's own OpenAPI document: every operation answers
what the document promises for it, so the harness can run a client with no sandbox.

The document (OpenAPI 3, or Swagger 2.0 converted in-process) is read with the
importer's safety: decoded within :data:`~chains.core.openapi.reading.OPENAPI_MAX_BYTES`,
every ``$ref`` resolved inside it by :func:`~chains.core.openapi.references.references`
and one that leads outside it refused at start (nothing a ``$ref`` names is opened
or fetched). A request whose method and path match an operation's path template
(with or without the path of the document's first server, ``/air/v3``) is
answered with the operation's first 2xx response (else its ``default`` one, as a
200): that status, and as body the example the document gives (the media
type's ``example``, the first of its ``examples``, the schema's ``example``),
else a minimal instance built from the schema: required properties only, a
placeholder per type, ``$ref`` followed through the resolved targets, depth and
size capped. A response with no content is answered with no body. An unknown
path is a 404 ``{"error": {"code": "not_found"}}``, a known path with another
method a 405. Every ``id`` field in a POST's answer gets a fresh value per call,
so two POSTs mint two ids. That is all it can do: it answers the *shapes* the
document promises and keeps no state, so a probe after a lost response answers
its example, not what the provider would know. It suits checking that a client
survives injected faults on reads and the shape of its calls; commit-and-probe
behaviour (was the booking made?) needs a real sandbox or a stateful stand-in
such as ``fixtures/harness/provider.py``. Loopback only; standard library server.
"""

from __future__ import annotations

import itertools
import json
import re
import signal
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from chains.core.errors import DocumentError, Problem
from chains.core.openapi.reading import MAX_OPERATIONS, read_document
from chains.core.openapi.references import mappings, references

from .wire import Answer, BodyTooLarge, json_answer, phrase, read_body

__all__ = ["StandIn", "minimal_instance", "serve"]

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_MAX_DEPTH = 8  # schema levels (each ``$ref`` followed counts as one) a minimal instance goes down
_MAX_NODES = 500  # values in one minimal instance, however wide the schema
_REQUEST_MAX_BYTES = 1024 * 1024  # a request body is read (and dropped) up to this
_PARAMETER = re.compile(r"\{[^}/]+\}")
# Placeholders by string ``format``; any other string is "string".
_FORMATS = {
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "email": "user@example.com",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "uri": "https://example.com/",
}
_PLACEHOLDERS: dict[str, Any] = {"integer": 0, "number": 0, "boolean": False, "null": None}


@dataclass
class _Route:
    """One path template and the answer of each of its methods (upper case)."""

    template: str
    pattern: re.Pattern[str]
    answers: dict[str, Answer] = field(default_factory=dict)

    @property
    def literal(self) -> int:
        """How much of the template is fixed text: ``/orders/hold`` before ``/orders/{id}``."""
        return len(_PARAMETER.sub("", self.template))


class StandIn:
    """The answers of a provider's document, by method and path; no state but an id counter."""

    def __init__(self, data: bytes | str, filename: str | None = None):
        document, _ = read_document(data, filename)
        # Kept: ``targets`` is keyed by the ids of the document's own mappings.
        self.document = document
        self.targets = references(document)
        self.base_path = _base_path(document)
        self.routes = self._routes()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def answer(self, method: str, target: str) -> Answer:
        """What the stand-in answers ``method`` on ``target`` (a path, with its query)."""
        path = urlsplit(target).path or "/"
        if self.base_path and path.startswith(self.base_path + "/"):
            path = path[len(self.base_path) :]
        matching = [r for r in self.routes if r.pattern.fullmatch(path)]
        if not matching:
            return json_answer(404, {"error": {"code": "not_found"}})
        # A fixed path before a template (``/orders/hold`` before ``/orders/{id}``), among
        # those that take the method: a GET on ``/orders/hold`` is the order ``hold``'s.
        taking = [r for r in matching if method.upper() in r.answers]
        route = max(taking or matching, key=lambda r: r.literal)
        found = route.answers.get(method.upper())
        if found is None:
            allowed = ", ".join(route.answers)
            return json_answer(405, {"error": {"code": "method_not_allowed"}}, [("Allow", allowed)])
        if method.upper() == "POST" and b'"id"' in found.body:
            return Answer(found.status, found.reason, found.headers, self._fresh(found.body))
        return found

    def _fresh(self, body: bytes) -> bytes:
        """``body`` with every ``id`` field given a value no earlier call had."""
        try:
            value = json.loads(body)
        except ValueError:  # a text answer that happens to hold "id"
            return body
        with self._lock:
            n = next(self._ids)
        for node in mappings(value):
            old = node.get("id")
            if isinstance(old, bool):
                continue
            if isinstance(old, int):
                node["id"] = old + n
            elif isinstance(old, str):
                prefix = old.rsplit("_", 1)[0] + "_" if "_" in old else ""
                node["id"] = f"{prefix}{uuid.uuid4().hex[:12]}"
        return json.dumps(value).encode()

    def _routes(self) -> list[_Route]:
        paths = self._resolved(self.document.get("paths"))
        routes: list[_Route] = []
        count = 0
        for template, item in (paths if isinstance(paths, dict) else {}).items():
            item = self._resolved(item)
            if not isinstance(item, dict):
                continue
            route = _Route(str(template), _pattern(str(template)))
            for method in _METHODS:
                operation = self._resolved(item.get(method))
                if isinstance(operation, dict):
                    route.answers[method.upper()] = self._success(operation)
                    count += 1
            if count > MAX_OPERATIONS:
                why = f"the document has over {MAX_OPERATIONS:,} operations; serve a part of it"
                raise DocumentError([Problem(why, path="/paths")])
            routes.append(route)
        return routes

    def _success(self, operation: dict[str, Any]) -> Answer:
        """The operation's first 2xx response (else ``default``, as a 200) as an answer."""
        responses = self._resolved(operation.get("responses"))
        responses = responses if isinstance(responses, dict) else {}
        status, response = 200, None
        for code, given in responses.items():
            if re.fullmatch(r"2(?:\d\d|XX)", str(code), re.I):
                status = int(str(code).upper().replace("XX", "00"))
                response = given
                break
        else:
            response = responses.get("default")
        response = self._resolved(response)
        content = self._resolved(response.get("content")) if isinstance(response, dict) else None
        if status == 204 or not isinstance(content, dict) or not content:
            return Answer(status, phrase(status), [("Content-Length", "0")], b"")
        media = next((m for m in content if "json" in str(m).lower()), next(iter(content)))
        entry = self._resolved(content[media])
        body = self.example(entry if isinstance(entry, dict) else {})
        kind = "application/json" if "*" in str(media) else str(media)
        if isinstance(body, str) and "json" not in kind.lower():
            return Answer(status, phrase(status), [("Content-Type", kind)], body.encode())
        encoded = json.dumps(body, default=str).encode()
        return Answer(status, phrase(status), [("Content-Type", kind)], encoded)

    def example(self, entry: dict[str, Any]) -> Any:
        """A media type entry's example: ``example``, the first of ``examples``, else the
        schema's own or a minimal instance of it. An ``externalValue`` is never fetched."""
        if "example" in entry:
            return entry["example"]
        examples = self._resolved(entry.get("examples"))
        for given in examples.values() if isinstance(examples, dict) else []:
            given = self._resolved(given)
            if isinstance(given, dict) and "value" in given:
                return given["value"]
        return minimal_instance(entry.get("schema"), self.targets)

    def _resolved(self, node: Any) -> Any:
        return _resolved(node, self.targets)


def minimal_instance(schema: Any, targets: dict[int, Any], depth: int = 0) -> Any:
    """The smallest value ``schema`` promises: its example, default or first enum value,
    else its required properties each filled so, or a placeholder for its type.

    ``targets`` is what each ``$ref`` mapping resolves to (:func:`references`);
    past :data:`_MAX_DEPTH` levels an object is ``{}`` and anything else ``None``.

    >>> schema = {"type": "object", "required": ["id", "when"], "properties": {
    ...     "id": {"type": "string"}, "when": {"type": "string", "format": "date"},
    ...     "note": {"type": "string"}}}
    >>> minimal_instance(schema, {})
    {'id': 'string', 'when': '2026-01-01'}
    """
    return _Builder(targets).build(schema, depth)


class _Builder:
    """One minimal instance, within :data:`_MAX_NODES` values."""

    def __init__(self, targets: dict[int, Any]):
        self.targets = targets
        self.left = _MAX_NODES

    def build(self, schema: Any, depth: int) -> Any:
        while isinstance(schema, dict) and "$ref" in schema and depth <= _MAX_DEPTH:
            schema, depth = _resolved(schema, self.targets), depth + 1
        self.left -= 1
        if not isinstance(schema, dict) or "$ref" in schema:
            return None
        for key in ("example", "const", "default"):
            if key in schema:
                return schema[key]
        for key in ("examples", "enum"):
            given = schema.get(key)
            if isinstance(given, list) and given:
                return given[0]
        kind = _kind(schema)
        if depth >= _MAX_DEPTH or self.left <= 0:
            return {} if kind == "object" else None
        for key in ("allOf", "oneOf", "anyOf"):
            parts = schema.get(key)
            if isinstance(parts, list) and parts:
                return self._combined(schema, key, parts, depth)
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            least = schema.get("minItems")
            count = min(least, 3) if isinstance(least, int) else 0  # a few items at most
            return [self.build(schema.get("items"), depth + 1) for _ in range(count)]
        if kind == "string":
            return _FORMATS.get(str(schema.get("format")), "string")
        return _PLACEHOLDERS.get(str(kind))

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        names = [str(n) for n in required] if isinstance(required, list) else []
        return {name: self.build(properties.get(name), depth + 1) for name in names}

    def _combined(self, schema: dict[str, Any], key: str, parts: list[Any], depth: int) -> Any:
        """``allOf``: its parts merged (with the schema's own properties); ``oneOf``,
        ``anyOf``: the first."""
        if key != "allOf":
            return self.build(parts[0], depth + 1)
        built = [self.build(part, depth + 1) for part in parts]
        if not all(isinstance(b, dict) for b in built):
            return next((b for b in built if b is not None), None)
        merged: dict[str, Any] = {}
        for b in built:
            merged.update(b)
        if "properties" in schema or "required" in schema:
            merged.update(self._object(schema, depth))
        return merged


def _kind(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):  # OpenAPI 3.1: ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and ("properties" in schema or "required" in schema):
        return "object"
    return str(kind) if kind is not None else None


def _resolved(node: Any, targets: dict[int, Any]) -> Any:
    if isinstance(node, dict) and "$ref" in node:
        return targets.get(id(node), node)
    return node


def _pattern(template: str) -> re.Pattern[str]:
    """The paths a template matches: each ``{name}`` is one segment."""
    parts = _PARAMETER.split(template)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


def _base_path(document: dict[str, Any]) -> str:
    """The path of the document's first server (``/air/v3``), unless it is templated."""
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    url = first.get("url") if isinstance(first, dict) else None
    if not isinstance(url, str) or "{" in url:
        return ""
    return urlsplit(url).path.rstrip("/")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _take(self) -> None:
        try:
            read_body(self.rfile, list(self.headers.items()), _REQUEST_MAX_BYTES)
        except BodyTooLarge as exc:
            return self._write(
                json_answer(413, {"error": {"code": "too_large", "message": f"{exc}"}})
            )
        except ValueError as exc:
            return self._write(
                json_answer(400, {"error": {"code": "bad_request", "message": f"{exc}"}})
            )
        self._write(self.server.stand_in.answer(self.command, self.path))

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _take

    def _write(self, answer: Answer) -> None:
        self.send_response(answer.status, answer.reason or None)
        for name, value in answer.headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the harness records every exchange; the stand-in's stdout is its address only


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, stand_in: StandIn):
        self.stand_in = stand_in
        super().__init__(("127.0.0.1", port), _Handler)


def serve(stand_in: StandIn, port: int, announce: Callable[[str], None]) -> None:
    """Serve ``stand_in`` on 127.0.0.1:``port`` (0: any free one) until SIGTERM or SIGINT;
    ``announce`` gets ``listening on http://127.0.0.1:PORT`` once it listens."""
    server = _Server(port, stand_in)

    def stop(signum: int, frame: Any) -> None:
        # Asked of another thread: shutdown() waits for the loop this thread runs. Raising
        # here instead could land inside a request's handling, which swallows exceptions.
        threading.Thread(target=server.shutdown, daemon=True).start()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    try:
        announce(f"listening on http://127.0.0.1:{server.server_address[1]}")
        server.serve_forever()
    finally:
        server.server_close()
