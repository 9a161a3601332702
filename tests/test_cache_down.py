"""With the shared cache (Redis) down, the site stays up: limits count in each process.

The cache points at a loopback port where nothing listens, so every cache
call is refused at once. Sign-in, the sign-in limits and the rate limits
then count in the process's own memory (``limits.LOCAL``) and a warning is
logged; nobody gets a 500.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chains.models import ApiToken
from chains.services import limits
from chains.services.limits import spend

PASSWORD = "right-passphrase-7"
SMALL = "id: small\nactions:\n  - {id: look, effect: read}\n"


@pytest.fixture
def cache_down(settings, monkeypatch):
    """Django's cache is Redis on a port nobody listens on; the local counts start empty."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        }
    }
    monkeypatch.setattr(limits, "_local_until", 0.0)
    limits.LOCAL.clear()
    yield
    limits.LOCAL.clear()


@pytest.fixture
def ada(db):
    return get_user_model().objects.create_user("ada", password=PASSWORD)


def sign_in(client: Client, password: str = PASSWORD):
    return client.post("/accounts/login/", {"username": "ada", "password": password})


def test_the_sign_in_page_answers(cache_down, db):
    assert Client().get("/accounts/login/").status_code == 200


def test_the_right_password_signs_in(cache_down, ada):
    client = Client()
    response = sign_in(client)
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_a_wrong_password_says_so(cache_down, ada):
    response = sign_in(Client(), "wrong")
    assert response.status_code == 200
    assert "do not match an account" in response.content.decode()


def test_failed_sign_ins_still_lock_the_username(cache_down, ada, settings):
    for _ in range(settings.SIGNIN_MAX_FAILURES):
        assert sign_in(Client(), "wrong").status_code == 200
    assert sign_in(Client()).status_code == 429


def test_a_rate_limited_request_is_counted_in_the_process(cache_down, ada, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (2, 60)}
    _, secret = ApiToken.objects.issue(ada, "test")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    body = json.dumps({"document": SMALL, "filename": "s.yaml"})
    answers = [
        client.post("/api/lint", body, content_type="application/json").status_code
        for _ in range(3)
    ]
    assert answers == [200, 200, 429]


def test_a_rate_limited_page_is_counted_in_the_process(cache_down, people, signed_in, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "import": (1, 60)}
    client = signed_in(people["editor"])
    form = {"text": SMALL, "name": "s.yaml"}
    answers = [client.post("/chains/import/", form).status_code for _ in range(2)]
    assert answers[0] < 400 and answers[1] == 429


def test_the_fallback_is_logged_once_per_interval(cache_down, ada, caplog, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(limits.time, "monotonic", lambda: clock[0])
    with caplog.at_level(logging.WARNING, logger="chains.services.limits"):
        for _ in range(3):
            spend("lint", user=ada)
        clock[0] += limits.RETRY_SECONDS
        spend("lint", user=ada)
    warnings = [r for r in caplog.records if r.name == "chains.services.limits"]
    assert len(warnings) == 2
    assert "the cache does not answer" in warnings[0].getMessage()


def test_a_cache_that_never_answers_holds_the_requests_up_about_a_second(tmp_path):
    """Redis accepts the connection and says nothing: the settings' socket timeouts cut it short.

    Then the process counts locally for a while instead of waiting on every request.
    """
    held = []
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]

        def hold() -> None:
            with contextlib.suppress(OSError):
                while True:
                    held.append(silent.accept()[0])

        threading.Thread(target=hold, daemon=True).start()
        code = (
            "import time, django; django.setup()\n"
            "from chains.services.limits import spend\n"
            "started = time.monotonic()\n"
            "for _ in range(5): spend('lint', address='192.0.2.1')\n"
            "print(time.monotonic() - started)\n"
        )
        env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "REDIS_URL")}
        env.update(DJANGO_SETTINGS_MODULE="designer.settings", DEBUG="1")
        env["CACHE_URL"] = f"redis://127.0.0.1:{port}/0"
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 3
    assert "the cache does not answer (TimeoutError" in done.stderr
    assert held  # it did connect: the time went on waiting for an answer
