"""The simulator and explorer on the shapes of the real material (issue 12, part 3).

One test per defect of issue 12's "Then fix the behaviour" list, each on a
fixture in our own words under ``tests/core/sim/fixtures/`` (or the project
fixtures that mirror SPEC §6/§7) and each citing the SPEC or CONFORMANCE
clause that makes the expected behaviour true. Each failed before its fix.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from chains.core.sim.explorer import Bounds, explore
from chains.core.sim.fanout import Fanout
from chains.core.sim.runtime import Run
from chains.core.sim.scenario import load_scenario, simulate
from chains.core.sim.state import Observation, Option, Snapshot

from ..builders import OK, OPTIONS, obs, start_booking
from ..shapes import CARD_PREFIX, ours, shape
from .test_c3_lineage import RESORTED

OFFERS = [
    Option(id="off_1", key={"carrier": "JW", "flight_numbers": ["JW10"], "departs_at": "08:00"}),
    Option(id="off_2", key={"carrier": "JW", "flight_numbers": ["JW12"], "departs_at": "12:00"}),
]
HELD_INTENT = {"offer": {}, "travellers": [], "client_reference": "cr-0001", "payment": "pm_x"}
YEAR = 365 * 24 * 3600.0


def offer_run() -> Run:
    return Run.start(shape("offer-search.yaml"), intent={"journey": {}, "passengers": {}})


def held_after_hold() -> Run:
    """open_workspace and hold_booking answered 200: the held booking has landed."""
    run = Run.start(shape("held-booking.yaml"), intent=HELD_INTENT)
    run.observe(OK)
    run.observe(OK)
    assert [lc.step for lc in run.snapshot.commits_landed] == ["hold_booking"]
    return run


def held_at_reconcile() -> Run:
    run = Run.start(shape("held-booking.yaml"), intent=HELD_INTENT)
    run.observe(OK)
    run.observe(obs("timeout"))
    assert run.waiting().kind == "probe"
    return run


def hold_at_capture() -> Run:
    run = Run.start(shape("card-hold.yaml"), intent={"amount": 1000, "card": "pm_card"})
    run.observe(OK)  # create_payment
    run.answer("approve")  # charge_consent
    run.observe(OK)  # authorize: the hold
    assert run.waiting().step == "capture"
    return run


# --- options are kept for the handle the select step consumes --------------------------


def test_a_pick_finds_the_options_of_the_handle_it_consumes_not_the_first_minted():
    """SPEC §2.1 select: "Its input handles name the results it picks from". The search
    mints [result_set_ref, offer_ref] and pick_offer consumes offer_ref (Duffel's
    offer_request_id / offer_id): the pick must see the offers the search returned."""
    run = offer_run()
    run.observe(Observation(options=OFFERS))
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("select", "pick_offer")
    assert [o.id for o in waiting.options] == ["off_1", "off_2"]
    run.select("off_2")
    assert run.snapshot.handles["picked_offer"].lineage == ["offer_ref#1"]
    run.observe(OK)  # refresh_offer
    run.observe(OK)  # place_order
    assert run.snapshot.state == "done"


def test_the_happy_path_of_a_two_handle_search_reaches_the_order():
    """issue 12: the explorer reported a chain clean that never reached its commit.
    With no faults every walk of offer_order must end in done, through place_order."""
    result = explore(shape("offer-search.yaml"), Bounds(max_faults=0, crashes=False))
    assert set(result.terminals) == {"done"}


# --- reads that are also probes stay on the main path -----------------------------------


def test_a_read_that_is_also_a_probe_is_still_a_step_of_the_main_path():
    """SPEC §2.1: only ``probe_only: true`` marks a read that "exist[s] only as
    confirmation probes". find_booking is also the step that re-checks the hold
    before ticketing (Travelport get_reservation, Booking.com order details)."""
    run = held_after_hold()
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("observe", "find_booking")
    run.observe(OK)
    assert run.waiting().gate == "ticketing_consent"


def test_the_payment_deadline_precondition_of_a_probe_read_stops_ticketing():
    """SPEC §2.1 preconditions: evaluated after ok on every execution of the step. The
    deadline passed: dead_end(permanent: false); the held booking stays landed (I5)."""
    run = held_after_hold()
    run.observe(Observation(predicates=["now > payment_deadline"]))
    stopped = [e for e in run.trace if e.row == "precondition#1"]
    assert [e.verdict for e in stopped] == [
        "dead_end(reason: payment_deadline_passed, permanent: false)"
    ]
    assert run.snapshot.dispatches.get("issue_tickets", 0) == 0
    assert [lc.step for lc in run.snapshot.commits_landed] == ["hold_booking"]


# --- returns_cached routes a persistently replayed error to reconcile -----------------------


def test_a_persistently_replayed_5xx_on_a_returns_cached_commit_reconciles():
    """SPEC §2.1 replay_semantics returns_cached: "a persistently replayed error routes
    to reconcile, not more retries" — never a dead end that skips the declared probe."""
    run = hold_at_capture()
    while run.waiting().kind == "observe" and run.snapshot.dispatches.get("capture", 0) < 3:
        run.observe(obs("http:500"))
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("probe", "capture")
    assert run.snapshot.state == "reconciling"
    assert all(not (e.verdict or "").startswith("dead_end") for e in run.trace)


