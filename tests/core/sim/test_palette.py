"""What the simulator page and the explorer offer next: every input the chain tells apart."""

from __future__ import annotations

from chains.core.sim.palette import UNKNOWN_CODE, choices

from .builders import OK, OPTIONS, booking, drive_to_book, obs, start_booking


def labels(doc, run, group: str | None = None) -> list[str]:
    return [c.label for c in choices(doc, run) if group is None or c.group == group]


def at_quote(doc):
    run = start_booking(doc)
    run.observe(OK.model_copy(update={"options": OPTIONS}))
    run.select("o1")
    return run


def test_success_comes_first_and_is_the_only_choice_that_is_not_a_fault():
    doc = booking()
    offered = choices(doc, start_booking(doc))
    assert offered[0].label == "success (2 options)"
    assert [c.fault for c in offered] == [False] + [True] * (len(offered) - 1)


def test_a_read_offers_its_valid_empty_and_the_generic_faults():
    doc = booking()
    assert labels(doc, start_booking(doc))[1:] == [
        "valid empty: results.length == 0",
        "timeout",
        "HTTP 503",
        "HTTP 429",
        f"unknown code {UNKNOWN_CODE}",
    ]


def test_a_domain_row_in_scope_is_offered_with_its_row_and_verdict():
    doc = booking()
    fraud = next(
        c for c in choices(doc, drive_to_book(start_booking(doc))) if c.label == "code:FRAUD"
    )
    assert (fraud.group, fraud.detail) == (
        "row",
        "row B4 → dead_end(reason: fraud, permanent: true)",
    )
    assert fraud.event == {"observe": {"transport": "http:400", "code": "FRAUD"}}


def test_a_row_scoped_to_other_steps_is_not_offered():
    doc = booking()
    assert "code:SOLD_OUT" not in labels(doc, drive_to_book(start_booking(doc)))


def test_staleness_signals_of_the_handles_a_step_consumes_are_offered():
    doc = booking()
    assert labels(doc, drive_to_book(start_booking(doc)), "stale") == [
        "lock stale: http:410",
        "lock stale: code:LOCK_EXPIRED",
    ]


def test_a_signal_observed_like_an_earlier_one_is_offered_once_under_the_first_label():
    doc = booking()
    offered = labels(doc, drive_to_book(start_booking(doc)))
    assert "http:429" in offered  # row B2's signal
    assert "HTTP 429" not in offered  # the generic fault observed the same way


def test_each_precondition_of_the_step_is_offered():
    doc = booking()
    assert labels(doc, at_quote(doc), "precondition") == [
        "fare.refundable == false",
        "fare.no_seats",
    ]


def test_a_selection_offers_each_option_the_first_without_a_fault():
    doc = booking()
    run = start_booking(doc)
    run.observe(OK.model_copy(update={"options": OPTIONS}))
    offered = choices(doc, run)
    assert [(c.event, c.fault) for c in offered] == [
        ({"select": "o1"}, False),
        ({"select": "o2"}, True),
    ]


def test_a_gate_offers_accept_first_then_the_other_outcomes_its_timeout_and_a_model_answer():
    doc = booking()
    run = at_quote(doc)
    run.observe(OK.model_copy(update={"predicates": ["fare.refundable == false"]}))
    assert run.waiting().kind == "answer"
    offered = choices(doc, run)
    assert [c.label for c in offered] == [
        "accept",
        "decline",
        "let it time out",
        "a model answers accept",
    ]
    assert offered[0].fault is False and offered[2].event == {"wait": 601.0}


def test_reconciling_offers_every_probe_result_and_the_waits_past_its_deadlines():
    doc = booking()
    run = drive_to_book(start_booking(doc))
    run.observe(obs("timeout"))
    assert labels(doc, run) == [
        "landed",
        "not landed",
        "not landed, cause http:429",
        "not landed, cause code:CARD_DECLINED",
        "not landed, cause code:FRAUD",
        "still unknown",
        "wait past the async deadline",
        "wait past the sweep escalate_after",
    ]


def test_a_finished_run_offers_nothing():
    doc = booking()
    run = drive_to_book(start_booking(doc))
    run.observe(obs("http:400", "FRAUD"))
    assert run.finished and choices(doc, run) == []
