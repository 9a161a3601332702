"""OTLP JSON: OpenTelemetry's JSON encoding of traces, as a collector's file exporter writes it.

One ``{"resourceSpans": [...]}`` document, or one a line. Every span of kind
CLIENT (``3``, or ``SPAN_KIND_CLIENT``) with an HTTP method is one call; an
HTTP client span that is the parent of other HTTP client spans is the
logical request around its tries, and only the tries are read (each is a
dispatch the provider saw). Attributes follow the HTTP semantic
conventions, current and older: ``http.request.method`` / ``http.method``,
``url.full`` / ``http.url`` or ``url.path`` + ``url.query`` /
``http.target``, ``http.response.status_code`` / ``http.status_code``,
``http.request.header.<name>`` for a request header such as the
idempotency key. A span with no status code failed in transport: its
``error.type`` or an ``exception`` event's type and message say a
timeout, a reset or a drop. OTLP records no bodies, so handles are unknown
unless an instrumentation adds ``http.request.body`` / ``http.response.body``.
The run is the span's ``traceId`` (a file where every call is alone in its
trace, from a client that opens no span around its run, is one run).
"""

from __future__ import annotations

from typing import Any

from ..errors import DocumentError
from ..model import ChainSpec
from .common import Place, Reading, documents, load_json
from .http import UNSEEN, Call, calls_reading, failure_of

__all__ = ["read_otlp"]

_CLIENT = (3, "3", "SPAN_KIND_CLIENT")


def read_otlp(text: str, spec: ChainSpec, run: str | None = None) -> Reading:
    """The HTTP client calls of an OTLP JSON trace as the chain's steps."""
    spans: list[tuple[Place, dict[str, Any]]] = []
    for line, doc in documents(text):
        spans += _spans(doc, line)
    tries = {s.get("parentSpanId") for _, s in spans if _is_http_client(s)}
    calls = [
        _call(span, place)
        for place, span in spans
        if _is_http_client(span) and span.get("spanId") not in tries - {None, ""}
    ]
    return calls_reading(spec, calls, "otlp", run)


def _spans(doc: Any, line: int | None) -> list[tuple[Place, dict[str, Any]]]:
    where = Place(line, "")
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        raise DocumentError([where.problem("resourceSpans: expected a list (an OTLP JSON trace)")])
    found = []
    for r, resource in enumerate(doc["resourceSpans"]):
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        for s, scope in enumerate(scopes if isinstance(scopes, list) else []):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            for n, span in enumerate(spans if isinstance(spans, list) else []):
                place = Place(line, f"/resourceSpans/{r}/scopeSpans/{s}/spans/{n}")
                if not isinstance(span, dict):
                    raise DocumentError([place.problem("a span must be an object")])
                found.append((place, span))
    return found


def _is_http_client(span: dict[str, Any]) -> bool:
    if span.get("kind") not in _CLIENT:
        return False
    attributes = _attributes(span.get("attributes"))
    return bool(attributes.get("http.request.method") or attributes.get("http.method"))


def _call(span: dict[str, Any], place: Place) -> Call:
    a = _attributes(span.get("attributes"))
    method = str(a.get("http.request.method") or a.get("http.method"))
    url = a.get("url.full") or a.get("http.url")
    if not url:
        path = a.get("url.path") or a.get("http.target") or ""
        query = a.get("url.query")
        url = f"{path}?{query}" if query else path
    if not isinstance(url, str) or not url:
        raise DocumentError(
            [
                place.problem(
                    "attributes: an HTTP client span names no url.full, url.path or http.target"
                )
            ]
        )
    status = a.get("http.response.status_code", a.get("http.status_code"))
    call = Call(
        method=method,
        url=url,
        place=place,
        start=_nanos(span.get("startTimeUnixNano"), "startTimeUnixNano", place),
        run=str(span.get("traceId") or "") or None,
    )
    if status is not None:
        call.status = _status(status, place)
    else:
        call.failure = failure_of(_failure_text(span, a))
    call.request_headers = {
        k.removeprefix("http.request.header."): _first(v)
        for k, v in a.items()
        if k.startswith("http.request.header.")
    }
    call.response_headers = {
        k.removeprefix("http.response.header."): _first(v)
        for k, v in a.items()
        if k.startswith("http.response.header.")
    }
    call.request_body = _body(a.get("http.request.body"))
    call.response_body = _body(a.get("http.response.body"))
    return call


def _failure_text(span: dict[str, Any], attributes: dict[str, Any]) -> str:
    """What the span says of a call with no response: ``error.type``, exceptions, its status."""
    said = [str(attributes.get("error.type") or "")]
    for event in span.get("events") or []:
        if isinstance(event, dict) and event.get("name") == "exception":
            seen = _attributes(event.get("attributes"))
            said += [
                str(seen.get("exception.type") or ""),
                str(seen.get("exception.message") or ""),
            ]
    status = span.get("status")
    if isinstance(status, dict):
        said.append(str(status.get("message") or ""))
    return " ".join(said)


def _attributes(items: Any) -> dict[str, Any]:
    """OTLP's ``[{key, value: {stringValue|intValue|...}}]`` as a plain mapping."""
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _value(item.get("value"))
    return out


def _value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:  # an int64 is a string in OTLP JSON
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    for name in ("doubleValue", "boolValue", "bytesValue"):
        if name in value:
            return value[name]
    if isinstance(value.get("arrayValue"), dict):
        return [_value(v) for v in value["arrayValue"].get("values") or []]
    if isinstance(value.get("kvlistValue"), dict):
        return _attributes(value["kvlistValue"].get("values"))
    return None


def _first(value: Any) -> str:
    """A header attribute: semantic conventions write it as an array of strings."""
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value)


def _body(value: Any) -> Any:
    if not isinstance(value, str):
        return UNSEEN
    try:
        return load_json(value)
    except DocumentError:
        return UNSEEN


def _nanos(value: Any, name: str, place: Place) -> float:
    try:
        nanos = int(value)
    except (TypeError, ValueError):
        raise DocumentError(
            [place.problem(f"{name}: expected Unix nanoseconds; got {value!r}")]
        ) from None
    if nanos <= 0:
        raise DocumentError([place.problem(f"{name}: expected Unix nanoseconds; got {value!r}")])
    return nanos / 1e9


def _status(value: Any, place: Place) -> int:
    try:
        status = int(value)
    except (TypeError, ValueError):
        status = 0
    if not 100 <= status <= 599:
        raise DocumentError(
            [place.problem(f"http.response.status_code: expected 100-599; got {value!r}")]
        )
    return status
