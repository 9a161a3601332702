"""The fault-injecting proxy: each fault on the wire, the call it picks, and the HAR it writes.

A provider stand-in on loopback counts what reaches it; the client is
``http.client`` with timeouts of a second at most; the chain is a small
literal one whose three steps are bound to HTTP calls.
"""

from __future__ import annotations

import doctest
import errno
import http.client
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from typing import Any

import pytest

from chains import cli
from chains.core import formats, traces
from chains.core.errors import DocumentError
from chains.core.sim.audit import audit
from chains.harness import Fault, FaultProxy, faults, wire

CHAIN: dict[str, Any] = {
    "id": "shop",
    "handles": [
        {"id": "offer_id", "minted_by": "search"},
        {"id": "order_id", "minted_by": "book"},
    ],
    "actions": [
        {
            "id": "search",
            "effect": "read",
            "output": {"handles": ["offer_id"]},
            "http": {"method": "POST", "path": "/offers", "reads": {"offer_id": "body:/data/id"}},
        },
        {
            "id": "book",
            "effect": "commit",
            "input": {"handles": ["offer_id"]},
            "output": {"handles": ["order_id"]},
            "idempotency": {"mode": "keyed", "key_scope": "intent"},
            "http": {
                "method": "POST",
                "path": "/orders",
                "idempotency_header": "Idempotency-Key",
                "sends": {"offer_id": "body:/offer_id"},
                "reads": {"order_id": "body:/data/id"},
            },
        },
        {
            "id": "get_order",
            "effect": "read",
            "input": {"handles": ["order_id"]},
            "http": {
                "method": "GET",
                "path": "/orders/{order_id}",
                "sends": {"order_id": "path:order_id"},
            },
        },
    ],
}
SPEC = formats.from_document(CHAIN)
OFFER = {"offer_id": "off_1"}


class Provider:
    """The provider stand-in: answers every call and keeps what reached it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with provider.lock:
                    provider.seen.append((self.command, self.path, dict(self.headers), body))
                made = "off_1" if self.path.startswith("/offers") else "ord_1"
                data = json.dumps({"data": {"id": made}}).encode()
                self.send_response(201 if self.command == "POST" else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Provider", "stand-in")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PUT = do_DELETE = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,))
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self, path: str) -> int:
        with self.lock:
            return sum(1 for _, p, _, _ in self.seen if p == path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def provider() -> Iterator[Provider]:
    stand_in = Provider()
    yield stand_in
    stand_in.close()


@pytest.fixture
def proxy(provider):
    """Open a proxy in front of the stand-in with a plan (faults or dicts); closed after."""
    opened: list[FaultProxy] = []

    def open_proxy(*faults: Any, **options: Any) -> FaultProxy:
        options.setdefault("hold_seconds", 1.0)
        opened.append(FaultProxy(SPEC, provider.url, list(faults), **options))
        return opened[-1]

    yield open_proxy
    for each in opened:
        each.close()


def call(
    proxy: FaultProxy,
    path: str,
    body: Any = None,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    timeout: float = 1.0,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body)
        sent = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, data, sent)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def fault(kind: str, step: str = "book", dispatch: int = 1, **more: Any) -> Fault:
    return Fault(step, dispatch, kind, **more)  # type: ignore[arg-type]


def let_go(proxy: FaultProxy) -> Any:
    """The held call once the proxy let it go (it notes whether the client gave up first)."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        held = proxy.exchanges()
        if held and "client_gave_up" in held[0].notes:
            return held[0]
        time.sleep(0.01)
    raise AssertionError("the proxy still holds the call after a second")


def test_a_call_no_fault_names_is_forwarded_with_its_method_path_query_headers_and_body(
    proxy, provider
):
    status, headers, body = call(proxy(), "/offers?live=1", OFFER, headers={"X-Trace": "t1"})
    method, path, sent, received = provider.seen[0]
    assert (method, path, json.loads(received), sent["X-Trace"]) == (
        "POST",
        "/offers?live=1",
        OFFER,
        "t1",
    )
    assert (status, headers["X-Provider"], json.loads(body)) == (
        201,
        "stand-in",
        {"data": {"id": "off_1"}},
    )


def test_hop_by_hop_headers_stay_on_the_clients_hop(proxy, provider):
    call(proxy(), "/offers", OFFER, headers={"Connection": "keep-alive, X-Hop", "X-Hop": "1"})
    sent = provider.seen[0][2]
    assert "X-Hop" not in sent and "Connection" not in sent


def test_a_request_bound_to_no_step_is_forwarded_and_counted_for_no_step(proxy, provider):
    opened = proxy(fault("status", step="search", status=503))
    assert call(opened, "/health", method="GET")[0] == 200
    assert provider.count("/health") == 1 and opened.dispatches == {}


