"""Where a run goes back to when a handle must be re-minted (SPEC §2.2 ``refresh``, §3, I5).

A handle's refresh is the cheapest step that re-mints it. A read or mint
re-mints what it made, so a handle with no refresh goes back to its minter;
a landed commit's output is a fact (I5) that no step of this run re-mints,
so a handle with no refresh that a commit made sends the run nowhere: the
generic rows' "else dead_end" applies, and the landed commit is unwound.
"""

from __future__ import annotations

import pytest

from chains.core.sim.runtime import Run

from .builders import OK, chain, events, obs

# price (read) → hold (unkeyed commit, mints the locator) → open_payment (mint on
# the locator) → pay (unkeyed commit on the locator); release undoes the hold.
HELD_THEN_PAID = """
id: held_then_paid
handles:
  - {id: offer, minted_by: price, staleness: {detect: [code:OFFER_GONE], refresh: price}}
  - {id: locator, minted_by: hold, derived_from: [offer] LOCATOR_STALENESS}
  - {id: payment_session, minted_by: open_payment, derived_from: [locator] SESSION_STALENESS}
actions:
  - {id: price, effect: read, output: {handles: [offer]}}
  - id: hold
    effect: commit
    input: {handles: [offer]}
    output: {handles: [locator]}
    idempotency: {mode: none}
    confirmation: {probe: find_hold, signal: hold exists}
    compensation: {action: release}
  - {id: open_payment, effect: mint, input: {handles: [locator]},
     output: {handles: [payment_session]}}
  - id: pay
    effect: commit
    input: {handles: [PAY_INPUTS]}
    idempotency: {mode: none}
    confirmation: {probe: find_payment, signal: payment exists}
  - {id: find_hold, effect: read, probe_only: true}
  - {id: find_payment, effect: read, probe_only: true}
  - id: release
    effect: compensate
    input: {handles: [locator]}
    idempotency: {mode: none}
    confirmation: {probe: find_hold, signal: hold released}
policy:
  per_step:
    mint: {attempts: 2}
  per_chain: {max_rewinds: 3}
"""

NO_REFRESH = {
    "refresh n/a": ", staleness: {detect: [], ttl_hint: n/a, refresh: n/a}",
    "no staleness": "",
}


def held_then_paid(locator: str = "", session: str = "", pay_inputs: str = "locator") -> Run:
    text = (
        HELD_THEN_PAID.replace("LOCATOR_STALENESS", locator)
        .replace("SESSION_STALENESS", session)
        .replace("PAY_INPUTS", pay_inputs)
    )
    run = Run.start(chain(text))
    run.observe(OK)  # price
    run.observe(OK)  # hold landed: the locator is a fact
    return run


@pytest.mark.parametrize("locator", NO_REFRESH.values(), ids=NO_REFRESH.keys())
def test_a_mint_exhausted_on_a_held_booking_dead_ends_and_never_holds_again(locator):
    """SPEC §3 retry: read/mint → rewind(refresh of newest input handle) if rewinds
    remain, else dead_end; the locator has no refresh, and its minter is a landed commit."""
    run = held_then_paid(locator)
    run.observe(obs("timeout"))
    run.observe(obs("timeout"))
    exhausted = events(run, "transition", "open_payment")[-1]
    assert (exhausted.row, exhausted.verdict) == (
        "retry_exhausted",
        "dead_end(reason: step_attempts_exhausted, permanent: false)",
    )
    assert run.snapshot.outcome["reason"] == "step_attempts_exhausted"
    assert run.snapshot.dispatches["hold"] == 1


def test_the_trace_names_the_held_booking_as_the_input_without_a_refresh():
    run = held_then_paid(NO_REFRESH["refresh n/a"])
    run.observe(obs("timeout"))
    run.observe(obs("timeout"))
    exhausted = events(run, "transition", "open_payment")[-1]
    assert "its newest input locator has no refresh step to re-mint it" in exhausted.note


