"""The invariants on hand-built traces and snapshots."""

from __future__ import annotations

from chains.core.sim.invariants import Monitor, check, is_money_or_consent_gate
from chains.core.sim.state import Budgets, Event, HandleState, LandedCommit, Snapshot, Waiting

from .builders import booking, chain, fixture


def attempt(seq, step, transport="http:200", verdict="ok", row="#3", consumed=(), **kw) -> Event:
    return Event(
        seq=seq,
        event_type="attempt",
        step_id=step,
        signal={"transport": transport, **({"code": kw.pop("code")} if "code" in kw else {})},
        verdict=verdict,
        row=row,
        handles_consumed=list(consumed),
        **kw,
    )


def probe(seq, step, result) -> Event:
    return Event(seq=seq, event_type="reconcile", step_id=step, signal={"probe": result})


def snapshot(**kw) -> Snapshot:
    return Snapshot(run_id="r", chain_id="booking", **kw)


def invariants(found) -> list[str]:
    return [f.invariant for f in found]


def test_an_unkeyed_commit_dispatched_again_after_a_timeout_breaks_exactly_once():
    trace = [
        attempt(1, "book", "timeout", "reconcile", "#7"),
        attempt(2, "book"),
    ]
    found = check(booking(), snapshot(state="done"), trace)
    assert invariants(found) == ["unkeyed_redispatch"]
    assert "(timeout -> reconcile)" in found[0].message


def test_a_second_dispatch_after_one_that_landed_says_the_first_landed():
    """A rewind past a landed unkeyed commit books again (SPEC P3, I5): say it landed."""
    trace = [attempt(1, "book"), attempt(2, "book")]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert finding.message == (
        "unkeyed commit book was dispatched again although its earlier dispatch "
        "landed (http:200 -> ok)"
    )


def test_a_retry_that_re_dispatched_an_unresolved_commit_heads_its_finding_with_the_row():
    """The row at fault comes first: the reader fixes U2, not the runtime's P3 record."""
    trace = [attempt(1, "book", "timeout", "retry", "U2"), attempt(2, "book")]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert finding.message.startswith("row U2 (timeout -> retry) re-dispatched unkeyed commit book")


def test_a_probe_that_proves_not_landed_allows_the_next_dispatch():
    trace = [
        attempt(1, "book", "timeout", "reconcile", "#7"),
        probe(2, "book", "not_landed"),
        attempt(3, "book"),
    ]
    assert check(booking(), snapshot(state="done"), trace) == []


def test_a_declared_no_side_effect_response_allows_redispatch_within_its_budget():
    rejects = [attempt(n, "book", "http:429", "retry", "B2") for n in (1, 2)]
    assert check(booking(), snapshot(state="done"), [*rejects, attempt(3, "book")]) == []
    third = attempt(3, "book", "http:429", "retry", "B2")  # safe_reject_redispatch is 2
    found = check(booking(), snapshot(state="done"), [*rejects, third, attempt(4, "book")])
    assert invariants(found) == ["unkeyed_redispatch"]


def test_a_declared_answer_past_the_allowance_that_rewinds_leaves_nothing_unresolved():
    rejects = [attempt(n, "book", "http:429", "retry", "B2") for n in (1, 2, 3)]
    again = [attempt(4, "lock_price"), attempt(5, "book")]  # a new arrival after the rewind
    assert check(booking(), snapshot(state="done"), [*rejects, *again]) == []


def test_no_declaration_excuses_a_timeout():
    unsafe = fixture("unsafe-retry-booking.yaml")
    trace = [attempt(1, "book_room", "timeout", "retry", "U2"), attempt(2, "book_room")]
    assert invariants(check(unsafe, snapshot(state="done"), trace)) == ["unkeyed_redispatch"]


def test_a_dispatch_out_now_counts_as_the_second_dispatch():
    s = snapshot(in_flight="book", waiting=Waiting(kind="observe", step="book"))
    found = check(booking(), s, [attempt(1, "book", "timeout", "reconcile", "#7")])
    assert invariants(found) == ["unkeyed_redispatch"]


