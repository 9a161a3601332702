"""The fault-injecting reverse proxy: a client under test calls it in place of its provider.

:class:`FaultProxy` listens on loopback (any free port; :attr:`~FaultProxy.base_url`)
and forwards each request to the upstream. A request is matched to the
chain's step through the actions' HTTP bindings (the trace audit's
:func:`~chains.core.traces.http.route_of`), and the proxy counts the calls
of each step; at a call its :class:`~.faults.Plan` names, it injects that
fault instead of passing the call through:

- ``lost_response``: forwarded, the whole answer read, then the client's
  connection reset with no answer;
- ``timeout``: not forwarded; held open without an answer until the client
  gives up or ``hold_seconds`` pass, then closed;
- ``reset``: not forwarded; the connection reset at once (``SO_LINGER`` 0);
- ``status``: not forwarded; ``status`` answered with a small JSON body;
- ``rate_limited``: not forwarded; 429 with ``Retry-After`` (left out when the
  fault gives no ``retry_after``, as some providers do);
- ``code``: not forwarded; ``status`` answered with the provider's error
  body (``error_body``, ``<code>`` filled in);
- ``kill_client``: forwarded, then ``on_kill(fault)`` called (the runner
  kills the client there) before the answer is written.

A ``Retry-After`` (any answered fault may carry one) is written as seconds,
a fraction kept (``0.5``) so a quick run need not wait whole seconds. A
call no fault names is forwarded untouched, and so is one bound to no
step (counted for none). Every exchange goes to an
:class:`~.exchanges.ExchangeLog`, written as HAR with :meth:`FaultProxy.write_har`.
The proxy is a context manager; :meth:`FaultProxy.close` stops it, cutting
held and in-flight calls, and waits for its threads. Do not close it from
``on_kill``: that runs on a thread the close waits for.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from chains.core.errors import DocumentError, Problem
from chains.core.model import ChainSpec
from chains.core.traces.http import route_of, routes_of

from .exchanges import BODY_CAP, LOG_BUDGET, SECRET_HEADERS, Exchange, ExchangeLog
from .faults import DEFAULT_ERROR_BODY, Fault, Plan, check_error_body, injected_answer
from .wire import Answer, BodyTooLarge, Upstream, drop, end_to_end, json_answer, read_body

__all__ = ["MAX_REQUEST_BODY", "FaultProxy"]

log = logging.getLogger(__name__)

MAX_REQUEST_BODY = 16_000_000
_POLL = 0.05  # how often a held call and the accept loop look for the proxy closing

# The words of an unanswered call, as a browser's HAR ``_error`` says them: the audit
# reads "timed out" as a timeout, "reset" as a reset, anything else as a dropped connection.
_LOST = "connection reset after the provider answered (fault: lost_response)"
_TIMED_OUT = "timed out: held without an answer (fault: timeout)"
_RESET = "connection reset before the provider saw the call (fault: reset)"
_KILLED = "client killed after the provider applied the call (fault: kill_client)"


class FaultProxy:
    """A reverse proxy on 127.0.0.1 in front of ``upstream`` that injects ``plan``'s faults.

    ``spec`` is the chain whose HTTP bindings name the steps; ``plan`` its
    faults (or their ``as_dict`` forms). ``on_kill`` is called with the
    fault at a ``kill_client`` call; ``error_body`` is the provider's error
    shape for ``code`` faults. Bad arguments raise :class:`DocumentError`.
    """

    def __init__(
        self,
        spec: ChainSpec,
        upstream: str,
        plan: Plan | Iterable[Fault | Mapping[str, Any]] = (),
        *,
        on_kill: Callable[[Fault], None] | None = None,
        hold_seconds: float = 5.0,
        error_body: Any = DEFAULT_ERROR_BODY,
        upstream_timeout: float = 30.0,
        body_cap: int = BODY_CAP,
        log_budget: int = LOG_BUDGET,
        secret_headers: Iterable[str] = SECRET_HEADERS,
    ):
        self.spec = spec
        self.routes = routes_of(spec)  # matched on every request: built once
        self.plan = plan if isinstance(plan, Plan) else Plan.of(spec, plan)
        if on_kill is None and any(f.kind == "kill_client" for f in self.plan):
            raise DocumentError([Problem("on_kill: a kill_client fault needs a callback")])
        if not hold_seconds >= 0:
            raise DocumentError([Problem(f"hold_seconds: expected 0 or more; got {hold_seconds}")])
        check_error_body(error_body)
        self.on_kill = on_kill
        self.hold_seconds = hold_seconds
        self.error_body = error_body
        self.upstream = Upstream(upstream, upstream_timeout)
        self.log = ExchangeLog(body_cap, log_budget, secret_headers)
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}
        self._clients: set[socket.socket] = set()
        self.closing = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _POLL},
            name=f"fault-proxy:{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """Where to point the client under test."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def dispatches(self) -> dict[str, int]:
        """The calls of each step so far."""
        with self._lock:
            return dict(self._calls)

    def exchanges(self) -> list[Exchange]:
        return self.log.exchanges()

    def har(self) -> dict[str, Any]:
        return self.log.har()

    def write_har(self, path: Any) -> Any:
        """Write the run as HAR 1.2 (``chain-designer audit CHAIN PATH`` reads it)."""
        return self.log.write_har(path)

    def close(self) -> None:
        """Stop taking calls, cut those held or in flight, and wait for every thread."""
        if self.closing.is_set():
            return
        self.closing.set()
        self._server.shutdown()
        with self._lock:
            clients = list(self._clients)
        for sock in clients:
            with contextlib.suppress(OSError):  # already gone
                sock.shutdown(socket.SHUT_RDWR)
        self.upstream.abort()
        self._server.server_close()  # joins the request threads
        self._thread.join()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _step_of(self, method: str, target: str) -> tuple[str | None, int | None]:
        found = route_of(self.spec, method, target, self.routes)
        if found is None:
            return None, None
        step = found[0].id
        with self._lock:
            self._calls[step] = self._calls.get(step, 0) + 1
            return step, self._calls[step]

    def _joined(self, sock: socket.socket, here: bool) -> None:
        with self._lock:
            (self._clients.add if here else self._clients.discard)(sock)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # joined on close all the same (block_on_close)

    def __init__(self, address: tuple[str, int], handler: type, proxy: FaultProxy):
        self.proxy = proxy
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as clients of real providers expect
    timeout = 30  # an idle kept-alive connection is closed after this
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.proxy._joined(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.proxy._joined(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._take()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _take(self) -> None:
        proxy = self.server.proxy
        self._began = time.monotonic()
        target = self._target()
        headers = list(self.headers.items())
        unread: Exception | None = None
        try:
            body = read_body(self.rfile, headers, MAX_REQUEST_BODY)
        except (ValueError, BodyTooLarge) as exc:
            body, unread = b"", exc
        step, dispatch = (None, None) if unread else proxy._step_of(self.command, target)
        fault = proxy.plan.at(step, dispatch) if step and dispatch else None
        exchange = Exchange(
            seq=proxy.log.next_seq(),
            started=datetime.now(UTC),
            method=self.command,
            url=proxy.upstream.url(target),
            http_version=self.request_version,
            request_headers=headers,
            request_body=proxy.log.body(body),
            step=step,
            dispatch=dispatch,
            fault=fault,
        )
        # Logged from the start and filled in before the client can see the outcome, so a
        # log read as soon as the client is done holds every call it made.
        proxy.log.add(exchange)
        if unread is not None:
            self.close_connection = True
            exchange.notes["request_error"] = str(unread)
            status = 413 if isinstance(unread, BodyTooLarge) else 400
            self._answer(json_answer(status, {"error": {"message": str(unread)}}), exchange)
            return
        self._act(fault, target, headers, body, exchange)

    def _target(self) -> str:
        """The path and query asked for (a client set up as a forward proxy sends a URL)."""
        if self.path.startswith(("http://", "https://")):
            parts = urlsplit(self.path)
            return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return self.path

    def _act(
        self,
        fault: Fault | None,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        exchange: Exchange,
    ) -> None:
        proxy = self.server.proxy
        kind = fault.kind if fault else None
        if kind == "timeout":
            self._unanswered(exchange, _TIMED_OUT)
            exchange.notes["client_gave_up"] = self._hold(proxy.hold_seconds)
            exchange.seconds = time.monotonic() - self._began
            self._drop(reset=False)
        elif kind == "reset":
            self._unanswered(exchange, _RESET)
            self._drop(reset=True)
        elif fault is not None and kind in ("status", "rate_limited", "code"):
            self._answer(injected_answer(fault, proxy.error_body), exchange)
        else:
            answer = self._forward(target, headers, body, exchange)
            if kind == "lost_response":
                self._unanswered(exchange, _LOST, answer)
                self._drop(reset=True)
            elif fault is not None and kind == "kill_client" and proxy.on_kill is not None:
                self._unanswered(exchange, _KILLED, answer)
                try:
                    proxy.on_kill(fault)
                except Exception as exc:  # the run goes on; the log says the kill failed
                    log.exception("on_kill failed for %s", fault)
                    exchange.notes["kill_error"] = f"{type(exc).__name__}: {exc}"
                self._write(answer, exchange)
            else:
                self._answer(answer, exchange)

    def _answer(self, answer: Answer, exchange: Exchange) -> None:
        exchange.seconds = time.monotonic() - self._began
        exchange.response = self.server.proxy.log.reply(answer)
        self._write(answer, exchange)

    def _unanswered(self, exchange: Exchange, why: str, upstream: Answer | None = None) -> None:
        """Log the call as one the client got no answer to (``upstream``: what it missed)."""
        exchange.seconds = time.monotonic() - self._began
        if upstream is not None:
            exchange.upstream = self.server.proxy.log.reply(upstream)
        exchange.error = why

    def _forward(
        self, target: str, headers: list[tuple[str, str]], body: bytes, exchange: Exchange
    ) -> Answer:
        try:
            return self.server.proxy.upstream.send(self.command, target, headers, body)
        except OSError as exc:
            why = f"{type(exc).__name__}: {exc}"
            exchange.notes["upstream_error"] = why
            return json_answer(502, {"error": {"message": f"upstream unreachable: {why}"}})

    def _write(self, answer: Answer, exchange: Exchange | None = None) -> None:
        """Write ``answer``; a client gone meanwhile is noted, not raised."""
        try:
            self.send_response_only(answer.status, answer.reason or None)
            for name, value in end_to_end(answer.headers, also=("content-length",)):
                self.send_header(name, value)
            if self.command == "HEAD":
                length = next((v for n, v in answer.headers if n.lower() == "content-length"), None)
                if length is not None:
                    self.send_header("Content-Length", length)
            elif answer.status >= 200 and answer.status not in (204, 304):
                self.send_header("Content-Length", str(len(answer.body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and answer.body:
                self.wfile.write(answer.body)
            self.wfile.flush()
        except OSError as exc:
            self.close_connection = True
            if exchange is not None:
                exchange.notes["write_error"] = f"{type(exc).__name__}: {exc}"

    def _hold(self, seconds: float) -> bool:
        """Keep the call unanswered for ``seconds``; True when the client gave up first."""
        closing = self.server.proxy.closing
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not closing.is_set():
            ready, _, _ = select.select([self.connection], [], [], min(left, _POLL))
            if not ready:
                continue
            try:
                if not self.connection.recv(1, socket.MSG_PEEK):
                    return True
            except OSError:
                return True
            closing.wait(min(left, _POLL))  # the client sent more: still no answer for it
        return False

    def _drop(self, reset: bool) -> None:
        self.close_connection = True
        self.rfile.close()  # else the socket stays open behind its reader
        drop(self.connection, reset)
