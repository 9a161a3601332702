"""Faults: the worker queue down, and a worker that dies in the middle of a campaign.

With the broker unreachable (a Redis URL nobody listens on), editing goes on
as if nothing happened, and launching a campaign answers 503 saying the
worker queue is down, leaving a failed campaign rather than one waiting
forever. A worker that dies mid-campaign stops beating; the next look at the
campaign takes its shard back and a new message runs it to the end. One
test kills a real worker process with SIGKILL and watches a second one take
the shard over (PostgreSQL only: both processes need the test database).
Another restarts a Redis broker of its own under a supervised worker process
in the middle of a campaign, with a second one waiting in the queue: the
worker stays up and both campaigns finish (on SQLite the worker shares a copy
of the test database in a file).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection, connections
from django.db.backends.sqlite3.base import DatabaseWrapper
from django.test import Client
from django.utils import timezone

from chains.core import formats
from chains.models import ApiToken, Chain, Exploration, ExplorationShard
from chains.tasks import explore_shard
from designer.celery import app

ROOT = Path(__file__).resolve().parent.parent
DEAD_BROKER = "redis://127.0.0.1:1/0"  # port 1: nothing listens there
DEAD_RESULTS = "redis://127.0.0.1:1/1"


def fresh_pools() -> None:
    """Forget the open broker connections, so the next send uses the configured URL."""
    app._pool = None
    app.amqp._producer_pool = None


def fresh_backend() -> None:
    """Forget this thread's result store, so the next use connects to the configured URL."""
    app._local.__dict__.pop("backend", None)


@pytest.fixture
def broker_down(monkeypatch):
    """Redis down: the broker and the result store both on a port nobody listens on."""
    working = app.conf.broker_url, app.conf.result_backend
    fresh_pools()
    fresh_backend()
    app.conf.broker_url = DEAD_BROKER
    app.conf.result_backend = DEAD_RESULTS
    monkeypatch.setenv("CELERY_BROKER_URL", DEAD_BROKER)  # Celery reads it before its settings
    yield
    fresh_pools()
    fresh_backend()
    app.conf.broker_url, app.conf.result_backend = working


@pytest.fixture
def unsafe(team) -> Chain:
    path = ROOT / "fixtures" / "unsafe-retry-booking.yaml"
    document = formats.to_document(formats.load(path.read_bytes(), filename=path.name).chains[0])
    return Chain.objects.store(document, team=team).chain


@pytest.mark.django_db(transaction=True)
def test_with_the_queue_down_editing_goes_on(unsafe, people, signed_in, broker_down):
    editor = signed_in(people["editor"])
    response = editor.post(
        f"/chains/{unsafe.key}/edit",
        {"op": "add_handle", "base": "1", "form": "add-handle", "id": "fresh"},
    )
    assert response.status_code == 302
    assert unsafe.head().number == 2


@pytest.mark.django_db(transaction=True)
def test_with_the_queue_down_a_launch_says_so_and_leaves_no_campaign_waiting(
    unsafe, people, signed_in, broker_down
):
    response = signed_in(people["editor"]).post(
        f"/chains/{unsafe.key}/campaigns/", {"revision": "1", "max_faults": "1"}
    )
    assert response.status_code == 503
    assert "the worker queue is down: OperationalError" in response.content.decode()
    (campaign,) = Exploration.objects.all()
    assert campaign.status == "failed"


@pytest.mark.django_db(transaction=True)
def test_with_the_queue_down_the_api_answers_the_documented_503(
    unsafe, people, broker_down, monkeypatch
):
    _, secret = ApiToken.objects.issue(people["editor"], "test")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = api.post(
        f"/api/chains/{unsafe.key}/campaigns", {"max_faults": 1}, content_type="application/json"
    )
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "queue_down"
    assert error["message"].startswith("the worker queue is down")
    (campaign,) = Exploration.objects.all()
    assert campaign.status == "failed"


