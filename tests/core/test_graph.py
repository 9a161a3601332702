"""The derivation graph, the flow graph, cascades (I1, I5), repair scope (I6) and missing edges."""

from __future__ import annotations

import doctest

import pytest

from chains.core import graph
from chains.core.graph import (
    GraphError,
    IndependenceQuestion,
    MissingEdge,
    SelectionGap,
    cascade,
    cascades,
    derivation_cycles,
    derivation_graph,
    flow_graph,
    independence_questions,
    missing_edges,
    repair_scope,
    selection_coupling_gaps,
)

from .lint.helpers import chain

# SPEC §6's round trip, reduced to what the graph needs.
ROUND_TRIP = """
    id: round_trip
    handles:
      - {id: search_id, minted_by: search}
      - {id: selected_itinerary, minted_by: select, derived_from: [search_id]}
      - {id: return_results, minted_by: return_search,
         derived_from: [search_id, selected_itinerary]}
      - {id: checkout_id, minted_by: checkout, derived_from: [search_id, selected_itinerary]}
      - {id: seat_map_id, minted_by: seat_map, derived_from: [search_id, selected_itinerary]}
      - {id: initiate_booking_id, minted_by: initiate_booking,
         derived_from: [checkout_id, seat_map_id]}
      - {id: booking_id, minted_by: revalidate, derived_from: [checkout_id, initiate_booking_id]}
      - {id: pnr_id, minted_by: create_pnr, derived_from: [booking_id]}
    actions:
      - {id: search, effect: read, input: {intent: [origin, dates]},
         output: {handles: [search_id]}}
      - {id: select, effect: select, input: {handles: [search_id]},
         output: {handles: [selected_itinerary]}}
      - {id: return_search, effect: read, input: {handles: [search_id, selected_itinerary]},
         output: {handles: [return_results]}}
      - {id: checkout, effect: mint, input: {handles: [search_id, selected_itinerary]},
         output: {handles: [checkout_id]}}
      - {id: seat_map, effect: read, input: {handles: [search_id, selected_itinerary]},
         output: {handles: [seat_map_id]}}
      - {id: initiate_booking, effect: mint,
         input: {intent: [travelers, seats], handles: [checkout_id, seat_map_id]},
         output: {handles: [initiate_booking_id]}}
      - {id: revalidate, effect: mint, input: {handles: [checkout_id, initiate_booking_id]},
         output: {handles: [booking_id]}}
      - {id: create_pnr, effect: commit, input: {intent: [trip_ref], handles: [booking_id]},
         output: {handles: [pnr_id]}, confirmation: {probe: get_pnr}}
      - {id: get_pnr, effect: read, input: {intent: [trip_ref]}}
"""


def test_the_module_doctests_pass():
    assert doctest.testmod(graph).failed == 0


# --- derivation_graph ------------------------------------------------------


def test_the_derivation_graph_has_an_edge_from_parent_to_child():
    g = derivation_graph(chain(ROUND_TRIP))
    assert g.has_edge("search_id", "selected_itinerary")
    assert not g.has_edge("selected_itinerary", "search_id")


def test_a_defined_handle_node_carries_its_minter():
    g = derivation_graph(chain(ROUND_TRIP))
    assert g.nodes["checkout_id"] == {"defined": True, "minted_by": "checkout", "fact": False}


def test_a_handle_minted_by_a_commit_is_marked_a_fact():
    assert derivation_graph(chain(ROUND_TRIP)).nodes["pnr_id"]["fact"] is True


def test_a_parent_named_but_never_defined_is_an_undefined_node():
    g = derivation_graph(
        chain("""
        id: c
        handles: [{id: pick, derived_from: [ghost]}]
    """)
    )
    assert g.nodes["ghost"]["defined"] is False
    assert g.has_edge("ghost", "pick")


# --- flow_graph ------------------------------------------------------------


