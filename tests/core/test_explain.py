"""A typed verdict or signal in plain words, and what it names that the chain lacks."""

from __future__ import annotations

import doctest

from chains.core import explain
from chains.core.explain import explain_signals, explain_verdict
from tests.core.lint.helpers import chain

HOTEL = chain(
    """
    id: hotel
    gates:
      - {id: price_consent, audience: user, outcomes: {accept: ok}}
    actions:
      - id: search
        effect: read
        input: {intent: {dates: date, city: string}}
      - {id: quote, effect: mint}
      - {id: book, effect: commit}
    """
)


def test_the_module_s_examples_hold():
    assert doctest.testmod(explain).failed == 0


def test_a_verdict_reads_as_its_canonical_text_and_says_what_the_run_does():
    found = explain_verdict(HOTEL, "rewind( to : quote )")
    assert (found.text, found.ok) == ("rewind(to: quote)", True)
    assert found.meaning.startswith("go back to quote")


def test_a_verdict_the_grammar_refuses_says_why():
    found = explain_verdict(HOTEL, "gate()")
    assert not found.ok and found.text == ""
    assert found.problems


def test_a_verdict_naming_a_step_the_chain_lacks_says_so():
    assert explain_verdict(HOTEL, "rewind(to: qoute)").problems == ["the chain has no step qoute"]


def test_a_verdict_naming_a_gate_the_chain_lacks_says_so():
    assert explain_verdict(HOTEL, "gate(consent)").problems == ["the chain has no gate consent"]


def test_a_repair_of_a_field_no_step_takes_says_so():
    found = explain_verdict(HOTEL, "repair(to: search, fields: [dates, cabin])")
    assert found.problems == ["no step takes the intent field cabin"]


def test_an_unkeyed_commit_is_never_retried_in_the_words_of_retry():
    assert "never an unkeyed commit" in explain_verdict(HOTEL, "retry").meaning


def test_each_signal_atom_is_said_in_words():
    found = explain_signals(["http:5xx", "timeout", "code:X && http:409"])
    assert found.meaning == (
        "any HTTP 5xx status; or no answer in time: on a commit the outcome is unknown; "
        "or the provider's error code X and HTTP status 409"
    )


def test_a_signal_entry_no_response_can_match_is_a_problem_naming_it():
    found = explain_signals(["http:410", "the quote went stale"])
    assert len(found.problems) == 1 and "'the quote went stale'" in found.problems[0]
