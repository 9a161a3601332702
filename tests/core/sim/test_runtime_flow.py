"""The run's shape: main steps, waiting, inputs checked, variants, run keys."""

from __future__ import annotations

import pytest

from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.state import Observation, Option

from .builders import OK, OPTIONS, booking, drive_to_book, events, fixture, obs, start_booking


def test_probes_and_compensators_are_not_main_steps():
    run = drive_to_book(start_booking())
    run.observe(OK)
    steps = [e.step_id for e in events(run, "attempt")]
    assert steps == ["search", "quote", "lock_price", "book"]
    assert run.finished and run.snapshot.outcome == {"result": "done"}


def test_every_input_must_answer_what_the_run_waits_for():
    run = start_booking()
    with pytest.raises(SimulationError, match="observation of step 'search'.*got a selection"):
        run.select("o1")
    with pytest.raises(SimulationError, match="got a gate answer"):
        run.answer("accept")
    with pytest.raises(SimulationError, match="got a probe result"):
        run.probe("landed")
    run.observe(obs(options=OPTIONS))
    with pytest.raises(SimulationError, match=r"offers \['o1', 'o2'\]; got 'o9'"):
        run.select("o9")
    with pytest.raises(SimulationError, match="got an observation"):
        run.observe(OK)
    assert [e.event_type for e in run.trace] == ["transition", "attempt"]


def test_an_unknown_gate_outcome_names_the_declared_ones():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs(predicates=["fare.refundable == false"]))
    with pytest.raises(SimulationError, match=r"outcomes \['accept', 'decline'\]; got 'maybe'"):
        run.answer("maybe")


def test_a_finished_run_waits_for_nothing():
    run = drive_to_book(start_booking())
    run.observe(OK)
    assert run.waiting().kind == "nothing"
    with pytest.raises(SimulationError, match="finished"):
        run.observe(OK)


def test_negative_waits_are_refused():
    with pytest.raises(SimulationError, match="0 seconds or more"):
        start_booking().wait(-1)


def test_the_variant_is_bound_once_and_scopes_steps():
    cloud = fixture("cloud-provisioning.yaml")
    standard = Run.start(cloud, variant="standard")
    standard.observe(OK)
    assert standard.waiting().step == "reserve_capacity"
    dedicated = Run.start(cloud, intent={"region_tier": "dedicated"})
    dedicated.observe(OK)
    assert dedicated.snapshot.variant == "dedicated"
    assert dedicated.waiting().step == "check_host_capacity"


def test_an_unknown_variant_is_refused():
    with pytest.raises(SimulationError, match=r"one of \['standard', 'dedicated'\].*got 'gold'"):
        Run.start(fixture("cloud-provisioning.yaml"), variant="gold")


def test_the_snapshot_records_run_key_and_seed():
    run = start_booking(run_key="trip-1", seed=9)
    assert (run.snapshot.run_key, run.snapshot.seed) == ("trip-1", 9)
    assert run.snapshot.run_id.startswith("run-")
    assert Run.start(booking(), run_key="trip-1", seed=9).snapshot.run_id == run.snapshot.run_id


def test_resume_refuses_a_snapshot_of_another_chain_or_moment():
    run = start_booking()
    other = fixture("card-payment.yaml")
    with pytest.raises(SimulationError, match="belongs to chain 'booking'"):
        Run.resume(other, run.snapshot, run.trace)
    with pytest.raises(SimulationError, match="seq"):
        Run.resume(
            run.spec, run.snapshot, run.trace[:-1] + [run.trace[-1].model_copy(update={"seq": 99})]
        )


def test_a_selection_with_no_options_left_dead_ends():
    run = start_booking()
    run.observe(obs(options=[Option(id="only")]))
    run.select("only")
    run.observe(obs("http:409", "SOLD_OUT"))
    assert run.snapshot.outcome["reason"] == "no_options_to_select"


def test_the_model_may_pick_an_option_through_a_proposal():
    from chains.core.sim.state import Proposal

    run = start_booking()
    run.observe(obs(options=OPTIONS))
    assert run.propose(Proposal(kind="select", value="o9")) is False
    assert run.propose(Proposal(kind="select", value="o2"))
    assert run.snapshot.handles["pick"].option == OPTIONS[1]
    assert run.trace[-1].proposal_source == "model"


def test_observation_payload_can_bind_the_variant_when_nothing_else_did():
    cloud = fixture("cloud-provisioning.yaml")
    run = Run.start(cloud)
    run.observe(Observation(payload={"region_tier": "standard"}))
    assert run.snapshot.variant == "standard"
