"""Abuse: the cases of issue 14 replayed against gunicorn, PostgreSQL, Redis and Celery.

The app runs as it is deployed (``bench/_server.py``): a database of its own
on the PostgreSQL server (``--database-url``, default
``postgres://postgres@127.0.0.1:5432/chain_abuse``, emptied first), gunicorn
with 3 sync workers and a 30 s timeout on loopback, DEBUG off, and one Celery
worker (prefork, concurrency 1) on Redis (``--redis``, default database 5 of
127.0.0.1:6379; only that database is flushed, before and after). Redis is
also the cache, so the rate limits hold across gunicorn's workers.

People: team ``alpha`` (two owners, an editor, two reviewers and an editor
who will be removed), team ``beta`` (an owner) and an outsider with a team of
their own. Each has an API token; pages are visited signed in. Each case
(the issue's finding of the same number) prints ``held`` or ``failed`` with
the slowest request, the peak resident memory of a gunicorn worker and of the
Celery worker during it, and why. A case holds when its own check holds and,
besides, no request took over 10 s, none answered 5xx or failed to answer,
and gunicorn logged no ``WORKER TIMEOUT``. Exit code 0 only if all held.

    .venv/bin/python bench/abuse.py [--only 1,6] [--database-url ...] [--redis ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests
from _chains import confirm_gate
from _server import (
    PYTHON,
    ROOT,
    Gunicorn,
    children,
    fresh_database,
    manage,
    production_env,
    rss_mb,
    sign_in,
)

PASSWORD = "abuse-test-passphrase-7"
SLOW = 10.0  # seconds: no request may take longer (the "Done when")
TEAM_A = ["a_owner", "a_owner2", "a_editor", "a_rev1", "a_rev2", "a_gone"]
PEOPLE = [*TEAM_A, "b_owner", "outsider"]

# Run by ``manage.py shell -c``; prints each person's token secret as JSON.
SETUP = """
import json, os
from django.contrib.auth import get_user_model
from chains.core import formats
from chains.models import ApiToken, Chain, Role, Team
password = os.environ["ABUSE_PASSWORD"]
make = get_user_model().objects.create_user
people = {n: make(n, password=password) for n in os.environ["ABUSE_PEOPLE"].split(",")}
alpha = Team.objects.found("Alpha", owner=people["a_owner"], slug="alpha")
for name, role in [("a_owner2", Role.OWNER), ("a_editor", Role.EDITOR), ("a_rev1", Role.REVIEWER),
                   ("a_rev2", Role.REVIEWER), ("a_gone", Role.EDITOR)]:
    alpha.add(people[name], role)
beta = Team.objects.found("Beta", owner=people["b_owner"], slug="beta")
Team.objects.found("Outsider's team", owner=people["outsider"], slug="outsiders")
text = open("fixtures/flight-roundtrip.yaml").read()
doc = formats.to_document(formats.load(text, format="yaml").chains[0])
Chain.objects.store(doc, team=alpha)
for key in ("reviewed", "granted", "commented"):
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
        pids = [self.celery.pid, *children(self.celery.pid)]
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

    def call(self, http: requests.Session, method: str, path: str, **kw) -> requests.Response:
        """A request; one that gets no answer comes back as a response with status 0."""
        kw.setdefault("timeout", 120)
        started = time.perf_counter()
        try:
            response = http.request(method, self.bench.base + path, **kw)
        except requests.RequestException as exc:
            response = requests.Response()
            response.status_code, response._content = 0, str(exc).encode()
        seconds = time.perf_counter() - started
        status = response.status_code
        problem = "no answer" if status == 0 else f"HTTP {status}" if status >= 500 else None
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
    def __init__(self, base: str, secrets: dict[str, str], log: Path, env: dict[str, str]):
        self.base, self.log, self.env = base, log, env
        self.calls = Calls()
        self.people = {name: Person(name, secret, self) for name, secret in secrets.items()}

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
    ok = alone.status_code == 200 and alone.elapsed_s < 5  # the target for this chain
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
    peak = b.memory.peaks["celery"]  # type: ignore[attr-defined]
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
}


# --- running them -----------------------------------------------------------------------


def start_celery(env: dict[str, str], log) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "designer", "worker", "--pool=prefork"]
        + ["--concurrency=1", "--loglevel=WARNING"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop_celery(worker: subprocess.Popen) -> None:
    """Warm shutdown; past 30 s, kill the worker and its pool process (only those)."""
    pool = children(worker.pid)
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(30)
    except subprocess.TimeoutExpired:
        for pid in [*pool, worker.pid]:
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
    held = held and not problems
    peaks = memory.peaks
    numbers = f"{calls.slowest:9.1f}  {peaks['gunicorn']:7.0f}  {peaks['celery']:9.0f}"
    return held, numbers, "; ".join([note, *problems])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="case numbers to run, e.g. 1,6 (default: all)")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/chain_abuse")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/5")
    args = parser.parse_args()
    chosen = [int(n) for n in args.only.split(",")] if args.only else list(CASES)

    import redis

    redis.Redis.from_url(args.redis).flushdb()
    env = production_env(
        args.database_url,
        CELERY_BROKER_URL=args.redis,
        CELERY_RESULT_BACKEND=args.redis,
        CACHE_URL=args.redis,
    )
    fresh_database(args.database_url)
    manage(["migrate", "--noinput"], env)
    people = {**env, "ABUSE_PASSWORD": PASSWORD, "ABUSE_PEOPLE": ",".join(PEOPLE)}
    secrets = json.loads(manage(["shell", "-c", SETUP], people).strip().splitlines()[-1])

    logs = Path(tempfile.mkdtemp(prefix="abuse-"))
    web_log, work_log = (logs / "gunicorn.log").open("w"), (logs / "celery.log").open("w")
    worker = start_celery(env, work_log)
    results = []
    try:
        with Gunicorn(env, workers=3, timeout=30, log=web_log) as server:
            bench = Bench(server.base, secrets, logs / "gunicorn.log", env)
            memory = Memory(server, worker)
            bench.memory = memory  # type: ignore[attr-defined]
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
    finally:
        stop_celery(worker)
        redis.Redis.from_url(args.redis).flushdb()
    print(f"logs: {logs}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
