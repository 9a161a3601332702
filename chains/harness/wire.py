"""What the proxy does on the wire: read a request's body, forward it, drop a connection.

Forwarding keeps the method, the path with its query, the body and the
end-to-end headers (RFC 9110 §7.6.1: the hop-by-hop ones and those the
``Connection`` header names stay on their hop; ``Host`` becomes the
upstream's). Each forwarded call opens its own connection to the upstream
and reads the whole answer before anything goes back to the client, which is
what lets a fault come after the provider applied the call. Upstreams in
flight are tracked so that closing the proxy does not wait out their timeout.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import struct
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from io import BufferedIOBase
from typing import Any
from urllib.parse import urlsplit

from chains.core.errors import DocumentError, Problem

__all__ = [
    "HOP_BY_HOP",
    "Answer",
    "BodyTooLarge",
    "Upstream",
    "drop",
    "end_to_end",
    "json_answer",
    "phrase",
    "read_body",
]

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
# Set again for the next hop: the length from the body as it is now, the host of the upstream.
_RESET_ON_FORWARD = frozenset({"content-length", "host", "expect"})


class BodyTooLarge(Exception):
    """A request body past what the proxy holds in memory."""


@dataclass(frozen=True)
class Answer:
    """A response: the upstream's, or one the proxy makes for a fault."""

    status: int
    reason: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def json_answer(status: int, body: Any, headers: Iterable[tuple[str, str]] = ()) -> Answer:
    """An answer the proxy makes itself: ``body`` as JSON, with ``headers`` added."""
    content = json.dumps(body).encode()
    return Answer(status, phrase(status), [("Content-Type", "application/json"), *headers], content)


def phrase(status: int) -> str:
    """The reason phrase of ``status`` (``Service Unavailable``); empty for one HTTP lacks."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def end_to_end(
    headers: Iterable[tuple[str, str]], also: Iterable[str] = ()
) -> list[tuple[str, str]]:
    """``headers`` without the hop-by-hop ones, those ``Connection`` names, and ``also``.

    >>> end_to_end([("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Accept", "*/*")])
    [('Accept', '*/*')]
    """
    pairs = list(headers)
    named = {
        token.strip().lower()
        for name, value in pairs
        if name.lower() == "connection"
        for token in value.split(",")
    }
    left_out = HOP_BY_HOP | named | {n.lower() for n in also}
    return [(name, value) for name, value in pairs if name.lower() not in left_out]


def read_body(rfile: BufferedIOBase, headers: list[tuple[str, str]], limit: int) -> bytes:
    """The request body after its headers: ``Content-Length`` bytes, or its chunks joined."""
    named = {name.lower(): value for name, value in headers}
    if "chunked" in named.get("transfer-encoding", "").lower():
        return _chunks(rfile, limit)
    try:
        length = int(named.get("content-length", "0"))
    except ValueError:
        raise ValueError(f"Content-Length: not a number ({named['content-length']!r})") from None
    if length < 0:
        raise ValueError(f"Content-Length: negative ({length})")
    if length > limit:
        raise BodyTooLarge(f"the body is {length:,} bytes; the proxy holds at most {limit:,}")
    body = rfile.read(length)
    if len(body) < length:
        raise ValueError(f"the body ended after {len(body)} of its {length} bytes")
    return body


def _chunks(rfile: BufferedIOBase, limit: int) -> bytes:
    body = bytearray()
    while True:
        line = rfile.readline(1024).split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            raise ValueError(f"a chunk's size is not hexadecimal ({line[:20]!r})") from None
        if size == 0:
            while rfile.readline(8192).strip():  # trailer fields, not forwarded
                pass
            return bytes(body)
        if len(body) + size > limit:
            raise BodyTooLarge(f"the chunked body passes {limit:,} bytes")
        body += rfile.read(size)
        rfile.readline(8)  # the CRLF after the chunk


class Upstream:
    """The provider behind the proxy, at a base URL (``http://127.0.0.1:8000/v2``)."""

    def __init__(self, base_url: str, timeout: float):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            why = f"upstream: expected an http(s)://host[:port][/base] URL; got {base_url!r}"
            raise DocumentError([Problem(why)])
        self.scheme = parts.scheme
        self.netloc = parts.netloc
        self.host = parts.hostname
        self.port = parts.port
        self.base_path = parts.path.rstrip("/")
        self.timeout = timeout
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    def url(self, target: str) -> str:
        """The upstream URL of a request target (its path and query)."""
        return f"{self.scheme}://{self.netloc}{self.base_path}{target}"

    def send(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """Forward one call and read its whole answer; ``OSError`` when there is none."""
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        conn = kind(self.host, self.port, timeout=self.timeout)
        with self._lock:
            self._open.add(conn)
        try:
            conn.putrequest(method, self.base_path + target, skip_accept_encoding=True)
            for name, value in end_to_end(headers, also=_RESET_ON_FORWARD):
                conn.putheader(name, value)
            if body or method.upper() in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            response = conn.getresponse()
            content = response.read()
            return Answer(response.status, response.reason, response.getheaders(), content)
        except http.client.HTTPException as exc:
            raise OSError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()

    def abort(self) -> None:
        """Cut every call in flight (the proxy is closing)."""
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            if conn.sock is not None:
                with contextlib.suppress(OSError):  # already gone
                    conn.sock.shutdown(socket.SHUT_RDWR)


def drop(sock: socket.socket, reset: bool) -> None:
    """Close ``sock`` now; with ``reset`` abortively (``SO_LINGER`` 0: the peer gets an RST)."""
    try:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # the client has already gone
    sock.close()