def test_a_spent_single_use_handle_presented_again_is_found():
    trace = [
        attempt(1, "book", "http:400", "rewind(to: search)", "X", consumed=["lock#1"]),
        probe(2, "book", "not_landed"),
        attempt(3, "book", consumed=["lock#1"]),
    ]
    found = check(booking(), snapshot(state="done"), trace)
    assert invariants(found) == ["stale_or_spent_handle"]
    assert "lock, already spent by a dispatch of book" in found[0].message


def test_a_keyed_retry_with_the_same_key_is_not_a_second_use():
    cloud = fixture("cloud-provisioning.yaml")
    first = attempt(1, "create_instance", "timeout", "retry", "C11", ["capacity_hold#1"])
    first.idempotency_key = "r:create_instance:1"
    again = attempt(2, "create_instance", consumed=["capacity_hold#1"])
    again.idempotency_key = "r:create_instance:1"
    assert check(cloud, snapshot(state="done"), [first, again]) == []


def test_a_commit_dispatched_without_its_invalidated_handle_is_found():
    minted = Event(seq=1, event_type="attempt", step_id="lock_price", handles_minted=["lock#1"])
    found = check(booking(), snapshot(state="done"), [minted, attempt(2, "book")])
    assert invariants(found) == ["stale_or_spent_handle"]
    assert "without a live lock" in found[0].message


def test_a_cached_handle_from_an_old_parent_generation_is_mixed_lineage():
    handles = {
        "search_id": HandleState(alias="search_id#2", minted_by="search", minted_seq=5),
        "pick": HandleState(
            alias="pick#1", lineage=["search_id#1"], minted_by="choose", minted_seq=2
        ),
    }
    s = snapshot(handles=handles, waiting=Waiting(kind="select", step="choose"))
    found = check(booking(), s, [])
    assert invariants(found) == ["mixed_lineage"]
    assert (
        found[0].message
        == "pick is live but derives from a search_id that has been re-minted since"
    )


def test_negative_budgets_are_found():
    s = snapshot(budgets=Budgets(rewinds_left=-1), waiting=Waiting(kind="observe", step="search"))
    assert invariants(check(booking(), s, [])) == ["negative_budget"]


def test_a_dead_end_leaving_a_landed_commit_uncompensated_is_found():
    landed = [LandedCommit(step="book", attempt_seq=3)]
    assert invariants(check(booking(), snapshot(state="dead_end", commits_landed=landed), [])) == [
        "bad_terminal"
    ]
    landed[0].compensated = True
    assert check(booking(), snapshot(state="dead_end", commits_landed=landed), []) == []
    escalated = [LandedCommit(step="book", attempt_seq=3)]
    assert check(booking(), snapshot(state="escalated", commits_landed=escalated), []) == []


def test_restart_required_is_a_terminal_of_external_mode_only():
    assert invariants(check(booking(), snapshot(state="restart_required"), [])) == ["bad_terminal"]
    external = snapshot(state="restart_required", mode="external")
    assert check(booking(), external, []) == []


def test_a_live_run_waiting_for_nothing_is_stuck():
    assert invariants(check(booking(), snapshot(state="running"), [])) == ["bad_terminal"]


def test_a_consent_gate_answered_by_the_model_is_found():
    doc = chain(
        """
        id: model_gate
        actions: [{id: pay, effect: commit, idempotency: {mode: keyed}, entry_gate: pay_ok}]
        gates:
          - {id: pay_ok, audience: model, outcomes: {approve: ok}}
          - {id: pick_color, audience: model, outcomes: {red: ok}}
        """
    )
    answers = [
        Event(seq=1, event_type="transition", row="gate:pay_ok.approve", proposal_source="model"),
        Event(seq=2, event_type="transition", row="gate:pick_color.red", proposal_source="model"),
    ]
    found = Monitor(doc).feed(answers)
    assert [f.message for f in found] == [
        "gate pay_ok decides money or consent but was answered by the model"
    ]
    assert [is_money_or_consent_gate(doc, g) for g in doc.gates] == [True, False]


