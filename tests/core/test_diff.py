"""Semantic diff between two revisions of a chain, and the graph marks drawn from it."""

from __future__ import annotations

import doctest

from chains.core import diff as diff_module
from chains.core.diff import Change, diff, graph_marks

from .lint.helpers import chain

BASE = """
    id: trip
    title: Trip booking
    handles:
      - {id: quote_id, minted_by: quote, staleness: {detect: [http:410], refresh: quote}}
      - {id: hold, minted_by: hold_it, derived_from: [quote_id]}
    actions:
      - {id: quote, effect: mint, output: {handles: [quote_id]}}
      - {id: hold_it, effect: mint, input: {handles: [quote_id]}, output: {handles: [hold]}}
      - {id: book, effect: commit, input: {handles: [hold]}, idempotency: {mode: keyed}}
    gates:
      - {id: consent, audience: user, outcomes: {accept: ok}}
    verdict_table:
      - {id: R1, signal: [http:410], scope: {steps: [book]}, verdict: "rewind(to: hold_it)"}
      - {id: R2, signal: [code:SOLD_OUT], verdict: "dead_end(reason: sold_out)"}
      - {id: R3, signal: [code:PRICE_CHANGED], verdict: "gate(consent)"}
    policy:
      per_step:
        read: {attempts: 3}
"""


def revised(*edits: tuple[str, str]) -> str:
    text = BASE
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def changes(*edits: tuple[str, str]) -> list[Change]:
    return diff(chain(BASE), chain(revised(*edits)))


def test_identical_chains_have_no_changes():
    assert diff(chain(BASE), chain(BASE)) == []


def test_a_different_spelling_of_the_same_chain_is_no_change():
    respelled = revised(('verdict: "dead_end(reason: sold_out)"', "verdict: dead_end(sold_out)"))
    assert diff(chain(BASE), chain(respelled)) == []


def test_a_changed_chain_field_is_reported_on_the_chain():
    [change] = changes(("title: Trip booking", "title: Trip booking v2"))
    assert change == Change(
        "changed", "chain", "trip", ("title",), "chain: title Trip booking → Trip booking v2"
    )


def test_an_added_handle_is_reported():
    found = changes(("handles:\n", "handles:\n      - {id: seat_ref}\n"))
    assert found == [Change("added", "handle", "seat_ref", summary="handle seat_ref added")]


def test_a_removed_handle_is_reported_with_its_edges():
    found = changes(
        ("      - {id: hold, minted_by: hold_it, derived_from: [quote_id]}\n", ""),
    )
    assert [(c.kind, c.element, c.id) for c in found] == [
        ("removed", "handle", "hold"),
        ("removed", "edge", "edge:derived_from:hold:quote_id"),
    ]


def test_a_changed_handle_field_is_reported_by_its_path():
    [change] = changes(("detect: [http:410]", "detect: [http:410, code:QUOTE_EXPIRED]"))
    assert (change.kind, change.element, change.id) == ("changed", "handle", "quote_id")
    assert change.fields == ("staleness.detect",)
    assert change.summary == (
        "handle quote_id: staleness.detect [http:410] → [http:410, code:QUOTE_EXPIRED]"
    )


def test_a_field_set_for_the_first_time_says_so():
    [change] = changes(("{id: book, effect: commit,", "{id: book, effect: commit, timeout: 30s,"))
    assert change.fields == ("timeout",)
    assert change.summary == "action book: timeout set to 30s"


def test_an_added_action_is_reported():
    found = changes(
        ("    gates:", "      - {id: notify, effect: read}\n    gates:"),
    )
    assert found == [Change("added", "action", "notify", summary="action notify added")]


def test_a_removed_action_is_reported_with_its_edges():
    found = changes(
        (
            "      - {id: book, effect: commit, input: {handles: [hold]}, "
            "idempotency: {mode: keyed}}\n",
            "",
        )
    )
    assert [(c.kind, c.element, c.id) for c in found] == [
        ("removed", "edge", "edge:consumes:book:hold"),
        ("removed", "action", "book"),
    ]


def test_a_changed_action_field_is_reported_by_its_path():
    [change] = changes(("idempotency: {mode: keyed}", "idempotency: {mode: none}"))
    assert change.fields == ("idempotency.mode",)
    assert change.summary == "action book: idempotency.mode keyed → none"


def test_a_changed_row_verdict_shows_both_verdicts():
    [change] = changes(('verdict: "rewind(to: hold_it)"', 'verdict: "dead_end(reason: gone)"'))
    assert change.summary == "row R1: verdict rewind(to: hold_it) → dead_end(reason: gone)"


def test_an_added_row_shows_what_it_matches():
    found = changes(
        ("    policy:", "      - {id: R4, signal: [http:429], verdict: retry}\n    policy:")
    )
    assert found == [Change("added", "row", "R4", summary="row R4 added (http:429 → retry)")]


def test_a_removed_row_is_reported():
    found = changes(
        ('      - {id: R3, signal: [code:PRICE_CHANGED], verdict: "gate(consent)"}\n', "")
    )
    assert found == [Change("removed", "row", "R3", summary="row R3 removed")]


def test_a_row_moved_up_is_reported_with_its_positions():
    r3 = '      - {id: R3, signal: [code:PRICE_CHANGED], verdict: "gate(consent)"}\n'
    r1 = "      - {id: R1,"
    found = changes((r3, ""), (r1, r3 + r1))
    assert found == [Change("changed", "row", "R3", ("position",), "row R3 moved from 3 to 1")]


