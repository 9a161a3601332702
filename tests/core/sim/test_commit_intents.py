"""What one commit's effect is for: a second booking, an undo of another one, an undo of nothing.

A ferry seat hold whose precondition, read on the hold's ok response (SPEC
§2.1), sends the run back to pick another sailing: the first hold stands
and a second lands. Unwinding then releases each hold on its own handle.
"""

from __future__ import annotations

from chains.core.sim.explorer import Bounds, explore
from chains.core.sim.invariants import check
from chains.core.sim.scenario import simulate
from chains.core.sim.state import Event, Snapshot

from .builders import chain

HOLD = """
id: ferry_hold
handles:
  - {id: sailing_list, minted_by: find_sailings}
  - {id: sailing_pick, minted_by: pick_sailing, derived_from: [sailing_list],
     rematch: {key: [departure], on_ambiguous: model}}
  - {id: hold_ref, minted_by: hold_seats, derived_from: [sailing_pick],
     staleness: {detect: [], ttl_hint: n/a}}
  - {id: order_ref, description: the order of a paid crossing, minted by another chain}
actions:
  - {id: find_sailings, effect: read, output: {handles: [sailing_list]}}
  - {id: pick_sailing, effect: select, input: {handles: [sailing_list]},
     output: {handles: [sailing_pick]}}
  - id: hold_seats
    effect: commit
    input: {handles: [sailing_pick]}
    output: {handles: [hold_ref]}
    idempotency: {mode: none}
    preconditions:
      - {when: "pay_now_only == true", verdict: "reselect(to: pick_sailing)",
         reason: this sailing cannot be held}
    confirmation: {probe: list_holds, signal: a hold on the picked sailing}
    compensation: {action: release_hold}
  - {id: list_holds, effect: read, probe_only: true}
  - id: release_hold
    effect: compensate
    input: {handles: [hold_ref]}
    idempotency: {mode: none}
    confirmation: {probe: list_holds, signal: the hold is released}
"""

# The release names the order of a paid crossing, which this chain never mints.
RELEASE_BY_ORDER = HOLD.replace(
    "    input: {handles: [hold_ref]}\n    idempotency: {mode: none}\n    confirmation: {probe: "
    "list_holds, signal: the hold is released}",
    "    input: {handles: [order_ref]}\n    idempotency: {mode: none}\n    confirmation: {probe: "
    "list_holds, signal: the hold is released}",
)


def violations(text: str, invariant: str):
    result = explore(chain(text), Bounds(max_faults=2))
    return [v for v in result.violations if v.invariant == invariant]


def test_releasing_the_second_hold_is_no_re_dispatch_of_the_first_release():
    redispatched = violations(HOLD, "unkeyed_redispatch")
    assert [v.message for v in redispatched if "release_hold" in v.message] == []


def test_a_precondition_that_picks_again_after_the_hold_landed_is_a_double_commit():
    (double,) = violations(HOLD, "double_commit")
    assert double.message.startswith("commit hold_seats was dispatched again for the same intent")
    assert "landed (http:200 -> ok" in double.message
    doc = chain(HOLD)
    run = simulate(doc, double.scenario).run
    assert (double.invariant, double.message) in {
        (f.invariant, f.message) for f in check(doc, run.snapshot, run.trace)
    }


def test_an_unwind_that_releases_by_a_handle_the_chain_never_mints_is_found():
    assert RELEASE_BY_ORDER != HOLD
    (aimless,) = violations(RELEASE_BY_ORDER, "compensation_without_target")
    assert aimless.message == (
        "compensator release_hold was dispatched without order_ref, so it names nothing of "
        "the hold_seats it undoes"
    )
    assert violations(HOLD, "compensation_without_target") == []


# The release is a sub-chain: a read of the release terms by order, then the release.
QUOTED_RELEASE = (
    HOLD.replace(
        "    compensation: {action: release_hold}",
        "    compensation: {chain: [quote_release, release_hold]}",
    )
    .replace(
        "  - id: release_hold\n    effect: compensate\n    input: {handles: [hold_ref]}",
        "  - {id: quote_release, effect: read, input: {handles: [order_ref]},\n"
        "     output: {handles: [release_quote]}}\n"
        "  - id: release_hold\n    effect: compensate\n    input: {handles: [release_quote]}",
    )
    .replace(
        "  - {id: order_ref,",
        "  - {id: release_quote, minted_by: quote_release}\n  - {id: order_ref,",
    )
)


def test_a_read_opening_an_undo_without_the_handle_of_its_target_is_found():
    assert QUOTED_RELEASE.count("quote_release") == 3  # every replacement took
    (aimless,) = violations(QUOTED_RELEASE, "compensation_without_target")
    assert aimless.message.startswith("compensator quote_release was dispatched without order_ref")


AUTHORIZE = """
id: authorize
actions:
  - {id: confirm, effect: commit, idempotency: {mode: keyed}, input: {handles: [intent_id]}}
  - {id: verify, effect: read, input: {handles: [intent_id]}}
verdict_table:
  - {id: V1, match: "code:authentication_failed", scope: [verify], verdict: "gate(new_card)"}
gates:
  - {id: new_card, audience: user, outcomes: {retry_same: "rewind(to: confirm)"}}
"""


def _authorized_then_verified(transport: str, code: str | None, row: str) -> list:
    said = {"transport": transport, **({"code": code} if code else {})}
    ok = {"signal": {"transport": "http:200"}, "verdict": "ok", "row": "#3"}
    intent = {"handles_consumed": ["intent_id#1"]}
    answer = {"kind": "answer", "outcome": "retry_same"}
    return [
        Event(seq=1, event_type="attempt", step_id="confirm", idempotency_key="k1", **ok, **intent),
        Event(
            seq=2,
            event_type="attempt",
            step_id="verify",
            signal=said,
            verdict="gate(new_card)",
            row=row,
            **intent,
        ),
        Event(
            seq=3,
            event_type="transition",
            step_id="verify",
            row="gate:new_card.retry_same",
            verdict="rewind(to: confirm)",
            input=answer,
        ),
        Event(seq=4, event_type="attempt", step_id="confirm", idempotency_key="k2", **ok, **intent),
    ]


def test_a_failed_authentication_the_chain_reads_by_its_own_row_leaves_no_hold_to_double():
    trace = _authorized_then_verified("http:400", "authentication_failed", "V1")
    assert (
        check(chain(AUTHORIZE), Snapshot(run_id="r", chain_id="authorize", state="done"), trace)
        == []
    )


def test_an_error_no_row_of_the_chain_reads_says_nothing_of_the_first_authorization():
    trace = _authorized_then_verified("http:400", None, "#10")
    found = check(chain(AUTHORIZE), Snapshot(run_id="r", chain_id="authorize", state="done"), trace)
    assert [f.invariant for f in found] == ["double_commit"]


def test_a_read_finding_the_payment_failed_and_a_gate_answer_trying_again_is_no_double():
    trace = _authorized_then_verified("http:200", None, "#3")
    trace[1].verdict, trace[1].row = "ok", "#3"
    trace.insert(
        2,
        Event(
            seq=2,
            event_type="transition",
            step_id="verify",
            row="precondition#1",
            verdict="gate(new_card)",
        ),
    )
    snapshot = Snapshot(run_id="r", chain_id="authorize", state="done")
    assert check(chain(AUTHORIZE), snapshot, trace) == []
