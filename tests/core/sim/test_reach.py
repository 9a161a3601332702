"""What an exploration covered: steps, rows, outcomes and compensations, and warnings in words."""

from __future__ import annotations

import doctest
import json

from chains.core.sim import reach as reach_module
from chains.core.sim.explorer import Bounds, ExploreResult, explore, merge
from chains.core.sim.reach import declared, main_steps

from .builders import chain, fixture
from .shapes import shape

ONE = Bounds(max_faults=1, crashes=False)

# A select that never gets options: its handle comes from outside the chain, so
# no step's result ever offers anything to pick (the shape of a Duffel offer
# search whose options land under another handle). Everything after it is dark.
NO_OPTIONS = """
id: offers
handles:
  - {id: offer_request, minted_by: search}
  - {id: offer_id, minted_by: external}
  - {id: offer, minted_by: select_offer, derived_from: [offer_id]}
  - {id: order, minted_by: create_order, derived_from: [offer]}
actions:
  - {id: search, effect: read, output: {handles: [offer_request]}}
  - {id: select_offer, effect: select, input: {handles: [offer_id]}, output: {handles: [offer]}}
  - {id: create_order, effect: commit, idempotency: {mode: keyed},
     input: {handles: [offer]}, output: {handles: [order]}}
  - {id: pay, effect: commit, idempotency: {mode: keyed}, input: {handles: [order]}}
"""

# Small enough that one fault reaches everything it declares: a gate with two
# outcomes, two rows (one without an id), and a commit whose undo runs when the
# step after it dead-ends.
WHOLE = """
id: whole
actions:
  - {id: quote, effect: read, entry_gate: go_ahead}
  - {id: book, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: find, signal: booked}, compensation: {action: cancel}}
  - {id: confirm, effect: read}
  - {id: find, effect: read, probe_only: true}
  - {id: cancel, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: find, signal: cancelled}}
gates:
  - {id: go_ahead, audience: user,
     outcomes: {accept: ok, decline: "dead_end(reason: declined, permanent: true)"}}
verdict_table:
  - {id: W1, signal: [code:GONE], scope: {steps: [confirm]},
     verdict: "dead_end(reason: gone, permanent: true)"}
  - {signal: [code:BUSY], scope: {steps: [quote]}, verdict: retry}
"""


def test_coverage_has_exactly_the_four_kinds_each_with_what_was_seen_and_a_total():
    cov = explore(chain(WHOLE), ONE).as_dict()["coverage"]
    assert cov == {
        "steps": {"reached": ["quote", "book", "confirm"], "total": 3},
        "rows": {"fired": ["W1", "domain#2"], "total": 2},
        "outcomes": {"taken": ["go_ahead:accept", "go_ahead:decline"], "total": 2},
        "compensations": {"run": ["cancel"], "total": 1},
    }


def test_a_fully_covered_chain_is_complete_and_has_no_warnings():
    result = explore(chain(WHOLE), ONE)
    assert result.violations == []
    assert result.complete and result.warnings == []
    out = result.as_dict()
    assert out["complete"] is True and out["warnings"] == []
    happy = {"variant": None, "ended": "done", "step": "confirm", "why": "done"}
    assert out["happy_path"] == [happy]


def test_a_select_that_never_gets_options_is_named_in_the_warning_with_what_it_cut_off():
    result = explore(chain(NO_OPTIONS), ONE)
    assert result.violations == []  # clean, and yet not a pass
    assert not result.complete
    assert result.as_dict()["coverage"]["steps"] == {
        "reached": ["search", "select_offer"],
        "total": 4,
    }
    assert (
        "explored 2 of 4 steps: select_offer never received options "
        "(dead_end: no_options_to_select); never reached: create_order, pay"
    ) in result.warnings


def test_a_happy_path_that_does_not_reach_done_is_a_warning_with_its_reason():
    result = explore(chain(NO_OPTIONS), Bounds(max_faults=0))
    assert result.warnings[0] == (
        "the happy path does not reach done: "
        "select_offer never received options (dead_end: no_options_to_select)"
    )
    assert result.as_dict()["happy_path"][0]["ended"] == "dead_end"


def test_a_happy_path_cut_by_the_event_bound_is_a_warning_not_a_pass():
    result = explore(chain(WHOLE), Bounds(max_faults=0, max_events=2))
    assert not result.complete
    assert result.warnings[0].startswith("the happy path does not reach done: walks at book")
    assert "cut at the event bound" in result.warnings[0]


def test_a_search_stopped_early_is_never_complete():
    result = explore(chain(WHOLE), ONE, should_stop=lambda: True)
    assert result.truncated and not result.complete
    assert result.warnings[0] == "the search stopped before its bounds, so coverage is partial"


def test_probe_only_reads_and_compensators_are_not_main_steps():
    doc = chain(WHOLE)
    assert main_steps(doc, None) == ["quote", "book", "confirm"]
    assert declared(doc).compensations == ["cancel"]


