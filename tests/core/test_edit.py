"""Edits of a chain document: each op, its refusals, renames, and the dispatcher."""

from __future__ import annotations

import doctest
import functools
from pathlib import Path

import pytest

from chains.core import edit, formats
from chains.core.edit import OPS, EditError, apply
from chains.core.formats import to_document
from chains.core.lint import lint
from chains.core.model import ChainSpec, main_steps

from .lint.helpers import chain

TRIP = """
    id: trip
    handles:
      - {id: search_id, minted_by: search, staleness: {detect: [http:410], refresh: search}}
      - {id: pick, minted_by: choose, derived_from: [search_id], rematch: {key: [flight]}}
      - {id: booking, minted_by: book, derived_from: [pick]}
      - {id: voucher, minted_by: external}
    actions:
      - {id: search, effect: read, input: {intent: [dates]}, output: {handles: [search_id]}}
      - {id: choose, effect: select, input: {handles: [search_id]}, output: {handles: [pick]}}
      - {id: get_trip, effect: read}
      - id: book
        effect: commit
        entry_gate: consent
        input: {handles: [pick, voucher]}
        output: {handles: [booking]}
        confirmation: {probe: get_trip}
        compensation: {action: cancel}
        preconditions: [{when: price changed, verdict: "gate(consent)"}]
      - {id: cancel, effect: compensate, input: {handles: [booking]},
         confirmation: {probe: get_trip}}
    gates:
      - id: consent
        audience: user
        outcomes: {accept: ok, decline: "rewind(to: search)"}
    verdict_table:
      - {id: F1, signal: [http:410], scope: {consumers_of: [search_id]},
         verdict: "rewind(to: search)"}
      - {id: F2, signal: [code:PRICE_CHANGED], scope: [book], verdict: "gate(consent)"}
      - {id: F3, signal: [http:404], scope: [get_trip], verdict: "reselect(to: choose)"}
    independence:
      - {handles: [pick, voucher], note: vouchers are issued per customer}
    policy:
      per_step:
        commit: {attempts: 1}
        book: {attempts: 1}
      per_chain: {compensation_order: [cancel]}
"""


@pytest.fixture
def doc():
    return chain(TRIP)


def refused(call, *args, **kwargs) -> EditError:
    with pytest.raises(EditError) as info:
        call(*args, **kwargs)
    return info.value


def test_the_module_doctests_pass():
    assert doctest.testmod(edit, optionflags=doctest.ELLIPSIS).failed == 0


