"""Abuse: the cases of issues 14 and 34 replayed against gunicorn, PostgreSQL, Redis and Celery.

The app runs as it is deployed (``bench/_server.py``): collectstatic first
(and htmx, on a fresh clone), a database of its own on the PostgreSQL server
(``--database-url``, default
``postgres://postgres@127.0.0.1:5432/chain_abuse``, emptied first, dropped
after), gunicorn with 3 sync workers and a 30 s timeout on loopback, DEBUG
off, and one Celery worker (prefork, concurrency 1, under
``designer.supervise`` as the deployment runs it) on a redis-server of the
bench's own on a free loopback port (broker, result backend and cache, so
the rate limits hold across gunicorn's workers; cases 21 and 22 stop and
restart it). Besides the app, the bench listens on loopback itself: an HTTP
server that counts every request (an OpenAPI ``$ref`` to it must not reach
it) and an SMTP server the app mails through, which answers, or in case 24
accepts and never answers.

People: team ``alpha`` (three owners, an editor, two reviewers and an editor
who will be removed), team ``beta`` (an owner) and an outsider with a team of
their own. Each has an API token and an e-mail address; pages are visited
signed in. Cases 1 to 12 are issue 14's findings, 13 to 27 issue 34's. Each
prints ``held`` or ``failed`` with the slowest request, the peak resident
memory of a gunicorn worker and of the Celery worker during it, and why. A
case holds when its own check holds and, besides, no request took over
10 s, none answered 5xx (but a 503 the case expects) or failed to answer,
and gunicorn logged no ``WORKER TIMEOUT``. A Celery worker that has exited
is started again before the next case, and the case it exited in says so.
Exit code 0 only if all held.

    .venv/bin/python bench/abuse.py [--only 1,6] [--database-url ...]
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import re
import secrets
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import requests
from _chains import confirm_gate
from _server import (
    PYTHON,
    ROOT,
    Gunicorn,
    RedisServer,
    children,
    collect_static,
    drop_database,
    fresh_database,
    manage,
    production_env,
    rss_mb,
    sign_in,
)

PASSWORD = "abuse-test-passphrase-7"
SLOW = 10.0  # seconds: no request may take longer (the issue's "Done when")
TEAM_A = ["a_owner", "a_owner2", "a_owner3", "a_editor", "a_rev1", "a_rev2", "a_gone"]
PEOPLE = [*TEAM_A, "b_owner", "outsider"]

# Run by ``manage.py shell -c``; prints each person's token secret as JSON.
SETUP = """
import json, os
from django.contrib.auth import get_user_model
from chains.core import formats
from chains.models import ApiToken, Chain, Role, Team
password = os.environ["ABUSE_PASSWORD"]
make = get_user_model().objects.create_user
names = os.environ["ABUSE_PEOPLE"].split(",")
people = {n: make(n, email=f"{n}@example.test", password=password) for n in names}
alpha = Team.objects.found("Alpha", owner=people["a_owner"], slug="alpha")
for name, role in [("a_owner2", Role.OWNER), ("a_owner3", Role.OWNER), ("a_editor", Role.EDITOR),
                   ("a_rev1", Role.REVIEWER), ("a_rev2", Role.REVIEWER), ("a_gone", Role.EDITOR)]:
    alpha.add(people[name], role)
beta = Team.objects.found("Beta", owner=people["b_owner"], slug="beta")
Team.objects.found("Outsider's team", owner=people["outsider"], slug="outsiders")
text = open("fixtures/flight-roundtrip.yaml").read()
doc = formats.to_document(formats.load(text, format="yaml").chains[0])
Chain.objects.store(doc, team=alpha)
for key in ("reviewed", "granted", "commented", "puppet", "mixed", "audited", "provider", "mailed"):
    Chain.objects.store({**doc, "id": key}, team=alpha)
