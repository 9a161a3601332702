"""Campaign limits: caps from settings, Celery time limits, per-team concurrency, fair queueing.

The first tests drive the models with the task queue stubbed out (``sent``);
the last ones run a real worker thread (``celery_worker``) with one process,
as a small deployment would.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import task_failure
from django.test import Client
from django.utils import timezone

from chains.core.sim.explorer import Bounds
from chains.models import ApiToken, Chain, Exploration, ExplorationShard, Team
from chains.services.campaigns import CampaignIn, launch_campaign
from chains.tasks import _Pulse, explore_shard, hard_time_limit, soft_time_limit
from tests.conftest import fixture_document, make_user

SMALL = Bounds(max_faults=1)


@pytest.fixture
def other_team(db) -> Team:
    return Team.objects.found("Hotel desk", owner=make_user("hotelier"), slug="hotel-desk")


def stored(team: Team, key: str = "flight") -> Chain:
    document = {**fixture_document("flight-roundtrip.yaml"), "id": key}
    return Chain.objects.store(document, "import", team=team).chain


@pytest.fixture
def launched(django_capture_on_commit_callbacks):
    """Launch as a request would: the shards are sent once the launch commits."""

    def launch(chain: Chain, shards: int = 1, bounds: Bounds = SMALL) -> Exploration:
        with django_capture_on_commit_callbacks(execute=True):
            return Exploration.objects.launch(chain.revisions.get(), bounds, shards=shards)

    return launch


# Caps


@pytest.mark.django_db
def test_a_launch_carries_the_caps_from_settings(team, settings, sent, people):
    settings.CAMPAIGN_MAX_STATES = 1000
    settings.CAMPAIGN_TIME_LIMIT = 60
    settings.CAMPAIGN_MAX_MEMORY_MB = 700
    exploration = launch_campaign(stored(team), CampaignIn(shards=4), by=people["owner"])
    bounds = exploration.get_bounds()
    assert (bounds.max_states, bounds.max_seconds, bounds.max_memory_mb) == (250, 60, 700)


def test_the_shard_task_runs_under_soft_and_hard_time_limits(settings):
    assert explore_shard.soft_time_limit == soft_time_limit()
    assert explore_shard.time_limit == hard_time_limit()
    assert settings.CAMPAIGN_TIME_LIMIT < soft_time_limit() < hard_time_limit()


@pytest.mark.django_db
def test_a_soft_time_limit_stores_the_truncated_result_so_far(team, sent, monkeypatch, launched):
    exploration = launched(stored(team), bounds=Bounds(max_faults=2))
    calls = []

    def progress(self, states):
        calls.append(states)
        if len(calls) == 3:
            raise SoftTimeLimitExceeded

    monkeypatch.setattr(_Pulse, "progress", progress)
    assert explore_shard.run(exploration.pk, 0) == "done"
    exploration.refresh_from_db()
    assert exploration.status == "done"
    assert exploration.result()["truncated"] is True
    assert exploration.result()["stopped_by"] == "time"


@pytest.mark.django_db
def test_a_shard_past_its_hard_time_limit_is_failed_as_timed_out(team, sent, launched):
    exploration = launched(stored(team))
    shard = ExplorationShard.objects.claim(exploration.pk, 0, worker="w1")
    long_ago = timezone.now() - timedelta(seconds=hard_time_limit() + 1)
    ExplorationShard.objects.filter(pk=shard.pk).update(claimed_at=long_ago)
    exploration.recover()
    shard.refresh_from_db()
    assert shard.status == "failed"
    assert "timed out" in shard.error
    assert exploration.status == "failed"
    assert "timed out" in exploration.error


@pytest.mark.django_db
def test_a_shard_killed_at_the_hard_time_limit_is_failed_at_once(team, sent, launched):
    exploration = launched(stored(team))
    ExplorationShard.objects.claim(exploration.pk, 0, worker="w1")
    task_failure.send(
        sender=explore_shard,
        task_id="t",
        exception=TimeLimitExceeded(hard_time_limit()),
        args=[exploration.pk, 0],
        kwargs={},
        einfo=None,
    )
    shard = exploration.shards.get()
    assert shard.status == "failed"
    assert shard.error == f"timed out: ran past the hard time limit of {hard_time_limit()} s"
    exploration.refresh_from_db()
    assert exploration.status == "failed"


# Per-team limits


@pytest.mark.django_db
def test_a_big_campaign_sends_no_more_shards_than_the_team_may_run(team, settings, sent, launched):
    settings.CAMPAIGN_TEAM_SHARDS = 2
    exploration = launched(stored(team), shards=16)
    assert sent == [(exploration.pk, 0), (exploration.pk, 1)]


@pytest.mark.django_db
def test_a_launch_beyond_the_teams_campaign_limit_waits(team, settings, sent, launched):
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 1
    chain = stored(team)
    first, second = launched(chain), launched(chain)
    assert sent == [(first.pk, 0)]
    assert first.progress()["waiting"] is None
    assert second.progress()["waiting"] == "waiting for the team's earlier campaigns"


@pytest.mark.django_db
def test_a_waiting_campaign_starts_once_the_earlier_one_ends(team, settings, sent, launched):
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 1
    chain = stored(team)
    first, second = launched(chain), launched(chain)
    first.cancel()
    assert sent == [(first.pk, 0), (second.pk, 0)]
    assert second.progress()["waiting"] is None


@pytest.mark.django_db
def test_another_teams_small_campaign_is_not_queued_behind_a_big_one(
    team, other_team, settings, sent, launched
):
    settings.CAMPAIGN_TEAM_SHARDS = 2
    big = launched(stored(team), shards=16)
    small = launched(stored(other_team, "hotel"))
    assert sent == [(big.pk, 0), (big.pk, 1), (small.pk, 0)]


@pytest.mark.django_db
def test_a_finished_shard_makes_room_for_the_next_one(team, settings, sent, launched):
    settings.CAMPAIGN_TEAM_SHARDS = 1
    exploration = launched(stored(team), shards=3)
    assert explore_shard.run(exploration.pk, 0) == "done"
    assert sent == [(exploration.pk, 0), (exploration.pk, 1)]


# The API


def api_get(user, exploration: Exploration) -> dict:
    _, secret = ApiToken.objects.issue(user, "test")
    key = exploration.revision.chain.key
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = client.get(f"/api/chains/{key}/campaigns/{exploration.pk}")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_the_api_says_a_campaign_stopped_at_a_cap_with_the_coverage_it_reached(
    team, sent, launched
):
    exploration = launched(stored(team), bounds=Bounds(max_faults=2, max_states=20))
    explore_shard.run(exploration.pk, 0)
    out = api_get(team.memberships.get(role="viewer").user, exploration)
    assert out["bounds"]["max_states"] == 20
    assert out["result"]["truncated"] is True
    assert out["result"]["stopped_by"] == "states"
    assert out["result"]["coverage"]["steps"]["reached"]


@pytest.mark.django_db
def test_the_api_says_a_campaign_waits_for_its_teams_earlier_ones(team, settings, sent, launched):
    settings.CAMPAIGN_TEAM_CAMPAIGNS = 1
    chain = stored(team)
    launched(chain)
    out = api_get(team.memberships.get(role="viewer").user, launched(chain))
    assert out["status"] == "queued"
    assert out["waiting"] == "waiting for the team's earlier campaigns"


# Through a real broker and one worker


def finished(exploration: Exploration) -> bool:
    exploration.refresh_from_db()
    return exploration.finished_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_campaign_stopped_at_the_state_cap_says_so(
    celery_worker, team, settings, wait_until, people
):
    settings.CAMPAIGN_MAX_STATES = 30
    exploration = launch_campaign(stored(team), CampaignIn(max_faults=2), by=people["owner"])
    wait_until(lambda: finished(exploration))
    result = exploration.result()
    assert exploration.status == "done"
    assert result["truncated"] is True
    assert result["stopped_by"] == "states"
    assert result["states"] <= 30
    assert result["coverage"]["steps"]["reached"]


@pytest.mark.django_db(transaction=True)
def test_a_one_fault_campaign_of_another_team_completes_while_a_maximum_one_runs(
    celery_worker, team, other_team, settings, wait_until, people
):
    # Each big shard runs until its time limit; 16 of them outlast any wait below, so the big
    # campaign is still going when the small one is done, however loaded the machine is.
    settings.CAMPAIGN_TIME_LIMIT = 6
    big = launch_campaign(
        stored(team), CampaignIn(max_faults=6, max_events=500, shards=16), by=people["owner"]
    )
    try:
        small = launch_campaign(
            stored(other_team, "hotel"), CampaignIn(max_faults=1), by=people["owner"]
        )
        # returns once the small one is done; on a machine busy with the rest of the suite
        # its one shard may wait a while for the worker
        wait_until(lambda: finished(small), timeout=90)
        assert small.status == "done"
        big.refresh_from_db()
        assert big.status in ("queued", "running")
    finally:
        big.cancel()
        wait_until(lambda: not big.shards.filter(status="running").exists(), timeout=20)
