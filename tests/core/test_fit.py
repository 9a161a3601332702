"""The fit test (SKILL Step 0): refusals, open questions, validation, stored form."""

from __future__ import annotations

import doctest
import json

import pytest

from chains.core import fit
from chains.core.errors import ChainError
from chains.core.fit import QUESTIONS, FitError, as_dict, assess

# A search -> price -> book flow: handles, expiry, a commit, nothing that refuses.
FIT_ANSWERS = {
    "single_call": "no",
    "mints_handles": "yes",
    "things_expire": "yes",
    "commits": "yes",
    "all_repeatable": "no",
    "provider_polls": "no",
    "human_paced": "no",
    "atomic_across_providers": "no",
}

# refusal id -> the answers (on top of FIT_ANSWERS) that fire it
FIRING_ANSWERS = {
    "single_call": {"single_call": "yes"},
    "idempotent_crud": {"all_repeatable": "yes", "things_expire": "no"},
    "nothing_to_rewind": {"mints_handles": "no", "things_expire": "no", "commits": "no"},
    "provider_state_machine": {"provider_polls": "yes"},
    "human_driven": {"human_paced": "yes"},
    "distributed_transaction": {"atomic_across_providers": "yes"},
}


def test_the_module_doctests_pass():
    assert doctest.testmod(fit).failed == 0


def test_fit_answers_cover_every_question():
    assert set(FIT_ANSWERS) == {q.id for q in QUESTIONS}


def test_every_question_offers_yes_no_and_unsure():
    for question in QUESTIONS:
        assert [value for value, _label in question.choices] == ["yes", "no", "unsure"]


@pytest.mark.parametrize("refusal_id", FIRING_ANSWERS)
def test_each_refusal_fires_alone_from_its_answers(refusal_id):
    result = assess(FIT_ANSWERS | FIRING_ANSWERS[refusal_id])
    assert result.verdict == "not_a_fit"
    assert [r.id for r in result.refusals] == [refusal_id]


@pytest.mark.parametrize(
    ("refusal_id", "alternative"),
    [
        ("single_call", "retry helper with exponential backoff"),
        ("idempotent_crud", "plain per-call retries"),
        ("nothing_to_rewind", "ordinary sequential calls"),
        ("provider_state_machine", "poller"),
        ("human_driven", "guided workflow in the UI"),
        ("distributed_transaction", "escrow"),
    ],
)
def test_each_refusal_names_what_to_use_instead(refusal_id, alternative):
    (refusal,) = assess(FIT_ANSWERS | FIRING_ANSWERS[refusal_id]).refusals
    assert alternative in refusal.instead
    assert refusal.ref == "SKILL Step 0"


def test_several_refusals_fire_together_in_rule_order():
    answers = FIT_ANSWERS | {"human_paced": "yes", "single_call": "yes"}
    assert [r.id for r in assess(answers).refusals] == ["single_call", "human_driven"]


def test_all_fit_answers_give_fit_with_no_refusals():
    result = assess(FIT_ANSWERS)
    assert result.verdict == "fit"
    assert result.refusals == ()
    assert result.open_questions == ()


def test_unsure_answers_give_unsure_listing_them_in_question_order():
    answers = FIT_ANSWERS | {"provider_polls": "unsure", "commits": "unsure"}
    result = assess(answers)
    assert result.verdict == "unsure"
    assert result.open_questions == ("commits", "provider_polls")


def test_missing_answers_count_as_open():
    answers = {k: v for k, v in FIT_ANSWERS.items() if k != "human_paced"}
    result = assess(answers)
    assert result.verdict == "unsure"
    assert result.open_questions == ("human_paced",)


def test_no_answers_leave_every_question_open():
    assert assess({}).open_questions == tuple(q.id for q in QUESTIONS)


def test_an_unsure_answer_keeps_a_rule_from_firing():
    result = assess(FIT_ANSWERS | {"all_repeatable": "yes", "things_expire": "unsure"})
    assert result.refusals == ()
    assert result.verdict == "unsure"


def test_a_refusal_outranks_open_questions_which_are_still_listed():
    result = assess({"single_call": "yes"})
    assert result.verdict == "not_a_fit"
    assert "mints_handles" in result.open_questions


def test_summary_of_one_refusal_says_the_condition_and_the_alternative():
    summary = assess(FIT_ANSWERS | {"provider_polls": "yes"}).summary
    assert "status field" in summary
    assert "poller" in summary


def test_summary_of_several_refusals_counts_them():
    answers = FIT_ANSWERS | {"single_call": "yes", "human_paced": "yes"}
    assert "2 fit-test conditions" in assess(answers).summary


def test_summary_of_an_unsure_result_counts_the_open_questions():
    answers = FIT_ANSWERS | {"commits": "unsure", "human_paced": "unsure"}
    assert "2 of 8 questions are still open" in assess(answers).summary


def test_an_unknown_question_id_raises_fit_error_listing_known_ids():
    with pytest.raises(FitError, match=r"unknown fit question 'is_fast'.*single_call"):
        assess({"is_fast": "yes"})


@pytest.mark.parametrize("value", ["maybe", "Yes", ""])
def test_a_value_outside_the_choices_raises_fit_error_naming_question_and_values(value):
    with pytest.raises(
        FitError, match=r"'commits' does not take .*allowed values: yes, no, unsure"
    ):
        assess(FIT_ANSWERS | {"commits": value})


def test_every_bad_answer_is_reported_at_once():
    with pytest.raises(FitError) as caught:
        assess({"is_fast": "yes", "commits": "maybe"})
    assert "is_fast" in str(caught.value)
    assert "'commits'" in str(caught.value)


def test_fit_error_is_a_chain_error():
    assert issubclass(FitError, ChainError)


@pytest.mark.parametrize(
    "answers",
    [FIT_ANSWERS, {}, FIT_ANSWERS | {"single_call": "yes", "human_paced": "yes"}],
    ids=["fit", "unsure", "not_a_fit"],
)
def test_as_dict_round_trips_through_json(answers):
    data = as_dict(assess(answers))
    assert json.loads(json.dumps(data)) == data


def test_as_dict_keeps_each_refusal_in_full():
    (refusal,) = as_dict(assess(FIT_ANSWERS | {"provider_polls": "yes"}))["refusals"]
    assert set(refusal) == {"id", "condition", "instead", "ref"}
    assert refusal["id"] == "provider_state_machine"