def test_a_reexecuting_keyed_commit_still_dead_ends_when_its_retries_run_out():
    """SPEC §3 retry: "attempts exhausted → ... keyed commit → dead_end" holds where a
    replay re-executes; only returns_cached changes the route (see the test above)."""
    doc = shape("card-hold.yaml")
    capture = doc.action("capture")
    assert capture is not None and capture.idempotency is not None
    idempotency = capture.idempotency.model_copy(update={"replay_semantics": "reexecutes"})
    changed = capture.model_copy(update={"idempotency": idempotency})
    actions = [changed if a.id == "capture" else a for a in doc.actions]
    run = Run.start(doc.model_copy(update={"actions": actions}), intent={"amount": 1, "card": "c"})
    run.observe(OK)
    run.answer("approve")
    run.observe(OK)
    for _ in range(3):
        run.observe(obs("http:500"))
    exhausted = [e for e in run.trace if e.row == "retry_exhausted"]
    assert [e.verdict for e in exhausted] == [
        "dead_end(reason: step_attempts_exhausted, permanent: false)"
    ]


# --- escalated stays open, and an operator's probe result resolves it ------------------------


def test_a_reconcile_past_its_sweep_escalates_to_the_operator():
    """CONFORMANCE C1.6: past async.deadline and sweep.escalate_after → operator."""
    run = held_at_reconcile()
    run.wait(13 * 3600)
    escalations = [(e.row, e.verdict) for e in run.trace if e.verdict == "escalate(operator)"]
    assert escalations == [
        ("async.deadline", "escalate(operator)"),
        ("sweep.escalate_after", "escalate(operator)"),
    ]
    assert run.snapshot.dispatches["hold_booking"] == 1


def test_an_escalated_reconcile_stays_open_until_the_operator_reports_the_probe():
    """CONFORMANCE C1.6: the run stays reconciling, "no auto-dead_end and no
    re-dispatch"; SPEC §2.4 escalation: the operator may "unstick pending commits"."""
    run = held_at_reconcile()
    run.wait(13 * 3600)
    assert not run.finished
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("probe", "hold_booking")
    run.probe("landed")
    assert [lc.step for lc in run.snapshot.commits_landed] == ["hold_booking"]
    assert [r.status for r in run.snapshot.correlation] == ["LANDED"]
    assert run.snapshot.dispatches["hold_booking"] == 1
    assert run.snapshot.state in ("running", "at_gate")


# --- commit-minted handles are invalidated as §4 says ---------------------------------------


def test_a_hold_minted_by_a_commit_dies_when_its_payment_object_is_re_minted():
    """SPEC §4 I1: re-minting payment_ref invalidates every handle derived from it,
    the commit-minted authorization included; I5: the landed authorize stays in
    commits_landed. The replay must never present authorization#1 again."""
    run = hold_at_capture()
    run.observe(obs("http:400", "authorization_lapsed"))
    rewind = run.trace[-1]
    assert rewind.verdict == "rewind(to: create_payment)"
    assert set(rewind.handles_invalidated) == {"payment_ref#1", "authorization#1"}
    assert set(run.snapshot.handles) == set()
    assert [lc.step for lc in run.snapshot.commits_landed] == ["authorize"]


