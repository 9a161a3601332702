"""Inputs the trace did not record, inferred where the next call makes them certain,
and the audit's messages about what it cannot follow."""

from __future__ import annotations

import json

from chains.core.sim.audit import audit
from chains.core.sim.state import Event, Observation
from tests.core.sim.builders import walked

from .traced import audited, duffel, loaded


def test_the_pick_between_search_and_offer_read_is_inferred_at_the_offer_read():
    result = audited("duffel-correct.har.json")
    pick = result.inferred[0]
    assert (pick.kind, pick.step, pick.at) == ("select", "select_offer", "/log/entries/1")


def test_the_entry_gate_answer_is_inferred_at_the_order_call_that_needed_it():
    result = audited("duffel-correct.otlp.json")
    answer = result.inferred[1]
    assert (answer.kind, answer.gate, answer.value, answer.seq) == (
        "answer",
        "book_consent",
        "approve",
        4,
    )
    assert str(answer) == (
        "gate book_consent answered approve, certain from seq 4 "
        "(/resourceSpans/0/scopeSpans/0/spans/4)"
    )


def test_a_consent_that_takes_longer_than_its_timeout_between_calls_is_not_a_finding():
    # the trace cannot say when the answer came: it is taken before the gate timed out
    har = loaded("duffel-correct.har.json")
    for entry in har["log"]["entries"][3:]:
        entry["startedDateTime"] = entry["startedDateTime"].replace("T09:0", "T09:4")
    assert audited(har).clean


def test_a_probe_is_an_attempt_of_the_probe_step_not_a_wait_for_a_probe():
    result = audited("duffel-probe-then-stop.har.json")
    probes = [e for e in result.replayed if e.event_type == "reconcile"]
    assert [(e.step_id, e.signal["probe"]) for e in probes] == [("create_order", "not_landed")]


def test_no_probe_result_is_inferred_to_excuse_the_commit_sent_again():
    har = loaded("duffel-blind-retry.har.json")
    result = audited(har)
    assert not [i for i in result.inferred if i.kind == "probe"]
    assert not result.clean


def test_a_probe_whose_answer_is_not_recorded_and_is_followed_by_nothing_stays_unknown():
    result = audited("duffel-probe-then-stop.otlp.json")
    (probe,) = [e for e in result.replayed if e.event_type == "reconcile"]
    assert probe.signal["probe"] == "unknown" and result.clean


def test_a_consent_answered_after_the_gates_timeout_says_when_the_gate_timed_out():
    run = walked("flight-roundtrip.yaml", until="revalidate")
    run.observe(Observation(transport="http:409", code="FARE_PRICE_CHANGED"))
    late = Event(
        seq=run.trace[-1].seq + 1,
        event_type="transition",
        step_id="revalidate",
        t=run.snapshot.clock + 700,
        input={"kind": "answer", "outcome": "accept"},
    )
    (parted,) = audit(run.spec, [*run.trace, late]).divergences
    assert parted.kind == "out_of_order"
    assert parted.message.startswith(
        "answered gate price_change_consent at t=700s, but the gate timed out at t=600s"
    )
    assert "waits for nothing" not in parted.message


def test_an_attempt_without_a_step_id_says_so():
    trace = [Event(seq=1, event_type="attempt", signal={"transport": "http:200"})]
    (said,) = audit(duffel(), trace).divergences
    assert (said.kind, said.message) == (
        "unknown_step",
        "the attempt has no step_id: which step it dispatched is unknown",
    )
    assert "None" not in said.message


def test_a_misspelled_step_is_an_unknown_step_and_the_audit_goes_on():
    run = walked("flight-roundtrip.yaml")
    trace = [e.model_copy(update={"input": None}) for e in run.trace]
    trace.insert(2, Event(seq=2, event_type="attempt", step_id="outbound_serch", t=0.0))
    trace = [e.model_copy(update={"seq": n}) for n, e in enumerate(trace, 1)]
    result = audit(run.spec, trace)
    (said,) = result.divergences
    assert (said.kind, said.at) == ("unknown_step", "line 3")
    assert said.message == (
        "unknown step outbound_serch: the chain has no action of that name; "
        "did you mean outbound_search?"
    )
    assert result.followed


def test_a_pick_the_next_call_does_not_need_is_not_inferred():
    # the offer read comes before the search: no pick makes that the step the chain waits for
    har = loaded("duffel-correct.har.json")
    entries = har["log"]["entries"]
    entries[0], entries[1] = entries[1], json.loads(json.dumps(entries[0]))
    entries[0]["startedDateTime"], entries[1]["startedDateTime"] = (
        entries[1]["startedDateTime"],
        entries[0]["startedDateTime"],
    )
    result = audited(har)
    assert result.divergences[0].kind == "out_of_order" and result.inferred == []
