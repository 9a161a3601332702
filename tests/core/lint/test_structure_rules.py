"""Structure: unique ids, names that resolve, a sound derivation graph, minting order."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))

SOUND = """
    id: c
    handles:
      - id: search_id
        minted_by: search
        staleness: {detect: [http:410], refresh: search}
      - id: pick
        minted_by: choose
        derived_from: [search_id]
        rematch: {key: [carrier]}
      - {id: order, minted_by: book, derived_from: [pick]}
    actions:
      - {id: search, effect: read, output: {handles: [search_id]}}
      - {id: choose, effect: select, input: {handles: [search_id]}, output: {handles: [pick]}}
      - id: book
        effect: commit
        entry_gate: consent
        input: {handles: [pick]}
        output: {handles: [order]}
        confirmation: {probe: find}
        compensation: {action: cancel}
      - {id: find, effect: read, probe_only: true}
      - {id: cancel, effect: compensate, input: {handles: [order]}}
    gates:
      - id: consent
        audience: user
        outcomes: {approve: ok, other: "reselect(to: choose)"}
        timeout: {after: 10m, outcome: approve}
    verdict_table:
      - {id: R1, signal: [http:410], scope: {consumers_of: [search_id]},
         verdict: "rewind(to: search)"}
    policy:
      per_step: {read: {attempts: 3}, book: {attempts: 1}}
      per_chain: {compensation_order: [cancel]}
"""

STRUCTURE_RULES = [
    "structure.duplicate-id",
    "structure.dangling-reference",
    "structure.external-handle",
    "structure.derivation-cycle",
    "structure.minted-by-mismatch",
    "structure.consumed-before-minted",
    "structure.refresh-does-not-remint",
    "structure.reselect-target-not-select",
    "structure.scope-names-absent-steps",
    "structure.empty-without-route",
]


@pytest.mark.parametrize("rule_id", STRUCTURE_RULES)
def test_a_sound_chain_has_no_structure_findings(rule_id):
    assert found(chain(SOUND), rule_id) == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_yaml_fixtures_have_no_structure_findings(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    assert [f for f in lint(doc).findings if f.rule.startswith("structure.")] == []


# --- duplicate ids ---------------------------------------------------------


def test_two_actions_with_one_id_are_a_duplicate():
    doc = chain("""
        id: c
        actions: [{id: search, effect: read}, {id: search, effect: mint}]
    """)
    (finding,) = found(doc, "structure.duplicate-id")
    assert finding.element == "actions[search]"
    assert "2 times" in finding.message


def test_duplicate_handles_gates_and_row_ids_are_each_reported():
    doc = chain("""
        id: c
        handles: [{id: h}, {id: h}]
        gates:
          - {id: g, audience: user, outcomes: {ok: ok}}
          - {id: g, audience: user, outcomes: {ok: ok}}
        verdict_table:
          - {id: R1, signal: [http:500], verdict: retry}
          - {id: R1, signal: [http:502], verdict: retry}
    """)
    assert sorted(elements(doc, "structure.duplicate-id")) == [
        "gates[g]",
        "handles[h]",
        "verdict_table[R1]",
    ]


def test_verdict_rows_without_ids_are_not_duplicates():
    doc = chain("""
        id: c
        verdict_table:
          - {signal: [http:500], verdict: retry}
          - {signal: [http:502], verdict: retry}
    """)
    assert found(doc, "structure.duplicate-id") == []


# --- dangling references ---------------------------------------------------


def test_a_derived_from_naming_no_handle_is_dangling():
    doc = chain("""
        id: c
        handles: [{id: pick, derived_from: [ghost]}]
    """)
    (finding,) = found(doc, "structure.dangling-reference")
    assert finding.element == "handles[pick].derived_from"
    assert "'ghost'" in finding.message


def test_handle_references_to_missing_actions_are_dangling():
    doc = chain("""
        id: c
        handles:
          - {id: h, minted_by: nowhere, staleness: {detect: [http:410], refresh: also_nowhere}}
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "handles[h].minted_by",
            "handles[h].staleness.refresh",
        ]
    )


def test_minted_by_external_and_refresh_n_a_are_not_references():
    doc = chain("""
        id: c
        handles:
          - {id: reservation, minted_by: external, staleness: {detect: [], refresh: n/a}}
        actions:
          - {id: modify, effect: read, input: {handles: [reservation]}}
    """)
    assert found(doc, "structure.dangling-reference") == []


