"""Load: signed-in users viewing, editing and linting against gunicorn and PostgreSQL.

The script sets up a database of its own on the PostgreSQL server
(``--database-url``, default ``postgres://postgres@127.0.0.1:5432/chain_load``,
created if missing, emptied first). It makes one team with ``--users`` editors.
Every user gets a copy of the flight fixture to edit, and they all share the
original to view. It starts gunicorn on loopback with production settings
(DEBUG off, plain HTTP) and runs one thread per user for ``--seconds``. Each
thread signs in through the sign-in page, then repeats this round, pausing
``--think`` seconds (±50 %) between requests, as a person would:

- view: the shared chain's workspace (graph, lint panel, table);
- edit: add a handle to their own chain (htmx POST, based on the head they saw);
- view: their own chain's workspace;
- lint: ``GET /api/chains/<own>/lint`` with their session.

It reports requests, the p50, p95 and p99 latency per kind and overall
(overall leaves out the one sign-in per user, a deliberately slow hash), and
the errors. An error is a 5xx, a refused connection, or any status the round
does not expect. The target (issue 7) is no errors and an overall p95 under
300 ms.

    .venv/bin/python bench/load.py [--users 20 --seconds 60 --think 1.0 --workers 5]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import threading
import time
from collections import defaultdict

import requests
from _server import Gunicorn, fresh_database, manage, production_env, sign_in

PASSWORD = "load-test-passphrase-7"


# Run by ``manage.py shell -c`` in the bench's database; LOAD_USERS and LOAD_PASSWORD from env.
SETUP = """
import os
from django.contrib.auth import get_user_model
from chains.core import formats
from chains.models import Chain, Role, Team
n, password = int(os.environ["LOAD_USERS"]), os.environ["LOAD_PASSWORD"]
users = [get_user_model().objects.create_user(f"user{i}", password=password) for i in range(n)]
team = Team.objects.found("Load", owner=users[0], slug="load")
for user in users[1:]:
    team.add(user, Role.EDITOR)
text = open("fixtures/flight-roundtrip.yaml").read()
doc = formats.to_document(formats.load(text, format="yaml").chains[0])
Chain.objects.store(doc, team=team)
for i in range(n):
    Chain.objects.store({**doc, "id": f"flight_{i}"}, team=team)
"""


class User(threading.Thread):
    def __init__(self, n: int, base: str, until: float, think: float, record):
        super().__init__(daemon=True)
        self.n, self.base, self.until, self.think, self.record = n, base, until, think, record
        self.http = requests.Session()

    def call(self, kind: str, method: str, path: str, expect: tuple[int, ...], **kw):
        started = time.perf_counter()
        try:
            response = self.http.request(method, self.base + path, timeout=30, **kw)
        except requests.RequestException as exc:
            self.record(kind, time.perf_counter() - started, f"{type(exc).__name__}")
            return None
        error = None if response.status_code in expect else f"HTTP {response.status_code}"
        self.record(kind, time.perf_counter() - started, error)
        return response

    def pause(self) -> None:
        time.sleep(self.think * random.uniform(0.5, 1.5))

    def sign_in(self) -> None:
        started = time.perf_counter()
        try:
            response = sign_in(self.http, self.base, f"user{self.n}", PASSWORD)
        except requests.RequestException as exc:
            self.record("sign-in", time.perf_counter() - started, type(exc).__name__)
            return
        error = None if response.status_code == 302 else f"HTTP {response.status_code}"
        self.record("sign-in", time.perf_counter() - started, error)

    def run(self) -> None:
        self.sign_in()
        own = f"flight_{self.n}"
        added = 0
        while time.monotonic() < self.until:
            self.call("view", "GET", "/chains/flight_roundtrip/", (200,))
            self.pause()
            page = self.call("view", "GET", f"/chains/{own}/", (200,))
            self.pause()
            if page is not None and time.monotonic() < self.until:
                base = re.search(r'data-base="(\d+)"', page.text).group(1)
                csrf = self.http.cookies.get("csrftoken", "")
                added += 1
                form = {"op": "add_handle", "base": base, "arg.id": f"h{self.n}_{added}"}
                self.call(
                    "edit",
                    "POST",
                    f"/chains/{own}/edit",
                    (200,),
                    data=form,
                    headers={
                        "HX-Request": "true",
                        "X-CSRFToken": csrf,
                        "Referer": self.base + f"/chains/{own}/",
                    },
                )
                self.pause()
            self.call("lint", "GET", f"/api/chains/{own}/lint", (200,))
            self.pause()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--think", type=float, default=1.0, help="seconds between a user's requests"
    )
    parser.add_argument("--workers", type=int, default=5, help="gunicorn worker processes")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/chain_load")
    args = parser.parse_args()

    env = production_env(args.database_url)
    fresh_database(args.database_url)
    manage(["migrate", "--noinput"], env)
    people = {**env, "LOAD_USERS": str(args.users), "LOAD_PASSWORD": PASSWORD}
    manage(["shell", "-c", SETUP], people)

    with Gunicorn(env, workers=args.workers) as server:
        base = server.base
        times: dict[str, list[float]] = defaultdict(list)
        errors: dict[str, int] = defaultdict(int)
        lock = threading.Lock()

        def record(kind: str, seconds: float, error: str | None) -> None:
            with lock:
                times[kind].append(seconds)
                if error:
                    errors[f"{kind}: {error}"] += 1

        until = time.monotonic() + args.seconds
        users = [User(n, base, until, args.think, record) for n in range(args.users)]
        for u in users:
            u.start()
        for u in users:
            u.join()

    # Signing in is setup (one slow password hash per user), not the load being measured.
    everything = [t for kind, values in times.items() if kind != "sign-in" for t in values]
    print(
        f"{args.users} users, {args.seconds:g} s, think {args.think:g} s, "
        f"gunicorn {args.workers} workers, {os.cpu_count()} cores"
    )
    print(f"{'kind':<10}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    for kind, values in sorted(times.items()) + [("all", everything)]:
        print(
            f"{kind:<10}{len(values):>9}{statistics.median(values) * 1000:>9.0f}"
            f"{percentile(values, 95) * 1000:>9.0f}{percentile(values, 99) * 1000:>9.0f}"
        )
    print(f"errors: {sum(errors.values())}" + "".join(f"\n  {k}: {v}" for k, v in errors.items()))
    rate = len(everything) / args.seconds
    print(f"throughput: {rate:.1f} requests/s")


if __name__ == "__main__":
    main()
