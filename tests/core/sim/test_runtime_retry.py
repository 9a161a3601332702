"""Retry: per-effect attempts, backoff with seeded jitter on the virtual clock, exhaustion."""

from __future__ import annotations

import pytest

from chains.core.policy import step_limits
from chains.core.sim.runtime import Run

from .builders import KEYED, OK, TWO_HANDLES, altered, booking, chain, events, obs, start_booking


def clock_after_retries(seed: int, n: int = 2) -> float:
    run = start_booking(seed=seed)
    for _ in range(n):
        run.observe(obs("http:503"))
    return run.snapshot.clock


def test_backoff_is_deterministic_for_a_seed_and_varies_across_seeds():
    assert clock_after_retries(1) == clock_after_retries(1)
    assert len({clock_after_retries(s) for s in range(5)}) > 1


@pytest.mark.parametrize("retry", [1, 2, 3])
def test_backoff_stays_under_its_exponential_ceiling(retry):
    run = start_booking(seed=retry)
    for _ in range(retry):
        run.observe(obs("timeout"))
    limits = step_limits(run.spec, run.spec.action("search"))  # type: ignore[arg-type]
    ceiling = sum(min(limits.backoff.max, 1 * 2 ** (n - 1)) for n in range(1, retry + 1))
    assert 0 <= run.snapshot.clock <= ceiling
    assert all(
        "backoff" in (e.note or "") for e in events(run, "attempt")[: retry if retry < 3 else 2]
    )


def test_backoff_counts_against_the_wall_clock():
    run = start_booking()
    run.observe(obs("timeout"))
    assert run.snapshot.budgets.wall_used == run.snapshot.clock > 0


def test_read_exhaustion_rewinds_to_the_newest_input_handles_refresh():
    run = Run.start(chain(TWO_HANDLES))
    run.observe(OK)
    run.observe(OK)
    for _ in range(3):
        run.observe(obs("http:503"))
    escalation = events(run, "transition", "use")[-1]
    assert (escalation.verdict, escalation.row) == ("rewind(to: mint_b)", "retry_exhausted")
    assert run.waiting().step == "mint_b"


def test_read_exhaustion_without_rewinds_left_dead_ends():
    doc = altered(chain(TWO_HANDLES), "policy.per_chain.max_rewinds", 0)
    run = Run.start(doc)
    run.observe(OK)
    run.observe(OK)
    for _ in range(3):
        run.observe(obs("http:503"))
    assert run.snapshot.outcome["reason"] == "step_attempts_exhausted"


def test_keyed_commit_that_reexecutes_dead_ends_when_attempts_run_out():
    """A key whose replay re-executes gives fresh answers: exhausted, it is a plain dead end.
    (With ``returns_cached`` it reconciles instead; see test_runtime_real_shapes.)"""
    run = Run.start(chain(KEYED.replace("returns_cached", "reexecutes")))
    for _ in range(3):
        run.observe(obs("http:503"))
    assert run.snapshot.outcome["reason"] == "step_attempts_exhausted"
    assert run.snapshot.dispatches["pay"] == 3


def test_attempts_restart_on_every_arrival():
    run = start_booking()
    run.observe(obs("timeout"))
    assert run.snapshot.budgets.step_attempts_left == 2
    doc = booking()
    assert step_limits(doc, doc.action("search")).attempts == 3  # type: ignore[arg-type]
