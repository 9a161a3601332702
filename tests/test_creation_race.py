"""Two people creating the same chain id at the same moment.

A key is unique within its team. While one transaction inserts a new chain
(seconds, for a large document), a teammate's import checks that the id is
free, and it is, as far as committed rows go. Their insert then waits on the
unique key, fails when the first transaction commits, and the store finds the
chain: it refuses inside its transaction unless they may edit it. Another
team's import of the same id never waits: it makes that team's own chain.
Threads need a database whose connections wait for each other's locks: these
tests run on PostgreSQL (always in CI) and are skipped on SQLite.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections, transaction
from django.test import Client

from chains.models import Chain
from chains.services.imports import import_document
from tests.races import needs_postgresql

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

SMALL = "id: small\ntitle: Small\nactions:\n  - id: look\n    effect: read\n"


def in_thread(work, results: dict, name: str) -> threading.Thread:
    def run():
        try:
            results[name] = work()
        except Exception as exc:
            results[name] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def while_the_team_inserts(team, key: str, other):
    """Run ``other`` while ``team``'s transaction holds a new chain ``key``, not committed yet."""
    inserted = threading.Event()
    results: dict = {}

    def theirs():
        with transaction.atomic():
            revision = Chain.objects.store({"id": key, "title": "theirs"}, "theirs", team=team)
            inserted.set()
            time.sleep(1.0)  # a large document's transaction, still open
        return revision

    def then_other():
        inserted.wait(10)
        return other()

    threads = [in_thread(theirs, results, "theirs"), in_thread(then_other, results, "other")]
    for thread in threads:
        thread.join(30)
    return results


def test_an_import_during_a_teammates_creation_needs_the_editor_role_on_their_chain(team, people):
    results = while_the_team_inserts(
        team,
        "small",
        lambda: import_document(SMALL, filename="s.yaml", author=people["viewer"], team=team),
    )
    imported = results["other"]
    assert imported.stored is None, imported
    assert any("your role on this chain is viewer" in p.message for p in imported.problems)
    chain = Chain.objects.get(key="small")
    assert chain.team == team and chain.revisions.count() == 1


def test_an_import_during_another_teams_creation_of_the_same_key_makes_the_importers_own(
    team, people
):
    elsewhere = people["outsider"].memberships.get().team
    results = while_the_team_inserts(
        team,
        "small",
        lambda: import_document(
            SMALL, filename="s.yaml", author=people["outsider"], team=elsewhere
        ),
    )
    assert results["other"].stored == [
        {"id": "small", "team": "elsewhere", "revision": 1, "created": True}
    ]
    assert Chain.objects.get(key="small", team=team).title == "theirs"


def test_the_wizard_during_a_teammates_creation_of_the_same_key_is_a_400(team, people):
    client = Client()
    client.force_login(people["editor"])
    results = while_the_team_inserts(
        team, "trip", lambda: client.post("/chains/new/", {"create": "1", "key": "trip"})
    )
    assert results["other"].status_code == 400
    assert Chain.objects.get(key="trip").revisions.count() == 1
