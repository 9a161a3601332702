"""The fault harness's sample provider and clients (fixtures/harness/), run against each other.

Each test starts its own provider on a free loopback port and runs a client
as a command, the way the harness does (PROVIDER_URL, RUN_DIR, a short
CLIENT_TIMEOUT). The one fault simulated here is the one that matters most:
the provider books, and its answer never reaches the client. A small
forwarder in this module sends the booking on and then closes the client's
connection without a reply; the provider's ``GET /_state`` counts what was
booked.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "fixtures" / "harness"
NAIVE = [sys.executable, str(HARNESS / "naive_client.py")]
CAREFUL = [sys.executable, str(HARNESS / "careful_client.py")]
CURL = ["sh", str(HARNESS / "curl_client.sh")]
needs_curl = pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("sh") is None,
    reason="the curl client needs sh and curl on the PATH",
)
CAREFUL_CLIENTS = [
    pytest.param(CAREFUL, "intents.jsonl", id="careful"),
    pytest.param(CURL, "intents.log", id="curl", marks=needs_curl),
]


@pytest.fixture
def provider() -> Iterator[str]:
    """A fresh provider's base URL; the process is stopped after the test."""
    process = subprocess.Popen(
        [sys.executable, str(HARNESS / "provider.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("listening on http://127.0.0.1:"), first
        yield first.removeprefix("listening on ").strip()
    finally:
        process.terminate()
        process.wait(timeout=5)


class LosesBookingAnswers:
    """A loopback forwarder that passes every call on, but drops the provider's answer to the
    first ``lose`` booking POSTs: the client's connection is closed without a reply."""

    def __init__(self, target: str, lose: int = 1) -> None:
        self.target = ("127.0.0.1", int(target.rsplit(":", 1)[1]))
        self.lose = lose
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # so the loop sees `stop` soon after close()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.listener.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with client:
            request = _read_request(client)
            with socket.create_connection(self.target, timeout=5) as upstream:
                upstream.sendall(request)
                answer = b"".join(iter(lambda: upstream.recv(65536), b""))  # it closes after
            if request.startswith(b"POST /bookings ") and self.lose > 0:
                self.lose -= 1  # booked at the provider; the answer goes nowhere
                return
            client.sendall(answer)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


@pytest.fixture
def lossy(provider: str) -> Iterator[LosesBookingAnswers]:
    forwarder = LosesBookingAnswers(provider)
    yield forwarder
    forwarder.close()


def run(client: list[str], url: str, run_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROVIDER_URL": url, "RUN_DIR": str(run_dir), "CLIENT_TIMEOUT": "1"}
    return subprocess.run(client, env=env, capture_output=True, text=True, timeout=30)


def bookings(url: str) -> list[dict]:
    with urllib.request.urlopen(url + "/_state", timeout=5) as response:
        return json.load(response)["bookings"]


def post(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


@pytest.mark.parametrize(
    "client",
    [
        pytest.param(NAIVE, id="naive"),
        pytest.param(CAREFUL, id="careful"),
        pytest.param(CURL, id="curl", marks=needs_curl),
    ],
)
def test_each_client_books_once_when_nothing_goes_wrong(client, provider, tmp_path):
    done = run(client, provider, tmp_path)
    assert done.returncode == 0, done.stderr
    [booking] = bookings(provider)
    assert f"booked {booking['id']} under {booking['reference']}" in done.stdout


def test_the_naive_client_books_twice_when_the_booking_answer_is_lost(provider, lossy, tmp_path):
    done = run(NAIVE, lossy.url, tmp_path)
    assert done.returncode == 0, done.stderr  # it believes it booked once
    made = bookings(provider)
    assert lossy.lose == 0 and len(made) == 2
    assert made[0]["reference"] == made[1]["reference"]


@pytest.mark.parametrize(("client", "log"), CAREFUL_CLIENTS)
def test_a_careful_client_books_once_when_the_booking_answer_is_lost(
    client, log, provider, lossy, tmp_path
):
    done = run(client, lossy.url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert lossy.lose == 0  # the provider's answer to the booking was dropped
    [booking] = bookings(provider)
    assert booking["reference"] in (tmp_path / log).read_text()


@pytest.mark.parametrize(("client", "log"), CAREFUL_CLIENTS)
def test_a_careful_client_started_after_a_kill_probes_and_finds_its_booking(
    client, log, provider, tmp_path
):
    # What a kill between dispatch and record leaves: the intent, and the booking it made.
    offer = post(provider, "/offers/search", {"destination": "Lisbon", "nights": 2})["offers"][0]
    quote = post(provider, "/quotes", {"offer_id": offer["id"]})
    post(provider, "/bookings", {"quote_id": quote["id"], "reference": "ref-killed"})
    pending = {"reference": "ref-killed", "quote_id": quote["id"], "status": "pending"}
    line = json.dumps(pending) if log.endswith(".jsonl") else f"pending ref-killed {quote['id']}"
    (tmp_path / log).write_text(line + "\n")
    done = run(client, provider, tmp_path)
    assert done.returncode == 0, done.stderr
    assert [b["reference"] for b in bookings(provider)] == ["ref-killed"]


@pytest.mark.parametrize(("client", "log"), CAREFUL_CLIENTS)
def test_a_careful_client_stops_at_a_price_change_without_booking(client, log, provider, tmp_path):
    post(provider, "/_control", {"price_changed": 1})
    done = run(client, provider, tmp_path)
    assert done.returncode == 1
    assert bookings(provider) == []
    assert "price_changed" in (tmp_path / log).read_text()
