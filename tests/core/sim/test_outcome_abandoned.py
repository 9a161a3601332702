"""``outcome_abandoned``: a run ends only once every commit it sent has an outcome."""

from __future__ import annotations

from chains.core.sim.invariants import check
from chains.core.sim.runtime import Run

from .builders import KEYED, chain, obs
from .test_invariants import attempt, keyed, probe, snapshot


def abandoned(trace, state: str = "dead_end") -> list[str]:
    found = check(chain(KEYED), snapshot(state=state), trace)
    return [f.message for f in found if f.invariant == "outcome_abandoned"]


def test_a_run_that_ends_after_its_capture_got_only_server_errors_abandons_it():
    trace = [keyed(attempt(n, "pay", "http:500", "retry", "#8"), "k") for n in (1, 2)]
    trace.append(keyed(attempt(3, "pay", "http:500", "dead_end(reason: exhausted)", "#8"), "k"))
    (found,) = check(chain(KEYED), snapshot(state="dead_end"), trace)
    assert found.message == (
        "the run ended dead_end although the outcome of pay was never learned: no ok, "
        "no refusal and no probe result followed its dispatch"
    )
    assert [c.rule for c in found.cause] == ["generic row #8", "generic row #8", "generic row #8"]


def test_a_probe_that_found_the_capture_settles_its_outcome():
    trace = [attempt(1, "pay", "timeout", "reconcile", "#7"), probe(2, "pay", "landed")]
    assert abandoned(trace, state="done") == []


def test_a_probe_that_found_nothing_settles_it_too():
    trace = [attempt(1, "pay", "timeout", "reconcile", "#7"), probe(2, "pay", "not_landed")]
    assert abandoned(trace) == []


def test_an_escalated_run_hands_its_unknowns_to_the_operator():
    assert abandoned([attempt(1, "pay", "timeout", "reconcile", "#7")], state="escalated") == []


def test_a_run_still_reconciling_has_abandoned_nothing_yet():
    assert abandoned([attempt(1, "pay", "timeout", "reconcile", "#7")], state="reconciling") == []


def test_a_refusal_is_an_outcome():
    assert abandoned([attempt(1, "pay", "http:402", "dead_end(reason: declined)", "D1")]) == []


def test_a_keyed_capture_retried_on_its_key_until_ok_is_settled():
    run = Run.start(chain(KEYED))
    run.observe(obs("http:500"))
    run.observe(obs())
    assert run.snapshot.state == "done"
    assert [f for f in check(run.spec, run.snapshot, run.trace)] == []
