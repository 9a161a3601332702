"""What the server benchmarks share: a fresh database, production settings, gunicorn, signing in.

``bench/load.py`` and ``bench/abuse.py`` both run the app as it is deployed:
a PostgreSQL database of their own (created, or emptied, on the server the
URL names; trust authentication on loopback is assumed), migrated and filled
by ``manage.py shell -c``, then gunicorn on a free loopback port with DEBUG
off and plain HTTP. This module holds those steps and nothing about what a
benchmark measures. It also reads processes' resident memory from /proc
(Linux only), for the benchmarks that report a worker's peak.

A fresh clone has neither htmx (``make static`` installs it) nor
collectstatic's output, and production settings serve only the latter:
``collect_static`` makes both, as the container image does when it is built.
``RedisServer`` runs a redis-server of the benchmark's own on a free loopback
port, so it may be flushed, stopped and restarted without touching anyone's.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO
from urllib.parse import urlparse

import requests

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def production_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a production-like run on loopback: DEBUG off, plain HTTP."""
    import os

    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        **extra,
    }


def fresh_database(url: str) -> None:
    """Create (or empty) the database ``url`` names."""
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(url: str) -> None:
    """Drop the database ``url`` names, if it is there."""
    import psycopg

    parts = urlparse(url)
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def manage(args: list[str], env: dict[str, str]) -> str:
    """Run ``manage.py`` with ``args``; its standard output (raises when it fails)."""
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"manage.py {args[0]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def collect_static(env: dict[str, str]) -> None:
    """htmx into the static files when it is missing (``make static``), then collectstatic."""
    if not (ROOT / "static/vendor/htmx/htmx.min.js").exists():
        done = subprocess.run(["make", "static"], cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"make static failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    manage(["collectstatic", "--noinput"], env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=5)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer at {url}")


class Gunicorn:
    """gunicorn serving the app on a free loopback port; ``stop`` ends it (and only it)."""

    def __init__(
        self,
        env: dict[str, str],
        workers: int,
        timeout: int | None = None,
        log: IO[str] | None = None,
    ):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        args = ["--bind", f"127.0.0.1:{self.port}", "--workers", str(workers)]
        args += ["--timeout", str(timeout)] if timeout else []
        self.process = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "designer.wsgi", *args, "--log-level", "warning"],
            cwd=ROOT,
            env=env,
            stderr=log,
        )

    def __enter__(self) -> Gunicorn:
        wait_for(self.base + "/accounts/login/")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def workers(self) -> list[int]:
        return children(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)


class RedisServer:
    """A redis-server of our own on a free loopback port; its data in a temporary folder.

    ``stop`` saves what it holds and ends it, ``start`` brings it back on the
    same port with that data: a restart, as a real one after a failover or an
    upgrade. ``close`` ends it for good and removes the folder.
    """

    def __init__(self, executable: str = "redis-server"):
        found = shutil.which(executable)
        if found is None:
            raise SystemExit(f"{executable} is not installed (apt-get install redis-server)")
        self.executable, self.port = found, free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="bench-redis-"))
        self.url = f"redis://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        args += ["--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]
        log = (self.folder / "redis.log").open("a")
        self.process = subprocess.Popen([self.executable, *args], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return
            time.sleep(0.05)
        raise SystemExit(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        """Save and end it (SHUTDOWN SAVE); the port answers nothing until ``start``."""
        import redis

        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(redis.ConnectionError):
            redis.Redis(port=self.port).shutdown(save=True)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


def sign_in(http: requests.Session, base: str, username: str, password: str) -> requests.Response:
    """Sign ``http`` in through the sign-in page; the form's answer (302 when it worked)."""
    page = http.get(base + "/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
    return http.post(
        base + "/accounts/login/",
        data=form,
        allow_redirects=False,
        headers={"Referer": base + "/accounts/login/"},
        timeout=30,
    )


def children(pid: int) -> list[int]:
    """The direct child processes of ``pid`` (none once it has ended)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def rss_mb(pid: int) -> float:
    """The resident memory of ``pid`` now, in MB (0 once it has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else 0.0
