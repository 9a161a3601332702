"""CONFORMANCE C2: staleness and expiry."""

from __future__ import annotations

import pytest

from chains.core.sim.runtime import Run
from chains.core.sim.state import Proposal

from ..builders import (
    OK,
    OPTIONS,
    TWO_HANDLES,
    altered,
    booking,
    chain,
    drive_to_book,
    events,
    obs,
    start_booking,
)

HELD = """
id: held
actions:
  - id: hold
    effect: commit
    idempotency: {mode: keyed}
    confirmation: {probe: get_hold, signal: held}
    output:
      business_expiry:
        field: hold.until
        on_expiry: "dead_end(reason: hold_lapsed, permanent: false)"
    compensation: {action: release}
    preconditions: [{when: needs_approval, verdict: "gate(approve)"}]
  - {id: check, effect: read}
  - {id: ticket, effect: read}
  - {id: release, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_hold, signal: released}}
  - {id: get_hold, effect: read, probe_only: true}
gates:
  - {id: approve, audience: user, outcomes: {"yes": ok}, timeout: {after: 10d, verdict: dead_end}}
"""


def test_c2_1_discovered_not_scheduled():
    doc = altered(booking(), "policy.per_chain.wall_clock", None)
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.wait(10 * 3600)  # far past search_id's ttl_hint
    run.select("o1")
    for _ in range(2):
        run.wait(10 * 3600)
        run.observe(OK)
    run.wait(10 * 3600)
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert not [e for e in run.trace if e.verdict and e.verdict != "ok"]


def test_c2_2_expired_handle_forces_re_mint_before_the_commit():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)  # quote_id#1
    run.observe(obs("http:410", "QUOTE_EXPIRED"))  # lock_price finds the quote dead
    assert events(run, "attempt", "lock_price")[-1].verdict == "rewind(to: quote)"
    assert run.waiting().step == "quote"
    run.observe(OK)  # re-quote: quote_id#2
    run.observe(OK)  # lock#2 from the new quote
    run.observe(OK)
    book = events(run, "attempt", "book")[-1]
    assert book.handles_consumed == ["lock#1"]
    assert run.snapshot.handles["lock"].lineage == ["quote_id#2"]
    assert events(run, "attempt", "lock_price")[-1].handles_consumed[-1] == "quote_id#2"


@pytest.mark.parametrize("coarser", [False, True])
def test_c2_3_cheapest_live_rewind_target(coarser):
    doc = booking()
    if coarser:  # a config may rewind coarser on purpose, never past the dead handle's re-mint
        extra = chain(
            """
            id: x
            verdict_table:
              - {id: X1, signal: [code:QUOTE_EXPIRED], verdict: "rewind(to: search)"}
            """
        ).verdict_table
        doc = doc.model_copy(update={"verdict_table": extra + doc.verdict_table})
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    run.observe(obs("http:410", "QUOTE_EXPIRED"))
    target = "search" if coarser else "quote"
    assert events(run, "attempt", "lock_price")[-1].verdict == f"rewind(to: {target})"
    if coarser:
        run.observe(obs(options=OPTIONS))  # rematch re-selects o1 by key
    run.observe(OK)
    run.observe(OK)
    steps = [e.step_id for e in events(run, "attempt")]
    assert steps.index("quote", steps.index("lock_price") + 1) < len(steps) - 1
    assert events(run, "attempt", "lock_price")[-1].handles_consumed[-1] == "quote_id#2"