def test_a_read_that_is_also_a_probe_stays_a_main_step():
    # SPEC §2.1: probe_only marks a read that exists only as a probe; without it, a main step.
    doc = chain("""
        id: probe_read
        actions:
          - {id: book, effect: commit, idempotency: {mode: keyed},
             confirmation: {probe: get_booking, signal: booked}}
          - {id: get_booking, effect: read}
    """)
    assert main_steps(doc, None) == ["book", "get_booking"]


def test_a_row_whose_scope_covers_no_step_of_any_variant_is_not_counted():
    doc = chain("""
        id: scoped
        variants: {axis: rail, values: [a, b]}
        actions:
          - {id: s, effect: read}
          - {id: only_b, effect: read, only: [b]}
        verdict_table:
          - {id: R1, signal: [code:X], scope: {steps: [only_b]}, only: [a], verdict: retry}
          - {id: R2, signal: [code:Y], scope: {steps: [only_b]}, only: [b], verdict: retry}
          - {id: R3, signal: [code:Z], scope: {steps: [nowhere]}, verdict: retry}
    """)
    d = declared(doc)
    assert d.steps == ["s", "only_b"] and d.rows == ["R2"]


def test_each_variant_has_its_own_happy_path():
    result = explore(fixture("cloud-provisioning.yaml"), Bounds(max_faults=0))
    ends = [(h["variant"], h["ended"]) for h in result.as_dict()["happy_path"]]
    assert ends == [("standard", "done"), ("dedicated", "done")]
    assert result.complete


def test_shards_merged_through_json_give_the_unsharded_coverage_and_warnings():
    for doc in (chain(NO_OPTIONS), fixture("flight-roundtrip.yaml")):
        whole = explore(doc, ONE)
        parts = [explore(doc, ONE, shard=(i, 3)) for i in range(3)]
        stored = [ExploreResult.from_dict(json.loads(json.dumps(p.as_dict()))) for p in parts]
        merged = merge(stored).as_dict()
        expected = whole.as_dict()
        for key in ("coverage", "not_covered", "warnings", "complete", "happy_path"):
            assert merged[key] == expected[key], key


def test_a_shard_result_stored_before_coverage_merges_without_it():
    doc = chain(WHOLE)
    old = explore(doc, ONE, shard=(0, 2)).as_dict()
    del old["reach"], old["coverage"]
    merged = merge([ExploreResult.from_dict(old), explore(doc, ONE, shard=(1, 2))])
    assert merged.reach is None and "coverage" not in merged.as_dict()
    assert not merged.complete


def test_a_step_the_walks_skip_is_named_as_skipped_not_as_a_dead_end():
    # Coverage counts a read that is also a probe as a main step (SPEC §2.1); a
    # search that goes past it without arriving there has skipped it.
    result = explore(chain(WHOLE), ONE)
    reach = result.reach
    assert reach is not None
    reach.seen["steps"].discard("book")
    assert reach.warnings() == [
        "explored 2 of 3 steps: walks went from quote straight to confirm, skipping book; "
        "never reached: book"
    ]


def test_steps_left_out_at_the_end_of_a_path_that_reaches_done_are_named_as_skipped():
    reach = explore(chain(WHOLE), ONE).reach
    assert reach is not None
    reach.seen["steps"].discard("confirm")
    assert reach.warnings() == [
        "explored 2 of 3 steps: walks went from book straight to done, skipping confirm; "
        "never reached: confirm"
    ]


def test_the_module_doctests_pass():
    assert doctest.testmod(reach_module).failed == 0


# The real shapes the runtime still gets wrong (issue 12 §3), in the fixtures of
# tests/core/sim/fixtures: coverage is how a search shows them. Strict: the
# simulator's fixes must remove these markers.


def test_a_pick_reading_the_second_handle_its_search_mints_is_reached_and_passed():
    result = explore(shape("offer-search.yaml"), Bounds(max_faults=0))
    assert result.complete, result.warnings


def test_a_read_that_is_also_a_probe_is_reached_on_the_main_path():
    result = explore(shape("held-booking.yaml"), Bounds(max_faults=0))
    assert result.complete, result.warnings


def test_a_keyed_hold_with_cached_replays_is_covered_whole():
    result = explore(shape("card-hold.yaml"), Bounds(max_faults=0))
    assert result.complete and result.warnings == []


def test_a_step_dark_in_one_variant_is_explained_by_that_variant_not_by_another_reaching_done():
    doc = chain("""
        id: rails
        variants: {axis: rail, values: [plain, picky]}
        handles:
          - {id: offer_id, minted_by: external}
          - {id: offer, minted_by: pick, derived_from: [offer_id]}
        actions:
          - {id: search, effect: read}
          - {id: pick, effect: select, only: [picky], input: {handles: [offer_id]},
             output: {handles: [offer]}}
          - {id: book, effect: read, only: [picky], input: {handles: [offer]}}
    """)
    result = explore(doc, ONE)
    assert result.warnings == [
        "the happy path in variant picky does not reach done: "
        "pick never received options (dead_end: no_options_to_select)",
        "explored 2 of 3 steps: pick never received options (dead_end: no_options_to_select); "
        "never reached: book",
    ]