def test_a_monitor_checks_lineage_again_once_a_parent_is_re_minted():
    pick = HandleState(alias="pick#1", lineage=["search_id#1"], minted_by="choose", minted_seq=2)
    handles = {
        "search_id": HandleState(alias="search_id#1", minted_by="search", minted_seq=1),
        "pick": pick,
    }
    s = snapshot(handles=handles, waiting=Waiting(kind="select", step="choose"))
    monitor = Monitor(booking())
    assert monitor.state_findings(s) == []
    s.handles["search_id"] = HandleState(alias="search_id#2", minted_by="search", minted_seq=5)
    assert invariants(monitor.copy().state_findings(s)) == ["mixed_lineage"]


def test_a_monitor_keys_its_last_step_only_while_a_streak_of_excused_re_dispatches_runs():
    # the last step only tells a streak on, or ends it: without one, two histories are alike
    monitors = [Monitor(booking()) for _ in range(3)]
    monitors[0].feed([attempt(1, "search")])
    monitors[1].feed([attempt(1, "quote")])
    monitors[2].feed([attempt(1, "book", "http:429", "retry", "B2")])
    keys = [m.key(snapshot()) for m in monitors]
    assert keys[0] == keys[1]
    assert keys[2][3] == "book"


def test_a_monitor_keys_a_spent_alias_a_landed_commit_holds_after_it_is_no_longer_live():
    # a compensator presents what the commit it undoes consumed (I5), live or not
    monitor = Monitor(booking())
    monitor.feed([attempt(1, "book", consumed=["lock#1"])])
    landed = LandedCommit(step="book", attempt_seq=1, consumed=["lock#1"])
    spent = 2  # Monitor.key: open, streak, spent, last step
    assert monitor.key(snapshot(commits_landed=[landed]))[spent] == [("lock#1", ["book", None])]
    assert monitor.key(snapshot())[spent] == []


def keyed(event: Event, key: str) -> Event:
    event.idempotency_key = key
    return event


def booked(seq, lock, ref) -> Event:
    return attempt(seq, "book", consumed=[lock], handles_minted=[ref])


def test_a_compensator_undoing_a_second_booking_is_no_re_dispatch_of_the_first():
    """Open dispatches are keyed by what was sent: another booking is another request."""
    trace = [
        booked(1, "lock#1", "booking_ref#1"),
        booked(2, "lock#2", "booking_ref#2"),
        attempt(3, "cancel", consumed=["booking_ref#2"]),
        attempt(4, "cancel", consumed=["booking_ref#1"]),
    ]
    found = check(booking(), snapshot(state="done"), trace)
    assert [f for f in found if "cancel" in f.message] == []


def test_a_compensator_sent_twice_for_the_same_booking_is_a_re_dispatch():
    trace = [
        booked(1, "lock#1", "booking_ref#1"),
        attempt(2, "cancel", "timeout", "reconcile", "#7", consumed=["booking_ref#1"]),
        attempt(3, "cancel", consumed=["booking_ref#1"]),
    ]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert finding.invariant == "unkeyed_redispatch"
    assert finding.message.startswith("unkeyed commit cancel was dispatched again")


def test_a_booking_that_lands_again_on_other_handles_is_a_double_commit():
    trace = [booked(1, "lock#1", "booking_ref#1"), booked(2, "lock#2", "booking_ref#2")]
    (finding,) = check(booking(), snapshot(state="done"), trace)
    assert finding.invariant == "double_commit"
    assert finding.message == (
        "commit book was dispatched again for the same intent, unkeyed and presenting other "
        "handles, although its earlier dispatch landed (http:200 -> ok) "
        "and was never compensated"
    )


def test_a_booking_dispatched_again_after_the_first_was_cancelled_is_no_double_commit():
    trace = [
        booked(1, "lock#1", "booking_ref#1"),
        attempt(2, "cancel", consumed=["booking_ref#1"]),
        booked(3, "lock#2", "booking_ref#2"),
    ]
    assert check(booking(), snapshot(state="done"), trace) == []