# --- the input is never changed ----------------------------------------------


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("add_action", {"id": "pay", "effect": "commit"}),
        ("update_action", {"id": "get_trip", "fields": {"id": "lookup"}}),
        ("add_handle", {"id": "seat", "minted_by": "search"}),
        ("update_handle", {"id": "search_id", "fields": {"id": "results"}}),
        ("delete_handle", {"id": "voucher"}),
        ("add_edge", {"kind": "mints", "source": "search", "target": "booking"}),
        ("remove_edge", {"kind": "derived_from", "source": "pick", "target": "search_id"}),
        ("add_row", {"fields": {"id": "F4", "signal": ["http:409"], "verdict": "retry"}}),
        ("duplicate_row", {"id": "F1"}),
        ("move_row", {"id": "F3", "index": 0}),
        ("delete_row", {"id": "F2"}),
        ("update_gate", {"id": "consent", "fields": {"id": "approval"}}),
        ("update_policy", {"fields": {"per_step": {"commit": None}}}),
        ("update_chain", {"fields": {"title": "Trip"}}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_an_edit_leaves_the_input_document_unchanged(doc, op, args):
    before = to_document(doc)
    after = apply(doc, op, args)
    assert to_document(doc) == before
    assert to_document(after) != before


# --- actions -----------------------------------------------------------------


def test_adding_an_action_appends_it_with_its_fields(doc):
    new = edit.add_action(doc, "pay", "commit", description="charge the card")
    assert new.actions[-1].id == "pay"
    assert new.actions[-1].effect == "commit"
    assert new.actions[-1].description == "charge the card"


def test_a_new_action_reads_by_default(doc):
    assert edit.add_action(doc, "peek").action("peek").effect == "read"


def test_adding_an_action_with_a_taken_id_is_refused(doc):
    err = refused(edit.add_action, doc, "book", "commit")
    assert err.path == "actions[book]"
    assert err.message == "an action with id 'book' already exists"


def test_an_action_with_an_unknown_effect_is_refused_with_the_path_of_the_field(doc):
    err = refused(edit.add_action, doc, "pay", "write")
    assert err.path == "actions[pay].effect"
    assert "expected read | mint | commit" in err.message


def test_an_unknown_action_field_is_refused_instead_of_kept_in_extras(doc):
    err = refused(edit.add_action, doc, "pay", "commit", colour="red")
    assert err.path == "actions[pay].colour"
    assert "action has no field 'colour'" in err.message


@pytest.mark.parametrize("bad", ["", "two words", "a,b", "#1", "book\n"])
def test_an_action_id_must_be_well_formed(doc, bad):
    err = refused(edit.add_action, doc, bad)
    assert err.path == "id"


@pytest.mark.parametrize("reserved", ["external", "none", "commit"])
def test_an_action_may_not_take_an_id_the_document_already_gives_a_meaning(doc, reserved):
    err = refused(edit.add_action, doc, reserved)
    assert reserved in err.message


def test_updating_an_action_replaces_only_the_given_keys(doc):
    new = edit.update_action(doc, "book", {"timeout": "30s", "entry_gate": None})
    book = new.action("book")
    assert str(book.timeout) == "30s"
    assert book.entry_gate is None
    assert book.confirmation.probe == "get_trip"


def test_renaming_an_action_updates_every_reference_to_it(doc):
    new = edit.update_action(doc, "book", {"id": "reserve"})
    new = edit.update_action(new, "search", {"id": "find"})
    new = edit.update_action(new, "cancel", {"id": "release"})
    new = edit.update_action(new, "get_trip", {"id": "lookup"})
    assert [a.id for a in new.actions] == ["find", "choose", "lookup", "reserve", "release"]
    assert new.handle("search_id").minted_by == "find"
    assert new.handle("search_id").staleness.refresh == "find"
    assert new.handle("booking").minted_by == "reserve"
    assert new.action("reserve").confirmation.probe == "lookup"
    assert new.action("release").confirmation.probe == "lookup"
    assert new.action("reserve").compensation.action == "release"
    assert [str(r.verdict) for r in new.verdict_table][0] == "rewind(to: find)"
    assert new.verdict_table[1].scope.steps == ["reserve"]
    assert new.verdict_table[2].scope.steps == ["lookup"]
    assert str(new.gate("consent").outcomes["decline"].verdict) == "rewind(to: find)"
    assert list(new.policy.per_step) == ["commit", "reserve"]
    assert new.policy.per_chain.compensation_order == ["release"]


def test_renaming_an_action_to_a_taken_id_is_refused(doc):
    err = refused(edit.update_action, doc, "get_trip", {"id": "search"})
    assert err.message == "an action with id 'search' already exists"


def test_a_rename_to_a_taken_id_is_refused_at_the_id_that_was_typed(doc):
    err = refused(edit.update_action, doc, "get_trip", {"id": "search"})
    assert err.path == "actions[get_trip].id"


def test_a_row_rename_to_a_taken_id_is_refused_at_the_id_that_was_typed(doc):
    err = refused(edit.update_row, doc, "F2", {"id": "F1"})
    assert err.path == "verdict_table[F2].id"


def test_editing_a_missing_action_is_refused_naming_it(doc):
    err = refused(edit.update_action, doc, "ghost", {"description": "x"})
    assert (err.path, err.message) == ("actions[ghost]", "action 'ghost' does not exist")


def test_deleting_an_unused_action_removes_it(doc):
    doc = edit.delete_row(doc, "F3")
    doc = edit.update_action(doc, "book", {"confirmation": {"by_key_replay": True}})
    doc = edit.update_action(doc, "cancel", {"confirmation": {"by_key_replay": True}})
    assert edit.delete_action(doc, "get_trip").action("get_trip") is None


def test_deleting_a_used_action_lists_every_place_that_uses_it(doc):
    err = refused(edit.delete_action, doc, "get_trip")
    assert err.path == "actions[get_trip]"
    assert err.message == (
        "action 'get_trip' is still used by: actions[book].confirmation.probe, "
        "actions[cancel].confirmation.probe, verdict_table[F3].scope.steps"
    )


def test_deleting_an_action_does_not_silently_orphan_the_handles_it_mints(doc):
    err = refused(edit.delete_action, doc, "search")
    assert "handles[search_id].minted_by" in err.message
    assert "handles[search_id].staleness.refresh" in err.message


def test_a_per_step_policy_override_keeps_its_action_alive(doc):
    doc = edit.update_action(doc, "cancel", {"compensation": None})
    doc = edit.update_action(doc, "book", {"compensation": None})
    doc = edit.update_policy(doc, {"per_chain": {"compensation_order": None}})
    doc = edit.add_action(doc, "spare")
    doc = edit.update_policy(doc, {"per_step": {"spare": {"attempts": 2}}})
    assert refused(edit.delete_action, doc, "spare").message.endswith("policy.per_step.spare")


# --- handles -----------------------------------------------------------------


def test_adding_a_handle_minted_by_an_action_adds_it_to_the_action_output(doc):
    new = edit.add_handle(doc, "quote", minted_by="choose", derived_from=["pick"])
    assert new.handle("quote").minted_by == "choose"
    assert new.action("choose").output.handles == ["pick", "quote"]


def test_adding_an_external_handle_touches_no_action(doc):
    new = edit.add_handle(doc, "coupon", minted_by="external")
    assert [a.output.handles for a in new.actions] == [a.output.handles for a in doc.actions]


def test_a_handle_minted_by_an_unknown_action_is_refused(doc):
    err = refused(edit.add_handle, doc, "quote", minted_by="pricing")
    assert (err.path, err.message) == (
        "handles[quote].minted_by",
        "action 'pricing' does not exist",
    )


def test_renaming_a_handle_updates_every_reference_to_it(doc):
    doc = edit.update_action(doc, "book", {"mutates": "pick"})
    new = edit.update_handle(doc, "pick", {"id": "selection"})
    assert [h.id for h in new.handles] == ["search_id", "selection", "booking", "voucher"]
    assert new.handle("booking").derived_from == ["selection"]
    assert new.action("choose").output.handles == ["selection"]
    assert new.action("book").input.handles == ["selection", "voucher"]
    assert new.action("book").mutates == "selection"
    assert new.independence[0].handles == ["selection", "voucher"]


def test_renaming_a_handle_updates_row_scopes(doc):
    new = edit.update_handle(doc, "search_id", {"id": "results"})
    assert new.verdict_table[0].scope.consumers_of == ["results"]


def test_a_new_minted_by_moves_the_handle_between_action_outputs(doc):
    new = edit.update_handle(doc, "pick", {"minted_by": "search"})
    assert new.action("choose").output.handles == []
    assert new.action("search").output.handles == ["search_id", "pick"]


def test_updating_a_handle_into_a_derived_from_cycle_is_refused(doc):
    err = refused(edit.update_handle, doc, "search_id", {"derived_from": ["booking"]})
    assert err.path == "handles[search_id].derived_from"
    assert "cycle" in err.message and "booking" in err.message


def test_deleting_a_handle_removes_the_edges_to_it(doc):
    new = edit.delete_handle(edit.delete_row(doc, "F1"), "search_id")
    assert new.handle("search_id") is None
    assert new.handle("pick").derived_from == []
    assert new.action("search").output.handles == []
    assert new.action("choose").input.handles == []


def test_deleting_a_handle_drops_the_independence_answers_about_it(doc):
    assert edit.delete_handle(doc, "voucher").independence == []


def test_deleting_a_handle_a_row_scope_or_mutates_names_is_refused(doc):
    doc = edit.update_action(doc, "cancel", {"mutates": "search_id"})
    err = refused(edit.delete_handle, doc, "search_id")
    assert err.path == "handles[search_id]"
    assert err.message == (
        "handle 'search_id' is still used by: actions[cancel].mutates, "
        "verdict_table[F1].scope.consumers_of"
    )


# --- edges -------------------------------------------------------------------


def test_a_derived_from_edge_adds_the_parent_to_the_child(doc):
    new = edit.add_edge(doc, "derived_from", "booking", "voucher")
    assert new.handle("booking").derived_from == ["pick", "voucher"]


def test_a_consumes_edge_adds_the_handle_to_the_action_input(doc):
    new = edit.add_edge(doc, "consumes", "get_trip", "booking")
    assert new.action("get_trip").input.handles == ["booking"]


def test_a_mints_edge_sets_minted_by_and_the_action_output(doc):
    doc = edit.add_handle(doc, "receipt")
    new = edit.add_edge(doc, "mints", "book", "receipt")
    assert new.handle("receipt").minted_by == "book"
    assert new.action("book").output.handles == ["booking", "receipt"]


def test_a_mints_edge_moves_the_handle_away_from_its_old_minter(doc):
    new = edit.add_edge(doc, "mints", "get_trip", "booking")
    assert new.handle("booking").minted_by == "get_trip"
    assert new.action("book").output.handles == []
    assert new.action("get_trip").output.handles == ["booking"]


@pytest.mark.parametrize(
    ("kind", "source", "target"),
    [
        ("derived_from", "pick", "search_id"),
        ("consumes", "choose", "search_id"),
        ("mints", "search", "search_id"),
    ],
)
def test_an_existing_edge_cannot_be_added_again(doc, kind, source, target):
    err = refused(edit.add_edge, doc, kind, source, target)
    assert err.message.startswith("edge already exists")


def test_a_handle_cannot_derive_from_itself(doc):
    err = refused(edit.add_edge, doc, "derived_from", "pick", "pick")
    assert (err.path, err.message) == (
        "handles[pick].derived_from",
        "handle 'pick' cannot derive from itself",
    )


def test_an_edge_that_closes_a_cycle_is_refused_naming_the_cycle(doc):
    err = refused(edit.add_edge, doc, "derived_from", "search_id", "booking")
    assert err.path == "handles[search_id].derived_from"
    assert err.message.endswith("cycle booking → search_id → pick → booking")


@pytest.mark.parametrize(
    ("kind", "source", "target", "check"),
    [
        ("derived_from", "pick", "search_id", lambda d: d.handle("pick").derived_from == []),
        ("consumes", "book", "voucher", lambda d: d.action("book").input.handles == ["pick"]),
        (
            "mints",
            "book",
            "booking",
            lambda d: (
                d.action("book").output.handles == [] and d.handle("booking").minted_by is None
            ),
        ),
    ],
)
def test_removing_an_edge_takes_it_out_of_the_document(doc, kind, source, target, check):
    assert check(edit.remove_edge(doc, kind, source, target))


@pytest.mark.parametrize(
    ("kind", "source", "target"),
    [
        ("derived_from", "booking", "search_id"),
        ("consumes", "search", "pick"),
        ("mints", "search", "pick"),
    ],
)
def test_removing_a_missing_edge_is_refused(doc, kind, source, target):
    err = refused(edit.remove_edge, doc, kind, source, target)
    assert err.message.startswith(f"there is no edge {source} ")


def test_an_unknown_edge_kind_is_refused_naming_the_kinds(doc):
    err = refused(edit.add_edge, doc, "feeds", "search", "pick")
    assert err.path == "kind"
    assert "derived_from, consumes, mints" in err.message


def test_an_edge_to_an_unknown_handle_is_refused(doc):
    err = refused(edit.add_edge, doc, "consumes", "book", "ghost")
    assert (err.path, err.message) == ("handles[ghost]", "handle 'ghost' does not exist")


# --- verdict rows --------------------------------------------------------------

ROW = {"id": "F4", "signal": ["http:409"], "verdict": "retry"}


def test_a_new_row_is_appended_when_no_index_is_given(doc):
    assert [r.id for r in edit.add_row(doc, ROW).verdict_table] == ["F1", "F2", "F3", "F4"]


def test_a_new_row_is_inserted_at_its_index(doc):
    assert [r.id for r in edit.add_row(doc, ROW, 1).verdict_table] == ["F1", "F4", "F2", "F3"]


def test_a_new_row_needs_an_id(doc):
    err = refused(edit.add_row, doc, {"verdict": "retry"})
    assert err.path == "fields.id"


def test_a_new_row_with_a_taken_id_is_refused(doc):
    err = refused(edit.add_row, doc, {**ROW, "id": "F2"})
    assert (err.path, err.message) == (
        "verdict_table[F2]",
        "a verdict row with id 'F2' already exists",
    )


@pytest.mark.parametrize("index", [-1, 4, True, "1"])
def test_a_new_row_at_an_impossible_index_is_refused(doc, index):
    assert refused(edit.add_row, doc, ROW, index).path == "index"


def test_updating_a_row_replaces_the_given_keys(doc):
    new = edit.update_row(doc, "F3", {"verdict": "dead_end(reason: gone)", "note": "checked"})
    assert str(new.verdict_table[2].verdict) == "dead_end(reason: gone)"
    assert new.verdict_table[2].signal == ["http:404"]


def test_an_unreadable_verdict_is_refused_with_the_path_of_the_field(doc):
    err = refused(edit.update_row, doc, "F3", {"verdict": "rewind"})
    assert err.path == "verdict_table[F3].verdict"
    assert "rewind needs a target step" in err.message


def test_duplicating_a_row_inserts_a_copy_right_after_it(doc):
    new = edit.duplicate_row(doc, "F1")
    assert [r.id for r in new.verdict_table] == ["F1", "F1_copy", "F2", "F3"]
    assert new.verdict_table[1].signal == new.verdict_table[0].signal


def test_duplicating_a_row_again_picks_the_next_free_id(doc):
    new = edit.duplicate_row(edit.duplicate_row(doc, "F1"), "F1")
    assert [r.id for r in new.verdict_table][:3] == ["F1", "F1_copy2", "F1_copy"]


def test_duplicating_a_row_under_a_given_id(doc):
    assert edit.duplicate_row(doc, "F2", "F2b").verdict_table[2].id == "F2b"


def test_deleting_a_row_removes_it(doc):
    assert [r.id for r in edit.delete_row(doc, "F2").verdict_table] == ["F1", "F3"]


@pytest.mark.parametrize(
    ("row", "index", "order"),
    [
        ("F3", 0, ["F3", "F1", "F2"]),
        ("F1", 2, ["F2", "F3", "F1"]),
        ("F1", 1, ["F2", "F1", "F3"]),
        ("F2", 1, ["F1", "F2", "F3"]),
    ],
)
def test_moving_a_row_puts_it_at_the_index_among_the_others(doc, row, index, order):
    assert [r.id for r in edit.move_row(doc, row, index).verdict_table] == order


@pytest.mark.parametrize("index", [-1, 3, 1.5, None])
def test_moving_a_row_out_of_bounds_is_refused(doc, index):
    err = refused(edit.move_row, doc, "F1", index)
    assert err.path == "index"


def test_moving_a_missing_row_is_refused(doc):
    assert refused(edit.move_row, doc, "F9", 0).message == "verdict row 'F9' does not exist"


def test_a_row_without_an_id_is_addressed_by_its_position():
    doc = chain("""
        id: c
        verdict_table:
          - {signal: [http:410], verdict: retry}
          - {signal: [http:404], verdict: retry}
    """)
    new = edit.update_row(doc, "#2", {"note": "second"})
    assert new.verdict_table[1].note == "second"


# --- gates -------------------------------------------------------------------


def test_adding_a_gate_appends_it(doc):
    new = edit.add_gate(doc, "review", audience="operator", outcomes={"done": "ok"})
    assert new.gates[-1].id == "review"
    assert new.gates[-1].audience == "operator"


def test_a_gate_without_an_audience_is_refused_with_the_path_of_the_field(doc):
    err = refused(edit.add_gate, doc, "review")
    assert (err.path, err.message) == ("gates[review].audience", "required field is missing")


def test_renaming_a_gate_updates_its_verdicts_and_entry_gates(doc):
    new = edit.update_gate(doc, "consent", {"id": "approval"})
    assert new.action("book").entry_gate == "approval"
    assert str(new.action("book").preconditions[0].verdict) == "gate(approval)"
    assert str(new.verdict_table[1].verdict) == "gate(approval)"


def test_deleting_a_raised_gate_lists_every_place_that_raises_it(doc):
    err = refused(edit.delete_gate, doc, "consent")
    assert err.message == (
        "gate 'consent' is still used by: actions[book].entry_gate, "
        "actions[book].preconditions[#1].verdict, verdict_table[F2].verdict"
    )


def test_deleting_an_unused_gate_removes_it(doc):
    doc = edit.add_gate(doc, "review", audience="operator")
    assert [g.id for g in edit.delete_gate(doc, "review").gates] == ["consent"]


# --- policy and the chain ----------------------------------------------------


def test_updating_the_policy_merges_into_what_is_there(doc):
    new = edit.update_policy(doc, {"per_step": {"commit": {"unkeyed": {"attempts": 1}}}})
    assert new.policy.per_step["commit"].attempts == 1
    assert new.policy.per_step["commit"].unkeyed.attempts == 1
    assert "book" in new.policy.per_step


def test_a_none_value_removes_a_policy_key(doc):
    new = edit.update_policy(doc, {"per_step": {"book": None}})
    assert list(new.policy.per_step) == ["commit"]


def test_an_empty_policy_mapping_changes_nothing(doc):
    # The policy tab's add-entry form with no action chosen posts ``per_step: {}``.
    new = edit.update_policy(doc, {"per_step": {}})
    assert list(new.policy.per_step) == list(doc.policy.per_step)


def test_a_policy_value_of_the_wrong_type_is_refused_with_its_path(doc):
    err = refused(edit.update_policy, doc, {"per_chain": {"max_rewinds": "many"}})
    assert err.path == "policy.per_chain.max_rewinds"


def test_updating_the_chain_sets_its_own_fields(doc):
    new = edit.update_chain(doc, {"title": "Round trip", "run_key": "booking request id"})
    assert (new.title, new.run_key) == ("Round trip", "booking request id")


@pytest.mark.parametrize("key", ["actions", "handles", "gates", "verdict_table", "policy"])
def test_updating_the_chain_refuses_collections_that_have_their_own_edits(doc, key):
    err = refused(edit.update_chain, doc, {key: []})
    assert err.path == key
    assert "use " in err.message


# --- apply -------------------------------------------------------------------


def test_every_edit_is_available_by_name():
    helpers = ("OPS", "EditError", "apply", "dropped_with_handle")
    assert set(OPS) == {name for name in edit.__all__ if name not in helpers}


def test_apply_runs_the_named_edit(doc):
    assert apply(doc, "delete_row", {"id": "F1"}).verdict_table[0].id == "F2"


def test_apply_refuses_an_unknown_op_naming_the_known_ones(doc):
    err = refused(apply, doc, "rename_action", {})
    assert err.path == "op"
    assert "add_action" in err.message and "update_chain" in err.message


def test_apply_refuses_an_argument_the_edit_does_not_take(doc):
    err = refused(apply, doc, "delete_row", {"id": "F1", "force": True})
    assert err.path == "force"
    assert "delete_row takes no argument 'force'" in err.message


def test_apply_refuses_a_missing_argument(doc):
    err = refused(apply, doc, "move_row", {"id": "F1"})
    assert (err.path, err.message) == ("index", "move_row needs index")


def test_apply_refuses_args_that_are_not_an_object(doc):
    assert refused(apply, doc, "delete_row", ["F1"]).path == "args"


@pytest.mark.parametrize(
    ("op", "args", "path"),
    [
        ("add_action", {"id": ["pay"]}, "id"),
        ("add_action", {"id": "pay", "effect": 3}, "effect"),
        ("update_action", {"id": "book", "fields": "timeout"}, "fields"),
        ("update_action", {"id": "book", "fields": {"id": None}}, "actions[book].id"),
        ("add_handle", {"id": "h", "minted_by": ["book"]}, "minted_by"),
        ("delete_handle", {"id": 7}, "id"),
        ("add_edge", {"kind": "mints", "source": {"id": "book"}, "target": "pick"}, "source"),
        ("remove_edge", {"kind": None, "source": "book", "target": "pick"}, "kind"),
        ("add_row", {"fields": [ROW]}, "fields"),
        ("duplicate_row", {"id": "F1", "new_id": 5}, "new_id"),
        ("move_row", {"id": "F1", "index": "0"}, "index"),
        ("move_action", {"id": "book", "index": "0"}, "index"),
        ("update_policy", {"fields": None}, "fields"),
        ("update_chain", {"fields": {"title": ["a"]}}, "title"),
    ],
)
def test_apply_refuses_arguments_of_the_wrong_type(doc, op, args, path):
    assert refused(apply, doc, op, args).path == path


# A valid call of every edit on TRIP, to spoil one argument at a time.
VALID_CALLS = {
    "add_action": {"id": "pay", "effect": "commit", "description": "charge"},
    "update_action": {"id": "book", "fields": {"timeout": "30s"}},
    "move_action": {"id": "book", "index": 0},
    "delete_action": {"id": "cancel"},
    "add_handle": {"id": "seat", "minted_by": "search", "derived_from": ["search_id"]},
    "update_handle": {"id": "pick", "fields": {"single_use": True}},
    "delete_handle": {"id": "voucher"},
    "add_edge": {"kind": "consumes", "source": "get_trip", "target": "booking"},
    "remove_edge": {"kind": "consumes", "source": "book", "target": "voucher"},
    "add_row": {"fields": ROW, "index": 0},
    "update_row": {"id": "F1", "fields": {"note": "n"}},
    "duplicate_row": {"id": "F1", "new_id": "F1b"},
    "delete_row": {"id": "F1"},
    "move_row": {"id": "F1", "index": 1},
    "add_gate": {"id": "review", "audience": "operator"},
    "update_gate": {"id": "consent", "fields": {"description": "d"}},
    "delete_gate": {"id": "consent"},
    "update_policy": {"fields": {"per_chain": {"max_rewinds": 2}}},
    "update_chain": {"fields": {"title": "t"}},
}
JUNK = [None, True, 3, 2.5, "", "x", [], ["x"], {}, {"x": 1}]


def test_there_is_a_valid_call_for_every_edit():
    assert set(VALID_CALLS) == set(OPS)


@pytest.mark.parametrize(
    ("op", "arg"), [(op, arg) for op, args in VALID_CALLS.items() for arg in args]
)
def test_any_json_value_in_any_argument_gives_a_chain_or_an_edit_error(doc, op, arg):
    for junk in JUNK:
        try:
            result = apply(doc, op, {**VALID_CALLS[op], arg: junk})
        except EditError as err:
            assert err.message
        else:
            assert isinstance(result, type(doc))


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("update_action", {"id": "a", "fields": {}}),
        ("delete_action", {"id": "a"}),
        ("update_handle", {"id": "h", "fields": {}}),
        ("delete_handle", {"id": "h"}),
        ("add_edge", {"kind": "consumes", "source": "a", "target": "h"}),
        ("remove_edge", {"kind": "mints", "source": "a", "target": "h"}),
        ("remove_edge", {"kind": "derived_from", "source": "h", "target": "g"}),
        ("update_row", {"id": "R1", "fields": {}}),
        ("duplicate_row", {"id": "R1"}),
        ("delete_row", {"id": "#1"}),
        ("move_row", {"id": "R1", "index": 0}),
        ("update_gate", {"id": "g", "fields": {}}),
        ("delete_gate", {"id": "g"}),
    ],
)
def test_addressing_an_element_of_an_empty_chain_is_refused(op, args):
    err = refused(apply, ChainSpec(id="c"), op, args)
    assert err.message.endswith("does not exist")