def _kinds(doc, kind):
    return sorted((u[1], v[1]) for u, v, k in flow_graph(doc).edges(data="kind") if k == kind)


FLOW = """
    id: c
    handles:
      - {id: hold, minted_by: reserve}
      - {id: order, minted_by: book, derived_from: [hold]}
    actions:
      - {id: reserve, effect: mint, output: {handles: [hold]},
         preconditions: [{when: price > budget, verdict: gate(spend)}]}
      - {id: book, effect: commit, entry_gate: consent, input: {handles: [hold]},
         output: {handles: [order]}, confirmation: {probe: find_order},
         compensation: {action: cancel}}
      - {id: find_order, effect: read, probe_only: true}
      - {id: cancel, effect: compensate, input: {handles: [order]}}
    gates:
      - {id: spend, audience: user, outcomes: {ok: ok}}
      - {id: consent, audience: user, outcomes: {ok: ok}}
      - {id: degrade, audience: user, outcomes: {ok: ok}}
    verdict_table:
      - {id: R1, signal: [code:SEAT_GONE], scope: {steps: [book]}, verdict: gate(degrade)}
"""


def test_the_flow_graph_orders_actions_as_the_chain_does():
    g = flow_graph(chain(FLOW))
    assert [g.nodes[("action", a)]["order"] for a in ("reserve", "book", "cancel")] == [0, 1, 3]
    assert _kinds(chain(FLOW), "next") == [
        ("book", "find_order"),
        ("find_order", "cancel"),
        ("reserve", "book"),
    ]


def test_the_flow_graph_links_handles_to_their_minters_and_consumers():
    doc = chain(FLOW)
    assert _kinds(doc, "mints") == [("book", "order"), ("reserve", "hold")]
    assert _kinds(doc, "consumes") == [("hold", "book"), ("order", "cancel")]
    assert _kinds(doc, "derived_from") == [("hold", "order")]


def test_the_flow_graph_links_probes_compensators_and_gates():
    doc = chain(FLOW)
    assert _kinds(doc, "probe") == [("book", "find_order")]
    assert _kinds(doc, "compensates") == [("cancel", "book")]
    assert _kinds(doc, "entry_gate") == [("consent", "book")]
    assert _kinds(doc, "raises") == [("book", "degrade"), ("reserve", "spend")]


def test_the_flow_graph_takes_compensators_from_sub_chains_and_ladders():
    doc = chain("""
        id: c
        actions:
          - id: create
            effect: commit
            compensation:
              ladder:
                - {when: running, action: terminate}
                - {when: stuck, chain: [force_stop, terminate]}
                - {else: escalate(operator)}
          - {id: terminate, effect: compensate}
          - {id: force_stop, effect: compensate}
    """)
    assert _kinds(doc, "compensates") == [("force_stop", "create"), ("terminate", "create")]


def test_the_flow_graph_marks_what_the_chain_declares_defined_and_what_it_only_names_not():
    doc = chain("""
        id: c
        handles: [{id: hold, minted_by: reserve}]
        actions:
          - {id: reserve, effect: mint, output: {handles: [hold]}}
          - {id: book, effect: commit, entry_gate: consent, input: {handles: [hold, ghost]}}
        gates: [{id: consent, audience: user, outcomes: {ok: ok}}]
    """)
    assert dict(flow_graph(doc).nodes(data="defined")) == {
        ("action", "reserve"): True,
        ("action", "book"): True,
        ("handle", "hold"): True,
        ("gate", "consent"): True,
        ("handle", "ghost"): False,
    }


# --- cascade (I1, I5) ------------------------------------------------------


def test_re_minting_a_selection_invalidates_everything_coupled_to_it():
    result = cascade(chain(ROUND_TRIP), "selected_itinerary")
    assert result.invalidated == [
        "return_results",
        "checkout_id",
        "seat_map_id",
        "initiate_booking_id",
        "booking_id",
    ]