Chain.objects.store({**doc, "id": "flight_b"}, team=beta)
print(json.dumps({n: ApiToken.objects.issue(u, "abuse")[1] for n, u in people.items()}))
"""


def big_chain(key: str, actions: int, gates: int) -> dict:
    """A valid chain of ``actions`` actions (one handle each, two parents) and ``gates`` gates.

    Compact JSON of 300 and 300 is about 164 KB; of 3,000 and 3,000, 1.7 MB.
    """
    handles, steps, gate_list, rows = [], [], [], []
    for i in range(actions):
        parents = sorted({f"h{j}" for j in (i - 1, i // 2) if 0 <= j < i})
        handles.append(
            {
                "id": f"h{i}",
                "minted_by": f"a{i}",
                "derived_from": parents,
                "staleness": {"detect": [f"code:H{i}_EXPIRED"], "refresh": f"a{i}"},
            }
        )
        steps.append(
            {
                "id": f"a{i}",
                "effect": "read" if i % 3 == 0 else "mint",
                "input": {"intent": {f"f{i % 7}": "string"}, "handles": parents},
                "output": {"handles": [f"h{i}"]},
                "idempotency": {"mode": "natural"},
            }
        )
    for i in range(gates):
        gate, row = confirm_gate(i, f"a{i % actions}")
        gate_list.append(gate)
        rows.append(row)
    return {
        "id": key,
        "handles": handles,
        "actions": steps,
        "gates": gate_list,
        "verdict_table": rows,
        "policy": {"per_chain": {"max_rewinds": 3, "max_repairs": 2, "wall_clock": "20m"}},
    }


def as_json(doc: dict) -> str:
    return json.dumps(doc, separators=(", ", ": "))


class Listener:
    """An HTTP server on loopback that counts every request; ``/bomb.yaml`` is an alias bomb.

    The app must never reach it: an uploaded document's ``$ref`` to it is refused
    unread. What it would serve is real, so a server that does fetch shows it.
    """

    BODY = "listener-body-"  # followed by a secret: an answer that echoes it fetched it

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.secret = secrets.token_hex(8)
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.hits.append(self.path)
                if self.path.startswith("/bomb.yaml"):
                    body = alias_bomb(levels=7, ways=10).encode()
                else:
                    body = json.dumps({"description": Listener.BODY + listener.secret}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def alias_bomb(levels: int, ways: int) -> str:
    """YAML whose last key expands to ``ways ** levels`` leaves by aliases (a few hundred bytes)."""
    lines = [f"l0: &l0 [{', '.join(['x'] * ways)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * ways)}]")
    return "\n".join(lines) + "\n"


class Smtp:
    """A loopback SMTP server for the app: it answers, or (``hang``) accepts and says nothing.

    Every message it takes is kept (``mails``: recipients and text). While
    hanging, connections are held open without a byte until ``answer`` is
    called again (or 120 s pass), then closed.
    """

    def __init__(self) -> None:
        self.mails: list[tuple[list[str], str]] = []
        self.hanging = threading.Event()
        self.released = threading.Event()
        self.connections = 0
        smtp = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = 60

            def handle(self) -> None:
                smtp.connections += 1
                if smtp.hanging.is_set():
                    smtp.released.wait(120)
                    return
                with contextlib.suppress(OSError):
                    self.converse()

            def say(self, line: str) -> None:
                self.wfile.write(line.encode() + b"\r\n")

            def converse(self) -> None:
                self.say("220 bench ESMTP")
                recipients: list[str] = []
                while line := self.rfile.readline(10_000).decode(errors="replace").strip():
                    verb = line.split(" ", 1)[0].split(":", 1)[0].upper()
                    if verb in ("EHLO", "HELO"):
                        self.say("250 bench")
                    elif verb == "RCPT":
                        recipients.append(line.split(":", 1)[1].strip(" <>"))
                        self.say("250 ok")
                    elif verb == "DATA":
                        self.say("354 go on")
                        text = []
                        while (part := self.rfile.readline(100_000)) not in (b".\r\n", b""):
                            text.append(part.decode(errors="replace"))
                        smtp.mails.append((recipients, "".join(text)))
                        recipients = []
                        self.say("250 queued")
                    elif verb == "QUIT":
                        self.say("221 bye")
                        return
                    else:  # MAIL, RSET, NOOP
                        self.say("250 ok")

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hang(self) -> None:
        self.released.clear()
        self.hanging.set()

    def answer(self) -> None:
        self.hanging.clear()
        self.released.set()

    def close(self) -> None:
        self.answer()
        self.server.shutdown()
        self.server.server_close()


class Memory(threading.Thread):
    """Samples the resident memory of gunicorn's workers and of the Celery worker's processes."""

    def __init__(self, gunicorn: Gunicorn, celery: subprocess.Popen):
        super().__init__(daemon=True)
        self.gunicorn, self.celery = gunicorn, celery
        self.peaks = {"gunicorn": 0.0, "celery": 0.0}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            self.sample()

    def sample(self) -> None:
        web = max((rss_mb(p) for p in self.gunicorn.workers()), default=0.0)
        pids = [self.celery.pid, *descendants(self.celery.pid)]
        work = max((rss_mb(p) for p in pids), default=0.0)
        self.peaks["gunicorn"] = max(self.peaks["gunicorn"], web)
        self.peaks["celery"] = max(self.peaks["celery"], work)

    def reset(self) -> dict[str, float]:
        before, self.peaks = self.peaks, {"gunicorn": 0.0, "celery": 0.0}
        return before


@dataclass
class Calls:
    """Every request a case made: the slowest, and those that were 5xx or got no answer."""

    slowest: float = 0.0
    slowest_what: str = ""
    broken: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, what: str, seconds: float, problem: str | None) -> None:
        with self.lock:
            if seconds > self.slowest:
                self.slowest, self.slowest_what = seconds, what
            if problem:
                self.broken.append(f"{what}: {problem}")


class Person:
    """One person: an API token and a signed-in browser session, each request recorded."""

    def __init__(self, name: str, secret: str, bench: Bench):
        self.name, self.bench = name, bench
        self.api = requests.Session()
        self.api.headers["Authorization"] = f"Bearer {secret}"
        self.web: requests.Session | None = None
        self.signing_in = threading.Lock()

    def call(
        self, http: requests.Session, method: str, path: str, expect: int = 0, **kw
    ) -> requests.Response:
        """A request; one that gets no answer comes back as a response with status 0.

        ``expect`` is a 5xx status this request should get (a 503 while Redis is down).
        """
        kw.setdefault("timeout", 120)
        started = time.perf_counter()
        try:
            response = http.request(method, self.bench.base + path, **kw)
        except requests.RequestException as exc:
            response = requests.Response()
            response.status_code, response._content = 0, str(exc).encode()
        seconds = time.perf_counter() - started
        status = response.status_code
        problem = "no answer" if status == 0 else None
        problem = f"HTTP {status}" if status >= 500 and status != expect else problem
        self.bench.calls.record(f"{method} {path[:60]} ({self.name})", seconds, problem)
        response.elapsed_s = seconds  # type: ignore[attr-defined]
        return response

    def get(self, path: str, **kw) -> requests.Response:
        return self.call(self.api, "GET", "/api" + path, **kw)

    def post(self, path: str, body: dict | None = None, **kw) -> requests.Response:
        return self.call(self.api, "POST", "/api" + path, json=body, **kw)

    def page(self, path: str, method: str = "GET", **kw) -> requests.Response:
        """A page, signed in; a redirect is answered as it is (a 302 to sign-in shows)."""
        with self.signing_in:  # once, even when several threads ask at the same moment
            if self.web is None:
                self.web = requests.Session()
                signed = sign_in(self.web, self.bench.base, self.name, PASSWORD)
                assert signed.status_code == 302, f"{self.name} could not sign in"
            http = requests.Session()  # one per request: a Session is not thread-safe
            http.cookies.update(self.web.cookies)
        if method == "POST":
            kw.setdefault("headers", {}).update(
                {"X-CSRFToken": http.cookies.get("csrftoken", ""), "Referer": self.bench.base}
            )
        kw.setdefault("allow_redirects", False)
        return self.call(http, method, path, **kw)


class Bench:
    """The people, and what the cases reach besides the site (``main`` sets them)."""

    memory: Memory
    server: Gunicorn
    worker: subprocess.Popen
    celery_log: Path
    redis: RedisServer
    listener: Listener
    smtp: Smtp

    def __init__(self, base: str, tokens: dict[str, str], log: Path, env: dict[str, str]):
        self.base, self.log, self.env = base, log, env
        self.calls = Calls()
        self.people = {name: Person(name, secret, self) for name, secret in tokens.items()}

    def __getitem__(self, name: str) -> Person:
        return self.people[name]

    def head(self, key: str, who: str = "a_owner") -> int:
        return self[who].get(f"/chains/{key}").json()["head"]

    def edit(self, key: str, who: str, handle: str) -> requests.Response:
        body = {"op": "add_handle", "args": {"id": handle}, "base": self.head(key, who)}
        return self[who].post(f"/chains/{key}/edits", body)

    def import_doc(
        self, who: str, text: str, team: str, filename: str = "chain.json", **kw
    ) -> requests.Response:
        body = {"document": text, "filename": filename, "team": team, "confirm": True}
        return self[who].post("/chains", body, **kw)


Verdict = tuple[bool, str]


# --- the cases --------------------------------------------------------------------------


def case_1(b: Bench) -> Verdict:
    """A workspace of a 300-action, 300-gate chain alone, then three at once of another,
    then three Coverage tabs of a 500-action chain, while another team loads the home page."""
    sizes = (("big", 300), ("big_b", 300), ("big500", 500))
    texts = {key: as_json(big_chain(key, n, n)) for key, n in sizes}
    for key, text in texts.items():
        imported = b.import_doc("a_owner", text, "alpha")
        if imported.status_code != 201:
            return False, f"import of {key} answered {imported.status_code}: {imported.text[:200]}"
    alone = b["a_owner"].page("/chains/big/")
    again = b["a_owner"].page("/chains/big/")
    notes = [
        f"{len(texts['big']) // 1000} KB chain alone {alone.elapsed_s:.1f} s, "
        f"again {again.elapsed_s:.1f} s"
    ]
    ok = alone.status_code == 200 and alone.elapsed_s < 5  # the issue's target for this chain
    bursts = (("workspace", "/chains/big_b/"), ("coverage", "/chains/big500/?tab=coverage"))
    for label, path in bursts:
        done, home = threading.Event(), []

        def other_team(done=done, home=home) -> None:
            while not done.is_set():
                home.append(b["b_owner"].page("/").elapsed_s)
                time.sleep(0.5)

        watcher = threading.Thread(target=other_team)
        watcher.start()
        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(lambda p: b["a_owner"].page(p), [path] * 3))
        done.set()
        watcher.join()
        ok = ok and all(r.status_code == 200 for r in answers)
        times = ", ".join(f"{r.elapsed_s:.1f}" for r in answers)
        statuses = ",".join(str(r.status_code) for r in answers)
        notes.append(
            f"{label} ×3: {times} s ({statuses}), other team's home page up to "
            f"{max(home, default=0):.1f} s"
        )
    return ok, "; ".join(notes)


def case_2(b: Bench) -> Verdict:
    """A maximum-bound campaign of team A, then a 1-fault campaign of team B."""
    most = {"max_faults": 6, "max_events": 500, "shards": 16, "crashes": True}
    big = b["a_owner"].post("/chains/flight_roundtrip/campaigns", most)
    if big.status_code != 201:
        return False, f"maximum-bound launch answered {big.status_code}: {big.text[:200]}"
    time.sleep(2)  # A's shards are sent first
    small = b["b_owner"].post("/chains/flight_b/campaigns", {"max_faults": 1})
    if small.status_code != 201:
        return False, f"1-fault launch answered {small.status_code}: {small.text[:200]}"
    big_url = f"/chains/flight_roundtrip/campaigns/{big.json()['id']}"
    small_url = f"/chains/flight_b/campaigns/{small.json()['id']}"
    started, waited = time.monotonic(), None
    while time.monotonic() - started < 180:
        b_state = b["b_owner"].get(small_url).json()
        a_state = b["a_owner"].get(big_url).json()
        if b_state["status"] not in ("queued", "running"):
            waited = time.monotonic() - started
            break
        time.sleep(1)
    a_then = f"{a_state['status']} {a_state['shards_done']}/{a_state['shard_count']} shards"
    a_capped = bool((a_state.get("result") or {}).get("stopped_by"))
    a_busy = a_state["status"] in ("queued", "running") or a_capped
    while time.monotonic() - started < 90 and a_state["status"] in ("queued", "running"):
        time.sleep(2)  # A's memory over a minute and a half, as in the finding
        a_state = b["a_owner"].get(big_url).json()
    if a_state["status"] in ("queued", "running"):
        b["a_owner"].post(big_url + "/cancel")
    cap = int(b.env.get("CAMPAIGN_MAX_MEMORY_MB", "768"))
    peak = b.memory.peaks["celery"]
    done = f"{a_state['shards_done']}/{a_state['shard_count']} shards"
    a_says = (
        f"A then {a_then}; A at {time.monotonic() - started:.0f} s {a_state['status']} {done}, "
        f"{a_state['states']} states"
    )
    if (a_state.get("result") or {}).get("stopped_by"):
        a_says += f", stopped by {a_state['result']['stopped_by']}"
    if waited is None:
        return False, f"B still {b_state['status']} after 180 s; {a_says}; worker {peak:.0f} MB"
    ok = b_state["status"] == "done" and waited <= 120 and a_busy and peak < cap
    return ok, (
        f"B {b_state['status']} in {waited:.0f} s ({b_state['states']} states); {a_says}; "
        f"worker peak {peak:.0f} MB (cap {cap} MB)"
    )


def approval(b: Bench, asker: str, reviewer: str, revision: int) -> int:
    """``asker`` asks ``reviewer`` to review ``revision``, who approves; the last status."""
    body = {"reviewers": [reviewer], "revision": revision}
    asked = b[asker].post("/chains/reviewed/reviews", body)
    if asked.status_code != 201:
        return asked.status_code
    vote = f"/chains/reviewed/reviews/{asked.json()['id']}/vote"
    return b[reviewer].post(vote, {"vote": "approve"}).status_code


def case_3(b: Bench) -> Verdict:
    """A second review cannot bypass "request changes"; an author cannot approve their own."""
    b.edit("reviewed", "a_editor", "by_editor")
    rev = b.head("reviewed")
    r1 = b["a_editor"].post("/chains/reviewed/reviews", {"reviewers": ["a_rev1"], "revision": rev})
    changes = {"vote": "request_changes", "note": "the gate needs a timeout"}
    b["a_rev1"].post(f"/chains/reviewed/reviews/{r1.json()['id']}/vote", changes)
    second = approval(b, "a_editor", "a_rev2", rev)
    export = b["a_owner"].get(f"/chains/reviewed/revisions/{rev}/export")
    bypassed = "X-Approved" in export.headers
    states = {r["id"]: r["state"] for r in b["a_owner"].get("/chains/reviewed/reviews").json()}

    b.edit("reviewed", "a_editor", "by_editor_2")
    own = b.head("reviewed")
    author = approval(b, "a_owner", "a_editor", own)
    own_export = b["a_owner"].get(f"/chains/reviewed/revisions/{own}/export")
    own_approved = "X-Approved" in own_export.headers
    ok = not bypassed and not own_approved and 400 <= author < 500
    return ok, (
        f"second review's approve {second}, r{rev} approved: {bypassed} "
        f"(reviews {', '.join(f'{k}: {v}' for k, v in sorted(states.items()))}); "
        f"author's own approve {author}, r{own} approved: {own_approved}"
    )


def case_4(b: Bench) -> Verdict:
    """Team A and the outsider import a large document with the same new key at once.

    Keys are per team, so each gets its own chain; what must never happen is
    one chain holding revisions by both.
    """
    notes, landed = [], False
    for round_, delay in enumerate((0.0, 0.3, 1.0)):
        key = f"race{round_}"
        large = as_json(big_chain(key, 1000, 1000))  # about 560 KB: seconds to store
        with ThreadPoolExecutor(2) as pool:
            team_a = pool.submit(b.import_doc, "a_owner", large, "alpha")
            time.sleep(delay)
            outsider = pool.submit(b.import_doc, "outsider", large, "outsiders")
            answers = team_a.result().status_code, outsider.result().status_code
        histories = {}  # each sees their own team's chain of that key
        for who in ("a_owner", "outsider"):
            history = b[who].get(f"/chains/{key}/revisions")
            if history.status_code == 200:
                histories[who] = sorted({r["author"] for r in history.json()})
        mixed = any("outsider" in a and set(a) & set(TEAM_A) for a in histories.values())
        landed = landed or mixed
        said = f"A {answers[0]}, outsider {answers[1]} (+{delay:g} s)"
        notes.append(f"{key} {said}: revisions by {histories}")
    return not landed, "; ".join(notes)


def case_5(b: Bench) -> Verdict:
    """A removed editor's token loses the chain; a grant cannot demote a team owner."""
    owner = b["a_owner"]
    base = b.head("granted")
    promote = {"username": "a_gone", "role": "owner"}
    grant = owner.page("/chains/granted/people", "POST", data=promote)
    before = b.edit("granted", "a_gone", "before_removal").status_code
    owner.page("/teams/alpha/", "POST", data={"username": "a_gone", "role": "remove"})
    read = b["a_gone"].get("/chains/granted").status_code
    body = {"op": "add_handle", "args": {"id": "after_removal"}, "base": base + 1}
    write = b["a_gone"].post("/chains/granted/edits", body).status_code
    demote = owner.page(
        "/chains/granted/people", "POST", data={"username": "a_owner2", "role": "viewer"}
    ).status_code
    still = b.edit("granted", "a_owner2", "owner_still_edits").status_code
    ok = read in (403, 404) and write in (403, 404) and 400 <= demote < 500 and still == 201
    return ok, (
        f"grant {grant.status_code}, edit before removal {before}; after removal read {read}, "
        f"write {write}; demoting an owner {demote}, the owner's edit after it {still}"
    )