def test_apply_refuses_something_that_is_not_a_chain():
    assert refused(apply, {"id": "c"}, "add_action", {"id": "a"}).path == "doc"


# --- renames on the real fixtures ----------------------------------------------

FIXTURES = sorted((Path(__file__).parents[2] / "fixtures").glob("*.yaml"))


@functools.cache
def parsed(path: Path) -> ChainSpec:
    """A fixture file's chain, parsed once (``apply`` returns a new chain, never changes it)."""
    (doc,) = formats.load(path.read_bytes(), filename=path.name).chains
    return doc


def _renames() -> list:
    out = []
    for path in FIXTURES:
        doc = parsed(path)
        for op, elements in (
            ("update_action", doc.actions),
            ("update_handle", doc.handles),
            ("update_gate", doc.gates),
        ):
            out += [pytest.param(path, op, e.id, id=f"{path.stem}-{e.id}") for e in elements]
    return out


@pytest.mark.parametrize(("path", "op", "old"), _renames())
def test_renaming_any_fixture_element_leaves_the_findings_as_they_were(path, op, old):
    doc = parsed(path)
    renamed = apply(doc, op, {"id": old, "fields": {"id": f"{old}_x"}})
    before = sorted((f.rule, f.severity) for f in lint(doc).findings)
    assert sorted((f.rule, f.severity) for f in lint(renamed).findings) == before


def test_renaming_a_replacement_updates_the_original_that_names_it():
    doc = ChainSpec.model_validate(
        {
            "id": "rebook",
            "actions": [
                {
                    "id": "book_standard",
                    "effect": "commit",
                    "compensation": {"action": "cancel", "replaced_by": "book_suite"},
                },
                {"id": "book_suite", "effect": "commit"},
                {"id": "cancel", "effect": "compensate"},
            ],
        }
    )
    new = edit.update_action(doc, "book_suite", {"id": "book_upgrade"})
    assert new.action("book_standard").compensation.replaced_by == "book_upgrade"


def test_moving_an_action_changes_the_order_of_the_steps_a_run_walks(doc):
    steps = main_steps(doc)
    moved = apply(doc, "move_action", {"id": steps[-1], "index": 0})
    assert main_steps(moved) == [steps[-1], *steps[:-1]]


def test_moving_an_action_past_the_end_is_refused_naming_the_index(doc):
    assert refused(apply, doc, "move_action", {"id": "book", "index": 99}).path == "index"


def test_moving_an_action_that_does_not_exist_is_refused_naming_it(doc):
    assert refused(apply, doc, "move_action", {"id": "nope", "index": 0}).path == "actions[nope]"
