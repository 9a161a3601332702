"""CONFORMANCE C3: invalidation and lineage."""

from __future__ import annotations

import pytest

from chains.core.sim.fanout import Fanout
from chains.core.sim.runtime import Run, SimulationError
from chains.core.sim.state import Option, Proposal, Snapshot

from ..builders import (
    BOOKING,
    OK,
    OPTIONS,
    chain,
    drive_to_book,
    events,
    fixture,
    obs,
    start_booking,
)

RESORTED = [  # a re-search: same flights, new provider ids, new order
    Option(id="n2", key={"carrier": "XB", "flight": "202"}),
    Option(id="n1", key={"carrier": "XA", "flight": "101"}),
]


def two_branches() -> tuple[Run, Run, Run]:
    """A shared search (search_id#1) and two branches, a picking o1 and b o2 (I7)."""
    prefix = start_booking()
    prefix.observe(obs(options=OPTIONS))
    group = Fanout(prefix)
    a, b = group.branch(), group.branch()
    a.select("o1")
    b.select("o2")
    return prefix, a, b


def at_lock_price():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    assert run.waiting().step == "lock_price"
    return run


def test_c3_1_transitive_invalidation_is_atomic():
    run = at_lock_price()
    run.observe(obs("http:410", "SEARCH_EXPIRED"))
    attempt = events(run, "attempt", "lock_price")[-1]
    assert attempt.verdict == "rewind(to: search)"
    assert attempt.handles_invalidated == ["search_id#1", "pick#1", "quote_id#1"]
    assert run.snapshot.handles == {}
    assert run.snapshot.results == {}


def test_c3_2_replace_never_append():
    run = at_lock_price()
    run.observe(obs("http:410", "SEARCH_EXPIRED"))
    run.observe(obs(options=RESORTED))
    assert list(run.snapshot.results) == ["search_id#2"]  # keyed by the producing lineage
    run.observe(OK)
    run.observe(OK)
    live = run.snapshot.handles
    assert live["quote_id"].lineage == ["pick#2"]
    assert live["pick"].lineage == ["search_id#2"]
    assert live["lock"].lineage == ["quote_id#2"]
    consumed = events(run, "attempt", "lock_price")[-1].handles_consumed
    assert consumed == ["search_id#2", "quote_id#2"]


def test_c3_3_selection_replay_via_rematch_only():
    run = at_lock_price()
    run.observe(obs("http:410", "SEARCH_EXPIRED"))
    run.observe(obs(options=RESORTED))
    rematch = [e for e in run.trace if e.row == "rematch"]
    assert len(rematch) == 1 and rematch[0].proposal_source == "code"
    pick = run.snapshot.handles["pick"]
    assert pick.alias == "pick#2" and pick.option is not None and pick.option.id == "n1"
    assert run.waiting().step == "quote"  # no model was asked
    run.observe(OK)
    assert events(run, "attempt", "quote")[-1].handles_consumed == ["pick#2"]


def test_c3_3_ambiguous_rematch_goes_to_on_ambiguous():
    run = at_lock_price()
    run.observe(obs("http:410", "SEARCH_EXPIRED"))
    twins = [
        Option(id="t1", key={"carrier": "XA", "flight": "101"}),
        Option(id="t2", key={"carrier": "XA", "flight": "101"}),
    ]
    run.observe(obs(options=twins))
    waiting = run.waiting()
    assert (waiting.kind, waiting.audience) == ("select", "model")
    assert [o.id for o in waiting.options] == ["t1", "t2"]


TWINS = [  # a re-search: two fares of the picked flight, told apart by nothing in the key
    Option(id="t1", key={"carrier": "XA", "flight": "101"}),
    Option(id="t2", key={"carrier": "XA", "flight": "101"}),
]
RESCHEDULED = [  # a re-search: the picked flight is no longer offered
    Option(id="r1", key={"carrier": "XB", "flight": "202"}),
    Option(id="r2", key={"carrier": "XC", "flight": "303"}),
]


def re_searched_with_gate(options: list[Option]) -> Run:
    """The booking whose pick re-matches to a person (on_ambiguous: gate), re-searched."""
    doc = chain(BOOKING.replace("on_ambiguous: model", "on_ambiguous: gate"))
    run = start_booking(doc)
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(OK)
    run.observe(obs("http:410", "SEARCH_EXPIRED"))  # lock_price → rewind(to: search)
    run.observe(obs(options=options))
    return run


@pytest.mark.parametrize("options", [TWINS, RESCHEDULED], ids=["two matches", "no match"])
def test_c3_3_on_ambiguous_gate_parks_the_run_until_a_person_picks(options):
    run = re_searched_with_gate(options)
    waiting = run.waiting()
    assert run.snapshot.state == "at_gate"
    assert (waiting.kind, waiting.step, waiting.audience) == ("select", "choose", "user")
    assert [o.id for o in waiting.options] == [o.id for o in options]


