"""Gate rules: outcomes, timeouts, audience, and what answers may write."""

from __future__ import annotations

from chains.core.lint import lint

from .helpers import chain, elements, found

# A read that may raise a gate, then a commit behind an entry gate; each test adds gates.
BASE = """
id: shop
actions:
  - id: options
    effect: read
    input: {intent: {city: string}}
    preconditions: [{when: options.length > 1, verdict: gate(pick)}]
  - id: book
    effect: commit
    entry_gate: consent
    input: {intent: {option_id: string, seats: seat_selection}}
    idempotency: {mode: keyed, key_scope: run}
    confirmation: {by_key_replay: {note: keyed and synchronous}}
"""
CONSENT = """
  - id: consent
    audience: user
    payload: {amount: money}
    outcomes: {approve: ok, decline: dead_end}
    timeout: {after: 10m, verdict: dead_end}
"""


def with_gates(pick: str, extra: str = "") -> object:
    return chain(BASE + "gates:\n" + CONSENT + pick + extra)


PICK_OK = """
  - id: pick
    audience: user
    outcomes:
      choose: {params: {option_id: string}, bind: [option_id], verdict: ok}
    timeout: {after: 1h, verdict: dead_end}
"""


def test_well_formed_gates_have_no_gate_findings():
    findings = lint(with_gates(PICK_OK)).findings
    assert [f.rule for f in findings if f.rule.startswith("gates.")] == []


# --- gates.no-outcomes / gates.outcome-verdict-not-allowed ------------------------


def test_a_gate_without_outcomes_is_an_error():
    doc = with_gates("""
  - {id: pick, audience: user, timeout: {after: 1h, verdict: dead_end}}
""")
    assert elements(doc, "gates.no-outcomes") == ["gates[pick]"]


def test_an_outcome_resuming_with_retry_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {again: retry, choose: ok}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.outcome-verdict-not-allowed") == ["gates[pick].outcomes.again"]


def test_an_outcome_resuming_with_reselect_is_fine():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {other: "reselect(to: options)", choose: ok}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert found(doc, "gates.outcome-verdict-not-allowed") == []


# --- gates.no-timeout / gates.default-timeout-only / gates.timeout-unresolved -----


def test_a_gate_without_a_timeout_or_chain_default_is_an_error():
    doc = with_gates("""
  - {id: pick, audience: user, outcomes: {choose: ok}}
""")
    assert elements(doc, "gates.no-timeout") == ["gates[pick]"]


def test_a_gate_with_only_the_chain_default_timeout_is_a_warning():
    doc = with_gates(
        """
  - {id: pick, audience: user, outcomes: {choose: ok}}
""",
        "policy: {per_chain: {gate_timeout: 30m}}\n",
    )
    assert found(doc, "gates.no-timeout") == []
    assert elements(doc, "gates.default-timeout-only") == ["gates[pick]"]


def test_a_timeout_naming_both_an_outcome_and_a_verdict_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {choose: ok}
    timeout: {after: 1h, outcome: choose, verdict: dead_end}
""")
    assert elements(doc, "gates.timeout-unresolved") == ["gates[pick].timeout"]


def test_a_timeout_naming_neither_an_outcome_nor_a_verdict_is_an_error():
    doc = with_gates("""
  - {id: pick, audience: user, outcomes: {choose: ok}, timeout: {after: 1h}}
""")
    assert "neither" in found(doc, "gates.timeout-unresolved")[0].message


def test_a_timeout_naming_an_undeclared_outcome_is_left_to_the_dangling_reference_rule():
    doc = with_gates("""
  - {id: pick, audience: user, outcomes: {choose: ok}, timeout: {after: 1h, outcome: skip}}
""")
    assert found(doc, "gates.timeout-unresolved") == []
    assert elements(doc, "structure.dangling-reference") == ["gates[pick].timeout"]


def test_a_timeout_picking_an_outcome_that_needs_params_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes:
      choose: {params: {option_id: string}, bind: [option_id], verdict: ok}
    timeout: {after: 1h, outcome: choose}
""")
    assert elements(doc, "gates.timeout-unresolved") == ["gates[pick].timeout"]


def test_a_timeout_picking_a_declared_outcome_is_fine():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {choose: ok, skip: dead_end}
    timeout: {after: 1h, outcome: skip}
""")
    assert found(doc, "gates.timeout-unresolved") == []


# --- gates.model-answers-money-or-consent ---------------------------------------


def test_an_entry_gate_answered_by_the_model_is_an_error():
    doc = chain(
        BASE
        + """
gates:
  - id: consent
    audience: model
    outcomes: {go: ok, stop: dead_end}
    timeout: {after: 1m, verdict: dead_end}
"""
    )
    [finding] = found(doc, "gates.model-answers-money-or-consent")
    assert finding.element == "gates[consent]"
    assert "entry gate of book" in finding.message


def test_a_gate_showing_a_price_to_the_model_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: model
    payload: {new_price: money}
    outcomes: {choose: ok}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.model-answers-money-or-consent") == ["gates[pick]"]


def test_a_model_gate_about_neither_money_nor_consent_is_fine():
    doc = with_gates("""
  - id: pick
    audience: model
    payload: {options: "option[]"}
    outcomes: {choose: ok}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert found(doc, "gates.model-answers-money-or-consent") == []