# --- ISO datetimes fire business_expiry --------------------------------------------------------

# Where the simulator anchors its virtual clock is its own choice: the ISO
# deadline below lies after any anchor up to 2029, and a 200-year wait passes
# it from any anchor after 1830.
SECONDS, ISO = 2 * 3600, "2030-01-01T00:00:00Z"


def held_at_consent(deadline: object) -> Run:
    """The hold landed with ``payment_deadline``; the run is parked at ticketing_consent.

    The gate's own timeout is taken off, so that only the deadline can end a long wait.
    """
    doc = shape("held-booking.yaml")
    gates = [g.model_copy(update={"timeout": None}) for g in doc.gates]
    run = Run.start(doc.model_copy(update={"gates": gates}), intent=HELD_INTENT)
    run.observe(OK)  # open_workspace
    run.observe(Observation(payload={"payment_deadline": deadline}))  # hold_booking
    while run.waiting().kind == "observe":  # find_booking, once it is on the main path
        run.observe(OK)
    assert run.waiting().gate == "ticketing_consent"
    return run


@pytest.mark.parametrize("deadline", [SECONDS, ISO], ids=["seconds", "iso-datetime"])
def test_a_payment_deadline_still_ahead_lets_ticketing_go_on(deadline):
    """SPEC §2.1 business_expiry fires only once the provider's deadline has passed."""
    run = held_at_consent(deadline)
    run.wait(3600)
    run.answer("approve")
    assert not [e for e in run.trace if e.row == "business_expiry"]
    waiting = run.waiting()
    assert (waiting.kind, waiting.step) == ("observe", "issue_tickets")


@pytest.mark.parametrize(
    "deadline",
    [
        pytest.param(SECONDS, id="seconds"),
        pytest.param(ISO, id="iso-datetime"),
    ],
)
def test_a_payment_deadline_that_passed_while_parked_fires_on_resume(deadline):
    """SPEC §2.1 business_expiry and CONFORMANCE C2.6: the deadline the response states
    passes while the run is parked; on gate resume on_expiry fires, the tickets are
    never issued, and the held booking stays in commits_landed (I5)."""
    run = held_at_consent(deadline)
    run.wait(200 * YEAR)
    run.answer("approve")
    expired = [e.verdict for e in run.trace if e.row == "business_expiry"]
    assert expired == ["dead_end(reason: hold_lapsed, permanent: false)"]
    assert run.snapshot.dispatches.get("issue_tickets", 0) == 0
    assert [lc.step for lc in run.snapshot.commits_landed] == ["hold_booking"]


# --- C7.3: the trace holds references, never intent values ------------------------------------

CARD_SCENARIO = (
    CARD_PREFIX
    + """\
  - observe:                      # confirm_intent: declined
      transport: "http:402"
      code: card_declined
      predicates: ["status == 402 && error.type == 'card_error'"]
  - propose: {kind: repair, fields: {instrument: pm_second_card}}
  - crash: true                   # resumed from the snapshot and the trace alone
  - answer: approve
  - observe: "http:200"           # confirm_intent with the new card
  - observe: "http:200"           # capture
expect:
  state: done
  dispatches: {confirm_intent: 2}
"""
)
INTENT_VALUES = ["payer@example.com", "Payer Example", "pm_first_card", "pm_second_card"]


def test_c7_3_no_intent_value_appears_anywhere_in_the_trace():
    """CONFORMANCE C7.3 and SPEC §2.5: payment data and PII are absent from the trace,
    at start and in repair proposals alike; the run still finishes after a crash, so
    the values it needs live in the (sealed part of the) snapshot."""
    result = simulate(ours("card-payment.yaml"), load_scenario(CARD_SCENARIO))
    assert result.held, [str(e) for e in result.failed]
    text = json.dumps([e.model_dump(mode="json") for e in result.run.trace])
    assert [value for value in INTENT_VALUES if value in text] == []


