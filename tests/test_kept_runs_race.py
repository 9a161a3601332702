"""Starts of one run_key at the same moment make one run (SPEC §2.8, CONFORMANCE C4.5).

Each start looks the key up, finds nothing, builds its run and inserts it; the
unique (chain, run_key) constraint lets one insert through and the others
return that run. Like tests/test_review_race.py, this needs PostgreSQL and is
skipped on the in-memory SQLite of a local run.
"""

from __future__ import annotations

from functools import partial

import pytest

from chains.core.sim.runtime import Run
from chains.models import KeptRun
from chains.services.access import get_head, spec_of
from chains.services.runs import DatabaseRuns
from tests.races import needs_postgresql, race

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

ROUNDS = 10
STARTS = 6


def test_starts_of_one_trip_at_the_same_moment_make_one_run(flight):
    document = spec_of(get_head(flight))
    for n in range(ROUNDS):
        key = f"trip-{n}"
        start = partial(Run.start_once, document, DatabaseRuns(flight), run_key=key)
        made = race(*[start] * STARTS)
        assert [r[1] for r in made].count(True) == 1, f"round {n}: {made}"
        assert len({r[0].snapshot.run_id for r in made}) == 1
        assert KeptRun.objects.filter(chain=flight, run_key=key).count() == 1
