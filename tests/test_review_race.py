"""A request for changes and an approval on two reviews of one revision, at the same moment.

A vote locks the revision's row while it decides, so whichever comes first,
the revision never ends up approved while a request for changes on one of
its reviews stands: either the approval waits and sees it (held back), or the
request comes second and finds the review closed. Like tests/test_concurrency.py,
this needs PostgreSQL and is skipped on the in-memory SQLite of a local run.
"""

from __future__ import annotations

import threading
from functools import partial

import pytest
from django.db import connection, connections

from chains.models import Chain, Decision, Review, ReviewVote

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 25


@pytest.fixture(autouse=True)
def postgresql():
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL (CI=true runs it); SQLite's in-memory test database is one connection"
        )


def race(*votes):
    """Run the votes in threads released at the same instant; their results in order."""
    start = threading.Barrier(len(votes))
    results: list = [None] * len(votes)

    def run(i, vote):
        try:
            start.wait()
            results[i] = vote()
        except Exception as exc:  # the refused vote is a result here
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, v)) for i, v in enumerate(votes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_an_approval_never_lands_beside_a_request_for_changes_made_at_the_same_moment(
    flight, people
):
    for n in range(ROUNDS):
        revision = Chain.objects.store({**flight.head().document, "title": f"draft {n}"})
        first = Review.objects.request(revision, people["editor"], ["reviewer"])
        second = Review.objects.request(revision, people["editor"], ["owner"])
        race(
            partial(first.vote, people["reviewer"], "request_changes", "not yet"),
            partial(second.vote, people["owner"], "approve"),
        )
        revision.refresh_from_db()
        asked = ReviewVote.objects.filter(review=first, decision=Decision.CHANGES).exists()
        assert not (revision.approved_at and asked), f"round {n}"