def test_c3_3_a_model_cannot_pick_at_the_rematch_gate():
    run = re_searched_with_gate(TWINS)
    assert not run.propose(Proposal(kind="select", value="t1"))
    refused = run.trace[-1]
    assert refused.note is not None and refused.note.startswith("rejected select proposal")
    assert run.snapshot.state == "at_gate" and "pick" not in run.snapshot.handles


def test_c3_3_a_person_s_pick_at_the_rematch_gate_resumes_the_run():
    run = re_searched_with_gate(TWINS)
    run.select("t2")
    assert run.snapshot.state == "running" and run.waiting().step == "quote"
    assert run.snapshot.handles["pick"].option == TWINS[1]
    assert events(run, "transition", "choose")[-1].proposal_source == "user"


def test_c3_3_no_rematch_candidate_goes_to_the_model_when_on_ambiguous_is_model():
    run = at_lock_price()
    run.observe(obs("http:410", "SEARCH_EXPIRED"))
    run.observe(obs(options=RESCHEDULED))
    waiting = run.waiting()
    assert run.snapshot.state == "running"
    assert (waiting.kind, waiting.audience) == ("select", "model")
    note = [e for e in run.trace if e.row == "rematch"][-1].note
    assert note is not None and "0 matches" in note


def test_c3_4_landed_commits_are_not_cache():
    run = drive_to_book(start_booking())
    run.observe(obs("http:410", "LOCK_EXPIRED"))  # rewind(to: lock_price)
    assert run.snapshot.commits_landed == []
    run.observe(OK)  # lock_price
    run.probe("not_landed")  # nobody vouched for the 410: probe before booking again
    run.observe(OK)
    assert [lc.step for lc in run.snapshot.commits_landed] == ["book"]
    (landed,) = run.snapshot.commits_landed
    assert landed.handles == ["booking_ref#1"]
    assert run.snapshot.state == "done"


def test_c3_4_invalidation_sweeping_past_a_landed_commit_leaves_it_landed():
    """I5 keeps the landed commit (and what compensation needs); I1 still kills the
    live handle it minted from the re-minted lineage."""
    run = Run.start(fixture("card-payment.yaml"), intent={"instrument": "pm_1"})
    run.observe(OK)  # create_customer
    run.observe(OK)  # create_intent
    run.answer("approve")
    run.observe(OK)  # confirm_intent: the hold (authorization) is a landed fact
    run.observe(obs("http:400", "authorization_expired"))  # capture → rewind(create_intent)
    rewind = events(run, "attempt", "capture")[-1]
    assert rewind.verdict == "rewind(to: create_intent)"
    assert rewind.handles_invalidated == ["intent_ref#1", "authorization#1"]
    assert "authorization" not in run.snapshot.handles
    assert run.snapshot.commits_landed[1].handles == ["authorization#1"]
    landed = [lc.step for lc in run.snapshot.commits_landed]
    assert landed == ["create_customer", "confirm_intent"]
    assert not any(lc.compensated for lc in run.snapshot.commits_landed)


def test_c3_5_reselect_excludes_the_failed_option():
    run = start_booking()
    run.observe(obs(options=OPTIONS))
    run.select("o1")
    run.observe(obs("http:409", "SOLD_OUT"))  # quote → reselect(to: choose)
    attempt = events(run, "attempt", "quote")[-1]
    assert attempt.verdict == "reselect(to: choose)"
    assert attempt.handles_invalidated == ["pick#1"]
    assert run.snapshot.excluded == {"choose": ["o1"]}
    waiting = run.waiting()
    assert waiting.kind == "select" and [o.id for o in waiting.options] == ["o2"]
    assert not [e for e in run.trace if e.row == "rematch"]  # rematch bypassed
    with pytest.raises(SimulationError, match="excluded"):
        run.select("o1")
    run.select("o2")
    assert run.snapshot.handles["pick"].option.id == "o2"  # type: ignore[union-attr]


