"""``make deploy-check``: the production setup on this machine, then a new user's first minutes.

Runs what the container runs (``deploy/entrypoint.sh web`` and ``worker``:
migrations on start, gunicorn, WhiteNoise, a Celery worker) with DEBUG off
against the PostgreSQL and Redis this machine serves, in a database of its
own (``deploy_check``, created afresh and dropped after) and Redis
databases 12 to 14 (emptied after). Then, over HTTP like a browser:
``/healthz``, a static file, sign-in, one edit through the API and one
campaign run to its end by the worker. Prints each step and exits 1 at the
first that fails. Plain HTTP on loopback: the HTTPS switches a TLS proxy
would make true are turned off, nothing else.

    .venv/bin/python deploy/check.py [--database-url postgres://...] [--redis-url redis://...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _server import free_port, fresh_database, manage, production_env, sign_in  # noqa: E402

CHAIN = "fixtures/card-payment.yaml"
CHAIN_KEY = "card_payment_manual_capture"
# A user, their team and the chain they edit, made the way an operator would.
SETUP = """
from django.contrib.auth import get_user_model
from chains.models import Team
user = get_user_model().objects.create_user("smoke", password={password!r})
Team.objects.found("Smoke", owner=user, slug="smoke")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/deploy_check")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    args = parser.parse_args()
    redis = args.redis_url.rstrip("/")
    env = production_env(
        args.database_url,
        SECRET_KEY=secrets.token_urlsafe(50),
        CELERY_BROKER_URL=f"{redis}/12",
        CELERY_RESULT_BACKEND=f"{redis}/13",
        CACHE_URL=f"{redis}/14",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    password = secrets.token_urlsafe(16)
    fresh_database(args.database_url)
    try:
        # the image runs collectstatic when it is built, before anything serves
        step("collectstatic", lambda: manage(["collectstatic", "--noinput"], env))
        with served(env) as base:
            manage(["shell", "-c", SETUP.format(password=password)], env)
            manage(["chain", "import", CHAIN, "--team", "smoke"], env)
            smoke(base, password)
    except Failure as exc:
        print(f"FAILED: {exc}")
        return 1
    finally:
        clean_up(args.database_url, redis)
    print("deploy-check: every step passed")
    return 0


class Failure(Exception):
    pass


def step(name: str, action) -> object:
    started = time.monotonic()
    try:
        result = action()
    except Failure:
        raise
    except Exception as exc:
        raise Failure(f"{name}: {type(exc).__name__}: {exc}") from None
    print(f"ok  {name} ({time.monotonic() - started:.1f} s)")
    return result


@contextlib.contextmanager
def served(env: dict[str, str]) -> Iterator[str]:
    """gunicorn and the worker through the container's entry point; yields the base URL."""
    port = free_port()
    web_env = {**env, "BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "2"}
    entry = str(ROOT / "deploy" / "entrypoint.sh")
    logs = ROOT / "var" / "deploy-check"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "web.log").open("w") as web_log, (logs / "worker.log").open("w") as work_log:
        web = subprocess.Popen(
            [entry, "web"], cwd=ROOT, env=web_env, stdout=web_log, stderr=web_log
        )
        worker = subprocess.Popen(
            [entry, "worker"], cwd=ROOT, env={**env, "CELERY_CONCURRENCY": "1"},
            stdout=work_log, stderr=work_log,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            step("migrations on start, then gunicorn answers /healthz", lambda: healthy(base))
            yield base
        finally:
            for process in (web, worker):
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in (web, worker):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(30)
            print(f"logs: {logs}/web.log, {logs}/worker.log")


def healthy(base: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = requests.get(base + "/healthz", timeout=5)
            if answer.status_code == 200:
                return
            last = f"{answer.status_code} {answer.text[:200]}"
        except requests.RequestException as exc:
            last = type(exc).__name__
        time.sleep(0.5)
    raise Failure(f"/healthz did not answer 200 within {timeout:.0f} s: {last}")


def smoke(base: str, password: str) -> None:
    http = requests.Session()

    def static_file() -> None:
        page = http.get(base + "/accounts/login/", timeout=30)
        found = re.search(r'(/static/[^"]+\.css)', page.text)
        if not found:
            raise Failure("the sign-in page links no stylesheet")
        css = http.get(base + found.group(1), timeout=30)
        cached = css.headers.get("Cache-Control", "")
        if css.status_code != 200 or "max-age=315360000" not in cached:
            raise Failure(f"{found.group(1)}: {css.status_code}, Cache-Control {cached!r}")

    def signed_in() -> None:
        answer = sign_in(http, base, "smoke", password)
        if answer.status_code != 302:
            raise Failure(f"sign-in answered {answer.status_code}")

    def api(method: str, path: str, **kw) -> requests.Response:
        headers = {"X-CSRFToken": http.cookies.get("csrftoken", ""), "Referer": base + "/"}
        return http.request(method, base + "/api" + path, headers=headers, timeout=60, **kw)

    def edited() -> None:
        head = api("GET", f"/chains/{CHAIN_KEY}").json()["head"]
        change = {"fields": {"description": "edited by deploy-check"}}
        body = {"op": "update_chain", "args": change, "base": head}
        answer = api("POST", f"/chains/{CHAIN_KEY}/edits", json=body)
        if answer.status_code != 201:
            raise Failure(f"the edit answered {answer.status_code}: {answer.text[:300]}")

    def campaign() -> None:
        body = {"max_faults": 1, "shards": 2}
        answer = api("POST", f"/chains/{CHAIN_KEY}/campaigns", json=body)
        if answer.status_code != 201:
            raise Failure(f"the launch answered {answer.status_code}: {answer.text[:300]}")
        pk = answer.json()["id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            shown = api("GET", f"/chains/{CHAIN_KEY}/campaigns/{pk}").json()
            if shown["status"] not in ("queued", "running"):
                if shown["status"] != "done" or not shown["states"]:
                    raise Failure(f"the campaign ended {shown['status']}: {shown}")
                shards = shown["shard_count"]
                print(f"    campaign {pk}: {shown['states']} states in {shards} shards")
                return
            time.sleep(0.5)
        raise Failure("the campaign did not end within 120 s (is the worker running?)")

    step("a static file, by WhiteNoise, cached for good", static_file)
    step("sign-in", signed_in)
    step("one edit through the API", edited)
    step("one campaign, run by the Celery worker", campaign)


def clean_up(database_url: str, redis: str) -> None:
    import psycopg
    from redis import Redis

    name = database_url.rsplit("/", 1)[1]
    admin = database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    for db in (12, 13, 14):
        Redis.from_url(f"{redis}/{db}").flushdb()


if __name__ == "__main__":
    sys.exit(main())
