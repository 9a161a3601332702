"""Keeping a scenario with a chain: the service the simulator page, the API and the CLI share."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.http import Http404

from chains.core.sim.scenario import ScenarioMismatch, load_scenario
from chains.models import Chain, DuplicateScenario, SavedScenario
from chains.services.scenarios import BadScenario, save_scenario

pytestmark = pytest.mark.django_db

HAPPY = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "flight-happy-path.yaml"


@pytest.fixture(scope="module")
def happy():
    return load_scenario(HAPPY.read_text(), filename=HAPPY.name)


def test_a_recorded_scenario_keeps_its_outcome_as_its_expect(flight, happy, people):
    unexpected = happy.model_copy(update={"expect": None})
    saved = save_scenario(
        flight, "happy", unexpected, author=people["editor"], record=True, replace=False
    )
    assert saved.document["expect"]["state"] == "done"
    assert saved.author == people["editor"]


def test_a_scenario_not_recorded_is_kept_as_given(flight, happy):
    unexpected = happy.model_copy(update={"expect": None})
    saved = save_scenario(flight, "as given", unexpected, author=None, replace=False)
    assert "expect" not in saved.document


def test_recording_replays_on_the_revision_named(flight, flight_document, happy):
    Chain.objects.store({**flight_document, "title": "changed"}, base=1, team=flight.team)
    with pytest.raises(Http404):
        save_scenario(flight, "happy", happy, author=None, record=True, revision=9, replace=False)
    saved = save_scenario(
        flight, "happy", happy, author=None, record=True, revision=1, replace=False
    )
    assert saved.document["expect"]["state"] == "done"


def test_the_name_is_kept_without_its_surrounding_spaces(flight, happy):
    assert save_scenario(flight, "  happy  ", happy, author=None, replace=False).name == "happy"


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_a_name_empty_or_over_200_characters_is_refused_and_nothing_kept(flight, happy, name):
    with pytest.raises(BadScenario, match=r"^name: String should have"):
        save_scenario(flight, name, happy, author=None, replace=True)
    assert not SavedScenario.objects.exists()


def test_a_name_already_kept_is_refused_without_replace_and_the_first_stays(flight, happy):
    first = save_scenario(flight, "twice", happy, author=None, replace=False)
    shorter = happy.model_copy(update={"events": happy.events[:1], "expect": None})
    with pytest.raises(DuplicateScenario):
        save_scenario(flight, "twice", shorter, author=None, replace=False)
    assert SavedScenario.objects.get().document == first.document


def test_a_name_already_kept_is_replaced_with_replace(flight, happy):
    save_scenario(flight, "twice", happy, author=None, replace=True)
    shorter = happy.model_copy(update={"events": happy.events[:1], "expect": None})
    save_scenario(flight, "twice", shorter, author=None, replace=True)
    assert len(SavedScenario.objects.get().document["events"]) == 1


def test_recording_a_scenario_that_does_not_replay_keeps_nothing(flight, happy):
    other = happy.model_copy(update={"chain": "another_chain"})
    with pytest.raises(ScenarioMismatch):
        save_scenario(flight, "wrong", other, author=None, record=True, replace=True)
    assert not SavedScenario.objects.exists()


def test_recording_on_a_revision_that_no_longer_validates_is_refused_naming_it(happy):
    outdated = Chain.objects.store(
        {"id": "old", "actions": [{"id": "a", "effect": "teleport"}]}, message="old"
    ).chain
    with pytest.raises(BadScenario, match=r"^revision: revision 1 no longer validates: "):
        save_scenario(outdated, "old", happy, author=None, record=True, replace=True)
    assert not SavedScenario.objects.exists()
