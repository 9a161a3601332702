"""The explorer: counterexamples replay, safe fixtures stay clean, shards add up."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from chains.core.sim import search
from chains.core.sim.explorer import (
    Bounds,
    ExploreResult,
    explore,
    merge,
    scenario_dict,
    state_key,
)
from chains.core.sim.invariants import Monitor, check
from chains.core.sim.palette import choices
from chains.core.sim.runtime import Run
from chains.core.sim.scenario import load_scenario, simulate
from chains.core.sim.search import DIGEST_VERSION, Search, apply_event, fork
from chains.core.sim.state import (
    GateContext,
    HandleState,
    Observation,
    Option,
    Snapshot,
    Waiting,
    clone,
    observing,
)

from .builders import booking, chain, fixture

SMALL = Bounds(max_faults=1)
FIXTURE_DIR = Path(__file__).parent / "fixtures"


def test_the_unsafe_fixture_yields_a_redispatch_with_a_replayable_counterexample():
    unsafe = fixture("unsafe-retry-booking.yaml")
    result = explore(unsafe, SMALL)
    assert [(v.invariant, v.message) for v in result.violations] == [
        (
            "unkeyed_redispatch",
            "row U2 (timeout -> retry) re-dispatched unkeyed commit book_room "
            "although its earlier dispatch was unresolved",
        )
    ]
    scenario = result.violations[0].scenario
    assert [(e.kind, e.step) for e in scenario.events] == [
        ("observe", "find_room"),
        ("observe", "book_room"),
    ]
    replayed = simulate(unsafe, scenario)
    assert replayed.held  # expect describes the violating end
    found = check(unsafe, replayed.run.snapshot, replayed.run.trace)
    assert [f.invariant for f in found] == ["unkeyed_redispatch"]


def test_a_counterexample_survives_a_yaml_round_trip():
    unsafe = fixture("unsafe-retry-booking.yaml")
    violation = explore(unsafe, SMALL).violations[0]
    text = yaml.safe_dump(scenario_dict(violation.scenario))
    again = simulate(unsafe, load_scenario(text))
    assert again.held
    assert check(unsafe, again.run.snapshot, again.run.trace)


@pytest.mark.parametrize(
    "name", ["flight-roundtrip.yaml", "card-payment.yaml", "cloud-provisioning.yaml"]
)
def test_a_safe_fixture_breaks_no_invariant_with_one_fault(name):
    result = explore(fixture(name), SMALL)
    assert result.violations == []
    assert result.terminals["done"] > 0 and not result.truncated


@pytest.mark.parametrize(
    "name",
    [
        "flight-roundtrip.yaml",
        "card-payment.yaml",
        "cloud-provisioning.yaml",
    ],
)
def test_a_safe_fixture_breaks_no_invariant_with_two_faults(name):
    result = explore(fixture(name), Bounds(max_faults=2))
    assert [(v.invariant, v.message) for v in result.violations] == []


def vouched_booking():
    """The booking with a timeout at book vouched for: its counterexamples pick an option."""
    doc = booking()
    vouched = chain("""
        id: unsafe_rows
        verdict_table:
          - {id: U1, signal: [timeout, http:503], scope: {steps: [book]}, verdict: retry,
             no_side_effect: true}
    """)
    return doc.model_copy(update={"verdict_table": [*vouched.verdict_table, *doc.verdict_table]})


def test_every_violation_of_a_test_chain_replays_to_its_invariant():
    doc = vouched_booking()
    result = explore(doc, Bounds(max_faults=2))
    assert len(result.violations) > 1  # a vouched-for timeout re-dispatches the commit
    for v in result.violations:
        run = simulate(doc, v.scenario).run
        assert (v.invariant, v.message) in {
            (f.invariant, f.message) for f in check(doc, run.snapshot, run.trace)
        }


@pytest.mark.parametrize(
    "doc, max_faults",
    [
        (vouched_booking(), 2),
        (chain((FIXTURE_DIR / "card-hold.yaml").read_text()), 2),
        (chain((FIXTURE_DIR / "held-booking.yaml").read_text()), 1),
    ],
    ids=["booking", "card-hold", "held-booking"],
)
def test_every_counterexample_event_names_the_step_or_gate_it_answers(doc, max_faults):
    result = explore(doc, Bounds(max_faults=max_faults))
    events = [e for v in result.violations for e in v.scenario.events]
    answering = [e for e in events if e.kind in ("observe", "select", "probe", "answer")]
    assert answering and all(
        (e.answer.gate if e.kind == "answer" else e.step) is not None for e in answering
    )
    for v in result.violations:  # a named step the run does not wait at is a mismatch
        simulate(doc, v.scenario)


def test_shards_together_are_the_unsharded_search():
    doc = fixture("flight-roundtrip.yaml")
    whole = explore(doc, SMALL)
    parts = [explore(doc, SMALL, shard=(i, 3)) for i in range(3)]
    assert all(p.states < whole.states for p in parts)
    merged = merge(parts)
    assert merged.states == whole.states
    assert merged.terminals == whole.terminals
    assert merged.keys == whole.keys


def test_merged_states_draw_the_same_jitter_so_any_shard_count_is_exact():
    # Backoff jitter once came from the event count, which the state key leaves
    # out: runs merged as one state then diverged, and 8 shards of the flight
    # fixture found states the unsharded search did not.
    doc = fixture("flight-roundtrip.yaml")
    bounds = Bounds(max_faults=2)
    whole = explore(doc, bounds)
    merged = merge([explore(doc, bounds, shard=(i, 8)) for i in range(8)])
    assert (merged.states, merged.terminals) == (whole.states, whole.terminals)


def test_eight_shards_share_the_flight_search_evenly():
    # The old split (four nodes a shard, then position modulo count) gave shard 0
    # 2161 of these states and the lightest 131: 4.0x the mean. Balanced: 1.49x.
    doc = fixture("flight-roundtrip.yaml")
    states = [explore(doc, Bounds(max_faults=2), shard=(i, 8)).states for i in range(8)]
    assert max(states) <= 2 * sum(states) / 8


def test_a_shard_explores_the_same_share_every_time():
    doc = fixture("flight-roundtrip.yaml")
    assert explore(doc, SMALL, shard=(1, 4)).keys == explore(doc, SMALL, shard=(1, 4)).keys


def test_shards_find_the_same_violations_at_the_same_lengths():
    doc = fixture("unsafe-retry-booking.yaml")
    whole = explore(doc, Bounds(max_faults=2))
    merged = merge([explore(doc, Bounds(max_faults=2), shard=(i, 2)) for i in range(2)])
    assert merged.states == whole.states and merged.terminals == whole.terminals

    def shape(r: ExploreResult):
        return [(v.invariant, v.message, len(v.scenario.events)) for v in r.violations]

    assert shape(merged) == shape(whole)


def test_a_merged_result_reports_the_largest_shard_peak_memory():
    doc = fixture("unsafe-retry-booking.yaml")
    parts = [explore(doc, SMALL, shard=(i, 2)) for i in range(2)]
    parts[0].peak_mb, parts[1].peak_mb = 120.0, 80.5
    assert merge(parts).peak_mb == 120.0


def test_shards_from_two_explorer_versions_add_up_their_states_and_say_so():
    # A campaign whose shards ran on both sides of an upgrade: their digests never
    # meet, so a union would count every state two shards share twice, silently.
    doc = fixture("flight-roundtrip.yaml")
    parts = [ExploreResult.from_dict(explore(doc, SMALL, shard=(i, 2)).as_dict()) for i in range(2)]
    parts[0].digest_version = 0
    merged = merge(parts)
    assert merged.states == parts[0].states + parts[1].states
    assert not merged.states_exact and merged.as_dict()["states_exact"] is False


def test_shards_of_one_explorer_version_merge_exactly():
    doc = fixture("flight-roundtrip.yaml")
    parts = [ExploreResult.from_dict(explore(doc, SMALL, shard=(i, 2)).as_dict()) for i in range(2)]
    merged = merge(parts)
    assert merged.states_exact and merged.digest_version == DIGEST_VERSION
    assert merged.states == explore(doc, SMALL).states


def test_a_shard_stored_before_digest_versions_reads_back_without_one():
    data = explore(fixture("unsafe-retry-booking.yaml"), SMALL, shard=(0, 2)).as_dict()
    assert data["digest_version"] == DIGEST_VERSION
    del data["digest_version"], data["states_exact"]
    stored = ExploreResult.from_dict(data)
    assert stored.digest_version is None and stored.states_exact


def test_merge_keeps_the_shortest_scenario_and_survives_json():
    doc = fixture("unsafe-retry-booking.yaml")
    parts = [explore(doc, SMALL, shard=(i, 2)) for i in range(2)]
    stored = [ExploreResult.from_dict(p.as_dict()) for p in parts]
    assert merge(stored).states == merge(parts).states
    longer = ExploreResult.from_dict(parts[0].as_dict())
    v = longer.violations[0]
    v.scenario = v.scenario.model_copy(update={"events": [*v.scenario.events] * 2})
    assert merge([longer, parts[1]]).violations[0].scenario == parts[1].violations[0].scenario


def test_should_stop_ends_the_search_early_and_says_so():
    doc = fixture("flight-roundtrip.yaml")
    calls = []
    result = explore(doc, SMALL, should_stop=lambda: True, progress=calls.append)
    assert result.truncated
    assert result.states < explore(doc, SMALL).states
    assert calls and calls == sorted(calls)


def test_max_events_cuts_paths_and_counts_them():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=0, max_events=4))
    assert result.cut == 1 and result.terminals == {}


def test_no_faults_walks_the_happy_path_only():
    result = explore(fixture("card-payment.yaml"), Bounds(max_faults=0))
    assert result.terminals == {"done": 1} and result.paths == 1


def test_the_state_key_ignores_event_numbering_but_not_budgets():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    monitor = Monitor(run.spec)
    key = state_key(run.snapshot, monitor)
    renumbered = run.snapshot.model_copy(update={"seq": 99, "run_id": "other"})
    assert state_key(renumbered, monitor) == key
    spent = run.snapshot.model_copy(deep=True)
    spent.budgets.rewinds_left -= 1
    assert state_key(spent, monitor) != key


def test_the_state_key_of_a_pinned_state_is_unchanged_at_this_digest_version():
    # A change to what state_digest writes must raise DIGEST_VERSION, or a campaign
    # spanning the upgrade would union shard digests that never meet: update both.
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR"}, run_id="pinned")
    run.observe(Observation())
    key = state_key(run.snapshot, Monitor(run.spec))
    assert (DIGEST_VERSION, key) == (13, "f2f3448d78d1bdbc")


def test_the_state_key_ignores_the_sealed_store_which_the_runtime_never_reads():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR"})
    monitor = Monitor(run.spec)
    more = run.snapshot.model_copy(update={"sealed": {**run.snapshot.sealed, "sealed:x:1": 2}})
    assert state_key(more, monitor) == state_key(run.snapshot, monitor)


@pytest.mark.parametrize(
    "name",
    [
        "flight-roundtrip.yaml",
        "card-payment.yaml",
        "cloud-provisioning.yaml",
        "unsafe-retry-booking.yaml",
    ],
)
def test_every_snapshot_the_explorer_crashes_comes_back_the_same_from_json(name, monkeypatch):
    # The explorer resumes a crash from a copy where the simulator goes through JSON.
    crashed = []
    resume = Run.resume.__func__

    def recording(cls, chain, snapshot, trace):
        crashed.append(snapshot.model_dump_json())
        return resume(cls, chain, snapshot, trace)

    monkeypatch.setattr(Run, "resume", classmethod(recording))
    explore(fixture(name), SMALL)
    assert crashed
    for text in crashed:
        assert Snapshot.model_validate_json(text).model_dump_json() == text


@pytest.mark.parametrize(
    "name", ["flight-roundtrip.yaml", "cloud-provisioning.yaml", "unsafe-retry-booking.yaml"]
)
def test_a_key_written_from_its_parents_fields_is_the_key_written_whole(name, monkeypatch):
    incremental = search.digest_and_written
    pairs = []

    def both(snapshot, monitor, parent):
        digest, written = incremental(snapshot, monitor, parent)
        whole, _ = incremental(snapshot, monitor, None)
        pairs.append((digest, whole, parent is not None))
        return digest, written

    monkeypatch.setattr(search, "digest_and_written", both)
    explore(fixture(name), Bounds(max_faults=2))
    assert sum(from_parent for *_, from_parent in pairs) > 100
    assert all(mine == whole for mine, whole, _ in pairs)


def test_bounds_are_checked():
    with pytest.raises(ValueError):
        explore(booking(), Bounds(max_faults=-1))
    with pytest.raises(ValueError):
        explore(booking(), SMALL, shard=(2, 2))


def test_a_cloned_snapshot_equals_the_original_and_shares_nothing_it_could_change():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR"})
    run.observe(Observation())
    copy = clone(run.snapshot)
    assert copy == run.snapshot
    copy.dispatches["outbound_search"] = 9
    copy.intent["origin"] = "CDG"
    copy.budgets.rewinds_left -= 1
    assert copy != run.snapshot and run.snapshot.intent["origin"] == "LHR"
    assert run.snapshot.dispatches["outbound_search"] == 1


def test_a_cloned_snapshot_copies_each_list_of_results_and_shares_the_options_in_them():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR"})
    run.observe(Observation(options=[{"id": "a"}, {"id": "b"}]))
    alias, options = next(iter(run.snapshot.results.items()))
    copy = clone(run.snapshot)
    assert copy.results[alias] == options and copy.results[alias] is not options
    assert copy.results[alias][0] is options[0]


def test_a_cloned_snapshot_copies_its_intent_and_sealed_store_and_shares_their_values():
    dates = {"out": "2026-05-01", "back": "2026-05-09"}
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={"origin": "LHR", "dates": dates})
    copy = clone(run.snapshot)
    assert copy.intent == run.snapshot.intent and copy.intent is not run.snapshot.intent
    assert copy.sealed == run.snapshot.sealed and copy.sealed is not run.snapshot.sealed
    assert copy.intent["dates"] is run.snapshot.intent["dates"]  # replaced, never changed
    copy.intent.update({"dates": {"out": "2026-06-01"}})
    assert run.snapshot.intent["dates"] == dates


def test_a_cloned_snapshot_shares_its_handles_which_the_runtime_replaces_and_never_changes():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    run.observe(Observation())
    copy = clone(run.snapshot)
    handle = next(iter(copy.handles))
    assert copy.handles[handle] is run.snapshot.handles[handle]
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.handles[handle].spent = True


def test_a_kept_observation_choice_carries_the_observation_its_event_makes():
    search = Search(fixture("flight-roundtrip.yaml"), SMALL, None, None)
    (root,) = search.start()
    observed = [c for c in search.choices(root.run) if "observe" in c.event]
    assert observed
    assert all(c.observation == Observation.model_validate(c.event["observe"]) for c in observed)


def test_a_search_branch_writes_its_events_without_the_budget_stamp():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    branch = fork(run)
    branch.observe(Observation(transport="timeout"))
    assert branch.trace and all(e.budget_after == {} for e in branch.trace)
    assert [e.row for e in branch.trace] == ["#6"]


def test_a_run_of_the_simulator_stamps_the_budgets_on_every_event():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    run.observe(Observation(transport="timeout"))
    assert run.trace[-1].budget_after["step_attempts_left"] == 2


def test_every_run_waiting_on_a_step_shares_one_frozen_wait():
    first, second = (Run.start(fixture("flight-roundtrip.yaml"), intent={}) for _ in range(2))
    assert first.snapshot.waiting is second.snapshot.waiting is observing("outbound_search")
    assert clone(first.snapshot).waiting is first.snapshot.waiting
    with pytest.raises(ValidationError):
        first.snapshot.waiting.step = "elsewhere"


def test_runs_waiting_for_an_observation_are_one_state_whatever_they_last_observed():
    timed_out, failed = (Run.start(fixture("flight-roundtrip.yaml"), intent={}) for _ in range(2))
    timed_out.observe(Observation(transport="timeout"))
    failed.observe(Observation(transport="http:503"))
    assert timed_out.snapshot.waiting.kind == "observe"
    assert timed_out.snapshot.last_observation != failed.snapshot.last_observation
    monitor = Monitor(timed_out.spec)
    assert state_key(timed_out.snapshot, monitor) == state_key(failed.snapshot, monitor)


def _with_last_observation(snapshot: Snapshot, transport: str) -> Snapshot:
    return snapshot.model_copy(update={"last_observation": Observation(transport=transport)})


@pytest.mark.parametrize(("kind", "kept"), [("raised", True), ("entry", False)])
def test_only_a_raised_gate_keeps_its_last_observation_in_its_state(kind, kept):
    # a raised gate answered ok lands its step with that response; an entry gate reads none
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    parked = run.snapshot.model_copy(
        update={
            "waiting": Waiting(kind="answer", gate="g"),
            "gate_context": GateContext(gate="g", kind=kind),
        }
    )
    monitor = Monitor(run.spec)
    keys = {state_key(_with_last_observation(parked, t), monitor) for t in ("http:409", "timeout")}
    assert len(keys) == (2 if kept else 1)


def test_runs_waiting_for_a_selection_are_one_state_whatever_they_last_observed():
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    run.observe(Observation(options=[Option(id="o1")]))
    assert run.snapshot.waiting.kind == "select"
    monitor = Monitor(run.spec)
    keys = {state_key(_with_last_observation(run.snapshot, t), monitor) for t in ("a", "b")}
    assert len(keys) == 1


def test_runs_that_differ_only_in_intent_values_are_one_state():
    # intent values decide nothing: predicates match by name, values go to sealed references
    first, second = (
        Run.start(
            fixture("unsafe-retry-booking.yaml"),
            intent={"hotel": "h1", "nights": 2, "guest": guest},
        )
        for guest in ("Ada", "Grace")
    )
    for run in (first, second):
        run.observe(Observation())  # find_room; book_room's correlation record is persisted
    assert first.snapshot.correlation[0].intent_ref != second.snapshot.correlation[0].intent_ref
    monitor = Monitor(first.spec)
    assert state_key(first.snapshot, monitor) == state_key(second.snapshot, monitor)


def test_a_search_leaves_the_cyclic_collector_as_it_found_it():
    explore(booking(), SMALL)
    assert gc.isenabled()
    gc.disable()
    try:
        explore(booking(), SMALL)
        assert not gc.isenabled()
    finally:
        gc.enable()


KEYED_HOLD = """
id: keyed_hold
handles:
  - {id: pnr, minted_by: hold_seat}
