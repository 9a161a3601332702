"""Fault schedules for the harness, from the chain's own choices (chains/core/sim/schedules.py)."""

from __future__ import annotations

import pytest

from chains.core.errors import DocumentError
from chains.core.model import ChainSpec
from chains.core.sim.schedules import Fault, Schedule, schedules
from tests.core.sim.builders import fixture


def bound_read() -> ChainSpec:
    return ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {"id": "look", "effect": "read", "http": {"method": "GET", "path": "/x"},
                 "output": {"empty": {"valid": True, "detect": "items.length == 0"}}},
            ],
            "verdict_table": [{"id": "R1", "signal": ["http:5xx"], "verdict": "retry"}],
        }
    )  # fmt: skip


def labels(spec: ChainSpec, faults: int = 1) -> list[str]:
    return [s.label for s in schedules(spec, faults)]


def test_a_chain_with_no_bound_step_has_nothing_to_inject():
    spec = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    with pytest.raises(DocumentError, match="no step of the chain is bound"):
        schedules(spec)


def test_the_run_without_a_fault_comes_first():
    assert labels(bound_read())[0] == "no fault"


def test_a_bound_read_is_timed_out_and_answered_with_errors_and_a_retry_after():
    found = labels(bound_read())
    assert "look call 1: timeout before the provider saw it" in found
    assert "look call 1: HTTP 503" in found
    assert "look call 1: HTTP 429, Retry-After 1 s" in found


def test_a_reset_is_scheduled_where_the_chain_tells_it_apart():
    assert "get_offer call 1: connection reset" in labels(fixture("duffel-instant-order.yaml"))


def test_an_empty_answer_is_left_out_since_only_the_provider_can_give_its_body():
    assert not any("empty" in label or "items" in label for label in labels(bound_read()))


def test_a_second_fault_can_hit_the_retried_call():
    assert "look call 1: HTTP 503; look call 2: HTTP 503" in labels(bound_read(), 2)


def test_a_lost_commit_is_a_lost_response_when_the_probe_finds_it_and_a_timeout_when_not():
    found = labels(fixture("duffel-instant-order.yaml"))
    assert "create_order call 1: response lost after the provider applied it" in found
    assert "create_order call 1: timeout before the provider saw it" in found


def test_only_a_commit_class_call_has_its_client_killed_while_it_is_out():
    killed = [lab for lab in labels(fixture("duffel-instant-order.yaml")) if "killed" in lab]
    assert killed == ["create_order call 1: client killed after the provider applied it"]


def test_a_provider_code_of_the_verdict_table_is_answered_with_its_status():
    found = labels(fixture("duffel-instant-order.yaml"))
    assert "create_order call 1: HTTP 400 offer_no_longer_available" in found


def test_schedules_are_distinct_and_fewest_faults_first():
    found = schedules(fixture("duffel-instant-order.yaml"), 2)
    sizes = [len(s.faults) for s in found]
    assert sizes == sorted(sizes) and len({s.faults for s in found}) == len(found)


def test_more_schedules_than_the_limit_are_refused_with_a_way_out():
    with pytest.raises(DocumentError, match="sample some"):
        schedules(fixture("duffel-instant-order.yaml"), 2, limit=100)


def test_a_sample_keeps_the_run_without_a_fault_and_is_the_same_for_the_same_seed():
    spec = fixture("duffel-instant-order.yaml")
    first = schedules(spec, 2, sample=20, seed=7)
    assert len(first) == 20 and first[0].faults == ()
    assert first == schedules(spec, 2, sample=20, seed=7)


def test_a_schedule_reads_back_from_its_dict():
    schedule = Schedule((Fault("book", 2, "code", status=409, code="price_changed"),))
    assert Schedule.from_dict(schedule.as_dict()) == schedule