def test_a_lost_response_is_applied_upstream_and_the_client_gets_no_answer(proxy, provider):
    opened = proxy(fault("lost_response"))
    with pytest.raises(ConnectionError):
        call(opened, "/orders", OFFER)
    assert provider.count("/orders") == 1


def test_a_timeout_never_reaches_the_upstream_and_the_client_times_out(proxy, provider):
    opened = proxy(fault("timeout"), hold_seconds=1.0)
    with pytest.raises(TimeoutError):
        call(opened, "/orders", OFFER, timeout=0.2)
    assert provider.count("/orders") == 0


def test_a_held_call_is_let_go_as_soon_as_the_client_gives_up(proxy):
    opened = proxy(fault("timeout"), hold_seconds=5.0)
    with pytest.raises(TimeoutError):
        call(opened, "/orders", OFFER, timeout=0.2)
    held = let_go(opened)
    assert held.notes["client_gave_up"] and held.seconds < 1.0


def test_a_timeout_closes_the_connection_after_hold_seconds_when_the_client_waits(proxy):
    opened = proxy(fault("timeout"), hold_seconds=0.2)
    began = time.monotonic()
    with pytest.raises(ConnectionError):
        call(opened, "/orders", OFFER, timeout=1.0)
    assert 0.2 <= time.monotonic() - began < 1.0


def test_a_reset_sends_an_rst_at_once_without_forwarding(proxy, provider):
    opened = proxy(fault("reset"))
    with pytest.raises(ConnectionResetError) as raised:
        call(opened, "/orders", OFFER)
    assert raised.value.errno == errno.ECONNRESET  # an RST, not a quiet close
    assert provider.count("/orders") == 0


def test_a_status_fault_answers_that_status_without_forwarding(proxy, provider):
    status, headers, body = call(proxy(fault("status", status=503)), "/orders", OFFER)
    assert (status, headers["Content-Type"]) == (503, "application/json")
    assert json.loads(body) == {"error": {"message": "Service Unavailable"}}
    assert provider.count("/orders") == 0


def test_a_rate_limited_fault_answers_429_with_its_retry_after(proxy, provider):
    status, headers, _ = call(proxy(fault("rate_limited", retry_after=2.0)), "/orders", OFFER)
    assert (status, headers["Retry-After"]) == (429, "2")
    assert provider.count("/orders") == 0


def test_a_code_fault_answers_the_default_error_shape_naming_the_code(proxy):
    opened = proxy(fault("code", status=409, code="offer_expired"))
    status, _, body = call(opened, "/orders", OFFER)
    assert (status, json.loads(body)) == (409, {"error": {"code": "offer_expired"}})


def test_a_code_fault_fills_the_providers_own_error_shape(proxy):
    shape = {"errors": [{"type": "invalid_state_error", "code": "<code>", "title": "<code>"}]}
    opened = proxy(fault("code", status=422, code="offer_gone"), error_body=shape)
    body = json.loads(call(opened, "/orders", OFFER)[2])
    assert body == {
        "errors": [{"type": "invalid_state_error", "code": "offer_gone", "title": "offer_gone"}]
    }


def test_kill_client_calls_back_after_the_upstream_applied_the_call_and_before_the_answer(
    proxy, provider
):
    applied_when_killed: list[tuple[Fault, int]] = []
    opened = proxy(
        fault("kill_client"),
        on_kill=lambda f: applied_when_killed.append((f, provider.count("/orders"))),
    )
    status = call(opened, "/orders", OFFER)[0]  # the test's client is not killed: it reads on
    assert applied_when_killed == [(fault("kill_client"), 1)] and status == 201


def test_the_call_count_picks_the_second_call_of_the_step(proxy, provider):
    opened = proxy(fault("status", step="search", dispatch=2, status=503))
    statuses = [call(opened, "/offers", {})[0] for _ in range(3)]
    assert statuses == [201, 503, 201]
    assert opened.dispatches == {"search": 3} and provider.count("/offers") == 2


def test_a_path_parameter_call_is_counted_for_its_step(proxy):
    opened = proxy()
    call(opened, "/orders/ord_1", method="GET")
    call(opened, "/orders/ord_2", method="GET")
    assert opened.dispatches == {"get_order": 2}


def run_with_a_lost_booking(opened: FaultProxy) -> None:
    """Search, book (its answer lost), book again with the same key, read the order."""
    key = {"Idempotency-Key": "key-1"}
    call(opened, "/offers", {})
    with pytest.raises(ConnectionError):
        call(opened, "/orders", OFFER, headers=key)
    call(opened, "/orders", OFFER, headers=key)
    call(opened, "/orders/ord_1", method="GET")


