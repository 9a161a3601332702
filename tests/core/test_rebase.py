"""A stale edit beside the head: what it writes, what they changed, and whether the two clash."""

from __future__ import annotations

import doctest

import pytest

from chains.core import edit
from chains.core import rebase as rebase_module
from chains.core.rebase import ABSENT, rebase

from .lint.helpers import chain

BASE = chain(
    """
    id: hotel
    title: Hotel booking
    handles:
      - {id: offer_id, minted_by: search, description: An offer.}
      - {id: quote_token, minted_by: quote, derived_from: [offer_id]}
    actions:
      - {id: search, effect: read, output: {handles: [offer_id]}}
      - {id: quote, effect: mint, input: {handles: [offer_id]}, output: {handles: [quote_token]}}
      - {id: reserve, effect: commit, input: {handles: [quote_token]}, timeout: 30s}
    gates:
      - {id: consent, audience: user, outcomes: {accept: ok}}
    verdict_table:
      - {id: R1, signal: [http:410], verdict: "rewind(to: quote)"}
      - {id: R2, signal: [code:SOLD_OUT], verdict: dead_end}
      - {id: R3, signal: [timeout], verdict: reconcile}
    policy:
      per_step:
        read: {attempts: 3}
    """
)


def theirs(op: str, **args):
    """The head after the other person's edit on the base."""
    return edit.apply(BASE, op, args)


def check(head, op: str, **args):
    return rebase(BASE, head, op, args)


def test_the_module_examples_run():
    assert doctest.testmod(rebase_module).failed == 0


# --- yours beside theirs ------------------------------------------------------------


def test_an_update_shows_each_field_it_writes_with_the_heads_value_and_the_bases():
    head = theirs("update_handle", id="offer_id", fields={"description": "Their words."})
    result = check(head, "update_handle", id="offer_id", fields={"description": "My words."})
    [written] = result.written
    assert (written.element, written.id, written.name) == ("handle", "offer_id", "description")
    assert (written.yours, written.theirs, written.base) == (
        "My words.",
        "Their words.",
        "An offer.",
    )


def test_a_field_the_head_does_not_have_is_absent_on_their_side():
    head = theirs("update_action", id="search", fields={"description": "Finds offers."})
    result = check(head, "update_action", id="reserve", fields={"timeout": None})
    [written] = result.written
    assert (written.yours, written.theirs, written.base) == (ABSENT, "30s", "30s")


def test_the_difference_between_base_and_head_is_listed_for_the_reader():
    head = theirs("delete_row", id="R2")
    result = check(head, "update_chain", fields={"title": "Mine"})
    assert [c.summary for c in result.changes] == ["row R2 removed"]


def test_fields_a_form_posts_unchanged_are_not_yours_and_are_not_posted_again():
    head = theirs("update_handle", id="offer_id", fields={"single_use": True})
    form = {"description": "My words.", "single_use": False, "minted_by": "search"}
    result = check(head, "update_handle", id="offer_id", fields=form)
    assert [w.name for w in result.written] == ["description"]
    assert [c.kind for c in result.conflicts] == ["elsewhere"]  # said, but no clash
    assert result.reapply == {"id": "offer_id", "fields": {"description": "My words."}}
    merged = edit.apply(head, "update_handle", result.reapply).handle("offer_id")
    assert (merged.description, merged.single_use) == ("My words.", True)


def test_a_policy_update_is_posted_again_with_only_the_leaves_it_changed():
    head = theirs("update_policy", fields={"per_step": {"read": {"attempts": 5}}})
    fields = {"per_step": {"read": {"attempts": 3}, "mint": {"attempts": 2}}}
    result = check(head, "update_policy", fields=fields)
    assert result.clashes == ()
    assert result.reapply["fields"] == {"per_step": {"mint": {"attempts": 2}}}


# --- no conflict: one click re-applies it ----------------------------------------------


@pytest.mark.parametrize(
    "their_edit, my_edit",
    [
        # another element entirely
        (
            ("add_handle", {"id": "hold"}),
            ("update_action", {"id": "search", "fields": {"timeout": "5s"}}),
        ),
        # the same chain, another field
        (
            ("update_chain", {"fields": {"title": "T"}}),
            ("update_chain", {"fields": {"description": "d"}}),
        ),
        # the same policy, another leaf
        (
            ("update_policy", {"fields": {"per_step": {"mint": {"attempts": 2}}}}),
            ("add_gate", {"id": "pay_ok", "audience": "user"}),
        ),
        # another edge of the same action
        (
            ("add_edge", {"kind": "consumes", "source": "reserve", "target": "offer_id"}),
            ("add_edge", {"kind": "derived_from", "source": "offer_id", "target": "quote_token"}),
        ),
        # a row added elsewhere, mine updated
        (
            ("add_row", {"fields": {"id": "R9", "signal": ["http:429"], "verdict": "retry"}}),
            ("update_row", {"id": "R1", "fields": {"verdict": "rewind(to: search)"}}),
        ),
        # both made the very same change
        (
            ("update_handle", {"id": "offer_id", "fields": {"single_use": True}}),
            ("update_handle", {"id": "offer_id", "fields": {"single_use": True}}),
        ),
    ],
)
def test_edits_that_touch_nothing_they_changed_are_clean(their_edit, my_edit):
    head = theirs(their_edit[0], **their_edit[1])
    result = check(head, my_edit[0], **my_edit[1])
    assert result.clean, result.conflicts
    assert result.summary().startswith("nothing you edit changed")


def test_a_clean_edit_applied_on_the_head_keeps_both_changes():
    head = theirs("update_chain", fields={"title": "Theirs"})
    assert check(head, "update_chain", fields={"description": "mine"}).clean
    merged = edit.apply(head, "update_chain", {"fields": {"description": "mine"}})
    assert (merged.title, merged.description) == ("Theirs", "mine")


