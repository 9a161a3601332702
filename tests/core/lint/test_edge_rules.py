"""Edges: missing derivations, selection coupling (I3), unverified independence (SKILL Step 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint

from .helpers import COUPLED_RETURNS, HOLD_FROM_TWO, chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))

UNRELATED = """
    id: c
    handles:
      - {id: instance_id, minted_by: create}
      - {id: address_id, minted_by: allocate}
    actions:
      - {id: create, effect: mint, output: {handles: [instance_id]}}
      - {id: allocate, effect: mint, output: {handles: [address_id]}}
      - {id: bind, effect: commit, input: {handles: [instance_id, address_id]}}
"""


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_yaml_fixtures_have_no_edge_errors(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    edge_findings = [f for f in lint(doc).findings if f.rule.startswith("edges.")]
    assert [f for f in edge_findings if f.severity == "error"] == []


# --- missing derivation ----------------------------------------------------


def test_a_handle_minted_from_an_input_it_does_not_derive_from_is_invalid():
    (finding,) = found(chain(HOLD_FROM_TWO), "edges.missing-derivation")
    assert finding.severity == "error"
    assert finding.element == "handles[booking_id].derived_from"
    assert finding.message == (
        "handles[booking_id] is minted by actions[initiate] from handles[seat_map_id] "
        "but does not derive from it"
    )


def test_a_handle_derived_from_every_input_has_no_missing_derivation():
    doc = chain(
        HOLD_FROM_TWO.replace(
            "derived_from: [checkout_id]", "derived_from: [checkout_id, seat_map_id]"
        )
    )
    assert found(doc, "edges.missing-derivation") == []


def test_a_transitive_derivation_is_enough():
    doc = chain("""
        id: c
        handles:
          - {id: intent_ref, minted_by: create}
          - {id: auth, minted_by: confirm, derived_from: [intent_ref]}
          - {id: capture_ref, minted_by: capture, derived_from: [auth]}
        actions:
          - {id: create, effect: mint, output: {handles: [intent_ref]}}
          - {id: confirm, effect: commit, input: {handles: [intent_ref]},
             output: {handles: [auth]}}
          - {id: capture, effect: commit, input: {handles: [intent_ref, auth]},
             output: {handles: [capture_ref]}}
    """)
    assert found(doc, "edges.missing-derivation") == []


def test_a_selection_not_derived_from_its_results_is_a_missing_derivation():
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search}
          - {id: pick, minted_by: choose, rematch: {key: [flight]}}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
    """)
    assert elements(doc, "edges.missing-derivation") == ["handles[pick].derived_from"]


def test_a_gap_from_a_selection_is_reported_as_coupling_not_again_as_missing_derivation():
    assert found(chain(COUPLED_RETURNS), "edges.missing-derivation") == []


# --- selection coupling (I3) -----------------------------------------------


def test_results_coupled_to_a_selection_but_not_derived_from_it_are_invalid():
    (finding,) = found(chain(COUPLED_RETURNS), "edges.selection-coupling")
    assert finding.severity == "error"
    assert finding.element == "handles[returns].derived_from"
    assert "actions[return_search]" in finding.message
    assert "handles[pick]" in finding.message


def test_results_derived_from_the_selection_pass():
    doc = chain(
        COUPLED_RETURNS.replace(
            "{id: returns, minted_by: return_search, derived_from: [results]}",
            "{id: returns, minted_by: return_search, derived_from: [results, pick]}",
        )
    )
    assert found(doc, "edges.selection-coupling") == []


# --- unverified independence -----------------------------------------------


def test_handles_consumed_together_with_no_path_between_them_are_a_warning():
    (finding,) = found(chain(UNRELATED), "edges.unverified-independence")
    assert finding.severity == "warning"
    assert finding.element == "handles[address_id]"
    assert finding.message == (
        "no derivation path between handles[address_id] and handles[instance_id], "
        "consumed together by actions[bind]: if address_id is re-minted, "
        "is instance_id still valid?"
    )


def test_the_hint_says_how_to_record_independence():
    (finding,) = found(chain(UNRELATED), "edges.unverified-independence")
    assert "independence: [{handles: [A, B], independent: confirmed" in finding.hint


