"""Faults: the worker queue down, and a worker that dies in the middle of a campaign.

With the broker unreachable (a Redis URL nobody listens on), editing goes on
as if nothing happened, and launching a campaign answers 503 saying the
worker queue is down, leaving a failed campaign rather than one waiting
forever. A worker that dies mid-campaign stops beating; the next look at the
campaign takes its shard back and a new message runs it to the end. The last
test kills a real worker process with SIGKILL and watches a second one take
the shard over (PostgreSQL only: both processes need the test database).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from chains.core import formats
from chains.models import Chain, Exploration, ExplorationShard
from chains.tasks import explore_shard
from designer.celery import app

ROOT = Path(__file__).resolve().parent.parent
DEAD_BROKER = "redis://127.0.0.1:1/0"  # port 1: nothing listens there


def fresh_pools() -> None:
    """Forget the open broker connections, so the next send uses the configured URL."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_down(monkeypatch):
    working = app.conf.broker_url
    fresh_pools()
    app.conf.broker_url = DEAD_BROKER
    monkeypatch.setenv("CELERY_BROKER_URL", DEAD_BROKER)  # Celery reads it before its settings
    yield
    fresh_pools()
    app.conf.broker_url = working


@pytest.fixture
def unsafe(team) -> Chain:
    path = ROOT / "fixtures" / "unsafe-retry-booking.yaml"
    document = formats.to_document(formats.load(path.read_bytes(), filename=path.name).chains[0])
    return Chain.objects.store(document, team=team).chain


@pytest.mark.django_db(transaction=True)
def test_with_the_queue_down_editing_goes_on(unsafe, people, signed_in, broker_down):
    editor = signed_in(people["editor"])
    response = editor.post(
        f"/chains/{unsafe.key}/edit", {"op": "add_handle", "base": "1", "arg.id": "fresh"}
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
    campaign = Exploration.objects.launch(flight.head(), {"max_faults": 4})  # minutes of work
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