def test_a_new_row_at_the_top_does_not_move_the_others():
    found = changes(
        (
            "      - {id: R1,",
            "      - {id: R0, signal: [timeout], verdict: retry}\n      - {id: R1,",
        )
    )
    assert [(c.kind, c.id) for c in found] == [("added", "R0")]


def test_a_moved_and_edited_row_reports_both_in_one_change():
    r3 = '      - {id: R3, signal: [code:PRICE_CHANGED], verdict: "gate(consent)"}\n'
    r1 = "      - {id: R1,"
    edited = r3.replace("gate(consent)", "dead_end")
    [change] = changes((r3, ""), (r1, edited + r1))
    assert change.fields == ("position", "verdict")
    assert change.summary == "row R3: moved from 3 to 1; verdict gate(consent) → dead_end"


def test_a_renamed_row_is_a_removal_and_an_addition():
    found = changes(("{id: R2,", "{id: R2b,"))
    assert [(c.kind, c.id) for c in found] == [("removed", "R2"), ("added", "R2b")]


def test_a_removed_derived_from_edge_is_reported_parent_to_child():
    found = changes(("derived_from: [quote_id]", "derived_from: []"))
    assert found == [
        Change(
            "removed",
            "edge",
            "edge:derived_from:hold:quote_id",
            summary="edge derived_from quote_id → hold removed",
        )
    ]


def test_an_added_consumes_edge_is_reported_without_changing_the_action():
    found = changes(("input: {handles: [hold]}", "input: {handles: [hold, quote_id]}"))
    assert found == [
        Change(
            "added",
            "edge",
            "edge:consumes:book:quote_id",
            summary="edge consumes quote_id → book added",
        )
    ]


def test_a_moved_mints_edge_is_one_removal_and_one_addition():
    found = changes(
        ("{id: quote, effect: mint, output: {handles: [quote_id]}}", "{id: quote, effect: mint}"),
        (
            "idempotency: {mode: keyed}}",
            "idempotency: {mode: keyed}, output: {handles: [quote_id]}}",
        ),
    )
    assert [(c.kind, c.id) for c in found] == [
        ("removed", "edge:mints:quote:quote_id"),
        ("added", "edge:mints:book:quote_id"),
    ]


def test_a_changed_gate_outcome_is_reported_by_its_path():
    [change] = changes(("outcomes: {accept: ok}", "outcomes: {accept: ok, decline: dead_end}"))
    assert (change.element, change.id, change.fields) == ("gate", "consent", ("outcomes.decline",))


def test_a_changed_policy_is_reported_by_its_path():
    [change] = changes(("read: {attempts: 3}", "read: {attempts: 5}"))
    assert change == Change(
        "changed",
        "policy",
        "policy",
        ("per_step.read.attempts",),
        "policy: per_step.read.attempts 3 → 5",
    )


def test_added_variants_are_reported():
    [change] = changes(
        (
            "title: Trip booking\n",
            "title: Trip booking\n    variants: {axis: rail, values: [GDS, NDC]}\n",
        )
    )
    assert change == Change("added", "variants", "rail", summary="variants rail [GDS, NDC] added")


def test_an_added_known_unmatched_note_is_reported():
    found = changes(("    policy:", "    known_unmatched: [code:RARE]\n    policy:"))
    assert [(c.kind, c.element, c.id) for c in found] == [("added", "known_unmatched", "code:RARE")]


def test_changes_come_in_the_documented_order():
    found = changes(
        ("read: {attempts: 3}", "read: {attempts: 4}"),
        ("outcomes: {accept: ok}", "outcomes: {accept: dead_end}"),
        ("{id: R2, signal: [code:SOLD_OUT]", "{id: R2, signal: [code:GONE]"),
        ("idempotency: {mode: keyed}", "idempotency: {mode: none}"),
        ("derived_from: [quote_id]", "derived_from: []"),
        ("staleness: {detect: [http:410], refresh: quote}", "staleness: {detect: [http:410]}"),
        ("title: Trip booking", "title: Trips"),
    )
    assert [c.element for c in found] == [
        "chain",
        "handle",
        "edge",
        "action",
        "row",
        "gate",
        "policy",
    ]


def test_graph_marks_use_the_drawing_keys():
    found = changes(
        ("derived_from: [quote_id]", "derived_from: []"),
        ("input: {handles: [hold]}", "input: {handles: [hold, quote_id]}"),
        ("idempotency: {mode: keyed}", "idempotency: {mode: none}"),
        ("handles:\n", "handles:\n      - {id: seat_ref}\n"),
        ('verdict: "rewind(to: hold_it)"', "verdict: dead_end"),
    )
    assert graph_marks(found) == {
        "handle:seat_ref": "added",
        "edge:derived_from:hold:quote_id": "removed",
        "edge:consumes:book:quote_id": "added",
        "action:book": "changed",
    }


def test_graph_marks_of_a_removed_minting_action_mark_its_mints_edge():
    found = changes(
        ("      - {id: quote, effect: mint, output: {handles: [quote_id]}}\n", ""),
    )
    assert graph_marks(found) == {
        "edge:mints:quote:quote_id": "removed",
        "action:quote": "removed",
    }


def test_the_module_doctests_pass():
    assert doctest.testmod(diff_module).failed == 0