def case_6(b: Bench) -> Verdict:
    """A 10,000-event simulator URL, and POST /api/lint of a 1.7 MB document."""
    sys.path.insert(0, str(ROOT))
    from chains.core.sim.scenario import Scenario
    from chains.core.sim.session import encode

    token = encode(Scenario.model_validate({"events": [{"wait": "1s"}] * 10_000}))
    sim = b["a_owner"].page(f"/chains/flight_roundtrip/simulate?r=1&s={token}")
    document = as_json(big_chain("linted", 3000, 3000))
    lint = b["a_owner"].post("/lint", {"document": document, "filename": "big.json"})
    fine = (200, 201, 400, 413, 429)
    ok = all(r.status_code in fine and r.elapsed_s <= SLOW for r in (sim, lint))
    return ok, (
        f"simulator URL of {len(token)} characters: {sim.status_code} in {sim.elapsed_s:.1f} s; "
        f"lint of {len(document) / 1e6:.2f} MB: {lint.status_code} in {lint.elapsed_s:.1f} s"
    )


def case_7(b: Bench) -> Verdict:
    """Sign-up is closed by default: a POST is refused and makes no account."""
    http = requests.Session()
    page = http.get(b.base + "/accounts/signup/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    form = {
        "username": "newcomer",
        "password1": PASSWORD,
        "password2": PASSWORD,
        "csrfmiddlewaretoken": token.group(1) if token else "",
    }
    headers = {"Referer": b.base + "/accounts/signup/"}
    started = time.perf_counter()
    answer = http.post(
        b.base + "/accounts/signup/", data=form, headers=headers, allow_redirects=False, timeout=30
    )
    b.calls.record("POST /accounts/signup/", time.perf_counter() - started, None)
    made = (
        manage(
            [
                "shell",
                "-c",
                "from django.contrib.auth import get_user_model as u; "
                "print(u().objects.filter(username='newcomer').exists())",
            ],
            b.env,
        )
        .strip()
        .splitlines()[-1]
    )
    ok = 400 <= answer.status_code < 500 and made == "False"
    return ok, f"sign-up POST {answer.status_code}, account made: {made} (lookalikes: unit tests)"