@pytest.mark.django_db(transaction=True)
def test_a_shard_whose_worker_died_is_taken_back_and_finished_by_another(unsafe, monkeypatch):
    sent: list = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: sent.append(args))
    campaign = Exploration.objects.launch(unsafe.head(), {"max_faults": 1})
    (message,) = sent
    # a worker claims the shard and dies at once: no result, no more heartbeats
    ExplorationShard.objects.claim(campaign.pk, 0, worker="doomed")
    ExplorationShard.objects.filter(exploration=campaign).update(
        heartbeat_at=timezone.now() - timedelta(minutes=10)
    )
    assert campaign.recover() == 1  # the page's next poll
    assert sent[-1] == message  # sent again
    explore_shard.apply(args=message)  # another worker takes it
    campaign.refresh_from_db()
    assert campaign.status == "done"
    assert campaign.result()["violations"]


def start_worker_process(name: str) -> subprocess.Popen:
    """A real Celery worker in its own process, on this test's database and broker."""
    database = connection.settings_dict
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    env = {**os.environ, "DATABASE_URL": url, "DEBUG": "1"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "designer",
            "worker",
            "--pool=solo",
            f"--hostname={name}@%h",
            f"--queues={app.conf.task_default_queue}",  # this test process's (see conftest)
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_campaign_leaves_its_shard_to_the_next_worker(
    team, flight_document, wait_until
):
    if connection.vendor != "postgresql":
        pytest.skip("worker processes need a shared server database (CI=true runs it)")
    flight = Chain.objects.store(flight_document, team=team).chain
    # about 15 s of search on an idle core, far past the 1 s soft limit below
    campaign = Exploration.objects.launch(flight.head(), {"max_faults": 4})
    shard = campaign.shards.get()
    first = start_worker_process("doomed")
    try:
        wait_until(lambda: ExplorationShard.objects.get(pk=shard.pk).states > 0, interval=0.2)
        doomed = ExplorationShard.objects.get(pk=shard.pk).claimed_by
    finally:
        first.send_signal(signal.SIGKILL)  # no goodbye: no result, no more heartbeats
        first.wait(30)
    wait_until(lambda: campaign.shards.stale(timedelta(seconds=1)).exists(), timeout=10)
    assert campaign.recover(stale_after=timedelta(seconds=1)) == 1  # a page's next poll
    second = start_worker_process("heir")
    try:
        wait_until(
            lambda: ExplorationShard.objects.get(pk=shard.pk).claimed_by not in ("", doomed),
            interval=0.2,
        )
        taken = ExplorationShard.objects.get(pk=shard.pk)
        assert taken.status == "running" and taken.attempts == 2
        assert taken.claimed_by.startswith("heir@")
        campaign.cancel()  # the rest of the search is not this test's business
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(60)


class OwnRedis:
    """A redis-server of this test's own on a free loopback port, without persistence."""

    def __init__(self, directory: Path):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.directory = directory
        self.url = f"redis://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
            + ["--save", "", "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def own_redis(tmp_path):
    if shutil.which("redis-server") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    redis = OwnRedis(tmp_path)
    redis.start()
    yield redis
    redis.stop()


@pytest.fixture
def worker_database(tmp_path):
    """A DATABASE_URL for a worker process that shares this test's data.

    On PostgreSQL, the test database itself. SQLite's test database lives in
    this process's memory, so it is copied to a file that the test then uses
    too, until it ends.
    """
    if connection.vendor == "postgresql":
        database = connection.settings_dict
        yield (
            f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}"
            f"/{database['NAME']}"
        )
        return
    path = tmp_path / "db.sqlite3"
    memory = connections["default"]
    memory.ensure_connection()
    with sqlite3.connect(path) as copy:
        memory.connection.backup(copy)
    on_file = DatabaseWrapper({**memory.settings_dict, "NAME": str(path)}, alias="default")
    connections["default"] = on_file
    try:
        yield f"sqlite:///{path}"
    finally:
        on_file.close()
        connections["default"] = memory


def start_supervised_worker(
    database_url: str, log: Path, broker_url: str | None = None
) -> subprocess.Popen:
    """The worker as make run and the container start it: under designer.supervise.

    Its broker is ``broker_url``, else the configured one (the embedded one locally).
    """
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "1",
        "CELERY_TASK_DEFAULT_QUEUE": app.conf.task_default_queue,  # this test process's
    }
    if broker_url:
        env.update(CELERY_BROKER_URL=broker_url, CELERY_RESULT_BACKEND=broker_url)
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "designer.supervise", "worker", "--concurrency=1"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: see kill_supervised
        )


