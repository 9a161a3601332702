"""Explorations run as Celery tasks: shards are claimed, beat, finish, and merge once.

The first tests drive the model verbs and the task body in this process with
the task queue stubbed out; the last ones send real messages through the
configured broker (the filesystem transport locally, Redis under CI=true) to
a worker running in a thread of this process, which shares the test database.
"""

from __future__ import annotations

import textwrap
import threading
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

import pytest
from celery.signals import worker_ready
from django.db import OperationalError, connection
from django.utils import timezone

from chains.core import formats
from chains.core.sim.explorer import Bounds, ExploreResult, explore, merge
from chains.models import (
    STALE_AFTER,
    Chain,
    ExchangedStates,
    Exploration,
    ExplorationShard,
    QueueDown,
)
from chains.tasks import explore_shard, reap_explorations, recover_explorations

# An unkeyed commit whose single-use quote can expire: small (43 states within SMALL).
PAY = """
id: pay
handles:
  - {id: q, minted_by: quote, single_use: true,
     staleness: {detect: [code:Q_EXPIRED], refresh: quote}}
actions:
  - {id: quote, effect: mint, output: {handles: [q]}}
  - {id: pay, effect: commit, input: {handles: [q]}, idempotency: {mode: none}}
policy:
  per_step:
    commit: {unkeyed: {attempts: 2}}
"""
# A fixture whose exploration within LARGE takes minutes: only ever cancelled here.
FLIGHT = Path(__file__).resolve().parents[1] / "fixtures" / "flight-roundtrip.yaml"

SMALL = Bounds(max_faults=2)
LARGE = Bounds(max_faults=4)


