"""The runtime on the shapes the public provider compiles have, in our own words.

Each chain here is a small literal that reproduces one real shape the
simulator used to get wrong; each test names the SPEC clause it checks.
"""

from __future__ import annotations

from chains.core.sim.runtime import Run

from .builders import OK, OPTIONS, chain, drive_to_book, events, obs, start_booking

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
