"""``manage.py chain edit / undo / redo``: the workspace's edits from the shell, one service."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chains.models import Chain

pytestmark = pytest.mark.django_db

SMALL = {
    "id": "small",
    "handles": [{"id": "search_id", "minted_by": "search"}],
    "actions": [{"id": "search", "effect": "read", "output": {"handles": ["search_id"]}}],
}


@pytest.fixture
def small() -> Chain:
    return Chain.objects.store(SMALL, "import").chain


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("chain", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def handle_ids(chain: Chain) -> list[str]:
    return [h["id"] for h in chain.head().document["handles"]]


def test_edit_applies_the_operation_to_the_head_and_prints_the_new_revision(small):
    out, _ = run("edit", "small", "add_handle", "--args", json.dumps({"id": "quote"}))
    assert out == "2\n"
    assert handle_ids(small) == ["search_id", "quote"]
    assert small.head().message == "add handle quote"


def test_an_edit_that_changes_nothing_says_so_and_prints_the_head(small):
    args = json.dumps({"id": "search_id", "fields": {}})
    out, err = run("edit", "small", "update_handle", "--args", args)
    assert out == "1\n"
    assert "nothing changed" in err


def test_a_refused_edit_fails_naming_the_place_and_stores_nothing(small):
    with pytest.raises(CommandError, match=r"edit refused: handles\.nope: "):
        run("edit", "small", "delete_handle", "--args", '{"id": "nope"}')
    assert small.head().number == 1


def test_args_that_are_not_a_json_object_are_refused_naming_the_option(small):
    with pytest.raises(CommandError, match=r"--args: expected a JSON object"):
        run("edit", "small", "add_handle", "--args", "[1]")


def test_an_edit_on_a_stale_base_fails_and_stores_nothing(small):
    run("edit", "small", "add_handle", "--args", '{"id": "theirs"}')
    with pytest.raises(CommandError, match="based on revision 1"):
        run("edit", "small", "add_handle", "--args", '{"id": "mine"}', "--base", "1")
    assert handle_ids(small) == ["search_id", "theirs"]


def test_undo_and_redo_start_from_the_head_and_print_the_revision_they_store(small):
    run("edit", "small", "add_handle", "--args", '{"id": "quote"}')
    assert run("undo", "small") == ("3\n", "")
    assert handle_ids(small) == ["search_id"]
    assert run("redo", "small")[0] == "4\n"
    assert handle_ids(small) == ["search_id", "quote"]


def test_undo_with_nothing_to_undo_fails_saying_so(small):
    with pytest.raises(CommandError, match="nothing to undo"):
        run("undo", "small")


def test_editing_an_unknown_chain_fails():
    with pytest.raises(CommandError, match="no stored chain 'nope'"):
        run("edit", "nope", "add_handle")
