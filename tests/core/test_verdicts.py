"""Verdict expressions: every spelling in use parses, prints once, re-parses equal."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from chains.core import memo
from chains.core import verdicts as parsing
from chains.core.errors import VerdictSyntaxError
from chains.core.verdicts import Verdict, format_verdict, parse_verdict

from .strategies import verdicts

# (as written in SPEC §2-§7 or a compile, canonical spelling)
SPELLINGS = [
    ("ok", "ok"),
    ("ok(empty)", "ok(empty)"),
    ("ok(empty: true)", "ok(empty)"),
    ("retry", "retry"),
    ("reconcile", "reconcile"),
    ("rewind(to: search)", "rewind(to: search)"),
    ("rewind(search)", "rewind(to: search)"),
    ("rewind(target: search)", "rewind(to: search)"),
    ("rewind(to: <handle>.refresh)", 'rewind(to: "<handle>.refresh")'),
    (
        "repair(to: search, fields: [dates, cabin, origin, destination])",
        "repair(to: search, fields: [dates, cabin, origin, destination])",
    ),
    (
        "repair(to: initiate_booking, fields: [seats])",
        "repair(to: initiate_booking, fields: [seats])",
    ),
    ("repair(fields: [instrument], to: confirm)", "repair(to: confirm, fields: [instrument])"),
    ("repair(to: create_refund, fields: amount)", "repair(to: create_refund, fields: [amount])"),
    (
        "repair(to: create_offer_request,\n        fields: [slices, cabin_class, passengers])",
        "repair(to: create_offer_request, fields: [slices, cabin_class, passengers])",
    ),
    ("reselect(to: select)", "reselect(to: select)"),
    ("reselect(select_product)", "reselect(to: select_product)"),
    ("gate(price_change_consent)", "gate(price_change_consent)"),
    ("gate(id: sca_challenge)", "gate(sca_challenge)"),
    ("gate(alternate_refund, audience: operator)", "gate(alternate_refund, audience: operator)"),
    ("dead_end", "dead_end"),
    ("dead-end", "dead_end"),
    ("dead_end(user_declined_reprice)", "dead_end(reason: user_declined_reprice)"),
    (
        "dead_end(reason: bad_reference, permanent: true)",
        "dead_end(reason: bad_reference, permanent: true)",
    ),
    (
        "dead_end(permanent: true, reason: idempotency_config_bug)",
        "dead_end(reason: idempotency_config_bug, permanent: true)",
    ),
    ("dead_end(permanent: false)", "dead_end(permanent: false)"),
    (
        "dead_end(reason: order_not_created, permanent: false, retry_after_hint: minutes)",
        "dead_end(reason: order_not_created, permanent: false, retry_after_hint: minutes)",
    ),
    (
        'dead_end(reason: no_balance, permanent: false, retry_after_hint: "after wallet top-up")',
        'dead_end(reason: no_balance, permanent: false, retry_after_hint: "after wallet top-up")',
    ),
    (
        "dead_end(reason: void_window_closed, permanent: true /*void*/, retry_after_hint: none)",
        "dead_end(reason: void_window_closed, permanent: true)",
    ),
    (
        "dead_end(permanent: true, present_as: generic_decline)",
        "dead_end(permanent: true, present_as: generic_decline)",
    ),
    (
        "dead_end(reason: hold_lapsed, permanent: true_for_this_order)",
        "dead_end(reason: hold_lapsed, permanent: true_for_this_order)",
    ),
    ("escalate", "escalate"),
    ("escalate(operator)", "escalate(operator)"),
    ("escalate(audience: operator)", "escalate(operator)"),
    ("`rewind(to: checkout)`", "rewind(to: checkout)"),
]


@pytest.mark.parametrize(("written", "canonical"), SPELLINGS)
def test_every_spelling_in_use_prints_canonically(written, canonical):
    assert format_verdict(parse_verdict(written)) == canonical


@pytest.mark.parametrize(("written", "canonical"), SPELLINGS)
def test_the_canonical_spelling_parses_to_the_same_verdict(written, canonical):
    assert parse_verdict(canonical) == parse_verdict(written)


def test_repair_names_its_target_and_fields():
    verdict = parse_verdict("repair(to: search, fields: [dates, cabin])")
    assert (verdict.type, verdict.to, verdict.fields) == ("repair", "search", ["dates", "cabin"])


def test_dead_end_carries_reason_permanence_and_retry_hint():
    verdict = parse_verdict(
        "dead_end(reason: psp_fraud_reject, permanent: false, retry_after_hint: hours)"
    )
    assert (verdict.reason, verdict.permanent, verdict.retry_after_hint) == (
        "psp_fraud_reject",
        False,
        "hours",
    )


def test_unknown_arguments_are_kept_as_extras():
    verdict = parse_verdict("dead_end(permanent: true, present_as: generic_decline)")
    assert verdict.extras == {"present_as": "generic_decline"}


def test_quoted_text_keeps_unicode_quotes_and_newlines():
    verdict = Verdict(type="dead_end", reason='né "q"\nnext\\')
    text = format_verdict(verdict)
    assert "\n" not in text
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize("word", ["true", "null", "none", "12", "-3", "a b", ""])
def test_text_that_reads_as_another_value_is_quoted(word):
    verdict = Verdict(type="dead_end", reason=word)
    assert parse_verdict(format_verdict(verdict)).reason == word


@pytest.mark.parametrize(
    ("garbage", "named_problem"),
    [
        ("retry(", "expected ')'"),
        ("explode", "unknown verdict 'explode'"),
        ("rewind()", "rewind needs a target step"),
        ("repair(fields: [dates])", "repair needs a target step"),
        ("gate()", "gate needs a gate id"),
        ("ok(maybe)", "ok takes no argument but 'empty'"),
        ("rewind(a, b)", "rewind takes named arguments"),
        ("retry(1))", "unexpected ')'"),
        ("", "non-empty expression"),
        ("  ", "non-empty expression"),
        ("(retry)", "starts with its name"),
        ("rewind(to: a) extra", "unexpected 'extra'"),
    ],
)
def test_garbage_is_refused_with_a_message_naming_the_problem(garbage, named_problem):
    with pytest.raises(
        VerdictSyntaxError, match=named_problem.replace("(", r"\(").replace(")", r"\)")
    ):
        parse_verdict(garbage)


def test_only_ok_can_be_empty():
    with pytest.raises(ValueError, match="only ok can be ok"):
        Verdict(type="retry", empty=True)


@settings(max_examples=settings().max_examples * 3, deadline=None)  # 300 on CI
@given(verdict=verdicts())
def test_any_verdict_prints_to_text_that_parses_back_equal(verdict):
    assert parse_verdict(format_verdict(verdict)) == verdict


@settings(max_examples=settings().max_examples * 3, deadline=None)  # 300 on CI
@given(verdict=verdicts())
def test_printing_a_reparsed_verdict_gives_the_same_text(verdict):
    text = format_verdict(verdict)
    assert format_verdict(parse_verdict(text)) == text


def test_a_long_verdict_text_is_parsed_but_not_kept():
    kept = parsing._parse_once.cache_info().currsize
    text = f"gate({'g' * memo.SHORT_CHARS})"
    assert parse_verdict(text).gate == "g" * memo.SHORT_CHARS
    assert parsing._parse_once.cache_info().currsize == kept