def case_8(b: Bench) -> Verdict:
    """Another team's key is no obstacle and goes unmentioned; shadowed ids are refused."""
    flight = Path(ROOT, "fixtures/flight-roundtrip.yaml").read_text()
    before = b.head("flight_roundtrip")
    taken = b.import_doc("outsider", flight, "outsiders", "f.yaml")
    free = b.import_doc(
        "outsider", flight.replace("flight_roundtrip", "free"), "outsiders", "f.yaml"
    )
    named = any(w in taken.text for w in ("Alpha", "alpha", "a_owner"))
    untouched = b.head("flight_roundtrip") == before
    shadowed = {}
    for key in ("new", "import"):
        doc = flight.replace("id: flight_roundtrip", f"id: {key}", 1)
        shadowed[key] = b.import_doc("outsider", doc, "outsiders", "f.yaml").status_code
    ok = (
        taken.status_code == free.status_code == 201
        and untouched
        and not named
        and all(400 <= s < 500 for s in shadowed.values())
    )
    return ok, (
        f"another team's key: {taken.status_code}, a free key: {free.status_code}, "
        f"team A's chain untouched: {untouched}, team named: {named}; shadowed ids {shadowed}"
    )


def case_9(b: Bench) -> Verdict:
    """Naming someone on a team page invites them; they join only when they accept."""
    outsider = b["outsider"]
    named = b["b_owner"].page(
        "/teams/beta/", "POST", data={"username": "outsider", "role": "editor"}
    )
    before = outsider.get("/chains/flight_b").status_code
    ci = as_json(big_chain("ci_chain", 3, 3))
    imported = outsider.post("/chains", {"document": ci, "filename": "ci.json", "confirm": True})
    teams = outsider.page("/teams/")
    found = re.search(r'action="/invitations/(\d+)/"', teams.text)
    after = None
    if found:
        outsider.page(f"/invitations/{found.group(1)}/", "POST", data={"answer": "accept"})
        after = outsider.get("/chains/flight_b").status_code
    ok = before == 404 and imported.status_code == 201 and found is not None and after == 200
    return ok, (
        f"owner names the outsider: {named.status_code}; before accepting the chain answers "
        f"{before} and their own import without a team {imported.status_code}; invitation on "
        f"their Teams page: {found is not None}; after accepting {after}"
    )


def case_10(b: Bench) -> Verdict:
    """A text/plain JSON body with NUL: 400 in the error shape, not 500."""
    answer = b["a_owner"].call(
        b["a_owner"].api,
        "POST",
        "/api/lint",
        data='{"document": "id: x\\u0000"}',
        headers={"Content-Type": "text/plain"},
    )
    try:
        shaped = {"code", "message"} <= set(answer.json()["error"])
    except (ValueError, KeyError, TypeError):
        shaped = False
    return answer.status_code == 400 and shaped, (
        f"{answer.status_code} {answer.headers.get('Content-Type')}, error shape: {shaped}"
    )


def case_11(b: Bench) -> Verdict:
    """300 comments of 10 kB: too long refused, rate-limited, and the page stays small."""
    critic = b["a_rev1"]
    too_long = critic.post("/chains/commented/comments", {"body": "x" * 10_240}).status_code
    statuses = [
        critic.post("/chains/commented/comments", {"body": f"{i} " + "y" * 9_990}).status_code
        for i in range(300)
    ]
    posted = statuses.count(201)
    page = b["a_owner"].page("/chains/commented/comments")
    size = len(page.content)
    ok = 400 <= too_long < 500 and 429 in statuses and page.status_code == 200 and size < 500_000
    return ok, (
        f"10,240 characters: {too_long}; of 300 of 10,000: {posted} stored, "
        f"{statuses.count(429)} × 429; comments page {size / 1000:.0f} KB"
    )


def case_12(b: Bench) -> Verdict:
    """The token page, and the answer that shows a new token's secret, are no-store."""
    viewer = b["a_rev2"]
    page = viewer.page("/account/tokens/")
    viewer.page("/account/tokens/")  # its CSRF cookie is set by now
    made = viewer.page("/account/tokens/", "POST", data={"name": "fresh"})
    ok = all("no-store" in r.headers.get("Cache-Control", "") for r in (page, made))
    return ok, (
        f"GET {page.status_code} Cache-Control {page.headers.get('Cache-Control')!r}; "
        f"POST {made.status_code} {made.headers.get('Cache-Control')!r}"
    )


# --- issue 34: uploads that reach outside, unbounded work, review, faults ----------------


def said(response: requests.Response) -> str:
    """The problems a page lists (its ``class="problems"`` block), as plain text, shortened."""
    found = re.search(r'class="problems"[^>]*>(.*?)</div>', response.text, re.S)
    text = re.sub(r"<[^>]+>", " ", found.group(1) if found else "")
    text = html.unescape(re.sub(r"\s+", " ", text).strip())
    return (text[:140] + "…") if len(text) > 140 else text or "-"