# --- C1.4: the correlation record carries the P3 fields and lookup keys -------------------------


def _flatten(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_flatten(v))]
    if isinstance(value, list):
        return [s for v in value for s in _flatten(v)]
    return [str(value)]


def test_c1_4_the_correlation_record_names_its_run_its_intent_and_the_probes_lookup_key():
    """SPEC §1 P3: the record holds "run id, intent snapshot, status=PENDING"; §2.1: it
    carries the lookup keys the probe can use. find_booking looks up client_reference."""
    run = Run.start(shape("held-booking.yaml"), intent=HELD_INTENT)
    run.observe(OK)  # open_workspace; the record is persisted before hold_booking goes out
    (record,) = run.snapshot.correlation
    assert record.status == "PENDING"
    words = _flatten(dataclasses.asdict(record))
    assert run.snapshot.run_id in words
    assert any("intent" in w for w in words)
    assert any("client_reference" in w for w in words)


def test_c1_4_a_crash_while_the_hold_is_out_leaves_a_record_the_probe_resolves():
    """CONFORMANCE C1.4, the kill between dispatch and response: the resumed run finds
    the durable PENDING record, reconciles it and never dispatches again. (The kill
    between persist and dispatch is tested with the runtime's before_dispatch hook.)"""
    run = Run.start(shape("held-booking.yaml"), intent=HELD_INTENT)
    run.observe(OK)
    saved = Snapshot.model_validate_json(run.snapshot.model_dump_json())
    resumed = Run.resume(run.spec, saved, list(run.trace))
    assert [r.status for r in resumed.snapshot.correlation] == ["RECONCILING"]
    assert resumed.waiting().kind == "probe"
    resumed.probe("landed")
    assert [r.status for r in resumed.snapshot.correlation] == ["LANDED"]
    assert resumed.snapshot.dispatches["hold_booking"] == 1


# --- C3.6: fan-out branches live in the snapshot; a shared re-mint happens once ------------------


def _fanout() -> tuple[Run, Run, Run]:
    prefix = start_booking()
    prefix.observe(obs(options=OPTIONS))  # the shared read: search_id#1
    group = Fanout(prefix)
    a, b = group.branch(), group.branch()
    a.select("o1")
    b.select("o2")
    a.observe(OK)  # quote
    b.observe(OK)  # quote; both now wait for lock_price, both on search_id#1
    return prefix, a, b


def test_c3_6_a_sibling_that_finds_the_shared_handle_stale_itself_adopts_the_re_mint():
    """SPEC §4 I7: "the re-mint is performed once, by whichever run acts first, and
    re-shared". a re-minted search_id#2; b's own lock_price then reports search_id#1
    stale, and b adopts #2 instead of searching again (paying its own rewind)."""
    _, a, b = _fanout()
    a.observe(obs("http:410", "SEARCH_EXPIRED"))
    a.observe(obs(options=RESORTED))  # a re-mints once and re-shares search_id#2
    b.observe(obs("http:410", "SEARCH_EXPIRED"))
    assert b.waiting().step != "search"
    assert b.snapshot.handles["search_id"].alias == "search_id#2"
    assert a.snapshot.dispatches.get("search", 0) + b.snapshot.dispatches.get("search", 0) == 1
    assert b.snapshot.budgets.rewinds_left == 2


def test_c3_6_the_fan_out_is_recorded_in_the_durable_snapshots():
    """SPEC §2.5: the snapshot alone resumes a run, and CONFORMANCE C3.6 needs siblings
    to see a shared death after a restart: the group (its branches) must be part of the
    snapshots, not an object beside them. A sibling's run id appears in the durable
    state of the parent or of the other branch."""
    prefix, a, b = _fanout()
    a.observe(obs("http:410", "SEARCH_EXPIRED"))
    for branch, sibling in ((a, b), (b, a)):
        durable = prefix.snapshot.model_dump_json() + branch.snapshot.model_dump_json()
        assert sibling.snapshot.run_id in durable
