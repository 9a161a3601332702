"""The runtime on the shapes the public provider compiles have, in our own words.

Each chain here is a small literal that reproduces one real shape the
simulator used to get wrong; each test names the SPEC clause it checks.
"""

from __future__ import annotations

import dataclasses
import doctest
import json

from pydantic import TypeAdapter

from chains.core.sim import deadlines, sealed
from chains.core.sim.replay import check_replay
from chains.core.sim.runtime import Run
from chains.core.sim.sealed import unseal
from chains.core.sim.state import Event, Proposal, Snapshot

from .builders import OK, OPTIONS, chain, drive_to_book, events, obs, start_booking

TRACE = TypeAdapter(list[Event])

# A search that mints two handles at once: the request and, under it, the
# offers; the selection step picks among the offers (the second handle).
TWO_HANDLE_SEARCH = """
id: offer_search
handles:
  - {id: request_ref, minted_by: search_offers}
  - {id: offer_ref, minted_by: search_offers, derived_from: [request_ref]}
  - {id: picked_offer, minted_by: pick_offer, derived_from: [offer_ref]}
actions:
  - {id: search_offers, effect: mint, output: {handles: [request_ref, offer_ref]}}
  - {id: pick_offer, effect: select, input: {handles: [offer_ref]},
     output: {handles: [picked_offer]}}
  - {id: price_offer, effect: read, input: {handles: [picked_offer]}}
"""


def test_options_are_kept_for_the_handle_the_selection_step_consumes():
    """SPEC §4 I2/I3: a selection picks among the results of the read that minted its input.

    The search mints [request_ref, offer_ref]; pick_offer consumes offer_ref,
    so the options belong to offer_ref, not to the first handle minted.
    """
    run = Run.start(chain(TWO_HANDLE_SEARCH))
    run.observe(obs(options=OPTIONS))
    w = run.waiting()
    assert (w.kind, w.step) == ("select", "pick_offer")
    assert [o.id for o in w.options] == ["o1", "o2"]
    run.select("o2")
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert not [e for e in events(run) if e.verdict and "no_options" in e.verdict]


# A reservation is created, then read back; the read carries the ticketing
# deadline precondition AND is the reservation's confirmation probe.
RESERVATION_READ_BACK = """
id: reserve_then_read
handles:
  - {id: reservation, minted_by: create_reservation}
actions:
  - id: create_reservation
    effect: commit
    output: {handles: [reservation]}
    idempotency: {mode: none}
    confirmation: {probe: read_reservation, signal: reservation listed}
  - id: read_reservation
    effect: read
    input: {handles: [reservation]}
    preconditions:
      - {when: "ticketing_deadline_passed", verdict: "dead_end(reason: too_late, permanent: true)",
         reason: pay before the ticketing deadline}
  - {id: issue_ticket, effect: read, input: {handles: [reservation]}}
"""


def test_a_read_that_is_also_a_probe_is_a_main_step_unless_probe_only():
    """SPEC §2.1 ``probe_only``: only reads that "exist only as confirmation probes" leave
    the main path; a probe that also carries a precondition is dispatched as a step."""
    run = Run.start(chain(RESERVATION_READ_BACK))
    run.observe(OK)
    w = run.waiting()
    assert (w.kind, w.step) == ("observe", "read_reservation")
    run.observe(obs(predicates=["ticketing_deadline_passed"]))
    assert run.snapshot.outcome["reason"] == "too_late"


# A keyed capture whose provider replays the key's cached response.
CACHED_CAPTURE = """
id: cached_capture
actions:
  - id: capture_payment
    effect: commit
    idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                  replay_semantics: returns_cached}
    confirmation: {probe: read_payment, signal: captured}
  - {id: read_payment, effect: read, probe_only: true}
policy:
  per_step:
    commit: {keyed: {attempts: 3, backoff: {base: 1s, factor: 2, max: 10s, jitter: none}}}
"""


def test_a_persistently_replayed_5xx_on_a_returns_cached_key_reconciles():
    """SPEC §2.1 replay_semantics: "a persistently replayed error routes to reconcile,
    not more retries" — three cached 500s end in a probe, not a dead end."""
    run = Run.start(chain(CACHED_CAPTURE))
    for _ in range(3):
        run.observe(obs("http:500"))
    assert run.snapshot.dispatches["capture_payment"] == 3
    w = run.waiting()
    assert (w.kind, w.step) == ("probe", "capture_payment")
    assert run.snapshot.state == "reconciling"
    assert events(run)[-1].row == "replay_semantics:returns_cached"
    run.probe("landed")
    assert run.snapshot.state == "done"


def _escalated_booking() -> Run:
    run = drive_to_book(start_booking())
    run.observe(obs("timeout"))
    run.wait(72 * 3600)  # past the sweep's escalate_after
    assert run.snapshot.state == "escalated"
    return run