def test_a_confirmed_independence_answer_silences_the_question():
    doc = chain(
        UNRELATED
        + """
    independence:
      - {handles: [instance_id, address_id], independent: confirmed, note: separate objects}
    """
    )
    assert found(doc, "edges.unverified-independence") == []


def test_handles_on_one_derivation_path_raise_no_independence_question():
    doc = chain(
        UNRELATED.replace(
            "{id: address_id, minted_by: allocate}",
            "{id: address_id, minted_by: allocate, derived_from: [instance_id]}",
        )
    )
    assert found(doc, "edges.unverified-independence") == []


TAKEN_FROM_OUTSIDE = """
    id: c
    handles:
      - {id: tickets, minted_by: "external(chain A issue)"}
      - {id: session, minted_by: open_session}
    actions:
      - {id: open_session, effect: mint, output: {handles: [session]}}
      - {id: quote_refund, effect: read, input: {handles: [tickets, session]}}
"""


def test_a_handle_taken_from_another_chain_raises_no_independence_question():
    """Nothing in this chain re-mints the tickets, and they were made before anything it
    mints, so no derived_from edge between the two could change what dies (SPEC §4 I1)."""
    assert found(chain(TAKEN_FROM_OUTSIDE), "edges.unverified-independence") == []


def test_a_handle_from_another_chain_that_this_chain_reissues_still_raises_the_question():
    doc = chain(
        TAKEN_FROM_OUTSIDE + "      - {id: exchange, effect: commit, input: {handles: [session]},\n"
        "         output: {handles: [tickets]}}\n"
    )
    assert elements(doc, "edges.unverified-independence") == ["handles[session]"]


REPAIR_AFTER_SEARCH = """
    id: c
    handles:
      - {id: search_id, minted_by: search}
      - {id: hold, minted_by: hold_seats, derived_from: [search_id]}
    actions:
      - {id: search, effect: read, input: {intent: [travellers]}, output: {handles: [search_id]}}
      - {id: hold_seats, effect: mint, input: {intent: [travellers], handles: [search_id]},
         output: {handles: [hold]}}
    verdict_table:
      - {id: D1, signal: [code:BAD_TRAVELLER], verdict: "repair(to: TARGET, fields: [travellers])"}
"""


def test_a_repair_that_resumes_after_an_earlier_minter_of_the_field_is_warned_about():
    """The killed handle is not needed by the replay: a warning (nothing re-mints it)."""
    doc = chain(
        REPAIR_AFTER_SEARCH.replace("TARGET", "hold_seats").replace(
            "input: {intent: [travellers], handles: [search_id]}", "input: {intent: [travellers]}"
        )
    )
    (finding,) = found(doc, "edges.repair-skips-upstream-minter")
    assert finding.element == "verdict_table[D1]"
    assert "search (earlier) also takes travellers and mints search_id" in finding.message
    assert found(doc, "edges.repair-kills-replayed-input") == []


def test_a_repair_whose_replay_consumes_a_handle_it_killed_names_the_dead_handle():
    """The shape of an order compile whose passport precondition repairs the order step:
    the offer was minted from the passengers too, so I6 kills it and the order would run
    on a dead offer (SPEC §4 I1, I6). A warning: the text cannot tell whether the two
    steps' fields of one name are one thing."""
    doc = chain(REPAIR_AFTER_SEARCH.replace("TARGET", "hold_seats"))
    (finding,) = found(doc, "edges.repair-kills-replayed-input")
    assert finding.element == "verdict_table[D1]"
    assert finding.severity == "warning"
    assert "invalidates search_id" in finding.message
    assert "hold_seats, which consumes search_id before anything re-mints it" in finding.message
    assert found(doc, "edges.repair-skips-upstream-minter") == []


def test_a_compensator_consuming_a_handle_a_repair_killed_is_no_replay_gap():
    """Compensators act on landed facts (I5); they are not part of a repair's replay."""
    doc = chain(
        REPAIR_AFTER_SEARCH.replace("TARGET", "hold_seats")
        .replace(
            "input: {intent: [travellers], handles: [search_id]}", "input: {intent: [travellers]}"
        )
        .replace(
            "    verdict_table:",
            "      - {id: release, effect: compensate, input: {handles: [search_id]}}\n"
            "      - {id: book, effect: commit, input: {handles: [hold]},\n"
            "         compensation: {action: release}}\n"
            "    verdict_table:",
        )
    )
    assert found(doc, "edges.repair-kills-replayed-input") == []


