"""``manage.py chain edit / undo / redo``: the workspace's edits from the shell, one service."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chains.models import Chain

pytestmark = pytest.mark.django_db

K = "flight_roundtrip"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("chain", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def handle_ids(chain: Chain) -> list[str]:
    return [h["id"] for h in chain.head().document["handles"]]


def test_edit_applies_the_operation_to_the_head_and_prints_the_new_revision(flight):
    out, _ = run("edit", K, "add_handle", "--args", json.dumps({"id": "quote"}))
    assert out == "2\n"
    assert handle_ids(flight)[-1] == "quote"
    assert flight.head().message == "add handle quote"


def test_an_edit_that_changes_nothing_says_so_and_prints_the_head(flight):
    args = json.dumps({"id": "search_token", "fields": {}})
    out, err = run("edit", K, "update_handle", "--args", args)
    assert out == "1\n"
    assert "nothing changed" in err


def test_a_refused_edit_fails_naming_the_place_and_stores_nothing(flight):
    with pytest.raises(CommandError, match=r"edit refused: handles\[nope\]: "):
        run("edit", K, "delete_handle", "--args", '{"id": "nope"}')
    assert flight.head().number == 1


def test_args_that_are_not_a_json_object_are_refused_naming_the_option(flight):
    with pytest.raises(CommandError, match=r"--args: expected a JSON object"):
        run("edit", K, "add_handle", "--args", "[1]")


def test_an_edit_on_a_stale_base_fails_and_stores_nothing(flight):
    run("edit", K, "add_handle", "--args", '{"id": "theirs"}')
    with pytest.raises(CommandError, match="based on revision 1"):
        run("edit", K, "add_handle", "--args", '{"id": "mine"}', "--base", "1")
    assert "mine" not in handle_ids(flight)
    assert flight.head().number == 2


def test_undo_and_redo_start_from_the_head_and_print_the_revision_they_store(flight):
    run("edit", K, "add_handle", "--args", '{"id": "quote"}')
    assert run("undo", K) == ("3\n", "")
    assert "quote" not in handle_ids(flight)
    assert run("redo", K)[0] == "4\n"
    assert "quote" in handle_ids(flight)


def test_undo_with_nothing_to_undo_fails_saying_so(flight):
    with pytest.raises(CommandError, match="nothing to undo"):
        run("undo", K)


def test_editing_an_unknown_chain_fails():
    with pytest.raises(CommandError, match="no stored chain 'nope'"):
        run("edit", "nope", "add_handle")