def test_a_booking_the_probe_found_not_landed_may_be_sent_again_on_other_handles():
    trace = [
        attempt(1, "book", "timeout", "reconcile", "#7", consumed=["lock#1"]),
        probe(2, "book", "not_landed"),
        booked(3, "lock#2", "booking_ref#1"),
    ]
    assert check(booking(), snapshot(state="done"), trace) == []


def test_a_keyed_commit_sent_again_with_a_new_key_after_a_timeout_is_a_double_commit():
    from .builders import KEYED

    trace = [
        keyed(attempt(1, "pay", "timeout", "retry"), "r:pay:1"),
        keyed(attempt(2, "pay"), "r:pay:2"),
    ]
    (finding,) = check(chain(KEYED), snapshot(state="done"), trace)
    assert finding.invariant == "double_commit"
    assert "with a new idempotency key" in finding.message
    assert "may have landed (timeout -> retry)" in finding.message


def test_a_keyed_retry_with_the_same_key_is_no_double_commit():
    from .builders import KEYED

    trace = [
        keyed(attempt(1, "pay", "timeout", "retry"), "r:pay:1"),
        keyed(attempt(2, "pay"), "r:pay:1"),
    ]
    assert check(chain(KEYED), snapshot(state="done"), trace) == []


def test_a_keyed_retry_with_the_same_key_that_re_executes_is_a_double_commit():
    from .builders import KEYED

    doc = chain(KEYED.replace("returns_cached", "reexecutes"))
    trace = [
        keyed(attempt(1, "pay", "timeout", "retry"), "r:pay:1"),
        keyed(attempt(2, "pay"), "r:pay:1"),
    ]
    (finding,) = check(doc, snapshot(state="done"), trace)
    assert finding.invariant == "double_commit" and "re-executing its key" in finding.message


def test_a_compensator_dispatched_without_the_handle_of_the_commit_it_undoes_is_found():
    trace = [booked(1, "lock#1", "booking_ref#1"), attempt(2, "cancel", consumed=[])]
    found = check(booking(), snapshot(state="done"), trace)
    assert "compensation_without_target" in invariants(found)
    (finding,) = [f for f in found if f.invariant == "compensation_without_target"]
    assert finding.message == (
        "compensator cancel was dispatched without booking_ref, so it names nothing of "
        "the book it undoes"
    )


def test_a_compensator_presenting_a_handle_no_step_of_the_chain_mints_is_found():
    found = Monitor(booking()).feed([attempt(1, "cancel", consumed=["order_ref#1"])])
    assert sorted(f.message for f in found) == [
        "compensator cancel presented order_ref, which no step of this chain mints",
        "compensator cancel was dispatched without booking_ref, so it names nothing of "
        "the book it undoes",
    ]


# A card authorization on a payment intent, read back, then captured in place.
CARD = """
id: card_auth
handles:
  - {id: intent_ref, minted_by: open_intent, staleness: {detect: [], ttl_hint: n/a}}
  - {id: auth, minted_by: authorize, derived_from: [intent_ref],
     staleness: {detect: [code:AUTH_EXPIRED], ttl_hint: 7d}}
actions:
  - {id: open_intent, effect: mint, output: {handles: [intent_ref]}}
  - id: authorize
    effect: commit
    input: {intent: [card], handles: [intent_ref]}
    output: {handles: [auth]}
    idempotency: {mode: keyed, replay_semantics: returns_cached}
  - {id: read_intent, effect: read, input: {handles: [intent_ref]}}
  - id: capture
    effect: commit
    mutates: auth
    input: {handles: [auth]}
    idempotency: {mode: keyed, replay_semantics: returns_cached}
"""


def authorized(seq=1, key="r:authorize:1") -> Event:
    return keyed(
        attempt(seq, "authorize", consumed=["intent_ref#1"], handles_minted=["auth#1"]), key
    )


