"""``chains.services.editing``: save an edit, undo and redo, as the page, API and CLI do."""

from __future__ import annotations

import pytest

from chains.core.drawing import Canvas
from chains.core.edit import EditError
from chains.models import Chain, NothingToUndo, Revision, StaleRevision
from chains.services.editing import parse_args, parse_value, redo, save_edit, undo

pytestmark = pytest.mark.django_db

SMALL = {
    "id": "small",
    "handles": [{"id": "search_id", "minted_by": "search"}],
    "actions": [{"id": "search", "effect": "read", "output": {"handles": ["search_id"]}}],
}


@pytest.fixture
def small() -> Chain:
    return Chain.objects.store(SMALL, "import").chain


def handle_ids(chain: Chain) -> list[str]:
    return [h["id"] for h in chain.head().document["handles"]]


def test_an_edit_is_stored_as_a_new_revision_with_what_it_did_as_message(small):
    saved = save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None)
    assert saved.revision.number == 2
    assert saved.revision.message == "add handle quote"
    assert handle_ids(small) == ["search_id", "quote"]


def test_a_saved_edit_carries_the_changed_chain_and_its_lint_report(small):
    saved = save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None)
    assert saved.spec.handle("quote") is not None
    assert saved.report.status == saved.revision.status


def test_a_drawing_asked_for_is_of_the_changed_chain_with_its_selection(small):
    canvas = Canvas(select="handle:quote")
    saved = save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None, draw=canvas)
    assert saved.drawing.selection.key == "handle:quote"
    assert 'id="handle:quote"' in saved.drawing.picture.result().svg


def test_an_edit_asked_for_no_drawing_draws_nothing(small):
    assert save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None).drawing is None


def test_an_edit_on_a_stale_base_raises_and_stores_nothing(small):
    save_edit(small, "add_handle", {"id": "theirs"}, base=1, author=None)
    with pytest.raises(StaleRevision, match="based on revision 1"):
        save_edit(small, "add_handle", {"id": "mine"}, base=1, author=None)
    assert Revision.objects.filter(chain=small).count() == 2


def test_a_refused_edit_names_the_place_and_stores_nothing(small):
    with pytest.raises(EditError) as refused:
        save_edit(small, "delete_handle", {"id": "nope"}, base=1, author=None)
    assert refused.value.path == "handles[nope]"
    assert small.head().number == 1


def test_an_edit_may_not_change_the_chains_id(small):
    with pytest.raises(EditError, match="cannot change") as refused:
        save_edit(small, "update_chain", {"fields": {"id": "other"}}, base=1, author=None)
    assert refused.value.path == "id"
    assert not Chain.objects.filter(key="other").exists()


def test_an_edit_of_a_head_that_no_longer_validates_is_refused(small):
    Chain.objects.store({**SMALL, "actions": [{"id": "search", "effect": "fly"}]}, "broken")
    with pytest.raises(EditError, match="no longer validates"):
        save_edit(small, "add_handle", {"id": "quote"}, base=2, author=None)
    assert small.head().number == 2


def test_an_edit_that_changes_nothing_returns_the_head(small):
    same = {"id": "search_id", "fields": {}}
    saved = save_edit(small, "update_handle", same, base=1, author=None)
    assert saved.revision.number == 1


def test_undo_then_redo_restore_the_documents_as_new_revisions(small):
    save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None)
    assert undo(small, base=2, author=None).number == 3
    assert handle_ids(small) == ["search_id"]
    assert redo(small, base=3, author=None).number == 4
    assert handle_ids(small) == ["search_id", "quote"]


def test_undo_at_the_first_revision_is_refused(small):
    with pytest.raises(NothingToUndo, match="nothing to undo"):
        undo(small, base=1, author=None)


def test_undo_on_a_stale_base_raises_and_stores_nothing(small):
    save_edit(small, "add_handle", {"id": "quote"}, base=1, author=None)
    with pytest.raises(StaleRevision):
        undo(small, base=1, author=None)
    assert small.head().number == 2


def test_typed_arguments_must_be_one_json_object_and_say_where_they_are_not():
    assert parse_args('{"id": "x"}') == {"id": "x"}
    with pytest.raises(EditError, match=r"^--args: expected a JSON object$"):
        parse_args("[1]", "--args")


def test_a_typed_value_over_the_size_limit_is_refused_before_it_is_read():
    with pytest.raises(EditError, match=r"^yaml.fields: .* more than the 200,000 allowed"):
        parse_value("a" * 200_001, "yaml.fields", "YAML")
