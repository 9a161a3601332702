"""The review list never shows an approved review beside a reviewer still pending.

A review's row (the reviews page and the API's list) says what each named
reviewer's vote means now: once the revision is approved through another
review, or by the reviewer's vote on another review of it, a vote never
cast no longer waits for anything.
"""

from __future__ import annotations

import re

import pytest

from chains.models import Chain, Review

pytestmark = pytest.mark.django_db


def ask(chain: Chain, people: dict, *names: str) -> Review:
    return Review.objects.request(chain.head(), people["editor"], list(names))


def rows(client, chain: Chain) -> dict[int, str]:
    """Each review's row on the reviews page, by review number, as text."""
    body = client.get(f"{chain.url()}reviews/").content.decode()
    found = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        number = re.search(r">(\d+)</a></td>", row)
        if number:
            found[int(number.group(1))] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))
    return found


def test_a_review_whose_only_reviewer_did_not_vote_is_closed_when_another_review_approves(
    flight, people, client
):
    first = ask(flight, people, "owner")
    ask(flight, people, "reviewer").vote(people["reviewer"], "approve")
    row = rows(client, flight)[first.pk]
    assert "closed" in row and "approved " not in row.replace("approved without", "")
    assert "pending" not in row


def test_a_review_is_closed_when_its_only_reviewer_approves_on_another_review_of_the_revision(
    flight, people, client
):
    first = ask(flight, people, "reviewer")
    ask(flight, people, "reviewer").vote(people["reviewer"], "approve")
    row = rows(client, flight)[first.pk]
    assert "closed" in row
    assert "pending" not in row


def test_the_api_list_says_a_vote_never_cast_on_an_approved_revision_is_not_needed(
    flight, people, signed_in
):
    first = ask(flight, people, "owner")
    ask(flight, people, "reviewer").vote(people["reviewer"], "approve")
    listed = signed_in(people["viewer"]).get(f"/api/chains/{flight.key}/reviews").json()
    shown = next(r for r in listed if r["id"] == first.pk)
    assert shown["state"] == "closed"
    assert [v["shown"] for v in shown["votes"]] == ["not needed: approved without this vote"]
    assert [v["decision"] for v in shown["votes"]] == ["pending"]  # as stored