def test_action_references_to_missing_handles_gates_and_actions_are_dangling():
    doc = chain("""
        id: c
        actions:
          - id: book
            effect: commit
            mutates: booking
            entry_gate: consent
            input: {handles: [lock]}
            output: {handles: [pnr]}
            confirmation: {probe: find}
            compensation:
              action: cancel
              chain: [options]
              ladder: [{when: early, action: void}, {else: "rewind(to: restart)"}]
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "actions[book].input.handles",
            "actions[book].output.handles",
            "actions[book].mutates",
            "actions[book].entry_gate",
            "actions[book].confirmation.probe",
            "actions[book].compensation.action",
            "actions[book].compensation.chain",
            "actions[book].compensation.ladder[#1]",
            "actions[book].compensation.ladder[#2].else",
        ]
    )


def test_compensation_none_is_not_a_reference():
    doc = chain("""
        id: c
        actions: [{id: grow, effect: commit, compensation: none}]
    """)
    assert found(doc, "structure.dangling-reference") == []


def test_verdicts_on_an_action_naming_missing_steps_or_gates_are_dangling():
    doc = chain("""
        id: c
        actions:
          - id: search
            effect: read
            input: {intent: [dates]}
            output:
              empty: {detect: results.length == 0, route: "gate(no_results)"}
              business_expiry: {field: until, on_expiry: "rewind(to: restart)"}
            preconditions: [{when: blocked, verdict: "repair(to: fix, fields: [dates])"}]
            revocation: {route: gate(revoked)}
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "actions[search].output.empty.route",
            "actions[search].output.business_expiry.on_expiry",
            "actions[search].preconditions[#1].verdict",
            "actions[search].revocation.route",
        ]
    )


def test_gate_outcomes_timeouts_and_payload_expiry_naming_missing_things_are_dangling():
    doc = chain("""
        id: c
        gates:
          - id: g
            audience: user
            outcomes: {accept: ok, decline: "reselect(to: pick)"}
            timeout: {after: 10m, outcome: shrug}
            payload_expiry: {field: valid_until, verdict: "rewind(to: quote)"}
          - id: h
            audience: user
            outcomes: {accept: ok}
            timeout: {after: 10m, verdict: gate(nothing)}
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "gates[g].timeout",
            "gates[g].outcomes.decline",
            "gates[g].payload_expiry",
            "gates[h].timeout",
        ]
    )


def test_verdict_rows_with_missing_targets_and_scopes_are_dangling():
    doc = chain("""
        id: c
        verdict_table:
          - {id: R1, signal: [x], scope: {steps: [book]}, verdict: "rewind(to: search)"}
          - {signal: [y], scope: {consumers_of: [token]}, verdict: gate(consent)}
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "verdict_table[R1].scope",
            "verdict_table[#2].scope",
            "verdict_table[R1]",
            "verdict_table[#2]",
        ]
    )


def test_policy_keys_that_are_neither_effect_classes_nor_actions_are_dangling():
    doc = chain("""
        id: c
        actions: [{id: book, effect: commit}]
        policy:
          per_step: {read: {attempts: 3}, book: {attempts: 1}, bok: {attempts: 1}}
          per_chain: {compensation_order: [cancel]}
    """)
    assert elements(doc, "structure.dangling-reference") == sorted(
        [
            "policy.per_step.bok",
            "policy.per_chain.compensation_order",
        ]
    )


def test_a_repair_naming_a_field_no_action_takes_as_intent_is_dangling():
    doc = chain("""
        id: c
        actions: [{id: search, effect: read, input: {intent: [dates]}}]
        verdict_table:
          - {id: R1, signal: [code:X], verdict: "repair(to: search, fields: [dates, budget])"}
    """)
    (finding,) = found(doc, "structure.dangling-reference")
    assert finding.element == "verdict_table[R1]"
    assert "intent field 'budget'" in finding.message


def test_variant_scoping_to_an_undeclared_value_is_dangling():
    doc = chain("""
        id: c
        variants: {axis: rail, values: [GDS, NDC]}
        actions:
          - {id: search, effect: read, only: [GDS], input: {intent: {cabin: {only: [XML]}}}}
        verdict_table:
          - {id: R1, signal: [code:X], only: [NCD], verdict: retry}
    """)
    assert elements(doc, "structure.dangling-reference") == [
        "actions[search].input.intent.cabin.only",
        "verdict_table[R1].only",
    ]