EXCHANGE = """
    id: c
    handles:
      - {id: tickets, minted_by: "external(chain A issue)"}
      - {id: options, minted_by: shop, derived_from: [tickets]}
      - {id: pick, minted_by: choose, derived_from: [options], rematch: {key: [flight]}}
    actions:
      - {id: shop, effect: read, input: {handles: [tickets]}, output: {handles: [options]}}
      - {id: choose, effect: select, input: {handles: [options]}, output: {handles: [pick]}}
      - {id: exchange, effect: commit, input: {intent: [pay_later], handles: [pick]},
         output: {handles: [tickets]}, idempotency: {mode: none},
         confirmation: {probe: shop, signal: new tickets listed}}
    verdict_table:
      - {id: X1, signal: [code:PAY_LATER_REFUSED], scope: [exchange],
         verdict: "repair(to: exchange, fields: [pay_later])"}
"""


def test_a_repair_at_a_commit_does_not_kill_what_derives_from_its_landed_outputs():
    """The tickets the exchange re-issues are landed facts (SPEC §4 I5), taken here from the
    chain that issued them: repairing the exchange's own field leaves the pick it consumes
    alive."""
    assert found(chain(EXCHANGE), "edges.repair-kills-replayed-input") == []


def test_a_repair_at_a_commit_still_kills_a_handle_minted_from_the_repaired_field():
    doc = chain(
        EXCHANGE.replace(
            "{id: shop, effect: read, input: {handles: [tickets]}",
            "{id: shop, effect: read, input: {intent: [pay_later], handles: [tickets]}",
        )
    )
    assert elements(doc, "edges.repair-kills-replayed-input") == ["verdict_table[X1]"]


def test_a_repair_from_the_first_step_taking_the_field_passes():
    doc = chain(REPAIR_AFTER_SEARCH.replace("TARGET", "search"))
    assert found(doc, "edges.repair-skips-upstream-minter") == []


def test_the_flight_fixture_without_its_seat_map_edge_names_both_handles():
    path = Path(__file__).parents[3] / "fixtures" / "flight-roundtrip.yaml"
    text = path.read_text().replace(
        "derived_from: [quote_id, seatmap_ref]", "derived_from: [quote_id]"
    )
    (doc,) = formats.load(text, format="yaml").chains
    (finding,) = found(doc, "edges.missing-derivation")
    assert finding.element == "handles[hold_session].derived_from"
    assert "hold_session" in finding.message and "seatmap_ref" in finding.message
    assert lint(doc).status == "INVALID"


def test_a_durable_output_of_a_commit_needs_no_derivation_from_its_inputs():
    """SPEC §4 I5: landed commits are facts, not cache; no re-mint invalidates them."""
    doc = chain("""
        id: c
        handles:
          - {id: booking, minted_by: book, staleness: {ttl_hint: n/a}}
          - {id: pay_session, minted_by: open_payment, derived_from: [booking],
             staleness: {detect: [code:SESSION_GONE], refresh: open_payment}}
          - {id: tickets, minted_by: issue, derived_from: [booking],
             staleness: {ttl_hint: n/a, refresh: n/a}}
        actions:
          - {id: book, effect: commit, output: {handles: [booking]}}
          - {id: open_payment, effect: mint, input: {handles: [booking]},
             output: {handles: [pay_session]}}
          - {id: issue, effect: commit, mutates: booking, input: {handles: [pay_session]},
             output: {handles: [tickets]}}
    """)
    assert found(doc, "edges.missing-derivation") == []


def test_a_commit_output_coupled_to_a_pick_is_no_coupling_gap():
    """I5 again: the booking made from the old pick stays a fact after a new pick."""
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search}
          - {id: pick, minted_by: choose, derived_from: [results], rematch: {key: [flight]}}
          - {id: booking, minted_by: book, staleness: {ttl_hint: n/a}}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
          - {id: book, effect: commit, input: {handles: [pick]}, output: {handles: [booking]}}
    """)
    assert found(doc, "edges.selection-coupling") == []