def openapi_doc(error_schema: dict, schemas: dict | None = None, operations: int = 1) -> dict:
    """A provider's document: ``operations`` POSTs whose 404 answers with ``error_schema``."""
    error = {"application/json": {"schema": error_schema}}
    responses = {"201": {"description": "made"}, "404": {"description": "no", "content": error}}
    paths = {f"/things{i}": {"post": {"responses": responses}} for i in range(operations)}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Provider", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
    }


def upload_openapi(
    b: Bench, text: str, who: str = "a_owner2", name: str = "provider.json", **form: str
) -> requests.Response:
    """``text`` pasted into chain ``provider``'s page of actions from OpenAPI, as file ``name``."""
    data = {"text": text, "name": name, **form}
    return b[who].page("/chains/provider/openapi", "POST", data=data)


def case_13(b: Bench) -> Verdict:
    """An OpenAPI ``$ref`` to a local file is refused, and the file's content never shown."""
    secret = secrets.token_hex(16)
    folder = Path(tempfile.mkdtemp(prefix="abuse-marker-"))
    marker = folder / "deploy.env"  # as the deployment's env file would read
    marker.write_text(f"SECRET_KEY={secret}\nDATABASE_URL=postgres://u:{secret}@db/x\n")
    try:
        answer = upload_openapi(b, json.dumps(openapi_doc({"$ref": marker.as_uri()})))
    finally:
        marker.unlink()
        folder.rmdir()
    leaked = secret in answer.text
    ok = 400 <= answer.status_code < 500 and not leaked
    return ok, (
        f"$ref to a file: {answer.status_code}, the file's secret in the answer: {leaked}; "
        f"the page says: {said(answer)}"
    )


def case_14(b: Bench) -> Verdict:
    """An OpenAPI ``$ref`` to a URL (a listener of the bench) is refused and fetches nothing."""
    before = len(b.listener.hits)
    url = f"http://127.0.0.1:{b.listener.port}/x"
    answer = upload_openapi(b, json.dumps(openapi_doc({"$ref": url})))
    fetched = len(b.listener.hits) - before
    echoed = Listener.BODY in answer.text
    ok = 400 <= answer.status_code < 500 and not fetched and not echoed
    return ok, (
        f"$ref to a loopback URL: {answer.status_code}, requests the listener saw: {fetched}, "
        f"its answer echoed: {echoed}; the page says: {said(answer)}"
    )