def kill_supervised(worker: subprocess.Popen) -> None:
    """End the supervisor, its worker and the worker's pool at once.

    A warm shutdown (SIGTERM) first waits out the embedded broker's poll, about
    five seconds of an idle worker, and nothing after these tests needs it.
    """
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(30)


@pytest.mark.django_db(transaction=True)
def test_a_broker_restart_mid_campaign_leaves_the_worker_running_and_both_campaigns_finishing(
    team, flight_document, own_redis, worker_database, tmp_path, wait_until, monkeypatch
):
    flight = Chain.objects.store(flight_document, team=team).chain
    broker = f"{own_redis.url}/0"
    working = app.conf.broker_url
    fresh_pools()
    app.conf.broker_url = broker
    monkeypatch.setenv("CELERY_BROKER_URL", broker)  # Celery reads it before its settings
    log = tmp_path / "worker.log"
    worker = start_supervised_worker(worker_database, log, broker)
    try:
        # Its first beat (every 0.5 s) is seen, and the broker stopped, seconds before its end.
        running = Exploration.objects.launch(flight.head(), {"max_faults": 4, "max_seconds": 5})
        waiting = Exploration.objects.launch(flight.head(), {"max_faults": 1})
        wait_until(lambda: running.shards.get().states > 0, timeout=30, interval=0.2)
        own_redis.stop()  # the queued campaign's message goes with it: no persistence
        time.sleep(1)
        own_redis.start()
        for campaign in (running, waiting):
            wait_until(
                lambda c=campaign: Exploration.objects.get(pk=c.pk).status == "done",
                timeout=45,
                interval=0.2,
                message=f"campaign {campaign.pk} did not finish",
            )
        assert worker.poll() is None
        assert "exited with" not in log.read_text()  # never restarted: it rode the drop out
    finally:
        fresh_pools()
        app.conf.broker_url = working
        kill_supervised(worker)


@pytest.mark.django_db(transaction=True)
def test_the_worker_make_run_starts_stops_a_shard_at_its_time_limit_and_says_why(
    team, flight_document, sent, worker_database, tmp_path, wait_until
):
    flight = Chain.objects.store(flight_document, team=team).chain
    # about 15 s of search on an idle core, far past the 1 s soft limit below
    campaign = Exploration.objects.launch(flight.head(), {"max_faults": 4})
    (message,) = sent
    worker = start_supervised_worker(worker_database, tmp_path / "worker.log")
    try:
        # Celery's soft limit, as a shard past CAMPAIGN_TIME_LIMIT meets it, but in 1 s.
        explore_shard.apply_async(args=message, soft_time_limit=1, time_limit=20)
        # A worker starting on a loaded machine (the suite's other processes) can take
        # half a minute before it claims the shard: wait generously, it returns when done.
        wait_until(
            lambda: Exploration.objects.get(pk=campaign.pk).status == "done",
            timeout=150,
            interval=0.2,
        )
    finally:
        kill_supervised(worker)
    campaign.refresh_from_db()
    assert campaign.result()["stopped_by"] == "time"
    assert campaign.result()["truncated"]
    # That it said "time" and truncated is the proof it was stopped, not run out; how many
    # seconds it took is the loaded machine's business (the suite asserts no timings).