actions:
  - {id: find_seat, effect: read}
  - id: hold_seat
    effect: commit
    output: {handles: [pnr]}
    idempotency: {mode: keyed}
    confirmation: {probe: read_pnr, signal: pnr exists}
    compensation: {action: none}
  - {id: read_pnr, effect: read, probe_only: true}
"""


@pytest.mark.parametrize(("step", "kept"), [("find_seat", False), ("hold_seat", True)])
def test_only_a_keyed_commit_keeps_how_often_it_was_reached_in_the_state(step, kept):
    # a keyed commit's arrival count numbers its idempotency key; no other step's is read
    run = Run.start(chain(KEYED_HOLD))
    monitor = Monitor(run.spec)
    keys = {
        state_key(run.snapshot.model_copy(update={"arrivals": {step: n}}), monitor) for n in (1, 2)
    }
    assert len(keys) == (2 if kept else 1)


REPAIRED_BOOKING = """
id: repaired_booking
handles:
  - {id: offer, minted_by: search, staleness: {detect: [http:410]}}
  - {id: quote, minted_by: price, staleness: {detect: [http:410]}}
actions:
  - {id: search, effect: read, output: {handles: [offer]}}
  - {id: price, effect: read, input: {handles: [offer]}, output: {handles: [quote]}}
  - id: book
    effect: read
    input: {handles: [offer, quote]}
    auto_repairs:
      - {trigger: http:422, fields: [passenger]}
      - {trigger: http:409, fields: [seat], once: false}