def test_c3_6_shared_handle_death_propagates_across_branches():
    prefix, a, b = two_branches()
    a.observe(OK)  # quote
    b.observe(OK)  # quote; b's lock_price dispatch is out before anyone knows
    a.observe(obs("http:410", "SEARCH_EXPIRED"))  # a discovers the shared handle is stale
    assert a.waiting().step == "search"
    a.observe(obs(options=RESORTED))  # a re-mints once and re-shares search_id#2
    assert a.snapshot.handles["pick"].option.id == "n1"  # type: ignore[union-attr]
    # b reaches its next step: the dead handle and its descendants go first
    b.observe(OK)  # lock_price answers; b arrives at book with a dead lineage
    synced = [e for e in b.trace if e.row == "I7:shared"]
    assert len(synced) == 1
    assert set(synced[0].handles_invalidated) >= {"search_id#1", "pick#1"}
    assert b.snapshot.handles["search_id"].alias == "search_id#2"
    assert b.snapshot.dispatches.get("search", 0) == 0  # re-minted once, by a
    assert b.snapshot.handles["pick"].option.id == "n2"  # type: ignore[union-attr]
    assert b.snapshot.handles["pick"].lineage == ["search_id#2"]
    assert a.snapshot.budgets.rewinds_left == b.snapshot.budgets.rewinds_left == 2
    assert prefix.snapshot.budgets.rewinds_left == 3  # budgets are per run


def test_c3_6_a_sibling_arriving_mid_re_mint_waits_for_the_re_share():
    """I7: "the re-mint is performed once, by whichever run acts first, and re-shared"."""
    prefix, a, b = two_branches()
    a.observe(OK)
    a.observe(obs("http:410", "SEARCH_EXPIRED"))  # a marks it dead; its re-search is out
    b.observe(OK)  # quote done; arriving at lock_price with a dead shared handle
    w = b.waiting()
    assert (w.kind, w.step, w.fields) == ("shared", "search", ["search_id"])
    assert "search_id" not in b.snapshot.handles and "pick" not in b.snapshot.handles
    a.observe(obs(options=RESORTED))  # a re-mints search_id#2 and re-shares it
    assert b.snapshot.handles["search_id"].alias == "search_id#2"
    assert b.snapshot.dispatches.get("search", 0) == 0  # re-minted once, by a
    assert b.snapshot.handles["pick"].lineage == ["search_id#2"]
    assert b.snapshot.handles["pick"].option.id == "n2"  # type: ignore[union-attr]
    assert b.waiting().step == "quote"
    assert b.trace[-1].seq == b.snapshot.seq  # b's own trace recorded the adoption


def test_c3_6_with_no_live_sibling_re_minting_a_branch_re_mints_itself():
    prefix, a, b = two_branches()
    a.observe(OK)
    a.observe(obs("http:410", "SEARCH_EXPIRED"))  # a marks it dead, then gives up
    for _ in range(3):
        a.observe(obs("http:503"))
    assert a.finished
    b.observe(OK)
    assert b.waiting().step == "search"
    b.observe(obs(options=RESORTED))
    assert b.snapshot.handles["search_id"].alias == "search_id#2"
    assert b.snapshot.handles["pick"].lineage == ["search_id#2"]


def test_c3_6_the_group_lives_in_the_snapshots_and_resumes_from_them():
    """C3.6 + C7.4: the shared store is in the parent's snapshot, each branch names its
    parent; JSON copies of the snapshots alone resume the group mid re-mint."""
    prefix, a, b = two_branches()
    a.observe(OK)
    a.observe(obs("http:410", "SEARCH_EXPIRED"))
    b.observe(OK)  # b waits for a's re-share
    store = prefix.snapshot.fanout
    assert store is not None and store.branches == [a.snapshot.run_id, b.snapshot.run_id]
    assert store.dead == ["search_id#1"] and store.reminting == {"search_id": a.snapshot.run_id}
    assert b.snapshot.branch_of == prefix.snapshot.run_id

    def copy(run):
        return Snapshot.model_validate_json(run.snapshot.model_dump_json()), list(run.trace)

    parent = Run.resume(prefix.spec, *copy(prefix))
    again = Fanout.resume(parent, [copy(a), copy(b)])
    a2, b2 = again.branches
    a2.observe(obs(options=RESORTED))
    assert b2.snapshot.handles["search_id"].alias == "search_id#2"
    assert b2.snapshot.dispatches.get("search", 0) == 0


def test_c3_6_a_sibling_whose_own_step_finds_the_handle_stale_adopts_the_re_share():
    """I7: a sibling re-minted search_id#2 while b's lock_price was out; b's own 410
    rewinds b, which takes the re-shared handle instead of searching a second time."""
    prefix, a, b = two_branches()
    a.observe(OK)
    b.observe(OK)  # both wait for lock_price on search_id#1
    a.observe(obs("http:410", "SEARCH_EXPIRED"))
    a.observe(obs(options=RESORTED))  # a re-mints search_id#2 and re-shares it
    b.observe(obs("http:410", "SEARCH_EXPIRED"))
    assert b.snapshot.handles["search_id"].alias == "search_id#2"
    assert b.snapshot.dispatches.get("search", 0) == 0
    assert b.snapshot.budgets.rewinds_left == 2  # its own rewind, paid once