# --- gates.bind-not-intent -------------------------------------------------------


def test_binding_an_answer_into_a_handle_is_an_error():
    doc = with_gates(
        """
  - id: pick
    audience: user
    outcomes: {choose: {params: {id: string}, bind: [offer_id], verdict: ok}}
    timeout: {after: 1h, verdict: dead_end}
""",
        "handles: [{id: offer_id, minted_by: options}]\n",
    )
    assert "handle" in found(doc, "gates.bind-not-intent")[0].message


def test_binding_an_answer_into_an_upstream_steps_field_is_an_error():
    doc = chain("""
id: c
actions:
  - {id: search, effect: read, input: {intent: {city: string}}}
  - id: hold
    effect: mint
    input: {intent: {nights: int}}
    preconditions: [{when: hotel.closed, verdict: gate(move)}]
gates:
  - id: move
    audience: user
    outcomes: {elsewhere: {params: {city: string}, bind: [city], verdict: ok}}
    timeout: {after: 1h, verdict: dead_end}
""")
    [finding] = found(doc, "gates.bind-not-intent")
    assert finding.element == "gates[move].outcomes.elsewhere"
    assert "hold" in finding.message


def test_binding_an_upstream_field_with_a_repair_to_that_step_is_fine():
    doc = chain("""
id: c
actions:
  - {id: search, effect: read, input: {intent: {city: string}}}
  - id: hold
    effect: mint
    preconditions: [{when: hotel.closed, verdict: gate(move)}]
gates:
  - id: move
    audience: user
    outcomes:
      elsewhere:
        params: {city: string}
        bind: [city]
        verdict: "repair(to: search, fields: [city])"
    timeout: {after: 1h, verdict: dead_end}
""")
    assert found(doc, "gates.bind-not-intent") == []


def test_binding_into_a_field_a_later_step_reads_is_fine():
    doc = with_gates(PICK_OK)
    assert found(doc, "gates.bind-not-intent") == []


def test_binding_into_a_field_nobody_reads_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {choose: {params: {x: string}, bind: [colour], verdict: ok}}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.bind-not-intent") == ["gates[pick].outcomes.choose"]


# --- gates.set-without-repair / gates.repair-fields-mismatch ---------------------


def test_an_outcome_with_set_that_resumes_with_ok_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {seatless: {set: {seats: null}, verdict: ok}}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.set-without-repair") == ["gates[pick].outcomes.seatless"]


def test_an_outcome_repairing_more_fields_than_it_sets_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes:
      seatless: {set: {seats: null}, verdict: "repair(to: book, fields: [seats, option_id])"}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.repair-fields-mismatch") == ["gates[pick].outcomes.seatless"]


def test_an_outcome_binding_a_field_its_repair_does_not_list_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes:
      other: {params: {s: seat}, bind: [seats], verdict: "repair(to: book, fields: [option_id])"}
    timeout: {after: 1h, verdict: dead_end}
""")
    assert elements(doc, "gates.repair-fields-mismatch") == ["gates[pick].outcomes.other"]


def test_set_and_bind_outcomes_repairing_exactly_their_fields_are_fine():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes:
      seatless: {set: {seats: null}, verdict: "repair(to: book, fields: [seats])"}
      other: {params: {s: seat}, bind: [seats], verdict: "repair(to: book, fields: [seats])"}
    timeout: {after: 1h, outcome: seatless}
""")
    assert found(doc, "gates.set-without-repair") == []
    assert found(doc, "gates.repair-fields-mismatch") == []


# --- gates.params-without-bind ---------------------------------------------------


def test_params_that_are_bound_nowhere_are_reported_as_info():
    doc = with_gates("""
  - id: pick
    audience: user
    outcomes: {choose: {params: {option_id: string}, verdict: ok}}
    timeout: {after: 1h, verdict: dead_end}
""")
    [finding] = found(doc, "gates.params-without-bind")
    assert (finding.element, finding.severity) == ("gates[pick].outcomes.choose", "info")


def test_bound_params_are_fine():
    assert found(with_gates(PICK_OK), "gates.params-without-bind") == []


# --- gates.unreachable -------------------------------------------------------------


def test_a_gate_nothing_raises_is_unreachable():
    doc = with_gates(
        PICK_OK,
        """
  - {id: orphan, audience: operator, outcomes: {done: ok}, timeout: {after: 1h, verdict: dead_end}}
""",
    )
    assert elements(doc, "gates.unreachable") == ["gates[orphan]"]


def test_gates_raised_by_a_precondition_or_an_entry_gate_are_reachable():
    assert found(with_gates(PICK_OK), "gates.unreachable") == []


def test_a_gate_raised_by_a_verdict_row_is_reachable():
    doc = with_gates(
        PICK_OK,
        """
  - {id: review, audience: operator, outcomes: {done: ok}, timeout: {after: 1h, verdict: dead_end}}
verdict_table:
  - {id: R1, signal: [code:HELD], scope: {steps: [book]}, verdict: gate(review)}
""",
    )
    assert found(doc, "gates.unreachable") == []


