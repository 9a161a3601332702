"""Launching, watching and cancelling a campaign: the service the page and the API share."""

from __future__ import annotations

import pytest
from django.http import Http404
from pydantic import ValidationError

from chains.core.sim.explorer import Bounds
from chains.models import Chain, Exploration
from chains.services.campaigns import (
    BadCampaign,
    CampaignIn,
    cancel_campaign,
    launch_campaign,
    watch_campaign,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def outdated(db) -> Chain:
    """A chain whose only revision was stored under an older grammar and no longer validates."""
    document = {"id": "old", "actions": [{"id": "a", "effect": "teleport"}]}
    return Chain.objects.store(document, message="old").chain


def test_a_launch_with_no_revision_explores_the_head(flight, flight_document, sent, people):
    Chain.objects.store({**flight_document, "title": "changed"}, base=1, team=flight.team)
    exploration = launch_campaign(flight, CampaignIn(max_faults=0), by=people["editor"])
    assert exploration.revision.number == 2


def test_a_launch_records_who_launched_it(flight, sent, people):
    exploration = launch_campaign(flight, CampaignIn(max_faults=0), by=people["editor"])
    assert Exploration.objects.get(pk=exploration.pk).author == people["editor"]


def test_a_launch_of_a_named_revision_explores_that_one(flight, flight_document, sent, people):
    Chain.objects.store({**flight_document, "title": "changed"}, base=1, team=flight.team)
    exploration = launch_campaign(flight, CampaignIn(revision=1, max_faults=0), by=people["editor"])
    assert exploration.revision.number == 1


def test_a_launch_keeps_its_bounds_and_queues_one_task_per_shard(
    flight, sent, django_capture_on_commit_callbacks, settings, people
):
    settings.CAMPAIGN_TEAM_SHARDS = 3
    asked = CampaignIn(max_faults=1, max_events=30, crashes=False, shards=3)
    with django_capture_on_commit_callbacks(execute=True):
        exploration = launch_campaign(flight, asked, by=people["editor"])
    kept = {"max_faults": 1, "max_events": 30, "crashes": False}
    assert {name: exploration.bounds[name] for name in kept} == kept
    assert sent == [(exploration.pk, 0), (exploration.pk, 1), (exploration.pk, 2)]


def test_a_launch_of_a_revision_the_chain_lacks_is_refused_naming_the_revision(
    flight, sent, people
):
    with pytest.raises(BadCampaign) as refused:
        launch_campaign(flight, CampaignIn(revision=9), by=people["editor"])
    assert refused.value.field == "revision"
    assert str(refused.value) == "revision: flight_roundtrip has no revision 9 (its head is 1)"
    assert not Exploration.objects.exists()


def test_a_launch_of_a_revision_that_no_longer_validates_is_refused_before_any_worker(
    outdated, sent, people
):
    with pytest.raises(BadCampaign, match=r"^revision: revision 1 no longer validates: "):
        launch_campaign(outdated, CampaignIn(), by=people["editor"])
    assert not Exploration.objects.exists()
    assert sent == []


def test_the_launch_defaults_are_the_explorers_own_bounds_on_one_shard():
    asked = CampaignIn()
    assert asked.bounds() == Bounds()
    assert (asked.revision, asked.shards) == (None, 1)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("max_faults", 7, "faults per path must be a whole number from 0 to 6, not 7"),
        ("max_events", 0, "inputs per path must be a whole number from 1 to 500, not 0"),
        ("shards", "many", "shards (one task each) must be a whole number from 1 to 16, not many"),
    ],
)
def test_a_bound_out_of_range_is_refused_with_its_meaning_and_range(field, value, says):
    with pytest.raises(ValidationError) as refused:
        CampaignIn.model_validate({field: value})
    (error,) = refused.value.errors()
    assert (error["loc"], error["msg"]) == ((field,), f"Value error, {says}")


def test_the_schema_publishes_each_bounds_range_and_meaning():
    shards = CampaignIn.model_json_schema()["properties"]["shards"]
    assert (shards["minimum"], shards["maximum"]) == (1, 16)
    assert shards["description"] == "shards (one task each)"


def test_watching_a_campaign_of_another_chain_is_not_found(flight, outdated, sent, people):
    exploration = launch_campaign(flight, CampaignIn(max_faults=0), by=people["editor"])
    with pytest.raises(Http404):
        watch_campaign(outdated, exploration.pk)


def test_cancelling_stops_a_queued_campaign(flight, sent, people):
    exploration = launch_campaign(flight, CampaignIn(max_faults=0), by=people["editor"])
    assert cancel_campaign(flight, exploration.pk).status == "cancelled"