def test_c2_3_a_row_rewinding_past_the_dead_handle_s_refresh_rewinds_to_the_refresh():
    """A domain row sends an expired quote back to the step that presents it: the runtime
    refuses to present quote_id#1 again and re-quotes first."""
    too_late = chain(
        """
        id: x
        verdict_table:
          - {id: X1, signal: [code:QUOTE_EXPIRED], scope: {steps: [lock_price]},
             verdict: "rewind(to: lock_price)"}
        """
    ).verdict_table
    doc = booking()
    run = start_booking(doc.model_copy(update={"verdict_table": too_late + doc.verdict_table}))
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    run.observe(obs("http:410", "QUOTE_EXPIRED"))
    assert events(run, "attempt", "lock_price")[-1].verdict == "rewind(to: lock_price)"
    refused = events(run, "transition", "lock_price")[-1]
    assert (refused.row, refused.verdict) == ("stale:refresh", "rewind(to: quote)")
    assert run.waiting().step == "quote"
    run.observe(OK)
    run.observe(OK)
    presented = [e.handles_consumed for e in events(run, "attempt", "lock_price")]
    assert presented == [["search_id#1", "quote_id#1"], ["search_id#1", "quote_id#2"]]


def test_c2_4_spent_means_spent():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    assert run.snapshot.handles["lock"].spent
    run.probe("not_landed")
    assert run.waiting().step == "lock_price"
    run.observe(OK)
    run.observe(obs("http:429"))
    presented = [e.handles_consumed for e in events(run, "attempt", "book")]
    assert presented == [["lock#1"], ["lock#2"]]


def test_c2_4_a_replay_reaching_the_commit_re_mints_the_spent_handle_first():
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.probe("not_landed", cause=obs("http:402", "CARD_DECLINED"))
    assert run.propose(Proposal(kind="repair", fields={"card": "amex"}))
    spent = [e for e in run.trace if e.row == "I4:spent"]
    assert spent and spent[0].verdict == "rewind(to: lock_price)"
    assert run.waiting().step == "lock_price"
    run.observe(OK)
    run.observe(OK)
    assert [e.handles_consumed for e in events(run, "attempt", "book")] == [["lock#1"], ["lock#2"]]


def test_c2_4_a_safe_reject_did_not_execute_so_it_spends_nothing():
    run = drive_to_book(start_booking())
    run.observe(obs("http:429"))
    assert run.waiting().step == "book" and run.snapshot.handles["lock"].alias == "lock#1"
    run.observe(OK)
    assert [e.handles_consumed for e in events(run, "attempt", "book")] == [["lock#1"], ["lock#1"]]


def test_c2_5_unattributable_staleness_escalates_deepest_first():
    run = Run.start(chain(TWO_HANDLES))
    run.observe(OK)
    run.observe(OK)
    run.observe(obs("http:410"))
    first = events(run, "attempt", "use")[-1]
    assert first.verdict == "rewind(to: mint_b)"
    assert first.budget_after["rewinds_left"] == 4
    run.observe(OK)
    run.observe(obs("http:410"))
    second = events(run, "attempt", "use")[-1]
    assert second.verdict == "rewind(to: mint_a)"
    assert second.budget_after["rewinds_left"] == 3


def test_c2_6_business_deadline_fires_on_gate_resume():
    run = Run.start(chain(HELD))
    run.observe(obs(predicates=["needs_approval"], payload={"hold": {"until": 100}}))
    assert run.snapshot.state == "at_gate"
    run.wait(200)
    run.answer("yes")
    fired = [e for e in run.trace if e.row == "business_expiry"]
    assert fired and fired[0].verdict == "dead_end(reason: hold_lapsed, permanent: false)"
    assert [lc.step for lc in run.snapshot.commits_landed] == ["hold"]
    assert run.snapshot.state == "compensating" and run.waiting().step == "release"
    run.observe(OK)
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.commits_landed[0].compensated


def test_c2_6_business_deadline_fires_on_the_next_arrival():
    run = Run.start(chain(HELD))
    run.observe(obs(payload={"hold.until": 100}))
    run.wait(200)  # check is in flight meanwhile
    run.observe(OK)
    assert any(e.row == "business_expiry" for e in run.trace)
    assert run.snapshot.dispatches.get("ticket", 0) == 0
    assert run.waiting().step == "release"
