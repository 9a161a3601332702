"""Runs kept by run_key in the database: one run per key and chain (SPEC §2.8, CONFORMANCE C4.5).

The API's ``POST /chains/{key}/runs`` and :class:`chains.services.runs.DatabaseRuns`
behind it; the race of two starts at the same moment is in tests/test_kept_runs_race.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from chains.core.sim.runtime import Run
from chains.models import ApiToken, KeptRun
from chains.services.access import get_head, spec_of
from chains.services.runs import DatabaseRuns

pytestmark = pytest.mark.django_db

HAPPY = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "flight-happy-path.yaml"
K = "flight_roundtrip"


def start(user, scenario: str):
    _, secret = ApiToken.objects.issue(user, "test")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    body = json.dumps({"scenario": scenario})
    return client.post(f"/api/chains/{K}/runs", body, content_type="application/json")


def test_a_trip_started_twice_through_the_api_is_one_run_booked_once(flight, people):
    first = start(people["editor"], HAPPY.read_text()).json()
    again = start(people["editor"], HAPPY.read_text()).json()
    assert (first["created"], again["created"]) == (True, False)
    assert again["snapshot"]["run_id"] == first["snapshot"]["run_id"]
    assert again["dispatches"]["book_trip"] == 1 and again["trace"] == first["trace"]
    assert KeptRun.objects.filter(chain=flight).count() == 1


def test_a_second_start_returns_the_run_as_it_stands_and_applies_none_of_its_events(flight, people):
    no_events = HAPPY.read_text().split("events:")[0] + "events: []\n"
    first = start(people["editor"], no_events).json()
    again = start(people["editor"], HAPPY.read_text()).json()
    assert again["created"] is False and again["state"] == first["state"]
    assert again["dispatches"] == first["dispatches"] and "book_trip" not in again["dispatches"]


def test_a_distinct_run_key_starts_a_distinct_run(flight, people):
    start(people["editor"], HAPPY.read_text())
    other = start(people["editor"], HAPPY.read_text().replace("trip-lhr-jfk-0601", "trip-2"))
    assert other.json()["created"] is True
    assert KeptRun.objects.filter(chain=flight).count() == 2


def test_a_start_without_a_run_key_is_refused_saying_why(flight, people):
    response = start(people["editor"], HAPPY.read_text().replace("run_key:", "# run_key:"))
    assert response.status_code == 400
    assert "run_key" in response.json()["error"]["message"]


def test_a_viewer_may_not_start_a_kept_run(flight, people):
    assert start(people["viewer"], HAPPY.read_text()).status_code == 403


def test_a_kept_run_outlives_the_store_that_started_it(flight):
    document = spec_of(get_head(flight))
    run = Run.start(document, run_key="trip-9", runs=DatabaseRuns(flight))
    again = Run.start(document, run_key="trip-9", runs=DatabaseRuns(flight))
    assert again.snapshot == run.snapshot and again.trace == run.trace


def test_a_start_that_loses_the_insert_returns_the_run_that_won_it(flight):
    document = spec_of(get_head(flight))
    winner = []

    def build_while_another_start_keeps_the_key() -> Run:
        winner.append(Run.start(document, run_key="trip-9", runs=DatabaseRuns(flight), seed=1))
        return Run.start(document, run_key="trip-9", seed=2)

    run, made = DatabaseRuns(flight).get_or_create(
        document, "trip-9", build_while_another_start_keeps_the_key
    )
    assert not made and run.snapshot == winner[0].snapshot and run.snapshot.seed == 1
