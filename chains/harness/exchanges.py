"""The proxy's exchange log, and the HAR 1.2 archive the trace audit reads from it.

Every request the proxy takes is one :class:`Exchange`: the request, the
step and call number it was matched to, the fault injected (if any) and
what the client got. A client that got no answer (a lost response, a
timeout, a reset, a client killed mid-call) is written as HAR writes a
request without a response: status 0 and an ``_error`` saying a timeout, a
reset or a drop, which :mod:`chains.core.traces.har` reads back as the
transport failure; the provider's real answer to a call it applied goes in
``_upstream``. ``_step``, ``_dispatch`` and ``_fault`` say what the proxy did.
Memory is bounded: each body keeps at most ``body_cap`` bytes (1 MB by
default; a cut body is marked ``_truncated`` and reads as unrecorded), and
once ``budget`` bytes of bodies are kept (64 MB) later bodies are left out
the same way. Secret headers (``Authorization``, cookies) are written
``REDACTED``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .faults import Fault
from .wire import Answer, phrase

__all__ = ["BODY_CAP", "LOG_BUDGET", "SECRET_HEADERS", "Body", "Exchange", "ExchangeLog"]

BODY_CAP = 1_000_000
LOG_BUDGET = 64_000_000
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


@dataclass(frozen=True)
class Body:
    """The bytes of a body the log keeps (maybe cut short) and its real size."""

    data: bytes
    size: int

    @property
    def truncated(self) -> bool:
        return len(self.data) < self.size


@dataclass(frozen=True)
class Reply:
    """A response as the log keeps it."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: Body


@dataclass
class Exchange:
    """One request through the proxy and what became of it."""

    seq: int
    started: datetime
    method: str
    url: str
    http_version: str
    request_headers: list[tuple[str, str]]
    request_body: Body
    step: str | None = None
    dispatch: int | None = None
    fault: Fault | None = None
    response: Reply | None = None  # what the client got; None when it got no answer
    upstream: Reply | None = None  # the provider's answer the client never got
    error: str | None = None  # why the client got no answer, as a HAR ``_error``
    notes: dict[str, Any] = field(default_factory=dict)  # written as ``_name`` fields
    seconds: float = 0.0


class ExchangeLog:
    """The exchanges of one run, thread-safe, with bodies capped."""

    def __init__(
        self,
        body_cap: int = BODY_CAP,
        budget: int = LOG_BUDGET,
        secret_headers: Iterable[str] = SECRET_HEADERS,
    ):
        self.body_cap = body_cap
        self.budget = budget
        self.secret_headers = frozenset(h.lower() for h in secret_headers)
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._kept = 0
        self._seq = 0

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def body(self, data: bytes) -> Body:
        """``data`` as the log keeps it: cut at the cap, left out once the budget is spent."""
        with self._lock:
            room = max(0, min(self.body_cap, self.budget - self._kept))
            kept = data[:room]
            self._kept += len(kept)
        return Body(kept, len(data))

    def reply(self, answer: Answer) -> Reply:
        return Reply(answer.status, answer.reason, list(answer.headers), self.body(answer.body))

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    def exchanges(self) -> list[Exchange]:
        """The exchanges so far, in the order the requests came."""
        with self._lock:
            return sorted(self._exchanges, key=lambda e: e.seq)

    def har(self) -> dict[str, Any]:
        """The log as a HAR 1.2 archive (one run: no pages)."""
        return {
            "log": {
                "version": "1.2",
                "creator": {"name": "chain-designer fault harness", "version": "1"},
                "entries": [self._entry(e) for e in self.exchanges()],
            }
        }

    def write_har(self, path: str | Path) -> Path:
        """Write :meth:`har` to ``path`` (``run.har.json``); the path written."""
        target = Path(path)
        target.write_text(json.dumps(self.har(), indent=1) + "\n", encoding="utf-8")
        return target

    def _entry(self, e: Exchange) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "startedDateTime": _iso(e.started),
            "time": round(e.seconds * 1000, 3),
            "request": self._request(e),
            "response": self._response(e.response) if e.response else _no_answer(e.error),
            "cache": {},
            "timings": {"send": 0, "wait": round(e.seconds * 1000, 3), "receive": 0},
            "_step": e.step,
            "_dispatch": e.dispatch,
        }
        if e.fault is not None:
            entry["_fault"] = e.fault.as_dict()
        if e.upstream is not None:
            entry["_upstream"] = self._response(e.upstream)
        if e.error is not None:
            entry["_error"] = e.error
        entry.update({f"_{name}": value for name, value in e.notes.items()})
        return entry

    def _request(self, e: Exchange) -> dict[str, Any]:
        request: dict[str, Any] = {
            "method": e.method,
            "url": e.url,
            "httpVersion": e.http_version,
            "headers": self._headers(e.request_headers),
            "queryString": [
                {"name": n, "value": v}
                for n, v in parse_qsl(urlsplit(e.url).query, keep_blank_values=True)
            ],
            "cookies": [],
            "headersSize": -1,
            "bodySize": e.request_body.size,
        }
        if e.request_body.size:
            text, encoding = _text(e.request_body.data, "")
            post: dict[str, Any] = {"mimeType": _mime(e.request_headers), "text": text}
            if encoding:
                post["_encoding"] = encoding  # HAR postData has no encoding of its own
            if e.request_body.truncated:
                post["_truncated"] = True
            request["postData"] = post
        return request

    def _response(self, reply: Reply) -> dict[str, Any]:
        coding = next((v for n, v in reply.headers if n.lower() == "content-encoding"), "")
        text, encoding = _text(reply.body.data, coding)
        content: dict[str, Any] = {
            "size": reply.body.size,
            "mimeType": _mime(reply.headers),
            "text": text,
        }
        if encoding:
            content["encoding"] = encoding
        if reply.body.truncated:
            content["_truncated"] = True
        return {
            "status": reply.status,
            "statusText": reply.reason or phrase(reply.status),
            "httpVersion": "HTTP/1.1",
            "headers": self._headers(reply.headers),
            "cookies": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": reply.body.size,
        }

    def _headers(self, pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [
            {"name": n, "value": "REDACTED" if n.lower() in self.secret_headers else v}
            for n, v in pairs
        ]


def _no_answer(error: str | None) -> dict[str, Any]:
    return {
        "status": 0,
        "statusText": "",
        "httpVersion": "",
        "headers": [],
        "cookies": [],
        "content": {"size": 0, "mimeType": "x-unknown"},
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": -1,
        "_error": error or "no answer yet: the call was in flight when the log was written",
    }


def _text(data: bytes, coding: str) -> tuple[str, str | None]:
    """A body as HAR text: decompressed when its coding says gzip or deflate (for the log
    only: the client gets the bytes as they came), base64 when it is not UTF-8."""
    if coding.strip().lower() in ("gzip", "x-gzip", "deflate"):
        # wbits 47: a gzip or a zlib header, told apart by the data; capped against a bomb
        with contextlib.suppress(zlib.error):
            data = zlib.decompressobj(47).decompress(data, BODY_CAP)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def _mime(headers: list[tuple[str, str]]) -> str:
    return next((v for n, v in headers if n.lower() == "content-type"), "")


def _iso(when: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and a ``Z``, as browsers write HAR times."""
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