def test_a_handle_minted_outside_the_chain_is_reported_as_info():
    doc = chain("""
        id: c
        handles: [{id: reservation, minted_by: external}]
    """)
    (finding,) = found(doc, "structure.external-handle")
    assert (finding.severity, finding.element) == ("info", "handles[reservation]")


# --- derivation cycles -----------------------------------------------------


def test_a_derivation_cycle_is_invalid_and_named():
    doc = chain("""
        id: c
        handles:
          - {id: quote, derived_from: [hold]}
          - {id: hold, derived_from: [quote]}
    """)
    (finding,) = found(doc, "structure.derivation-cycle")
    assert finding.element == "handles[hold]"
    assert "handles[hold] → handles[quote] → handles[hold]" in finding.message


def test_a_linting_a_cyclic_chain_does_not_crash():
    doc = chain("""
        id: c
        handles: [{id: a, derived_from: [a]}]
    """)
    assert lint(doc).status in ("INVALID", "BLOCKED")


# --- minted_by agreement ---------------------------------------------------


def test_a_handle_whose_minter_does_not_output_it_is_a_mismatch():
    doc = chain("""
        id: c
        handles: [{id: hold, minted_by: reserve}]
        actions: [{id: reserve, effect: mint}]
    """)
    assert elements(doc, "structure.minted-by-mismatch") == ["handles[hold].minted_by"]


def test_an_action_outputting_a_handle_minted_elsewhere_is_a_mismatch():
    doc = chain("""
        id: c
        handles: [{id: hold, minted_by: reserve}]
        actions:
          - {id: reserve, effect: mint, output: {handles: [hold]}}
          - {id: rehold, effect: mint, output: {handles: [hold]}}
    """)
    assert elements(doc, "structure.minted-by-mismatch") == ["actions[rehold].output.handles"]


# --- order -----------------------------------------------------------------


def test_consuming_a_handle_before_its_minter_runs_is_invalid():
    doc = chain("""
        id: c
        handles: [{id: hold, minted_by: reserve}]
        actions:
          - {id: book, effect: commit, input: {handles: [hold]}}
          - {id: reserve, effect: mint, output: {handles: [hold]}}
    """)
    (finding,) = found(doc, "structure.consumed-before-minted")
    assert finding.element == "actions[book].input.handles"
    assert "before actions[reserve] mints it" in finding.message


def test_an_exchange_may_read_the_tickets_another_chain_issued_before_it_issues_new_ones():
    """A handle minted by another chain exists before this chain's first step (SPEC §2.2)."""
    doc = chain("""
        id: c
        handles: [{id: tickets, minted_by: "external(scope A issue_tickets)"}]
        actions:
          - {id: check_exchange, effect: read, input: {handles: [tickets]}}
          - {id: reissue, effect: commit, input: {handles: [tickets]}, output: {handles: [tickets]}}
    """)
    assert found(doc, "structure.consumed-before-minted") == []


def test_a_refresh_step_after_the_minter_that_does_not_mint_the_handle_is_a_warning():
    doc = chain("""
        id: c
        handles:
          - {id: hold, minted_by: reserve, staleness: {detect: [http:410], refresh: book}}
        actions:
          - {id: reserve, effect: mint, output: {handles: [hold]}}
          - {id: book, effect: commit, input: {handles: [hold]}}
    """)
    (finding,) = found(doc, "structure.refresh-does-not-remint")
    assert (finding.severity, finding.element) == ("warning", "handles[hold].staleness.refresh")


def test_a_refresh_step_before_the_minter_re_mints_on_replay():
    doc = chain("""
        id: c
        handles:
          - {id: intent, minted_by: create}
          - {id: auth, minted_by: confirm, derived_from: [intent],
             staleness: {detect: [code:expired], refresh: create}}
        actions:
          - {id: create, effect: mint, output: {handles: [intent]}}
          - {id: confirm, effect: commit, input: {handles: [intent]}, output: {handles: [auth]}}
    """)
    assert found(doc, "structure.refresh-does-not-remint") == []


def test_a_reselect_to_an_ordinary_action_is_invalid():
    doc = chain("""
        id: c
        actions:
          - {id: search, effect: read}
          - {id: quote, effect: mint}
        verdict_table:
          - {id: R1, signal: [code:FARE_UNAVAILABLE], verdict: "reselect(to: search)"}
    """)
    (finding,) = found(doc, "structure.reselect-target-not-select")
    assert finding.element == "verdict_table[R1]"
    assert "effect is read" in finding.message