def test_an_escalated_reconcile_still_waits_for_the_operators_probe_finding():
    """SPEC §3 reconcile: escalation to the operator leaves the commit's outcome open;
    the run is escalated but not finished, and waits for a probe result."""
    run = _escalated_booking()
    w = run.waiting()
    assert (w.kind, w.step, w.audience) == ("probe", "book", "operator")
    assert not run.finished


def test_the_operator_finding_the_booking_landed_resolves_the_escalated_run():
    """SPEC §3 reconcile: landed → treat the original attempt as ok, advance."""
    run = _escalated_booking()
    run.probe("landed")
    assert run.snapshot.state == "done"
    assert run.snapshot.correlation[-1].status == "LANDED"
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]


def test_the_operator_finding_it_did_not_land_rewinds_as_a_probe_would():
    """SPEC §3 reconcile: not-landed, no cause → rewind(refresh of consumed handle)."""
    run = _escalated_booking()
    run.probe("not_landed")
    assert run.snapshot.state == "running"
    assert events(run)[-1].verdict == "rewind(to: lock_price)"
    assert run.snapshot.dispatches["book"] == 1


# An intent object, a consented hold on it (a commit), then capture. When the
# hold lapses the intent is cancelled too, so the refresh is a new intent.
HOLD_ON_INTENT = """
id: hold_on_intent
handles:
  - {id: intent_obj, minted_by: open_intent,
     staleness: {detect: [code:INTENT_GONE], refresh: open_intent}}
  - {id: card_hold, minted_by: place_hold, derived_from: [intent_obj],
     staleness: {detect: [code:HOLD_LAPSED], refresh: open_intent}}
actions:
  - {id: open_intent, effect: mint, output: {handles: [intent_obj]}}
  - id: place_hold
    effect: commit
    entry_gate: consent
    input: {handles: [intent_obj]}
    output: {handles: [card_hold]}
    idempotency: {mode: keyed}
    confirmation: {probe: read_intent, signal: hold placed}
    compensation: {action: release_hold}
  - {id: take_payment, effect: commit, input: {handles: [card_hold]},
     idempotency: {mode: keyed}, confirmation: {probe: read_intent, signal: captured}}
  - {id: read_intent, effect: read, probe_only: true}
  - {id: release_hold, effect: compensate, input: {handles: [intent_obj]},
     idempotency: {mode: keyed}, confirmation: {probe: read_intent, signal: released}}
gates:
  - {id: consent, audience: user, outcomes: {agree: ok, refuse: "dead_end(reason: no_consent)"}}
"""


def test_a_hold_expiry_rewind_kills_the_hold_minted_from_the_old_intent():
    """SPEC §4 I1: re-minting intent_obj invalidates every handle derived from it, the
    commit-minted card_hold included; I5: the landed place_hold stays in commits_landed."""
    run = Run.start(chain(HOLD_ON_INTENT))
    run.observe(OK)  # open_intent → intent_obj#1
    run.answer("agree")
    run.observe(OK)  # place_hold → card_hold#1, landed
    run.observe(obs("http:400", "HOLD_LAPSED"))  # take_payment → rewind(to: open_intent)
    rewind = events(run, "attempt", "take_payment")[-1]
    assert rewind.verdict == "rewind(to: open_intent)"
    assert rewind.handles_invalidated == ["intent_obj#1", "card_hold#1"]
    assert set(run.snapshot.handles) == set()
    assert [lc.handles for lc in run.snapshot.commits_landed] == [["card_hold#1"]]
    run.observe(OK)  # open_intent → intent_obj#2
    assert run.waiting().kind == "answer"  # the entry gate re-consents on the replay
    run.answer("agree")
    run.observe(OK)  # place_hold → card_hold#2
    hold = run.snapshot.handles["card_hold"]
    assert (hold.alias, hold.lineage) == ("card_hold#2", ["intent_obj#2"])


# A held reservation whose provider returns the ticketing deadline as a
# datetime; past it, the hold is worthless and the run must not go on.
HELD_RESERVATION = """
id: held_reservation
handles:
  - {id: pnr, minted_by: hold_seat}
actions:
  - id: hold_seat
    effect: commit
    output:
      handles: [pnr]
      business_expiry: {field: hold.pay_by, on_expiry: "dead_end(reason: hold_lapsed)"}
    idempotency: {mode: keyed}
    confirmation: {probe: read_pnr, signal: pnr exists}
    compensation: {action: none}
  - {id: price_pnr, effect: read, input: {handles: [pnr]}}
  - {id: issue_ticket, effect: read, input: {handles: [pnr]}}
  - {id: read_pnr, effect: read, probe_only: true}
"""