def test_the_commit_output_reached_by_a_cascade_is_a_fact_not_invalidated():
    result = cascade(chain(ROUND_TRIP), "selected_itinerary")
    assert result.facts == ["pnr_id"]
    assert "pnr_id" not in result.invalidated


def test_a_cascade_leaves_out_the_re_minted_handle_and_its_ancestors():
    result = cascade(chain(ROUND_TRIP), "checkout_id")
    assert result.invalidated == ["initiate_booking_id", "booking_id"]


def test_a_cascade_stops_at_a_landed_fact():
    doc = chain("""
        id: c
        handles:
          - {id: lock, minted_by: lock_price}
          - {id: order, minted_by: book, derived_from: [lock]}
          - {id: invoice, minted_by: bill, derived_from: [order]}
        actions:
          - {id: lock_price, effect: mint, output: {handles: [lock]}}
          - {id: book, effect: commit, output: {handles: [order]}}
          - {id: bill, effect: read, output: {handles: [invoice]}}
    """)
    result = cascade(doc, "lock")
    assert result.invalidated == []
    assert result.facts == ["order"]


def test_a_cascade_reaches_past_a_fact_by_another_path():
    doc = chain("""
        id: c
        handles:
          - {id: lock, minted_by: lock_price}
          - {id: order, minted_by: book, derived_from: [lock]}
          - {id: receipt, minted_by: print, derived_from: [order, lock]}
        actions:
          - {id: lock_price, effect: mint, output: {handles: [lock]}}
          - {id: book, effect: commit, output: {handles: [order]}}
          - {id: print, effect: read, output: {handles: [receipt]}}
    """)
    assert cascade(doc, "lock").invalidated == ["receipt"]


def test_a_compensators_output_is_a_fact_too():
    doc = chain("""
        id: c
        handles:
          - {id: capture, minted_by: capture_it}
          - {id: refund_ref, minted_by: refund, derived_from: [capture]}
        actions:
          - {id: capture_it, effect: mint, output: {handles: [capture]}}
          - {id: refund, effect: compensate, output: {handles: [refund_ref]}}
    """)
    assert cascade(doc, "capture").facts == ["refund_ref"]


def test_a_cascade_of_an_unknown_handle_raises():
    with pytest.raises(GraphError, match="unknown handle 'ghost'"):
        cascade(chain(ROUND_TRIP), "ghost")


CYCLE = """
    id: c
    handles:
      - {id: a, derived_from: [c]}
      - {id: b, derived_from: [a]}
      - {id: c, derived_from: [b]}
      - {id: d}
"""


def test_a_cascade_through_a_cycle_raises_naming_the_cycle():
    with pytest.raises(GraphError, match="cycle") as raised:
        cascade(chain(CYCLE), "a")
    assert all(name in str(raised.value) for name in ("a", "b", "c"))


def test_a_cascade_away_from_a_cycle_still_has_an_answer():
    assert cascade(chain(CYCLE), "d").invalidated == []


def test_all_cascades_at_once_equal_one_at_a_time():
    doc = chain(ROUND_TRIP)
    for handle in doc.handles:
        assert cascades(doc)[handle.id] == cascade(doc, handle.id)


def test_all_cascades_at_once_raise_on_a_cycle():
    with pytest.raises(GraphError, match="cycle"):
        cascades(chain(CYCLE))


# --- repair_scope (I6) -----------------------------------------------------


def test_a_repair_invalidates_what_its_step_mints_and_everything_downstream():
    scope = repair_scope(chain(ROUND_TRIP), "initiate_booking", ["seats"])
    assert scope.invalidated == ["initiate_booking_id", "booking_id"]


def test_a_repair_keeps_upstream_handles_whose_minting_inputs_lack_the_fields():
    scope = repair_scope(chain(ROUND_TRIP), "initiate_booking", ["seats"])
    assert scope.survives == [
        "search_id",
        "selected_itinerary",
        "return_results",
        "checkout_id",
        "seat_map_id",
        "pnr_id",
    ]