def case_15(b: Bench) -> Verdict:
    """A ``$ref`` to a 7-level, 10-way YAML alias tree: refused, nothing fetched, no memory."""
    before_hits = len(b.listener.hits)
    url = f"http://127.0.0.1:{b.listener.port}/bomb.yaml#/l6"
    text = json.dumps(openapi_doc({"$ref": url}), separators=(",", ":"))
    workers = b.server.workers()
    before = {pid: rss_mb(pid) for pid in workers}
    peaks = dict(before)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            for pid in b.server.workers():
                peaks[pid] = max(peaks.get(pid, 0.0), rss_mb(pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        answer = upload_openapi(b, text)
    finally:
        done.set()
        sampler.join()
    floor = min(before.values(), default=0.0)
    growth = max((peak - before.get(pid, floor) for pid, peak in peaks.items()), default=0.0)
    fetched = len(b.listener.hits) - before_hits
    ok = 400 <= answer.status_code < 500 and not fetched and growth < 100
    return ok, (
        f"{len(text)}-byte spec, $ref to {len(alias_bomb(7, 10))} bytes of aliases "
        f"(10^7 leaves): {answer.status_code} in {answer.elapsed_s:.1f} s, fetched: {fetched}, "
        f"a worker grew {growth:.0f} MB; the page says: {said(answer)}"
    )


def recursive_schemas(n: int = 12) -> dict:
    """Schemas S1..Sn, each with properties p1..pn, each a ``$ref`` to S1..Sn: n^depth paths."""
    props = {f"p{j}": {"$ref": f"#/components/schemas/S{j}"} for j in range(1, n + 1)}
    return {f"S{i}": {"type": "object", "properties": props} for i in range(1, n + 1)}


def recursive_yaml(n: int = 12) -> str:
    """The same document in YAML, one anchor for the properties: about 1.2 KB at n = 12."""
    props = ", ".join(f"p{j}: {{$ref: '#/components/schemas/S{j}'}}" for j in range(1, n + 1))
    lines = [
        "openapi: 3.0.3",
        "info: {title: t, version: '1'}",
        "paths:",
        "  /t:",
        "    post:",
        "      responses:",
        "        '404':",
        "          description: e",
        "          content: {application/json: {schema: {$ref: '#/components/schemas/S1'}}}",
        "components:",
        "  schemas:",
        f"    S1: {{type: object, properties: &p {{{props}}}}}",
        *(f"    S{i}: {{type: object, properties: *p}}" for i in range(2, n + 1)),
    ]
    return "\n".join(lines) + "\n"


def while_another_watches(b: Bench, work: Callable[[], list]) -> tuple[list, list[float]]:
    """Run ``work``; meanwhile team B's owner loads the home page every 0.2 s: their times."""
    done, home = threading.Event(), []

    def other_team() -> None:
        while not done.is_set():
            home.append(b["b_owner"].page("/").elapsed_s)
            done.wait(0.2)

    b["b_owner"].page("/")  # signed in before the work starts, which may hold every worker
    watcher = threading.Thread(target=other_team)
    watcher.start()
    try:
        answers = work()
    finally:
        done.set()
        watcher.join()
    return answers, home


def case_16(b: Bench) -> Verdict:
    """The recursive spec (12 schemas of 12 properties, each a ``$ref``) answers in 2 s,
    three at once leave another team's page fast, and an ``allOf`` of itself is no 500."""
    small = recursive_yaml()
    whole = json.dumps(openapi_doc({"$ref": "#/components/schemas/S1"}, recursive_schemas()))
    alone = upload_openapi(b, small, name="provider.yaml")
    expanded = upload_openapi(b, whole)
    with ThreadPoolExecutor(3) as pool:
        three, home = while_another_watches(
            b, lambda: list(pool.map(lambda _: upload_openapi(b, whole), range(3)))
        )
    selfish = {"S": {"allOf": [{"$ref": "#/components/schemas/S"}, {"type": "object"}]}}
    cycle = upload_openapi(b, json.dumps(openapi_doc({"$ref": "#/components/schemas/S"}, selfish)))
    answered = [alone, expanded, *three, cycle]
    fine = all(r.status_code == 200 or 400 <= r.status_code < 500 for r in answered)
    slowest_home = max(home, default=0.0)
    ok = (
        fine
        and alone.elapsed_s < 2
        and expanded.elapsed_s < 2
        and slowest_home < 2
        and cycle.status_code != 500
    )
    times = ", ".join(f"{r.elapsed_s:.1f}" for r in three)
    return ok, (
        f"{len(small.encode())}-byte YAML: {alone.status_code} in {alone.elapsed_s:.1f} s "
        f"({said(alone)}); "
        f"{len(whole) // 1000} KB JSON without aliases: {expanded.status_code} in "
        f"{expanded.elapsed_s:.1f} s; three at once {times} s "
        f"({','.join(str(r.status_code) for r in three)}), other team's home page up to "
        f"{slowest_home:.1f} s; allOf of itself: {cycle.status_code} ({said(cycle)})"
    )


def dead_alias_trace(attempts: int) -> str:
    """A transition that invalidates ``price_lock#1``, then ``attempts`` attempts presenting it."""
    events = [{"seq": 1, "event_type": "transition", "handles_invalidated": ["price_lock#1"]}]
    events += [
        {"seq": i, "event_type": "attempt", "step_id": "book_trip", "t": i,
         "handles_consumed": ["price_lock#1"]}
        for i in range(2, attempts + 2)
    ]  # fmt: skip
    return "\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n"


def case_17(b: Bench) -> Verdict:
    """A 1,500-event trace, every attempt a divergence: the audit page answers in 2 s."""
    trace = dead_alias_trace(1499)
    answer = b["a_rev1"].page("/chains/audited/audit", "POST", data={"text": trace})
    listed = answer.text.count('<span class="kind">')
    ok = answer.status_code == 200 and answer.elapsed_s < 2
    return ok, (
        f"{len(trace) // 1000} KB trace, 1 invalidation then 1,499 attempts: "
        f"{answer.status_code} in {answer.elapsed_s:.1f} s, {len(answer.content) // 1000} KB "
        f"page listing {listed:,} divergences"
    )


def invitation_link(b: Bench, who: str, role: str) -> str | None:
    """A new link invitation to team alpha made by ``who``: its secret (None if refused)."""
    made = b[who].page("/teams/alpha/invitations/", "POST", data={"role": role})
    found = re.search(r"/invite/([^/\s\"<]+)/", made.text)
    return found.group(1) if found else None


def case_18(b: Bench) -> Verdict:
    """An owner's own owner link is dead once she is removed from the team."""
    gone = b["a_owner3"]
    secret = invitation_link(b, "a_owner3", "owner")
    if secret is None:
        return False, "the owner could not make an owner invitation link"
    removed = b["a_owner"].page(
        "/teams/alpha/", "POST", data={"username": "a_owner3", "role": "remove"}
    )
    before = gone.get("/chains/flight_roundtrip").status_code
    shown = gone.page(f"/invite/{secret}/")
    accept = gone.page(f"/invite/{secret}/", "POST", data={"answer": "accept"})
    after = gone.get("/chains/flight_roundtrip").status_code
    ok = before in (403, 404) and after in (403, 404) and 400 <= accept.status_code < 500
    return ok, (
        f"removal {removed.status_code}, then the chain {before}; her link {shown.status_code}, "
        f"accepting it {accept.status_code}, the chain after {after}"
    )


def approved(b: Bench, key: str, revision: int) -> bool:
    return "X-Approved" in b["a_owner"].get(f"/chains/{key}/revisions/{revision}/export").headers


def ask_and_approve(b: Bench, key: str, asker: str, reviewer: str, revision: int) -> str:
    """``asker`` asks ``reviewer`` (a page vote) to review; what each step answered."""
    asked = b[asker].post(f"/chains/{key}/reviews", {"reviewers": [reviewer], "revision": revision})
    if asked.status_code != 201:
        return f"asked {asked.status_code}"
    vote = f"/chains/{key}/reviews/{asked.json()['id']}/vote"
    voted = b[reviewer].page(vote, "POST", data={"vote": "approve", "note": ""})
    return f"asked 201, approve {voted.status_code}"


def make_account(b: Bench, secret: str, username: str) -> int:
    """An account made through invitation link ``secret``, signed out; the form's status."""
    http = requests.Session()
    started = time.perf_counter()
    page = http.get(f"{b.base}/invite/{secret}/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    form = {
        "username": username,
        "password1": PASSWORD,
        "password2": PASSWORD,
        "csrfmiddlewaretoken": token.group(1) if token else "",
    }
    made = http.post(
        f"{b.base}/invite/{secret}/account",
        data=form,
        headers={"Referer": f"{b.base}/invite/{secret}/"},
        allow_redirects=False,
        timeout=30,
    )
    problem = f"HTTP {made.status_code}" if made.status_code >= 500 else None
    b.calls.record("POST /invite/…/account", time.perf_counter() - started, problem)
    return made.status_code


def case_19(b: Bench) -> Verdict:
    """An owner's reviewer made through her own link approves her revision: it does not count."""
    secret = invitation_link(b, "a_owner", "reviewer")
    if secret is None:
        return False, "the owner could not make a reviewer invitation link"
    made = make_account(b, secret, "puppet")
    b.people["puppet"] = Person("puppet", "", b)
    b.edit("puppet", "a_owner", "by_owner")
    rev = b.head("puppet")
    puppet = ask_and_approve(b, "puppet", "a_owner", "puppet", rev)
    by_puppet = approved(b, "puppet", rev)
    control = ask_and_approve(b, "puppet", "a_owner", "a_rev1", rev)
    by_reviewer = approved(b, "puppet", rev)
    ok = made == 302 and not by_puppet and by_reviewer
    return ok, (
        f"account through her link {made}; her review by it: {puppet}, r{rev} approved: "
        f"{by_puppet}; then by a reviewer of the team: {control}, approved: {by_reviewer}"
    )


def case_20(b: Bench) -> Verdict:
    """An editor approves a teammate's revision on top of her own unreviewed one: not approved."""
    b.edit("mixed", "a_editor", "by_editor")
    b.edit("mixed", "a_owner2", "by_teammate")
    rev = b.head("mixed")
    mixed = ask_and_approve(b, "mixed", "a_owner2", "a_editor", rev)
    by_editor = approved(b, "mixed", rev)
    control = ask_and_approve(b, "mixed", "a_owner2", "a_rev2", rev)
    by_reviewer = approved(b, "mixed", rev)
    ok = not by_editor and by_reviewer
    return ok, (
        f"r{rev - 1} by the editor, r{rev} by a teammate; the editor's approval: {mixed}, "
        f"approved: {by_editor}; a reviewer's after it: {control}, approved: {by_reviewer}"
    )


def wait_campaign(
    b: Bench, who: str, url: str, until: Callable[[dict], bool], seconds: float
) -> dict:
    """Poll campaign ``url`` each second until ``until(state)`` or ``seconds`` pass; its state."""
    deadline = time.monotonic() + seconds
    state = b[who].get(url).json()
    while not until(state) and time.monotonic() < deadline:
        time.sleep(1)
        state = b[who].get(url).json()
    return state


def restart_redis(b: Bench) -> None:
    b.redis.stop()
    time.sleep(3)
    b.redis.start()
    time.sleep(3)


def case_21(b: Bench) -> Verdict:
    """Redis restarts, with the worker idle and then while a campaign runs: a Celery worker
    keeps running (itself, or started again by the supervisor the deployment runs it
    under), and the campaign launched after the first restart ends."""
    logged = b.celery_log.stat().st_size
    first = celery_main(b.worker)
    restart_redis(b)
    launched = b["a_owner2"].post("/chains/flight_roundtrip/campaigns", {"max_faults": 4})
    if launched.status_code != 201:
        return False, f"launch answered {launched.status_code}: {launched.text[:200]}"
    url = f"/chains/flight_roundtrip/campaigns/{launched.json()['id']}"

    def dead() -> bool:
        return b.worker.poll() is not None

    running = wait_campaign(b, "a_owner2", url, lambda s: s["status"] != "queued" or dead(), 60)
    then = f"{running['status']}, {running['states']} states"
    restart_redis(b)
    ended = ("queued", "running")
    end = wait_campaign(b, "a_owner2", url, lambda s: s["status"] not in ended or dead(), 180)
    running_after = b.worker.poll() is None and celery_main(b.worker) is not None
    same = running_after and celery_main(b.worker) == first
    with b.celery_log.open() as log:
        log.seek(logged)
        said_after = log.read()
    fatal, again = said_after.count("Unrecoverable error"), said_after.count("starting it again")
    ok = running["status"] == "running" and running_after and end["status"] == "done"
    return ok, (
        f"Redis restarted (3 s down) with the worker idle, then a campaign launched: "
        f"{then} within 60 s; Redis restarted again; a worker running after: {running_after} "
        f"(the same process: {same}; 'Unrecoverable error' logged {fatal} times, started "
        f"again by its supervisor {again} times); the campaign then {end['status']} "
        f"({end['states']} states)"
    )


def case_22(b: Bench) -> Verdict:
    """Redis down: sign-in works, a comment is no 500, a campaign launch is 503 queue_down."""
    b.redis.stop()
    try:
        http = requests.Session()
        started = time.perf_counter()
        page = http.get(b.base + "/accounts/login/", timeout=30)
        signed = sign_in(http, b.base, "a_rev2", PASSWORD) if page.status_code == 200 else page
        broken = f"HTTP {signed.status_code}" if signed.status_code >= 500 else None
        b.calls.record("sign-in (a_rev2)", time.perf_counter() - started, broken)
        home = b["a_rev2"].call(http, "GET", "/").status_code if signed.status_code == 302 else 0
        comment = b["a_rev1"].post("/chains/commented/comments", {"body": "while down"}, expect=503)
        launch = b["a_owner2"].post(
            "/chains/flight_roundtrip/campaigns", {"max_faults": 1}, expect=503
        )
    finally:
        b.redis.start()
    try:
        code = launch.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    ok = (
        signed.status_code == 302
        and home == 200
        and comment.status_code in (201, 503)
        and launch.status_code == 503
        and code == "queue_down"
    )
    return ok, (
        f"sign-in {signed.status_code}, home page {home}; a comment {comment.status_code}; "
        f"a campaign launch {launch.status_code} {code}"
    )


def case_23(b: Bench) -> Verdict:
    """Bad input is a 4xx: OpenAPI ``base=abc``, audit ``?r=²``, a trace event at ``t: 1e308``."""
    spec = json.dumps(openapi_doc({"type": "object"}))
    kept = upload_openapi(b, spec)  # a 302 to the upload's own list, where it is kept
    address = urlsplit(kept.headers.get("Location", "")).path or "/chains/provider/openapi/0/"
    pick = re.search(r'name="pick" value="([^"]+)"', b["a_owner2"].page(address).text)
    chosen = pick.group(1) if pick else "x"
    base = b["a_owner2"].page(address + "add", "POST", data={"pick": chosen, "base": "abc"})
    squared = b["a_rev1"].page("/chains/audited/audit?r=%C2%B2")
    events = [
        {"seq": 1, "event_type": "attempt", "step_id": "outbound_search", "t": 0},
        {"seq": 2, "event_type": "attempt", "step_id": "outbound_search", "t": 1e308},
    ]
    far = "\n".join(json.dumps(e) for e in events)
    late = b["a_rev1"].page("/chains/audited/audit", "POST", data={"text": far})
    ok = (
        400 <= base.status_code < 500
        and (squared.status_code == 200 or 400 <= squared.status_code < 500)
        and 400 <= late.status_code < 500
    )
    return ok, (
        f"OpenAPI add with base=abc: {base.status_code} ({said(base)}); audit ?r=²: "
        f"{squared.status_code}; trace at t 1e308: {late.status_code} ({said(late)})"
    )


def case_24(b: Bench) -> Verdict:
    """A mail server that accepts and never answers delays no request; the mail goes out later.

    The server stays silent for 12 s, past the app's 10 s mail timeout, so a
    first try that meets it fails on its own; the mail must come from a later one.
    """
    rev = b.head("mailed")
    b.smtp.hang()
    held_before = b.smtp.connections
    try:
        body = {"reviewers": ["a_rev2"], "revision": rev}
        asked = b["a_owner"].post("/chains/mailed/reviews", body)
        time.sleep(12)
    finally:
        held = b.smtp.connections - held_before
        b.smtp.answer()
    deadline, arrived = time.monotonic() + 180, None
    while arrived is None and time.monotonic() < deadline:
        arrived = next(
            (m for m in b.smtp.mails if "a_rev2@example.test" in m[0] and "mailed" in m[1]), None
        )
        time.sleep(1)
    waited = 180 - (deadline - time.monotonic())
    ok = asked.status_code == 201 and asked.elapsed_s < 2 and arrived is not None
    return ok, (
        f"review request with a silent mail server: {asked.status_code} in "
        f"{asked.elapsed_s:.1f} s; connections the silent server held for 12 s: {held}; the mail "
        + (f"arrived {waited:.0f} s after the server answered again" if arrived else "never came")
    )


def case_25(b: Bench) -> Verdict:
    """Twelve anonymous clients fetch /api/openapi.json: another person's page stays within 3x."""
    baseline = sorted(b["b_owner"].page("/").elapsed_s for _ in range(5))[2]
    anonymous = Person("anonymous", "", b)
    anonymous.api.headers.pop("Authorization")
    statuses: list[int] = []
    stop = time.monotonic() + 12

    def flood() -> None:
        http = requests.Session()
        for _ in range(300):
            if time.monotonic() > stop:
                return
            statuses.append(anonymous.call(http, "GET", "/api/openapi.json").status_code)

    def watch() -> list:
        with ThreadPoolExecutor(12) as pool:
            for _ in range(12):
                pool.submit(flood)
        return []

    _, during = while_another_watches(b, watch)
    during.sort()
    middle = during[len(during) // 2] if during else 0.0
    floor = max(baseline, 0.05)  # a 10 ms page is within noise of 3x anything
    ok = bool(during) and middle <= 3 * floor
    counted = {s: statuses.count(s) for s in sorted(set(statuses))}
    return ok, (
        f"other person's home page {baseline:.2f} s alone, median {middle:.2f} s and worst "
        f"{max(during, default=0):.2f} s during {len(statuses)} anonymous fetches {counted} "
        f"(held within 3x of {floor:.2f} s)"
    )


def case_26(b: Bench) -> Verdict:
    """A 24,000-operation spec answers in 5 s with under 2 MB of HTML."""
    ok_answer = {"200": {"description": "ok"}}
    methods = ("get", "post", "put", "delete")
    paths = {f"/r{i}": {m: {"responses": ok_answer} for m in methods} for i in range(6000)}
    doc = {"openapi": "3.0.3", "info": {"title": "Wide", "version": "1"}, "paths": paths}
    text = json.dumps(doc, separators=(",", ":"))
    answer = upload_openapi(b, text)
    size = len(answer.content)
    fine = answer.status_code == 200 or answer.status_code in (400, 413)
    ok = fine and answer.elapsed_s < 5 and size < 2_000_000
    return ok, (
        f"{len(text) / 1e6:.2f} MB spec of 24,000 operations: {answer.status_code} in "
        f"{answer.elapsed_s:.1f} s, {size / 1e6:.2f} MB of HTML ({said(answer)})"
    )


def without_tokens(text: str, *names: str) -> str:
    """A page with its per-response tokens and the given names blanked, to compare two."""
    text = re.sub(r"[A-Za-z0-9]{48,}", "TOKEN", text)
    for name in names:
        text = text.replace(name, "NAME")
    return text


def case_27(b: Bench) -> Verdict:
    """Founding teams is limited; the member form and team pages tell no one who exists."""
    outsider = b["outsider"]
    founded: list[int] = []
    for i in range(40):
        form = {"name": f"Spam {i}", "slug": f"spam-{i}"}
        founded.append(outsider.page("/teams/", "POST", data=form).status_code)
        if founded[-1] != 302:
            break
    limited = founded[-1] in (400, 403, 429) and founded.count(302) >= 1
    owner = b["b_owner"]
    existing = owner.page("/teams/beta/", "POST", data={"username": "a_rev1", "role": "viewer"})
    missing = owner.page("/teams/beta/", "POST", data={"username": "nobody_here", "role": "viewer"})
    form_alike = existing.status_code == missing.status_code and without_tokens(
        said(existing), "a_rev1"
    ) == without_tokens(said(missing), "nobody_here")
    team = outsider.page("/teams/alpha/")
    nothing = outsider.page("/teams/no-such-team/")
    page_alike = team.status_code == nothing.status_code and without_tokens(
        team.text, "alpha"
    ) == without_tokens(nothing.text, "no-such-team")
    ok = limited and form_alike and page_alike
    return ok, (
        f"founding: {founded.count(302)} teams then {founded[-1]}; member form for an existing "
        f"user {existing.status_code} ({said(existing)}), for a missing one "
        f"{missing.status_code} ({said(missing)}); an outsider on an existing team's page "
        f"{team.status_code}, a missing one's {nothing.status_code}, alike: {page_alike}"
    )


CASES: dict[int, Callable[[Bench], Verdict]] = {
    1: case_1,
    2: case_2,
    3: case_3,
    4: case_4,
    5: case_5,
    6: case_6,
    7: case_7,
    8: case_8,
    9: case_9,
    10: case_10,
    11: case_11,
    12: case_12,
    13: case_13,
    14: case_14,
    15: case_15,
    16: case_16,
    17: case_17,
    18: case_18,
    19: case_19,
    20: case_20,
    21: case_21,
    22: case_22,
    23: case_23,
    24: case_24,
    25: case_25,
    26: case_26,
    27: case_27,
}


# --- running them -----------------------------------------------------------------------


def start_celery(env: dict[str, str], log: Path) -> subprocess.Popen:
    """The Celery worker as the deployment runs it, concurrency 1, appending to ``log``.

    That is under ``designer.supervise`` (which starts it again should it exit)
    where the tree has it; a tree from before it runs the prefork worker alone.
    """
    options = ["--concurrency=1", "--loglevel=WARNING"]
    if (ROOT / "designer/supervise.py").exists():
        command = [PYTHON, "-m", "designer.supervise", "worker", *options]
    else:
        command = [PYTHON, "-m", "celery", "-A", "designer", "worker", "--pool=prefork", *options]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT
    )


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``: its children, theirs, and so on."""
    found = children(pid)
    return found + [d for c in found for d in descendants(c)]


def celery_main(worker: subprocess.Popen) -> int | None:
    """The pid of the Celery worker's main process (under the supervisor, its child)."""
    below = children(worker.pid)
    is_supervised = "designer.supervise" in " ".join(worker.args)
    return (below[0] if below else None) if is_supervised else worker.pid


def stop_celery(worker: subprocess.Popen) -> None:
    """Warm shutdown; past 30 s, kill the worker and the processes below it (only those)."""
    below = descendants(worker.pid)
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(30)
    except subprocess.TimeoutExpired:
        for pid in [*below, worker.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        worker.wait(10)


def run_case(
    case: Callable[[Bench], Verdict], bench: Bench, memory: Memory
) -> tuple[bool, str, str]:
    """Run one case; whether it held, its numbers (slowest, memory) and its note."""
    bench.calls = Calls()
    memory.reset()
    memory.sample()
    logged = bench.log.stat().st_size
    try:
        held, note = case(bench)
    except Exception as exc:  # a case that breaks is reported, not raised
        held, note = False, f"{type(exc).__name__}: {exc}"
    with bench.log.open() as f:
        f.seek(logged)
        timeouts = f.read().count("WORKER TIMEOUT")
    memory.sample()
    calls = bench.calls
    problems = []
    if calls.slowest > SLOW:
        problems.append(f"slowest {calls.slowest_what}")
    if calls.broken:
        problems.append(f"{len(calls.broken)} 5xx/unanswered, first {calls.broken[0]}")
    if timeouts:
        problems.append(f"{timeouts} WORKER TIMEOUT")
    if bench.worker.poll() is not None:
        problems.append(f"the Celery worker exited ({bench.worker.returncode}); started again")
        bench.worker = memory.celery = start_celery(bench.env, bench.celery_log)
        time.sleep(3)
    held = held and not problems
    peaks = memory.peaks
    numbers = f"{calls.slowest:9.1f}  {peaks['gunicorn']:7.0f}  {peaks['celery']:9.0f}"
    return held, numbers, "; ".join([note, *problems])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="case numbers to run, e.g. 1,6 (default: all)")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/chain_abuse")
    args = parser.parse_args()
    chosen = [int(n) for n in args.only.split(",")] if args.only else list(CASES)

    redis, listener, smtp = RedisServer(), Listener(), Smtp()
    env = production_env(
        args.database_url,
        CELERY_BROKER_URL=f"{redis.url}/0",
        CELERY_RESULT_BACKEND=f"{redis.url}/1",
        CACHE_URL=f"{redis.url}/2",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(smtp.port),
    )
    logs = Path(tempfile.mkdtemp(prefix="abuse-"))
    results = []
    try:
        collect_static(env)
        fresh_database(args.database_url)
        manage(["migrate", "--noinput"], env)
        people = {**env, "ABUSE_PASSWORD": PASSWORD, "ABUSE_PEOPLE": ",".join(PEOPLE)}
        tokens = json.loads(manage(["shell", "-c", SETUP], people).strip().splitlines()[-1])
        web_log = (logs / "gunicorn.log").open("w")
        worker = start_celery(env, logs / "celery.log")
        try:
            with Gunicorn(env, workers=3, timeout=30, log=web_log) as server:
                bench = Bench(server.base, tokens, logs / "gunicorn.log", env)
                memory = Memory(server, worker)
                bench.memory, bench.server, bench.worker = memory, server, worker
                bench.redis, bench.listener, bench.smtp = redis, listener, smtp
                bench.celery_log = logs / "celery.log"
                memory.start()
                time.sleep(3)  # the Celery worker connects
                cores = os.cpu_count()
                print(f"gunicorn 3 sync workers, 30 s timeout; Celery prefork 1; {cores} cores")
                print(f"{'case':<5}{'result':<8}{'slowest s':>9}  {'web MB':>7}  celery MB  note")
                for number in chosen:
                    held, numbers, note = run_case(CASES[number], bench, memory)
                    verdict = "held" if held else "failed"
                    print(f"{number:<5}{verdict:<8}{numbers}  {note}", flush=True)
                    results.append(held)
                memory.stopped.set()
                worker = bench.worker
        finally:
            stop_celery(worker)
    finally:
        drop_database(args.database_url)
        for server in (redis, listener, smtp):
            server.close()
    print(f"logs: {logs}")
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
