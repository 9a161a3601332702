"""Chain.objects.store keeps an append-only, content-addressed history."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest

from chains.core import formats
from chains.core.sim.palette import choices
from chains.core.sim.runtime import Run
from chains.core.sim.state import Waiting
from chains.models import Chain, NothingToUndo, Revision, StaleRevision, content_hash
from chains.models import chains as stored
from tests.conftest import fixture_document

pytestmark = pytest.mark.django_db

DOC = {"id": "demo", "description": "tiny chain", "handles": [], "actions": []}


def test_store_creates_the_chain_and_revision_1():
    revision = Chain.objects.store(DOC, message="first")
    chain = Chain.objects.get(key="demo")
    assert revision.number == 1
    assert revision.chain == chain
    assert revision.document == DOC
    assert revision.message == "first"
    assert chain.description == "tiny chain"
    assert chain.head() == revision


def test_content_hash_is_sha256_of_the_json_text_in_its_own_order():
    text = json.dumps(DOC, separators=(",", ":"))
    assert content_hash(DOC) == hashlib.sha256(text.encode()).hexdigest()
    assert content_hash(dict(reversed(DOC.items()))) != content_hash(DOC)


def test_storing_identical_content_adds_nothing():
    first = Chain.objects.store(DOC, message="first")
    again = Chain.objects.store(dict(DOC), message="again")
    assert again == first
    assert Revision.objects.count() == 1


def test_changed_content_adds_revision_2_with_a_new_hash():
    first = Chain.objects.store(DOC, message="first")
    second = Chain.objects.store({**DOC, "description": "less tiny"}, message="second")
    assert second.number == 2
    assert second.content_hash != first.content_hash
    chain = Chain.objects.get(key="demo")
    assert chain.head() == second
    assert chain.description == "less tiny"
    assert list(chain.revisions.values_list("number", flat=True)) == [1, 2]


def test_a_chain_without_revisions_has_no_head():
    assert Chain.objects.create(key="empty").head() is None


def test_an_edit_based_on_an_old_revision_is_refused_and_stores_nothing():
    Chain.objects.store(DOC, message="first")
    Chain.objects.store({**DOC, "description": "theirs"}, message="theirs", base=1)
    with pytest.raises(StaleRevision, match="based on revision 1.*at revision 2"):
        Chain.objects.store({**DOC, "description": "mine"}, message="mine", base=1)
    assert Chain.objects.get(key="demo").head().document["description"] == "theirs"
    assert Revision.objects.count() == 2


def test_a_stored_revision_records_its_lint_status():
    assert Chain.objects.store(DOC).status == "INVALID"  # no actions: nothing to run
    one_read = {**DOC, "actions": [{"id": "look", "effect": "read"}]}
    assert Chain.objects.store(one_read).status in {"VALID", "WARNINGS"}
    assert Chain.objects.store({"id": "broken", "actions": "nope"}).status == "INVALID"


def test_storing_a_content_seen_before_does_not_lint_it_again(monkeypatch):
    linted = []
    real = stored.lint
    monkeypatch.setattr(stored, "lint", lambda spec: linted.append(spec.description) or real(spec))
    first, second = f"first {uuid.uuid4()}", f"second {uuid.uuid4()}"  # never cached before
    Chain.objects.store({**DOC, "description": first})
    Chain.objects.store({**DOC, "description": second})
    back = Chain.objects.store({**DOC, "description": first})  # as an undo stores it
    assert (back.number, back.status) == (3, "INVALID")
    assert linted == [first, second]


def edits(n: int) -> Chain:
    for i in range(n):
        Chain.objects.store({**DOC, "description": f"v{i}"}, message=f"v{i}")
    return Chain.objects.get(key="demo")


def test_undo_restores_the_content_before_the_last_edit_as_a_new_revision():
    chain = edits(2)
    undone = chain.undo(base=2)
    assert undone.number == 3
    assert undone.document["description"] == "v0"
    assert undone.message == "undo v1 (r2)"


def test_the_second_of_two_undos_names_the_edit_before_the_last():
    chain = edits(3)
    assert chain.undo(base=3).message == "undo v2 (r3)"
    assert chain.undo(base=4).message == "undo v1 (r2)"


def test_redos_name_the_edits_they_bring_back_in_order():
    chain = edits(3)
    chain.undo(base=3)
    chain.undo(base=4)
    assert chain.redo(base=5).message == "redo v1 (r2)"
    assert chain.redo(base=6).message == "redo v2 (r3)"
    assert chain.undo(base=7).message == "undo v2 (r3)"


def test_repeated_undos_walk_back_edit_by_edit_and_stop_at_the_first():
    chain = edits(3)
    chain.undo(base=3)
    assert chain.undo(base=4).document["description"] == "v0"
    with pytest.raises(NothingToUndo):
        chain.undo(base=5)


def test_redo_restores_what_undo_took_away_in_order():
    chain = edits(3)
    chain.undo(base=3)  # r4 = v1
    chain.undo(base=4)  # r5 = v0
    assert chain.redo(base=5).document["description"] == "v1"
    assert chain.redo(base=6).document["description"] == "v2"
    with pytest.raises(NothingToUndo):
        chain.redo(base=7)
    assert chain.undo(base=7).document["description"] == "v1"


def test_a_new_edit_after_an_undo_leaves_nothing_to_redo():
    chain = edits(2)
    chain.undo(base=2)
    Chain.objects.store({**DOC, "description": "new"}, base=3)
    with pytest.raises(NothingToUndo, match="nothing to redo"):
        chain.redo(base=4)


def test_undo_on_a_stale_base_is_refused():
    chain = edits(2)
    with pytest.raises(StaleRevision):
        chain.undo(base=1)


def test_a_stored_document_keeps_the_order_of_its_mappings():
    # PostgreSQL's jsonb sorts keys (shortest first): a gate's first outcome, which the
    # explorer takes for the expected answer when none is ok, would change on storing.
    outcomes = {"continue_without_seats": {"verdict": "dead_end"}, "retry": {"verdict": "retry"}}
    doc = {**DOC, "gates": [{"id": "seat", "outcomes": outcomes}]}
    revision = Chain.objects.store(doc, message="ordered")
    stored_outcomes = Revision.objects.get(pk=revision.pk).document["gates"][0]["outcomes"]
    assert list(stored_outcomes) == ["continue_without_seats", "retry"]


def test_a_stored_chain_expects_the_gate_answer_its_author_listed_first():
    revision = Chain.objects.store(fixture_document("flight-roundtrip.yaml"), message="flight")
    chain = formats.from_document(Revision.objects.get(pk=revision.pk).document)
    run = Run.start(chain, intent={})
    run.snapshot.waiting = Waiting(kind="answer", gate="seat_degrade")
    expected = next(c for c in choices(chain, run) if not c.fault)
    assert expected.event["answer"]["outcome"] == "continue_without_seats"


def test_storing_the_same_outcomes_in_another_order_adds_a_revision():
    outcomes = {"continue_without_seats": {"verdict": "dead_end"}, "retry": {"verdict": "retry"}}
    first = Chain.objects.store({**DOC, "gates": [{"id": "g", "outcomes": outcomes}]}, message="a")
    turned = dict(reversed(outcomes.items()))
    second = Chain.objects.store({**DOC, "gates": [{"id": "g", "outcomes": turned}]}, message="b")
    assert (first.number, second.number) == (1, 2)
    assert list(second.document["gates"][0]["outcomes"]) == ["retry", "continue_without_seats"]