def test_a_business_deadline_given_as_an_iso_datetime_fires_on_expiry():
    """SPEC §2.1 output.business_expiry: the provider-returned deadline is an implicit
    precondition on every later step; a datetime is a deadline as much as a number."""
    run = Run.start(chain(HELD_RESERVATION))
    run.observe(obs(payload={"hold": {"pay_by": "2026-01-01T02:00:00Z"}}))  # 2h after EPOCH
    assert run.snapshot.commits_landed[0].business_deadline == 7200.0
    run.wait(3 * 3600)
    run.observe(OK)  # price_pnr was out; arriving at issue_ticket checks the deadline
    assert run.snapshot.outcome.get("reason") == "hold_lapsed"
    assert any(e.row == "business_expiry" for e in run.trace)


def test_the_virtual_clock_doctests_pass():
    assert doctest.testmod(deadlines).failed == 0


# Personal data a booking carries in its intent; none of it may reach the trace.
TRAVELLER = {
    "dates": "2026-12-01",
    "card": "4000 0566 5566 5556",
    "email": "grace.hopper@example.org",
    "full_name": "Grace Brewster Hopper",
}


def _trace_text(run: Run) -> str:
    return json.dumps([e.model_dump(mode="json") for e in run.trace])


def test_the_start_event_holds_references_to_intent_values_never_the_values():
    """SPEC §2.5 / CONFORMANCE C7.3: payment data and PII live in a sealed store; the trace
    is safe to feed to evals and to the model."""
    run = start_booking(intent=dict(TRAVELLER))
    text = _trace_text(run)
    for value in TRAVELLER.values():
        assert value not in text
    refs = run.trace[0].input["intent"]  # type: ignore[index]
    assert set(refs) == set(TRAVELLER)
    assert all(ref.startswith("sealed:") for ref in refs.values())
    assert unseal(run.snapshot.sealed, refs) == TRAVELLER
    assert run.snapshot.intent == TRAVELLER  # the run itself works with the values


def test_a_repair_proposal_is_traced_by_reference_and_applied_by_value():
    """CONFORMANCE C7.3 on repair proposals: the new card is sealed, the run uses it."""
    run = drive_to_book(start_booking(intent=dict(TRAVELLER)))
    run.observe(obs("http:402", "CARD_DECLINED"))  # B3: repair(to: book, fields: [card])
    assert run.propose(Proposal(kind="repair", fields={"card": "5555 5555 5555 4444"}))
    assert "5555 5555 5555 4444" not in _trace_text(run)
    assert run.snapshot.intent["card"] == "5555 5555 5555 4444"
    assert "5555 5555 5555 4444" in run.snapshot.sealed.values()


def test_a_continuation_traces_the_previous_snapshot_without_its_values():
    """CONFORMANCE C7.3 across an external restart (SPEC §2.3): the carried snapshot in
    the continuation's start event holds references, its sealed store moves along."""
    run = drive_to_book(start_booking(mode="external", intent=dict(TRAVELLER)))
    run.observe(obs("http:402", "CARD_DECLINED"))
    again = Run.start(run.spec, continuation_of=run.snapshot, intent={"card": "amex 3782"})
    text = _trace_text(again)
    for value in [*TRAVELLER.values(), "amex 3782"]:
        assert value not in text
    assert again.snapshot.intent == {**TRAVELLER, "card": "amex 3782"}


def test_a_sealed_trace_still_re_derives_with_and_without_its_store():
    """CONFORMANCE C7.2 + C7.3: no decision reads an intent value, so the references
    re-derive every event; given the store, the replayed run holds the values again."""
    run = drive_to_book(start_booking(intent=dict(TRAVELLER)))
    run.observe(obs("http:402", "CARD_DECLINED"))
    run.propose(Proposal(kind="repair", fields={"card": "5555 5555 5555 4444"}))
    run.observe(OK)
    assert check_replay(run.spec, run.trace) == []
    assert check_replay(run.spec, run.trace, run.snapshot.sealed) == []


def test_the_sealed_store_doctests_pass():
    assert doctest.testmod(sealed).failed == 0


def test_the_correlation_record_carries_the_p3_fields_and_the_probes_lookup_keys():
    """SPEC P3: "persist a durable record of the attempt (run id, intent snapshot,
    status=PENDING)"; §2.1 probe-input rule: the record carries lookup keys the probe
    can use without the commit's own output (find_booking reads by dates)."""
    run = drive_to_book(start_booking(intent=dict(TRAVELLER)))
    (record,) = run.snapshot.correlation
    assert (record.run_id, record.status) == (run.snapshot.run_id, "PENDING")
    assert unseal(run.snapshot.sealed, {"i": record.intent_ref})["i"] == TRAVELLER
    assert record.lookup["correlation_label"] == f"{run.snapshot.run_id}:book:1"
    assert unseal(run.snapshot.sealed, record.lookup)["dates"] == "2026-12-01"
    assert "2026-12-01" not in json.dumps(dataclasses.asdict(record))  # sealed, referenced