def test_a_mint_exhausted_on_a_held_booking_unwinds_the_hold():
    """SPEC §3 dead_end: commits_landed non-empty → execute the compensators."""
    run = held_then_paid(NO_REFRESH["refresh n/a"])
    run.observe(obs("timeout"))
    run.observe(obs("timeout"))
    assert run.snapshot.state == "compensating"
    assert run.waiting().step == "release"


@pytest.mark.parametrize("locator", NO_REFRESH.values(), ids=NO_REFRESH.keys())
def test_a_payment_found_not_landed_on_a_held_booking_dead_ends_and_never_holds_again(locator):
    """SPEC §3 reconcile: not-landed, no cause observed → rewind(refresh of consumed
    handle) if budget, else dead_end; the consumed locator has no refresh to go to."""
    run = held_then_paid(locator)
    run.observe(OK)  # open_payment
    run.observe(obs("timeout"))  # pay: outcome unknown
    run.probe("not_landed")
    assert run.snapshot.outcome["reason"] == "commit_not_landed"
    assert run.snapshot.dispatches["hold"] == 1
    assert run.snapshot.dispatches["pay"] == 1


def test_a_payment_found_not_landed_rewinds_to_the_refresh_of_a_session_that_has_one():
    run = held_then_paid(
        NO_REFRESH["refresh n/a"],
        session=", staleness: {detect: [code:SESSION_GONE], refresh: open_payment}",
        pay_inputs="payment_session",
    )
    run.observe(OK)  # open_payment
    run.observe(obs("timeout"))
    run.probe("not_landed")
    assert events(run)[-1].verdict == "rewind(to: open_payment)"
    assert run.waiting().step == "open_payment"
    assert run.snapshot.dispatches["hold"] == 1


@pytest.mark.parametrize("refresh", [", refresh: n/a", ""], ids=["refresh n/a", "no refresh"])
def test_a_held_booking_reported_stale_without_a_refresh_dead_ends_and_never_holds_again(refresh):
    """SPEC §3 row 1: rewind(to: handle.refresh); a commit's output without one has none."""
    run = held_then_paid(f", staleness: {{detect: [code:HOLD_GONE]{refresh}}}")
    run.observe(obs("http:410", code="HOLD_GONE"))
    assert run.snapshot.outcome["reason"] == "stale_locator_without_refresh"
    assert run.snapshot.dispatches["hold"] == 1


def test_a_mint_exhausted_on_a_handle_with_a_refresh_rewinds_to_that_refresh():
    """A declared refresh on the locator is the chain's own word, even past the commit."""
    run = held_then_paid(", staleness: {detect: [code:HOLD_GONE], refresh: price}")
    run.observe(obs("timeout"))
    run.observe(obs("timeout"))
    assert events(run, "transition", "open_payment")[-1].verdict == "rewind(to: price)"
    assert run.waiting().step == "price"


# search (read, mints a result set with no refresh) → shortlist (mint on it).
READ_THEN_MINT = """
id: read_then_mint
handles:
  - {id: results, minted_by: search SEARCH_STALENESS}
  - {id: shortlist_id, minted_by: shortlist, derived_from: [results]}
actions:
  - {id: search, effect: read, output: {handles: [results]}}
  - {id: shortlist, effect: mint, input: {handles: [results]}, output: {handles: [shortlist_id]}}
policy:
  per_step:
    mint: {attempts: 2}
"""


@pytest.mark.parametrize("staleness", NO_REFRESH.values(), ids=NO_REFRESH.keys())
def test_a_mint_exhausted_on_a_read_result_without_refresh_reads_it_again(staleness):
    """A read re-mints what it made, so it is the cheapest re-mint (SPEC §2.2 refresh)."""
    run = Run.start(chain(READ_THEN_MINT.replace("SEARCH_STALENESS", staleness)))
    run.observe(OK)
    run.observe(obs("timeout"))
    run.observe(obs("timeout"))
    assert events(run, "transition", "shortlist")[-1].verdict == "rewind(to: search)"
    assert run.waiting().step == "search"