def test_a_repair_invalidates_a_later_handle_whose_minter_takes_a_repaired_field():
    doc = chain("""
        id: c
        handles:
          - {id: quote, minted_by: price}
          - {id: pass_ref, minted_by: issue_pass}
        actions:
          - {id: price, effect: mint, input: {intent: [dates]}, output: {handles: [quote]}}
          - {id: issue_pass, effect: mint, input: {intent: [traveller]},
             output: {handles: [pass_ref]}}
    """)
    assert repair_scope(doc, "price", ["traveller"]).invalidated == ["quote", "pass_ref"]


def test_a_repair_invalidates_an_upstream_handle_whose_minter_takes_a_repaired_field():
    doc = chain("""
        id: c
        handles:
          - {id: search_id, minted_by: search}
          - {id: hold, minted_by: hold_seats, derived_from: [search_id]}
        actions:
          - {id: search, effect: read, input: {intent: [travellers]},
             output: {handles: [search_id]}}
          - {id: hold_seats, effect: mint, input: {intent: [travellers]},
             output: {handles: [hold]}}
    """)
    assert repair_scope(doc, "hold_seats", ["travellers"]).invalidated == ["search_id", "hold"]


def test_a_repair_never_invalidates_a_landed_commit():
    scope = repair_scope(chain(ROUND_TRIP), "revalidate", ["trip_ref"])
    assert scope.invalidated == ["booking_id"]
    assert "pnr_id" in scope.survives


def test_a_repair_of_an_unknown_step_raises():
    with pytest.raises(GraphError, match="unknown step 'nowhere'"):
        repair_scope(chain(ROUND_TRIP), "nowhere", ["dates"])


def test_a_repair_whose_invalidated_handles_hold_a_cycle_raises_naming_the_cycle():
    doc = chain("""
        id: c
        handles:
          - {id: quote, minted_by: price}
          - {id: hold, derived_from: [quote, lock]}
          - {id: lock, derived_from: [hold]}
        actions:
          - {id: price, effect: mint, input: {intent: [dates]}, output: {handles: [quote]}}
    """)
    with pytest.raises(GraphError, match="cycle: hold → lock → hold"):
        repair_scope(doc, "price", ["dates"])


def test_a_repair_of_a_field_no_action_takes_raises_naming_it():
    with pytest.raises(GraphError, match="'budget'"):
        repair_scope(chain(ROUND_TRIP), "search", ["dates", "budget"])


# --- missing edges ---------------------------------------------------------


def test_a_minted_handle_not_derived_from_a_consumed_one_is_a_missing_edge():
    doc = chain("""
        id: c
        handles:
          - {id: checkout_id}
          - {id: seat_map_id}
          - {id: booking_id, derived_from: [checkout_id]}
        actions:
          - {id: initiate, effect: mint, input: {handles: [checkout_id, seat_map_id]},
             output: {handles: [booking_id]}}
    """)
    assert missing_edges(doc) == [MissingEdge("initiate", "seat_map_id", "booking_id")]


def test_missing_edges_are_still_found_in_a_chain_with_a_derivation_cycle():
    doc = chain("""
        id: c
        handles:
          - {id: a, derived_from: [b]}
          - {id: b, derived_from: [a]}
          - {id: seats}
          - {id: hold, derived_from: [a]}
        actions:
          - {id: initiate, effect: mint, input: {handles: [b, seats]}, output: {handles: [hold]}}
    """)
    assert missing_edges(doc) == [MissingEdge("initiate", "seats", "hold")]


def test_a_transitive_derivation_is_not_a_missing_edge():
    assert missing_edges(chain(ROUND_TRIP)) == []


def test_a_selection_not_derived_from_the_results_it_picks_from_is_a_missing_edge():
    doc = chain("""
        id: c
        handles: [{id: results}, {id: pick}]
        actions:
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
    """)
    assert missing_edges(doc) == [MissingEdge("choose", "results", "pick")]