"""


def _booking_key(**update) -> str:
    run = Run.start(chain(REPAIRED_BOOKING))
    return state_key(run.snapshot.model_copy(update=update), Monitor(run.spec))


def test_the_state_key_keeps_which_once_auto_repairs_fired_not_their_order_or_repeats():
    assert _booking_key(auto_repairs_fired=["book#1", "book#2", "book#2"]) == _booking_key(
        auto_repairs_fired=["book#2", "book#1"]
    )
    assert _booking_key(auto_repairs_fired=["book#2"]) == _booking_key()
    assert _booking_key(auto_repairs_fired=["book#1"]) != _booking_key()


def test_the_state_key_counts_stale_recurrences_up_to_the_candidates_less_one():
    # two inputs detect staleness: a count of 0 rewinds for the deepest, 1 or more the other
    # (test_classifier: unattributable staleness past the last candidate picks the last)
    key = "book|http:410"
    counts = {n: _booking_key(stale_recurrences={key: n}) for n in (0, 1, 2, 5)}
    assert counts[0] != counts[1] == counts[2] == counts[5]


MINTED = """
id: minted
handles:
  - {id: offer, minted_by: search}
  - {id: quote, minted_by: price, derived_from: [offer]}
actions:
  - {id: search, effect: read, output: {handles: [offer]}}
  - {id: price, effect: read, input: {handles: [offer]}, output: {handles: [quote]}}
  - id: book
    effect: commit
    input: {handles: [quote]}
    idempotency: {mode: keyed}
    compensation: {action: none}