def load(text: str):
    result = formats.load(textwrap.dedent(text), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


def explored(result: dict) -> dict:
    """What sharding must not change: states, terminal states, violations and coverage.

    (``paths`` and ``seconds`` differ: every shard walks the first levels.)
    """
    same = ("states", "terminals", "violations", "truncated")
    covered = ("coverage", "not_covered", "complete", "warnings", "happy_path")
    return {key: result[key] for key in (*same, *covered)}


@pytest.fixture
def revision(db):
    return Chain.objects.store(formats.to_document(load(PAY)))


@pytest.fixture
def sent(monkeypatch):
    """The shard tasks that would have gone to the broker, as (exploration id, index)."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: calls.append(args))
    return calls


def finished(exploration: Exploration) -> bool:
    exploration.refresh_from_db()
    return exploration.finished_at is not None


# Launching


@pytest.mark.django_db
def test_launch_creates_a_queued_shard_per_part_and_sends_a_task_for_each(
    revision, sent, django_capture_on_commit_callbacks, settings
):
    settings.CAMPAIGN_TEAM_SHARDS = 3
    with django_capture_on_commit_callbacks(execute=True):
        exploration = Exploration.objects.launch(revision, SMALL, shards=3)
    assert exploration.status == "queued"
    assert exploration.bounds == asdict(SMALL)
    assert exploration.get_bounds() == SMALL
    shards = list(exploration.shards.all())
    assert [(s.index, s.status) for s in shards] == [(0, "queued"), (1, "queued"), (2, "queued")]
    assert sent == [(exploration.pk, 0), (exploration.pk, 1), (exploration.pk, 2)]


@pytest.mark.django_db
def test_no_task_is_sent_before_the_launch_commits(
    revision, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        Exploration.objects.launch(revision, {"max_faults": 1}, shards=2)
    assert sent == []
    assert len(callbacks) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("shards", [0, 1000])
def test_launch_refuses_a_shard_count_out_of_range(revision, sent, shards):
    with pytest.raises(ValueError, match="shards must be between"):
        Exploration.objects.launch(revision, SMALL, shards=shards)
    assert not Exploration.objects.exists()


# Claiming


@pytest.mark.django_db
def test_a_shard_is_claimed_by_one_worker_only(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    first = ExplorationShard.objects.claim(exploration.pk, 0, worker="a")
    second = ExplorationShard.objects.claim(exploration.pk, 0, worker="b")
    assert first is not None
    assert first.claimed_by.startswith("a/")
    assert first.attempts == 1
    assert second is None
    exploration.refresh_from_db()
    assert exploration.status == "running"
    assert exploration.started_at is not None


@pytest.mark.django_db
def test_a_claim_for_an_unknown_or_cancelled_exploration_takes_nothing(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    exploration.cancel()
    assert ExplorationShard.objects.claim(exploration.pk, 0, worker="a") is None
    assert ExplorationShard.objects.claim(exploration.pk + 1, 0, worker="a") is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_of_the_same_shard_have_one_winner(revision, sent):
    if connection.vendor == "sqlite":
        pytest.skip("the shared in-memory SQLite test database locks tables across threads")
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    start = threading.Barrier(6)
    won: list[bool] = []

    def claim(worker: str) -> None:
        start.wait()
        try:
            won.append(ExplorationShard.objects.claim(exploration.pk, 0, worker) is not None)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 5 + [True]


# Beating, finishing, settling


@pytest.mark.django_db
def test_the_last_shard_to_finish_merges_the_results_once(revision, sent):
    chain = load(PAY)
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    results = [explore(chain, SMALL, shard=(i, 2)) for i in range(2)]
    shards = [ExplorationShard.objects.claim(exploration.pk, i, worker="w") for i in range(2)]

    assert shards[0].finish(results[0])
    exploration.refresh_from_db()
    assert exploration.status == "running"
    assert exploration.result() is None

    assert shards[1].finish(results[1])
    exploration.refresh_from_db()
    assert exploration.status == "done"
    assert exploration.result() == merge(results).as_dict()
    assert exploration.progress()["shards_done"] == 2
    assert not exploration.settle()
    assert not shards[1].finish(results[1])


@pytest.mark.django_db
def test_a_beat_records_progress_and_says_stop_once_cancelled(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    assert shard.beat(42)
    assert exploration.progress()["states"] == 42

    assert exploration.cancel()
    assert not shard.beat(50)
    assert exploration.finished_at is None  # shard 0 still has to stop

    partial = ExploreResult(
        states=50, paths=3, terminals={"done": 3}, violations=[], seconds=0.2, truncated=True
    )
    assert shard.finish(partial, stopped=True)
    exploration.refresh_from_db()
    assert exploration.status == "cancelled"
    assert exploration.result()["truncated"] is True
    assert exploration.result()["states"] == 50
    assert [s.status for s in exploration.shards.all()] == ["cancelled", "cancelled"]


@pytest.mark.django_db
def test_cancelling_a_queued_exploration_finishes_it_without_a_result(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    assert exploration.cancel()
    assert exploration.status == "cancelled"
    assert exploration.finished_at is not None
    assert exploration.result() is None
    assert not exploration.cancel()


@pytest.mark.django_db
def test_a_failing_shard_fails_the_exploration_with_its_reason(revision, sent, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("chains.tasks.explore", broken)
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    assert explore_shard.apply(args=(exploration.pk, 0)).get() == "failed"
    exploration.refresh_from_db()
    assert exploration.status == "failed"
    assert exploration.error == "shard 0: RuntimeError: boom"
    assert exploration.finished_at is not None
    shards = list(exploration.shards.all())
    assert [(s.status, s.error) for s in shards] == [
        ("failed", "RuntimeError: boom"),
        ("cancelled", ""),
    ]
    assert explore_shard.apply(args=(exploration.pk, 1)).get() == "skipped"


@pytest.mark.django_db
def test_the_task_runs_every_shard_to_the_unsharded_result(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    assert [explore_shard.apply(args=(exploration.pk, i)).get() for i in (0, 1)] == [
        "done",
        "done",
    ]
    exploration.refresh_from_db()
    assert exploration.status == "done"
    assert explored(exploration.result()) == explored(explore(load(PAY), SMALL).as_dict())
    assert explore_shard.apply(args=(exploration.pk, 0)).get() == "skipped"


@pytest.mark.django_db
def test_running_shards_take_the_parts_of_the_split_in_turn_each_once(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    first, second = (
        ExplorationShard.objects.claim(exploration.pk, i, worker="w").part_claims() for i in (0, 1)
    )
    assert [first(), second(), first()] == [0, 1, 2]
    assert [s.parts for s in exploration.shards.order_by("index")] == [[0, 2], [1]]


@pytest.mark.django_db
def test_once_every_part_is_taken_a_claim_gets_none_and_a_late_shard_walks_nothing(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    first = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    first.cut_into(2)
    first.cut_into(5)  # every shard cuts the same level: the first to say it counts
    taking = first.part_claims()
    assert [taking(), taking(), taking()] == [0, 1, None]
    exploration.refresh_from_db()
    assert (exploration.parts_total, exploration.parts_dealt) == (2, 2)
    assert explore_shard.apply(args=(exploration.pk, 1)).get() == "done"
    assert exploration.shards.get(index=1).states == 0


@pytest.mark.django_db
def test_a_shard_run_again_first_searches_the_parts_it_had_taken(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    gone = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    taken = gone.part_claims()
    assert [taken(), taken()] == [0, 1]
    silence(gone)
    assert ExplorationShard.objects.reap() == [gone]
    again = ExplorationShard.objects.claim(exploration.pk, 0, worker="next").part_claims()
    assert [again(), again(), again()] == [0, 1, 2]


@pytest.mark.django_db
def test_a_worker_whose_claim_was_taken_back_takes_no_more_parts(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    gone = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    taken = gone.part_claims()
    silence(gone)
    ExplorationShard.objects.reap()
    assert taken() is None
    exploration.refresh_from_db()
    assert exploration.parts_dealt == 0


# Shards telling each other the states they searched


STATE_A, STATE_B = (b"a" * 8, 1, 3), (b"b" * 8, 0, 2)


@pytest.mark.django_db
def test_running_shards_get_the_states_the_others_sent_each_once_and_not_their_own(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    first, second = (
        ExplorationShard.objects.claim(exploration.pk, i, worker="w").state_exchange()
        for i in (0, 1)
    )
    assert first([STATE_A]) == []
    assert second([STATE_B]) == [STATE_A]
    assert second([]) == []
    assert first([]) == [STATE_B]


@pytest.mark.django_db
def test_a_database_error_costs_the_exchange_not_the_shard(revision, sent, monkeypatch):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    exchange = ExplorationShard.objects.claim(exploration.pk, 0, worker="w").state_exchange()

    def locked(**fields):
        raise OperationalError("database is locked")

    monkeypatch.setattr(ExchangedStates.objects, "create", locked)
    assert exchange([STATE_A]) == []
    assert exploration.exchanged.count() == 0


@pytest.mark.django_db
def test_a_shard_alone_exchanges_nothing(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    assert ExplorationShard.objects.claim(exploration.pk, 0, worker="w").state_exchange() is None


@pytest.mark.django_db
def test_a_shard_run_again_searches_without_the_others_states(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    gone = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    assert gone.state_exchange() is not None
    silence(gone)
    ExplorationShard.objects.reap()
    again = ExplorationShard.objects.claim(exploration.pk, 0, worker="next")
    assert again.state_exchange() is None


@pytest.mark.django_db
def test_the_states_shards_sent_are_deleted_when_the_exploration_settles(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    first = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    first.state_exchange()([STATE_A])
    first.finish(explore(load(PAY), SMALL, shard=(0, 2)))
    assert exploration.exchanged.count() == 1
    explore_shard.apply(args=(exploration.pk, 1)).get()
    assert finished(exploration) and exploration.exchanged.count() == 0


# Stale work


def silence(shard: ExplorationShard, minutes: int = 5) -> None:
    ExplorationShard.objects.filter(pk=shard.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=minutes)
    )


@pytest.mark.django_db
def test_a_running_shard_that_stopped_beating_is_stale(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w")
    assert not ExplorationShard.objects.stale().exists()
    silence(shard)
    assert list(ExplorationShard.objects.stale()) == [shard]
    assert exploration.progress()["shards"][0]["stale"] is True
    assert exploration.progress()["shards"][1]["stale"] is False


@pytest.mark.django_db
def test_a_stale_shard_goes_back_in_the_queue_and_its_old_worker_must_stop(
    revision, sent, django_capture_on_commit_callbacks
):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    silence(shard)
    with django_capture_on_commit_callbacks(execute=True):
        assert ExplorationShard.objects.reap() == [shard]
    again = ExplorationShard.objects.get(pk=shard.pk)
    assert again.status == "queued"
    assert again.error.startswith(f"requeued: no heartbeat from {shard.claimed_by} for 300s")
    assert sent == [(exploration.pk, 0)]
    assert not shard.beat(10)
    assert ExplorationShard.objects.claim(exploration.pk, 0, worker="next").attempts == 2


@pytest.mark.django_db
def test_a_stale_shard_out_of_attempts_fails_the_exploration_naming_the_worker(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    silence(shard)
    assert ExplorationShard.objects.reap(max_attempts=1) == [shard]
    exploration.refresh_from_db()
    assert exploration.status == "failed"
    assert exploration.error.startswith(f"shard 0: no heartbeat from {shard.claimed_by}")
    assert "(limit 120s)" in exploration.error
    assert exploration.finished_at is not None
    assert not ExplorationShard.objects.stale().exists()


@pytest.mark.django_db
def test_the_reap_task_takes_back_stale_shards_and_leaves_live_ones(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    silent = ExplorationShard.objects.claim(exploration.pk, 0, worker="gone")
    ExplorationShard.objects.claim(exploration.pk, 1, worker="alive")
    silence(silent)
    assert reap_explorations.apply().get() == 1
    assert [s.status for s in exploration.shards.all()] == ["queued", "running"]


# Recovery: abandoned work resumes when someone looks or a worker starts


def queued_long_ago(exploration: Exploration, minutes: int = 10) -> None:
    """Its shards' tasks were sent long ago and never claimed: the messages were lost."""
    long_ago = timezone.now() - timedelta(minutes=minutes)
    exploration.shards.update(queued_at=long_ago, sent_at=long_ago)


@pytest.mark.django_db
def test_recover_sends_a_lost_shard_again_once_however_often_it_runs(
    revision, sent, django_capture_on_commit_callbacks
):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    ExplorationShard.objects.claim(exploration.pk, 1, worker="busy")
    queued_long_ago(exploration)
    with django_capture_on_commit_callbacks(execute=True):
        assert exploration.recover() == 1
        assert exploration.recover() == 0
    assert sent == [(exploration.pk, 0)]


@pytest.mark.django_db
def test_recover_takes_back_a_stale_shard_before_it_looks_for_lost_ones(
    revision, sent, django_capture_on_commit_callbacks
):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    silence(ExplorationShard.objects.claim(exploration.pk, 0, worker="gone"))
    queued_long_ago(exploration)
    with django_capture_on_commit_callbacks(execute=True):
        assert exploration.recover() == 1
    assert sent == [(exploration.pk, 0)]
    assert exploration.shards.get().status == "queued"


@pytest.mark.django_db
def test_recover_leaves_a_finished_exploration_alone(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    exploration.cancel()
    queued_long_ago(exploration)
    assert exploration.recover() == 0
    assert Exploration.objects.recover() == 0


@pytest.mark.django_db
def test_a_resend_the_broker_refuses_is_tried_again_by_a_later_recovery(
    revision, sent, monkeypatch, django_capture_on_commit_callbacks
):
    exploration = Exploration.objects.launch(revision, SMALL, shards=1)
    queued_long_ago(exploration)

    def refuse(*args):
        raise OSError("broker gone")

    monkeypatch.setattr(explore_shard, "delay", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        assert exploration.recover() == 1
    monkeypatch.setattr(explore_shard, "delay", lambda *args: sent.append(args))
    queued_long_ago(exploration)
    with django_capture_on_commit_callbacks(execute=True):
        assert exploration.recover() == 1
    assert sent == [(exploration.pk, 0)]


@pytest.mark.django_db
def test_a_launch_the_broker_refuses_fails_at_once_with_the_reason(
    revision, monkeypatch, django_capture_on_commit_callbacks
):
    def refuse(*args):
        raise OSError("connection refused")

    monkeypatch.setattr(explore_shard, "delay", refuse)
    down = "the worker queue is down: OSError: connection refused"
    with pytest.raises(QueueDown, match=down), django_capture_on_commit_callbacks(execute=True):
        Exploration.objects.launch(revision, SMALL, shards=2)
    exploration = Exploration.objects.get()
    assert exploration.status == "failed"
    assert exploration.finished_at is not None
    assert [s.status for s in exploration.shards.all()] == ["cancelled", "cancelled"]


@pytest.mark.django_db
def test_a_starting_worker_recovers_every_active_exploration_and_looks_again_later(
    revision, sent, monkeypatch, django_capture_on_commit_callbacks
):
    later: list[dict] = []
    monkeypatch.setattr(recover_explorations, "apply_async", lambda **kw: later.append(kw))
    first = Exploration.objects.launch(revision, SMALL, shards=1)
    second = Exploration.objects.launch(revision, SMALL, shards=1)
    queued_long_ago(first)
    queued_long_ago(second)
    with django_capture_on_commit_callbacks(execute=True):
        worker_ready.send(sender=None)
    assert sorted(sent) == [(first.pk, 0), (second.pk, 0)]
    assert later == [{"countdown": STALE_AFTER.total_seconds() + 5}]


@pytest.mark.django_db
def test_the_recover_task_counts_the_shards_it_took_back_or_sent_again(revision, sent):
    exploration = Exploration.objects.launch(revision, SMALL, shards=3)
    queued_long_ago(exploration)
    assert recover_explorations.apply().get() == 3


# Through a real broker and worker


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_two_shards_to_the_unsharded_result(celery_worker, revision, wait_until):
    exploration = Exploration.objects.launch(revision, SMALL, shards=2)
    wait_until(lambda: finished(exploration))
    assert exploration.status == "done", exploration.progress()
    assert exploration.progress()["shards_done"] == 2
    assert explored(exploration.result()) == explored(explore(load(PAY), SMALL).as_dict())


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_a_running_exploration_with_a_truncated_result(celery_worker, wait_until):
    loaded = formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name)
    revision = Chain.objects.store(formats.to_document(loaded.chains[0]))
    exploration = Exploration.objects.launch(revision, LARGE, shards=2)
    wait_until(lambda: exploration.progress()["states"] > 0)
    assert exploration.cancel()
    wait_until(lambda: finished(exploration), timeout=10)
    assert exploration.status == "cancelled"
    assert exploration.result()["truncated"] is True
    assert {s.status for s in exploration.shards.all()} == {"cancelled"}
