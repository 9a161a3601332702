"""A request for changes and an approval on two reviews of one revision, at the same moment.

A vote locks the revision's row while it decides, so whichever comes first,
the revision never ends up approved while a request for changes on one of
its reviews stands: either the approval waits and sees it (held back), or the
request comes second and finds the review closed. Like tests/test_concurrency.py,
this needs PostgreSQL and is skipped on the in-memory SQLite of a local run.
"""

from __future__ import annotations

from functools import partial

import pytest

from chains.models import Chain, Decision, Review, ReviewVote
from tests.races import needs_postgresql, race

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

ROUNDS = 25


def test_an_approval_never_lands_beside_a_request_for_changes_made_at_the_same_moment(
    flight, people
):
    for n in range(ROUNDS):
        revision = Chain.objects.store(
            {**flight.head().document, "title": f"draft {n}"}, team=flight.team
        )
        first = Review.objects.request(revision, people["editor"], ["reviewer"])
        second = Review.objects.request(revision, people["editor"], ["owner"])
        race(
            partial(first.vote, people["reviewer"], "request_changes", "not yet"),
            partial(second.vote, people["owner"], "approve"),
        )
        revision.refresh_from_db()
        asked = ReviewVote.objects.filter(review=first, decision=Decision.CHANGES).exists()
        assert not (revision.approved_at and asked), f"round {n}"
