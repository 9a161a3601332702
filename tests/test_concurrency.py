"""Two editors saving on the same base revision at the same moment: exactly one wins.

The store locks the chain's row (``select_for_update``) while it compares the
base with the head, so of two saves racing on one base the second waits, sees
the head has moved and is refused with a conflict; no revision is lost or
numbered twice. Threads need a database that lets connections wait for each
other's locks: these tests run on PostgreSQL (always in CI) and are skipped on
the in-memory SQLite of a local run.
"""

from __future__ import annotations

from functools import partial

import pytest
from django.test import Client

from chains.models import Chain, Revision, StaleRevision
from tests.races import needs_postgresql, race

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

ROUNDS = 25


def post(client: Client, url: str, form: dict) -> int:
    return client.post(url, form).status_code


def edited(chain: Chain, title: str) -> dict:
    return {**chain.head().document, "title": title}


def test_of_two_stores_on_the_same_base_one_wins_and_the_other_conflicts(flight):
    for n in range(ROUNDS):
        base = flight.head().number
        results = race(
            partial(Chain.objects.store, edited(flight, f"a{n}"), "a", base=base, team=flight.team),
            partial(Chain.objects.store, edited(flight, f"b{n}"), "b", base=base, team=flight.team),
        )
        won = [r for r in results if isinstance(r, Revision)]
        lost = [r for r in results if isinstance(r, StaleRevision)]
        assert (len(won), len(lost)) == (1, 1), results
        assert won[0].number == base + 1
    numbers = list(flight.revisions.order_by("number").values_list("number", flat=True))
    assert numbers == list(range(1, ROUNDS + 2))


def test_of_two_editors_posting_on_the_same_base_one_saves_and_the_other_gets_409(flight, people):
    editors = []
    for person in ("owner", "editor"):
        client = Client()
        client.force_login(people[person])
        editors.append(client)
    url = f"/chains/{flight.key}/edit"
    for n in range(ROUNDS):
        base = str(flight.head().number)
        statuses = race(
            partial(
                post,
                editors[0],
                url,
                {"op": "add_handle", "base": base, "form": "add-handle", "id": f"a{n}"},
            ),
            partial(
                post,
                editors[1],
                url,
                {"op": "add_handle", "base": base, "form": "add-handle", "id": f"b{n}"},
            ),
        )
        assert sorted(statuses) == [302, 409], statuses
    assert flight.revisions.count() == ROUNDS + 1
    handles = {h["id"] for h in flight.head().document["handles"]}
    assert sum(f"a{n}" in handles or f"b{n}" in handles for n in range(ROUNDS)) == ROUNDS