def _killed_before_dispatch() -> Run:
    """Drive to book, dying after the record is persisted and before the request leaves."""
    saved: list[tuple[str, str]] = []

    def kill(run: Run) -> None:
        saved.append((run.snapshot.model_dump_json(), TRACE.dump_json(run.trace).decode()))

    run = start_booking()
    run.before_dispatch = kill
    drive_to_book(run)
    snapshot, trace = saved[0]
    return Run.resume(run.spec, Snapshot.model_validate_json(snapshot), TRACE.validate_json(trace))


def test_a_kill_between_persist_and_dispatch_leaves_a_pending_record_and_probes_first():
    """CONFORMANCE C1.4, first kill point: a durable PENDING record exists that the probe
    can match, and the resumed run probes before it dispatches anything."""
    run = _killed_before_dispatch()
    (record,) = run.snapshot.correlation
    assert record.step == "book" and record.status == "RECONCILING"
    assert run.snapshot.dispatches.get("book", 0) == 0
    w = run.waiting()
    assert (w.kind, w.step) == ("probe", "book")
    assert events(run)[-1].input == {"kind": "resume", "point": "before_dispatch"}


def test_after_that_kill_not_landed_dispatches_afresh_under_a_new_record():
    """SPEC §3 reconcile + P3: not landed means the request never executed; the fresh
    dispatch persists its own record first."""
    run = _killed_before_dispatch()
    run.probe("not_landed")
    assert run.waiting().kind == "observe" and run.snapshot.in_flight == "book"
    assert [r.status for r in run.snapshot.correlation] == ["NOT_LANDED", "PENDING"]
    run.observe(OK)
    assert run.snapshot.state == "done" and run.snapshot.dispatches["book"] == 1
    assert check_replay(run.spec, run.trace) == []


def test_after_that_kill_landed_goes_on_without_dispatching():
    """The request had left before the process died: landed is the original attempt's ok."""
    run = _killed_before_dispatch()
    run.probe("landed")
    assert run.snapshot.state == "done"
    assert run.snapshot.dispatches.get("book", 0) == 0
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]


# An order placed on a single-use offer, confirmed by listing orders by that offer;
# the listing is not marked probe_only, so it is also the step after the order.
ORDER_LISTED_BY_OFFER = """
id: order_by_offer
handles:
  - {id: offer_ref, minted_by: find_offer, single_use: true}
  - {id: order_ref, minted_by: place_order, derived_from: [offer_ref]}
actions:
  - {id: find_offer, effect: mint, output: {handles: [offer_ref]}}
  - id: place_order
    effect: commit
    input: {handles: [offer_ref]}
    output: {handles: [order_ref]}
    idempotency: {mode: none}
    confirmation: {probe: list_orders_for_offer, signal: an order for the offer}
    compensation: {action: none}
  - {id: list_orders_for_offer, effect: read, input: {handles: [offer_ref]}}
  - {id: read_order, effect: read, input: {handles: [order_ref]}}
"""


def test_a_main_step_probe_may_present_the_handle_its_commit_spent():
    """SPEC §4 I4 forbids re-presenting a spent handle to use it again; the commit's own
    confirmation probe looks the commit up by it (§2.1: probes run on the commit's inputs,
    never its output), so reaching that probe on the main path is not an I4 rewind."""
    run = Run.start(chain(ORDER_LISTED_BY_OFFER))
    run.observe(OK)  # find_offer
    run.observe(OK)  # place_order spends offer_ref#1
    assert run.snapshot.handles["offer_ref"].spent
    w = run.waiting()
    assert (w.kind, w.step) == ("observe", "list_orders_for_offer")
    assert not [e for e in run.trace if e.row == "I4:spent"]
    run.observe(OK)
    run.observe(OK)
    assert run.snapshot.state == "done"


# A scope imported from a multi-chain document keeps a row that repairs a step
# only the sibling chain has (the linter reports it; the run must still end).
ROW_FOR_ANOTHER_SCOPE = """
id: hold_scope
actions:
  - {id: hold_seat, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: read_hold, signal: held}, compensation: {action: none}}
  - {id: read_hold, effect: read, probe_only: true}
verdict_table:
  - {id: H1, signal: [code:CARD_DECLINED], verdict: "repair(to: pay_now, fields: [card])"}
"""


def test_a_verdict_naming_a_step_the_chain_lacks_ends_the_run_instead_of_crashing():
    """SPEC §3 transitions need a target step; with none, the only safe end is a dead end
    that says why (the explorer used to stop with an exception on such a chain)."""
    run = Run.start(chain(ROW_FOR_ANOTHER_SCOPE))
    run.observe(obs("http:402", "CARD_DECLINED"))
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.outcome["reason"] == "unknown_step_pay_now"