def test_the_har_reads_as_the_chains_steps_with_the_lost_answer_as_no_response(proxy):
    opened = proxy(fault("lost_response"))
    run_with_a_lost_booking(opened)
    reading = traces.read(json.dumps(opened.har()), SPEC)
    assert reading.format == "har"
    assert [(e.step_id, e.signal["transport"]) for e in reading.events] == [
        ("search", "http:201"),
        ("book", "conn_reset"),
        ("book", "http:201"),
        ("get_order", "http:200"),
    ]


def test_the_har_keeps_the_providers_answer_to_a_lost_call_beside_the_missing_one(proxy):
    opened = proxy(fault("lost_response"))
    run_with_a_lost_booking(opened)
    lost = opened.har()["log"]["entries"][1]
    assert (lost["response"]["status"], lost["_upstream"]["status"]) == (0, 201)
    assert lost["_fault"] == {"step": "book", "dispatch": 1, "kind": "lost_response"}
    assert json.loads(lost["_upstream"]["content"]["text"]) == {"data": {"id": "ord_1"}}


def test_a_keyed_retry_after_a_lost_answer_audits_clean_through_the_command_line(proxy, tmp_path):
    opened = proxy(fault("lost_response"))
    run_with_a_lost_booking(opened)
    chain = tmp_path / "shop.json"
    chain.write_text(json.dumps(CHAIN))
    har = opened.write_har(tmp_path / "run.har.json")
    out = StringIO()
    assert cli.main(["audit", str(chain), str(har), "--json"], out) == 0
    assert audit(SPEC, traces.read(har.read_text(), SPEC)).attempts == 4


def test_secret_headers_are_forwarded_but_redacted_in_the_log(proxy, provider):
    opened = proxy()
    call(opened, "/offers", {}, headers={"Authorization": "Bearer sk_live_1"})
    sent = opened.har()["log"]["entries"][0]["request"]["headers"]
    assert provider.seen[0][2]["Authorization"] == "Bearer sk_live_1"
    assert {"name": "Authorization", "value": "REDACTED"} in sent


def test_a_body_past_the_cap_is_forwarded_whole_but_kept_cut_short_in_the_log(proxy, provider):
    opened = proxy(body_cap=10)
    call(opened, "/offers", {"note": "x" * 100})
    post = opened.har()["log"]["entries"][0]["request"]["postData"]
    assert len(provider.seen[0][3]) > 100
    assert (len(post["text"]), post["_truncated"]) == (10, True)


def test_closing_the_proxy_cuts_a_held_call_and_stops_at_once(proxy):
    opened = proxy(fault("timeout"), hold_seconds=5.0)
    failures: list[Exception] = []

    def held_client() -> None:
        try:
            call(opened, "/orders", OFFER, timeout=1.0)
        except Exception as exc:
            failures.append(exc)

    client = threading.Thread(target=held_client)
    client.start()
    while not opened.dispatches and client.is_alive():
        time.sleep(0.01)
    began = time.monotonic()
    opened.close()
    client.join()
    assert time.monotonic() - began < 0.5 and isinstance(failures[0], ConnectionError)
    with pytest.raises(ConnectionRefusedError):
        call(opened, "/orders", OFFER)


@pytest.mark.parametrize(
    ("planned", "says"),
    [
        ({"step": "pay", "dispatch": 1, "kind": "reset"}, "no action 'pay'"),
        ({"step": "book", "dispatch": 0, "kind": "reset"}, "a call number from 1"),
        ({"step": "book", "dispatch": 1, "kind": "status"}, "answers with a status"),
        ({"step": "book", "dispatch": 1, "kind": "code", "status": 409}, "names the provider"),
        ({"step": "book", "dispatch": 1, "kind": "explode"}, "kind: expected one of"),
        ({"step": "book", "dispatch": 1, "kind": "reset", "why": 1}, "unknown field(s) why"),
    ],
)
def test_a_fault_that_cannot_be_injected_is_refused_naming_why(provider, planned, says):
    with pytest.raises(DocumentError, match="fault 1") as raised:
        FaultProxy(SPEC, provider.url, [planned])
    assert says in str(raised.value)


def test_a_kill_client_fault_without_a_callback_is_refused(provider):
    with pytest.raises(DocumentError, match="on_kill"):
        FaultProxy(SPEC, provider.url, [fault("kill_client")])


def test_an_error_body_that_never_names_the_code_is_refused(provider):
    with pytest.raises(DocumentError, match="<code>"):
        FaultProxy(SPEC, provider.url, error_body={"error": "bad"})


@pytest.mark.parametrize("module", [faults, wire])
def test_the_module_doctests_pass(module):
    assert doctest.testmod(module).failed == 0
