"""The YAML editor's edits: with ``replace=True`` the fields posted are the element's every key."""

from __future__ import annotations

import pytest

from chains.core import edit
from chains.core.model import ChainSpec

CHAIN = ChainSpec.model_validate(
    {
        "id": "c",
        "handles": [
            {"id": "quote_token", "minted_by": "quote", "single_use": True, "notes": ["old"]}
        ],
        "actions": [
            {"id": "quote", "effect": "mint", "output": {"handles": ["quote_token"]}},
            {"id": "book", "effect": "commit", "timeout": "30s", "notes": ["stale quick fix"]},
        ],
        "gates": [{"id": "consent", "audience": "user", "timeout": {"after": "10m"}}],
        "verdict_table": [
            {"id": "R1", "signal": ["timeout"], "verdict": "reconcile", "no_side_effect": True}
        ],
    }
)


def test_a_key_removed_in_the_editor_is_gone_from_the_action():
    new = edit.update_action(CHAIN, "book", {"id": "book", "effect": "commit"}, replace=True)
    assert new.action("book").notes == []
    assert new.action("book").timeout is None


def test_an_update_without_replace_keeps_the_keys_it_does_not_name():
    new = edit.update_action(CHAIN, "book", {"effect": "commit"})
    assert new.action("book").notes == ["stale quick fix"]


def test_a_key_removed_in_the_editor_is_gone_from_the_gate():
    new = edit.update_gate(CHAIN, "consent", {"audience": "user"}, replace=True)
    assert new.gate("consent").timeout is None


def test_a_key_removed_in_the_editor_is_gone_from_the_row():
    row = {"id": "R1", "signal": ["timeout"], "verdict": "reconcile"}
    new = edit.update_row(CHAIN, "R1", row, replace=True)
    assert new.verdict_table[0].no_side_effect is False


def test_a_handle_replaced_without_minted_by_leaves_no_action_minting_it():
    new = edit.update_handle(CHAIN, "quote_token", {"single_use": True}, replace=True)
    assert new.handle("quote_token").minted_by is None
    assert new.handle("quote_token").notes == []
    assert new.action("quote").output.handles == []


def test_a_replace_renames_like_an_update():
    fields = {"id": "reserve", "effect": "commit"}
    assert edit.update_action(CHAIN, "book", fields, replace=True).action("reserve") is not None


def test_replace_must_be_true_or_false():
    with pytest.raises(edit.EditError, match="replace must be true or false"):
        edit.apply(CHAIN, "update_gate", {"id": "consent", "fields": {}, "replace": "yes"})


def test_an_output_handle_chosen_on_the_action_is_minted_by_it():
    new = edit.update_action(CHAIN, "book", {"output": {"handles": ["quote_token"]}})
    assert new.handle("quote_token").minted_by == "book"
    assert new.action("quote").output.handles == []


def test_an_output_handle_dropped_from_the_action_is_minted_by_nothing():
    new = edit.update_action(CHAIN, "quote", {"output": {"handles": []}})
    assert new.handle("quote_token").minted_by is None


def test_a_handle_minted_outside_the_chain_keeps_its_origin_on_update():
    new = edit.update_handle(CHAIN, "quote_token", {"minted_by": "external(scope 1 book_stay)"})
    assert new.handle("quote_token").minted_by == "external(scope 1 book_stay)"
    assert new.action("quote").output.handles == []