# An exchange whose consent gate guards the commit, and whose approving answers
# each repair into that same commit to record how the customer pays.
EXCHANGE_CONSENT = """
    id: c
    actions:
      - {id: find_trip, effect: read}
      - id: exchange
        effect: commit
        entry_gate: exchange_consent
        input: {intent: {pay_later: bool}}
        idempotency: {mode: none}
        confirmation: {probe: find_trip}
    gates:
      - id: exchange_consent
        audience: user
        outcomes:
          pay_now: {set: {pay_later: false}, verdict: "repair(to: exchange, fields: [pay_later])"}
          pay_later: {set: {pay_later: true}, verdict: "repair(to: exchange, fields: [pay_later])"}
          decline: dead_end
        timeout: {after: 30m, verdict: dead_end}
"""


def test_an_entry_gate_whose_answers_repair_into_its_own_step_loops():
    """SPEC §3: the cursor parks at the entry gate "on EVERY arrival, including replays
    after rewind/repair/reselect", so the repair arrives at the gate again, forever."""
    doc = chain(EXCHANGE_CONSENT)
    assert elements(doc, "gates.entry-outcome-loops") == [
        "gates[exchange_consent].outcomes.pay_later",
        "gates[exchange_consent].outcomes.pay_now",
    ]
    message = found(doc, "gates.entry-outcome-loops")[0].message
    assert "every arrival" in message
    assert "never dispatched" in message


def test_an_entry_gate_answering_ok_with_bind_does_not_loop():
    repairing = 'pay_now: {set: {pay_later: false}, verdict: "repair(to: exchange, fields: '
    binding = "pay_now: {params: {pay_later: bool}, bind: [pay_later], verdict: ok}"
    doc = chain(EXCHANGE_CONSENT.replace(repairing + '[pay_later])"}', binding))
    assert found(doc, "gates.entry-outcome-loops") == []


def test_a_change_then_ask_again_answer_beside_an_ok_answer_is_no_loop():
    """Changing the size re-arrives at the gate with a new question; approve then passes."""
    doc = chain("""
        id: c
        actions:
          - {id: get_volume, effect: read}
          - {id: grow, effect: commit, entry_gate: growth_consent, input: {intent: [size]},
             idempotency: {mode: keyed}, confirmation: {probe: get_volume}}
        gates:
          - id: growth_consent
            audience: user
            outcomes:
              approve: ok
              change_size: {params: {size: int}, bind: [size],
                            verdict: "repair(to: grow, fields: [size])"}
            timeout: {after: 1h, verdict: dead_end}
    """)
    assert found(doc, "gates.entry-outcome-loops") == []


# --- gates.timeout-not-duration -----------------------------------------------------


def test_a_gate_timeout_after_a_payload_field_is_an_error():
    doc = with_gates("""
  - id: pick
    audience: user
    payload: {offer: {valid_until: datetime}}
    outcomes: {choose: ok}
    timeout: {after: offer.valid_until, verdict: dead_end}
""")
    [finding] = found(doc, "gates.timeout-not-duration")
    assert finding.element == "gates[pick].timeout.after"
    assert finding.severity == "error"


def test_a_gate_timeout_after_a_duration_is_silent():
    assert found(with_gates(PICK_OK), "gates.timeout-not-duration") == []


# An unwind: a quote of the refund, then the cancellation the user must consent to first.
def refund_consent(when: str) -> object:
    return chain(
        f"""
        id: unwind
        actions:
          - id: quote_refund
            effect: mint
            preconditions: [{{when: "{when}", verdict: gate(refund_consent)}}]
          - {{id: cancel, effect: compensate, idempotency: {{mode: keyed}}}}
        gates:
          - id: refund_consent
            audience: user
            payload: {{refund_amount: money}}
            outcomes: {{confirm: ok, keep: dead_end}}
            timeout: {{after: 72h, verdict: dead_end}}
        """
    )


RULE = "gates.consent-behind-unreadable-precondition"


def test_a_consent_gate_raised_only_on_words_no_response_can_say_is_reported():
    assert elements(refund_consent("quote returned"), RULE) == [
        "actions[quote_refund].preconditions[#1]"
    ]


def test_a_consent_gate_raised_on_a_condition_mixing_run_state_into_fields_is_reported():
    doc = refund_consent("tickets.length > 0 and unwind in progress")
    assert elements(doc, RULE) == ["actions[quote_refund].preconditions[#1]"]


def test_a_consent_gate_raised_on_a_field_the_response_carries_is_not():
    assert elements(refund_consent("refund_amount > 0"), RULE) == []


def test_a_consent_gate_that_is_also_an_entry_gate_is_always_asked():
    doc = refund_consent("quote returned")
    entered = doc.actions[1].model_copy(update={"entry_gate": "refund_consent"})
    doc = doc.model_copy(update={"actions": [doc.actions[0], entered, *doc.actions[2:]]})
    assert elements(doc, RULE) == []