# --- conflicts: the person chooses ------------------------------------------------------


def test_a_field_both_changed_is_a_field_conflict_naming_it():
    head = theirs("update_action", id="reserve", fields={"timeout": "10s"})
    result = check(head, "update_action", id="reserve", fields={"timeout": "60s"})
    [conflict] = result.conflicts
    assert (conflict.kind, conflict.element, conflict.id, conflict.fields) == (
        "field",
        "action",
        "reserve",
        ("timeout",),
    )
    assert conflict.summary == "action reserve: they changed timeout too"


def test_other_fields_of_the_same_element_changed_are_said_but_do_not_clash():
    head = theirs("update_action", id="reserve", fields={"description": "Books it."})
    result = check(head, "update_action", id="reserve", fields={"timeout": "60s"})
    [conflict] = result.conflicts
    assert (conflict.kind, conflict.fields) == ("elsewhere", ("description",))
    assert not result.clean
    assert result.clashes == ()


def test_an_element_they_deleted_is_a_removed_conflict():
    head = theirs("delete_row", id="R2")
    result = check(head, "update_row", id="R2", fields={"verdict": "retry"})
    assert [(c.kind, c.id) for c in result.conflicts] == [("removed", "R2")]
    assert result.written[0].theirs is ABSENT


def test_an_element_they_renamed_is_gone_under_its_old_id():
    head = theirs("update_gate", id="consent", fields={"id": "book_consent"})
    result = check(head, "update_gate", id="consent", fields={"audience": "operator"})
    assert [c.kind for c in result.conflicts] == ["removed"]


def test_adding_an_id_they_added_too_is_an_added_conflict():
    head = theirs("add_action", id="cancel", effect="compensate")
    result = check(head, "add_action", id="cancel", effect="commit")
    assert [c.kind for c in result.conflicts] == ["added"]
    [written] = result.written
    assert written.yours == {"id": "cancel", "effect": "commit"}
    assert written.theirs == {"id": "cancel", "effect": "compensate"}


def test_deleting_what_they_changed_is_a_conflict():
    head = theirs("update_row", id="R3", fields={"verdict": "retry"})
    result = check(head, "delete_row", id="R3")
    [conflict] = result.conflicts
    assert (conflict.kind, conflict.fields) == ("changed", ("verdict",))
    assert result.written[0].yours is ABSENT


def test_deleting_what_they_left_alone_is_clean():
    head = theirs("update_row", id="R1", fields={"verdict": "retry"})
    assert check(head, "delete_row", id="R3").clean


def test_a_policy_leaf_both_set_is_a_conflict_at_its_path():
    head = theirs("update_policy", fields={"per_step": {"read": {"attempts": 5}}})
    result = check(head, "update_policy", fields={"per_step": {"read": {"attempts": 1}}})
    [conflict] = result.conflicts
    assert conflict.fields == ("per_step.read.attempts",)
    assert [(w.yours, w.theirs, w.base) for w in result.written] == [(1, 5, 3)]


def test_the_same_edge_they_removed_while_you_removed_it_too_is_no_conflict():
    args = {"kind": "derived_from", "source": "quote_token", "target": "offer_id"}
    head = theirs("remove_edge", **args)
    assert check(head, "remove_edge", **args).clean


def test_an_edge_beside_one_they_removed_is_clean():
    head = theirs("remove_edge", kind="consumes", source="reserve", target="quote_token")
    mine = {"kind": "consumes", "source": "reserve", "target": "offer_id"}
    result = check(head, "add_edge", **mine)
    assert result.clean
    assert [(w.yours, w.theirs, w.base) for w in result.written] == [(True, False, False)]


def test_an_edge_whose_end_they_deleted_is_a_removed_conflict():
    gone = theirs("update_action", id="reserve", fields={"id": "book"})
    args = {"kind": "consumes", "source": "reserve", "target": "offer_id"}
    result = rebase(BASE, gone, "add_edge", args)
    assert [(c.kind, c.element, c.id) for c in result.conflicts] == [
        ("removed", "action", "reserve")
    ]


def test_moving_a_row_after_they_reordered_the_rows_is_a_conflict():
    head = theirs("move_row", id="R3", index=0)
    result = check(head, "move_row", id="R1", index=2)
    [written] = result.written
    assert (written.name, written.yours, written.theirs, written.base) == ("position", 2, 1, 0)
    assert [c.kind for c in result.conflicts] == ["field"]


def test_rows_without_an_id_are_found_by_position():
    base = chain(
        """
        id: c
        verdict_table:
          - {signal: [http:410], verdict: retry}
        """
    )
    head = edit.apply(base, "update_row", {"id": "#1", "fields": {"verdict": "reconcile"}})
    result = rebase(base, head, "update_row", {"id": "#1", "fields": {"verdict": "dead_end"}})
    assert result.written[0].theirs == "reconcile"
    assert [c.kind for c in result.conflicts] == ["field"]


@pytest.mark.parametrize("op, args", [("fly", {}), ("update_action", {"id": 3}), ("add_edge", [])])
def test_an_edit_it_cannot_read_touches_nothing(op, args):
    result = rebase(BASE, BASE, op, args)
    assert (result.written, result.conflicts) == ((), ())


def test_the_summary_joins_every_conflict_for_an_api_message():
    head = theirs("update_action", id="reserve", fields={"timeout": "10s", "description": "x"})
    result = check(head, "update_action", id="reserve", fields={"timeout": "60s"})
    assert result.summary() == (
        "action reserve: they changed timeout too; "
        "action reserve: they changed description (fields you did not edit)"
    )