"""


def _minted_key(**update) -> str:
    run = Run.start(chain(MINTED))
    return state_key(run.snapshot.model_copy(update=update), Monitor(run.spec))


def test_the_state_key_keeps_whether_a_commits_input_was_minted_not_how_often():
    # a commit dispatched without its quote is told apart by whether one was ever minted
    assert _minted_key(mint_counts={"quote": 1}) == _minted_key(mint_counts={"quote": 3})
    assert _minted_key(mint_counts={"quote": 1}) != _minted_key()


def test_the_state_key_leaves_out_whether_a_handle_no_commit_takes_was_minted():
    # the next offer's alias is new either way: offer#1 or offer#3 make the same future
    assert _minted_key(mint_counts={"offer": 2}) == _minted_key()


def _offer_and_quote(offers: int, quote_from: int) -> str:
    """A key with the offers minted ``offers`` times, the last live, and a quote of the
    ``quote_from``-th offer."""

    def handle(alias: str, seq: int, lineage: list[str]) -> HandleState:
        return HandleState(alias=alias, lineage=lineage, minted_by="search", minted_seq=seq)

    live = {
        "offer": handle(f"offer#{offers}", 1, []),
        "quote": handle("quote#1", 2, [f"offer#{quote_from}"]),
    }
    return _minted_key(handles=live, mint_counts={"offer": offers, "quote": 1})


def test_the_state_key_numbers_aliases_back_from_their_handles_latest_mint():
    # offer#2 and offer#5, each the latest of its run, name the same thing to what follows
    assert _offer_and_quote(offers=2, quote_from=2) == _offer_and_quote(offers=5, quote_from=5)
    # a quote of the latest offer is not a quote of the one before it
    assert _offer_and_quote(offers=2, quote_from=2) != _offer_and_quote(offers=2, quote_from=1)
    assert _offer_and_quote(offers=2, quote_from=1) == _offer_and_quote(offers=5, quote_from=4)


@pytest.mark.parametrize(
    "name", ["flight-roundtrip.yaml", "card-payment.yaml", "cloud-provisioning.yaml"]
)
def test_every_live_alias_the_explorer_keys_is_its_handles_latest_mint(name, monkeypatch):
    # the state key leaves a live alias out, as (handle, 0), on this premise
    seen = []
    keyed = search.digest_and_written

    def checking(snapshot, monitor, parent):
        seen.extend(
            (st.alias, f"{h}#{snapshot.mint_counts[h]}") for h, st in snapshot.handles.items()
        )
        return keyed(snapshot, monitor, parent)

    monkeypatch.setattr(search, "digest_and_written", checking)
    explore(fixture(name), Bounds(max_faults=2))
    assert seen and all(alias == latest for alias, latest in seen)


def test_a_fan_out_branch_keeps_its_mint_counts_and_live_aliases_in_the_state_key():
    # branches number a shared handle's aliases through the group's counts
    assert _minted_key(branch_of="parent", mint_counts={"offer": 2}) != _minted_key(
        branch_of="parent", mint_counts={"offer": 3}
    )
    offers = [
        {"offer": HandleState(alias=alias, lineage=[], minted_by="search", minted_seq=1)}
        for alias in ("offer#2", "offer#3")
    ]
    counts = {"offer": 3}
    assert _minted_key(branch_of="parent", handles=offers[0], mint_counts=counts) != _minted_key(
        branch_of="parent", handles=offers[1], mint_counts=counts
    )


def _at_the_probe_of_book_trip() -> Run:
    run = Run.start(fixture("flight-roundtrip.yaml"), intent={})
    while run.snapshot.waiting.step != "book_trip":
        free = next(c for c in choices(run.spec, run) if not c.fault)
        run = apply_event(run.spec, run, free.event)
    run.observe(Observation(transport="timeout"))  # an unkeyed commit's outcome is unknown
    assert run.snapshot.waiting.kind == "probe"
    return run


def test_a_search_offers_at_a_probe_what_the_palette_offers_as_time_passes():
    run = _at_the_probe_of_book_trip()
    search = Search(run.spec, Bounds(max_faults=2), None, None)
    for _ in range(2):
        expected = [(c.event, c.fault) for c in choices(run.spec, run)]
        assert [(c.event, c.fault) for c in search.choices(run)] == expected
        run.wait(3600)  # the waits past the async deadline and the sweep come nearer


def test_a_search_keeps_the_probe_choices_of_an_age_it_has_seen():
    run = _at_the_probe_of_book_trip()
    search = Search(run.spec, Bounds(max_faults=2), None, None)
    assert search.choices(run) is search.choices(fork(run))