# --- handles from other chains, rows from a shared core --------------------


def test_minted_by_external_with_its_origin_is_not_a_dangling_reference():
    """docs/compile-import.md keeps ``external(origin)``; SPEC §2.2 minted elsewhere."""
    doc = chain("""
        id: c
        handles:
          - {id: stay_ref, minted_by: "external(the booking chain's reserve step)",
             staleness: {ttl_hint: n/a, refresh: n/a}}
        actions:
          - {id: read_stay, effect: read, input: {handles: [stay_ref]}}
    """)
    assert found(doc, "structure.dangling-reference") == []
    assert elements(doc, "structure.external-handle") == ["handles[stay_ref]"]


def test_an_action_outputting_an_external_handle_with_an_origin_is_no_mismatch():
    doc = chain("""
        id: c
        handles:
          - {id: stay_ref, minted_by: "external(booking chain)"}
        actions:
          - {id: reread, effect: read, output: {handles: [stay_ref]}}
    """)
    assert found(doc, "structure.minted-by-mismatch") == []


SHARED_CORE_ROW = """
    id: c
    actions:
      - {id: search, effect: read}
      - {id: book, effect: commit, idempotency: {mode: none}, confirmation: {probe: search}}
    verdict_table:
      - {id: D1, signal: [http:503], scope: [book, exchange, cancel_ticket], verdict: reconcile}
      - {id: D2, signal: [http:429], scope: [exchange], verdict: retry}
      - {id: D3, signal: [http:500], scope: "search, and the probes", verdict: retry}
"""


def test_a_shared_row_naming_other_chains_steps_next_to_ours_is_only_a_warning():
    """SKILL Step 6: chains of one document may share the verdict-table core."""
    doc = chain(SHARED_CORE_ROW)
    assert "verdict_table[D1].scope" not in elements(doc, "structure.dangling-reference")
    (finding,) = found(doc, "structure.scope-names-absent-steps")
    assert finding.element == "verdict_table[D1].scope"
    assert "exchange, cancel_ticket" in finding.message
    assert "only to book" in finding.message


def test_a_row_naming_no_step_of_the_chain_is_still_dangling():
    """It applies to nothing here, whether misspelt or copied from another chain."""
    assert elements(chain(SHARED_CORE_ROW), "structure.dangling-reference") == [
        "verdict_table[D2].scope"
    ]


def test_a_prose_scope_names_nothing_to_resolve():
    doc = chain(SHARED_CORE_ROW)
    assert chain(SHARED_CORE_ROW).verdict_table[2].scope.text == "search, and the probes"
    assert "verdict_table[D3].scope" not in elements(doc, "structure.dangling-reference")


def test_a_chain_without_actions_is_invalid():
    """There is nothing to run (SPEC §2.1); it used to lint WARNINGS and be approvable."""
    doc = chain("""
        id: c
        handles: [{id: search_id}]
    """)
    assert elements(doc, "structure.no-actions") == ["actions"]
    assert lint(doc).status == "INVALID"


# --- a valid empty with nowhere to go --------------------------------------

DECLINE = """
    id: c
    handles: [{id: hold, minted_by: authorize}]
    actions:
      - id: authorize
        effect: commit
        output:
          handles: [hold]
          empty: {valid: true, detect: "signal is http:402 code:card_declined"%s}
        idempotency: {mode: keyed}
        confirmation: {by_key_replay: true}
      - {id: capture, effect: commit, input: {handles: [hold]}}
    gates:
      - {id: new_card, audience: user, outcomes: {retry: ok},
         timeout: {after: 1h, verdict: dead_end}}
"""


def test_a_valid_empty_with_no_route_is_an_error():
    """SPEC §2.1: ok(empty) follows empty.route; a decline with none must not go on to capture."""
    (finding,) = found(chain(DECLINE % ""), "structure.empty-without-route")
    assert finding.element == "actions[authorize].output.empty"
    assert finding.severity == "error"
    assert "route" in finding.message


@pytest.mark.parametrize("route", ["ok", "gate(new_card)", "dead_end"])
def test_a_valid_empty_with_a_route_is_not_reported(route):
    assert found(chain(DECLINE % f", route: {route!r}"), "structure.empty-without-route") == []


def test_an_empty_declared_not_valid_needs_no_route():
    """Row 2 of SPEC §3 applies only to actions whose empty is valid."""
    doc = chain(DECLINE.replace("valid: true", "valid: false") % "")
    assert found(doc, "structure.empty-without-route") == []