def test_results_computed_from_a_selection_but_not_derived_from_it_are_a_coupling_gap():
    doc = chain("""
        id: c
        handles:
          - {id: results}
          - {id: pick, minted_by: choose, derived_from: [results]}
          - {id: returns, minted_by: return_search, derived_from: [results]}
        actions:
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
          - {id: return_search, effect: read, input: {handles: [results, pick]},
             output: {handles: [returns]}}
    """)
    assert selection_coupling_gaps(doc) == [SelectionGap("return_search", "pick", "returns")]


def test_results_derived_from_the_selection_have_no_coupling_gap():
    assert selection_coupling_gaps(chain(ROUND_TRIP)) == []


# --- independence questions ------------------------------------------------

UNRELATED = """
    id: c
    handles:
      - {id: instance_id, minted_by: create}
      - {id: address_id, minted_by: allocate}
    actions:
      - {id: create, effect: mint, output: {handles: [instance_id]}}
      - {id: allocate, effect: mint, output: {handles: [address_id]}}
      - {id: bind, effect: commit, input: {handles: [instance_id, address_id]}}
      - {id: check, effect: read, input: {handles: [address_id, instance_id]}}
"""


def test_handles_consumed_together_without_a_path_raise_an_independence_question():
    assert independence_questions(chain(UNRELATED)) == [
        IndependenceQuestion(("address_id", "instance_id"), ["bind", "check"], None)
    ]


def test_handles_on_one_derivation_path_raise_no_question():
    doc = chain("""
        id: c
        handles:
          - {id: quote}
          - {id: seat_map, derived_from: [quote]}
        actions:
          - {id: hold, effect: mint, input: {handles: [quote, seat_map]}}
    """)
    assert independence_questions(doc) == []


def test_sibling_handles_consumed_together_raise_a_question_even_in_the_spec_example():
    (question,) = independence_questions(chain(ROUND_TRIP))
    assert question.handles == ("checkout_id", "seat_map_id")
    assert question.actions == ["initiate_booking"]


def test_an_answered_independence_question_carries_the_answer_in_either_order():
    doc = chain(
        UNRELATED
        + """
    independence:
      - {handles: [instance_id, address_id], independent: confirmed, note: separate objects}
    """
    )
    (question,) = independence_questions(doc)
    assert question.answered is not None
    assert question.answered.note == "separate objects"


# --- cycles ----------------------------------------------------------------


def test_a_derivation_cycle_is_listed_parent_to_child_from_its_smallest_id():
    assert derivation_cycles(chain(CYCLE)) == [["a", "b", "c"]]


def test_a_self_derivation_is_a_cycle():
    assert derivation_cycles(chain("id: c\nhandles: [{id: a, derived_from: [a]}]")) == [["a"]]


def test_an_acyclic_chain_has_no_derivation_cycles():
    assert derivation_cycles(chain(ROUND_TRIP)) == []


# --- scale -----------------------------------------------------------------


def _long_chain(n: int):
    handles = [{"id": f"h{i}", "derived_from": [f"h{i - 1}"] if i else []} for i in range(n)]
    actions = [
        {
            "id": f"a{i}",
            "effect": "mint",
            "input": {"handles": [f"h{i - 1}"] if i else []},
            "output": {"handles": [f"h{i}"]},
        }
        for i in range(n)
    ]
    for handle, action in zip(handles, actions, strict=True):
        handle["minted_by"] = action["id"]
    from chains.core.model import ChainSpec

    return ChainSpec.model_validate({"id": "long", "handles": handles, "actions": actions})


def test_every_cascade_of_a_thousand_deep_chain_is_answered_at_once():
    everything = cascades(_long_chain(1000))
    assert len(everything["h0"].invalidated) == 999
    assert everything["h998"].invalidated == ["h999"]