def test_an_authorization_the_provider_reports_expired_may_be_placed_again():
    expired = attempt(
        2, "capture", "http:400", "rewind(to: authorize)", "X", ["auth#1"], code="AUTH_EXPIRED"
    )
    trace = [authorized(), expired, authorized(3, "r:authorize:2")]
    assert check(chain(CARD), snapshot(state="done"), trace) == []


def test_an_authorization_placed_again_with_a_new_key_while_the_first_stands_is_a_double_commit():
    trace = [authorized(), authorized(2, "r:authorize:2")]
    assert invariants(check(chain(CARD), snapshot(state="done"), trace)) == ["double_commit"]


def test_a_read_finding_the_intent_awaiting_confirmation_lets_it_be_authorized_again():
    read = attempt(2, "read_intent", consumed=["intent_ref#1"])
    back = Event(
        seq=3,
        event_type="transition",
        step_id="read_intent",
        row="precondition#1",
        verdict="rewind(to: authorize)",
    )
    trace = [authorized(), read, back, authorized(4, "r:authorize:2")]
    assert check(chain(CARD), snapshot(state="done"), trace) == []


def test_a_card_declined_as_an_empty_answer_lands_nothing():
    declined = keyed(attempt(1, "authorize", "http:402", "ok(empty)", "#2", ["intent_ref#1"]), "k1")
    assert check(chain(CARD), snapshot(state="done"), [declined, authorized(2, "k2")]) == []


def test_a_repair_of_the_card_makes_the_next_authorization_another_intent():
    repair = Event(
        seq=2,
        event_type="transition",
        step_id="authorize",
        verdict="repair(to: authorize, fields: [card])",
    )
    trace = [authorized(), repair, authorized(3, "r:authorize:2")]
    assert check(chain(CARD), snapshot(state="done"), trace) == []


def test_a_change_in_place_sent_again_to_the_same_object_is_no_double_commit():
    captures = [keyed(attempt(n, "capture", consumed=["auth#1"]), f"r:capture:{n}") for n in (2, 3)]
    assert check(chain(CARD), snapshot(state="done"), [authorized(), *captures]) == []


def test_an_authorization_found_landed_by_the_probe_lapses_like_one_that_answered():
    lost = keyed(attempt(1, "authorize", "timeout", "reconcile", "#7", ["intent_ref#1"]), "k1")
    found_it = Event(
        seq=2,
        event_type="reconcile",
        step_id="authorize",
        signal={"probe": "landed"},
        handles_minted=["auth#1"],
    )
    expired = attempt(
        3, "capture", "http:400", "rewind(to: authorize)", "X", ["auth#1"], code="AUTH_EXPIRED"
    )
    trace = [lost, found_it, expired, authorized(4, "k2")]
    assert check(chain(CARD), snapshot(state="done"), trace) == []


REBOOK = """
id: rebook
actions:
  - {id: book_standard, effect: commit, idempotency: {mode: keyed},
     compensation: {action: cancel_standard, replaced_by: book_suite}}
  - {id: book_suite, effect: commit, idempotency: {mode: keyed},
     compensation: {action: cancel_suite}}
  - {id: cancel_standard, effect: compensate, idempotency: {mode: keyed}}
  - {id: cancel_suite, effect: compensate, idempotency: {mode: keyed}}
"""


def test_a_dead_end_that_keeps_an_original_whose_replacement_never_landed_is_a_good_end():
    landed = [LandedCommit(step="book_standard", attempt_seq=1)]
    assert check(chain(REBOOK), snapshot(state="dead_end", commits_landed=landed), []) == []


def test_a_dead_end_that_keeps_an_original_beside_its_standing_replacement_is_bad():
    landed = [
        LandedCommit(step="book_standard", attempt_seq=1),
        LandedCommit(step="book_suite", attempt_seq=2),
    ]
    found = check(chain(REBOOK), snapshot(state="dead_end", commits_landed=landed), [])
    assert [f.message for f in found if "book_standard" in f.message] == [
        "the run dead-ended leaving landed book_standard uncompensated, not escalated"
    ]
