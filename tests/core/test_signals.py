"""Signal atoms and scopes: what covers and what overlaps what."""

from __future__ import annotations

import pytest

from chains.core import memo
from chains.core.model import ChainSpec, Scope
from chains.core.signals import (
    atom_covers,
    atoms_overlap,
    conjuncts,
    is_catch_all,
    is_payload_atom,
    is_prose_match,
    is_transport_success,
    normalize_atom,
    scope_actions,
    scope_covers,
    variants_cover,
)

DOC = ChainSpec(
    id="c",
    actions=[
        {"id": "search", "effect": "read", "output": {"handles": ["sid"]}},
        {"id": "quote", "effect": "mint", "input": {"handles": ["sid"]}},
        {"id": "pay", "effect": "commit", "idempotency": {"mode": "keyed"}},
        {"id": "book", "effect": "commit", "input": {"handles": ["sid"]}},
    ],
)


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("`http:503`", "http:503"),
        ("HTTP:5XX", "http:5xx"),
        ("503", "http:503"),
        ("status==402", "http:402"),
        ("Timeout", "timeout"),
        ("code:SOLD_OUT", "code:SOLD_OUT"),
    ],
)
def test_atoms_are_normalised_to_one_spelling(written, normal):
    assert normalize_atom(written) == normal


@pytest.mark.parametrize(
    ("wider", "narrower"),
    [
        ("http:5xx", "http:503"),
        ("code:X", "code:X"),
        ("code:X", "code:X && error.leg == 'return'"),
        ("http:4xx && code:X", "http:409 && code:X && error.leg == 'out'"),
    ],
)
def test_a_wider_atom_covers_a_narrower_one(wider, narrower):
    assert atom_covers(wider, narrower)


@pytest.mark.parametrize(
    ("wider", "narrower"),
    [
        ("http:503", "http:5xx"),
        ("http:4xx", "http:503"),
        ("code:X && error.leg == 'return'", "code:X"),
        ("code:X", "code:Y"),
        ("timeout", "conn_reset"),
    ],
)
def test_an_atom_does_not_cover_a_wider_or_different_one(wider, narrower):
    assert not atom_covers(wider, narrower)


def test_atoms_sharing_a_code_overlap_but_different_codes_do_not():
    assert atoms_overlap("code:X", "code:X && error.message contains 'seat'")
    assert not atoms_overlap("http:410 && code:A", "http:410 && code:B")


@pytest.mark.parametrize("atom", ["*", "unmatched", "any other error", "code:*", "Unknown codes"])
def test_catch_all_spellings_are_recognised(atom):
    assert is_catch_all(atom)


@pytest.mark.parametrize("atom", ["http:5xx", "code:UNKNOWN_ROOM", "timeout"])
def test_ordinary_atoms_are_not_catch_alls(atom):
    assert not is_catch_all(atom)


def test_bare_success_atoms_are_transport_success_and_predicates_are_not():
    assert is_transport_success("http:200") and is_transport_success("http:2xx")
    assert not is_transport_success("http:200 && code:EXPIRED")


def test_codes_and_predicates_can_ride_a_success_but_statuses_and_faults_cannot():
    assert is_payload_atom("code:EXPIRED") and is_payload_atom("results.length == 0")
    assert not any(is_payload_atom(a) for a in ["http:410", "timeout", "webhook:x.done"])


def test_message_text_comparisons_are_prose_matches():
    assert is_prose_match("code:E && error.message contains 'date'")
    assert is_prose_match('"Seat not available"')
    assert is_prose_match(description="message contains the word sold")
    assert not is_prose_match("error.type == 'card_error'")


def test_scopes_resolve_to_the_steps_they_apply_to():
    assert scope_actions(Scope(consumers_of=["sid"]), DOC) == {"quote", "book"}
    assert scope_actions(Scope(effects=["unkeyed_commit"]), DOC) == {"book"}
    assert scope_actions(Scope(any=True), DOC) == {"search", "quote", "pay", "book"}
    assert scope_actions(Scope(text="steps after payment"), DOC) is None


def test_a_scope_covers_the_steps_of_a_narrower_scope_only():
    assert scope_covers(Scope(consumers_of=["sid"]), Scope(steps=["book"]), DOC)
    assert not scope_covers(Scope(steps=["book"]), Scope(consumers_of=["sid"]), DOC)
    assert scope_covers(Scope(any=True), Scope(text="anything at all"), DOC)
    assert not scope_covers(Scope(text="the booking"), Scope(steps=["book"]), DOC)


def test_a_row_for_every_variant_covers_a_row_for_one():
    assert variants_cover([], ["NDC"])
    assert variants_cover(["GDS", "NDC"], ["NDC"])
    assert not variants_cover(["NDC"], [])


def test_a_long_atom_is_normalised_but_not_kept():
    atom = "code:" + "x" * memo.SHORT_CHARS
    kept = [f.cache_info().currsize for f in (normalize_atom, conjuncts, atom_covers)]
    assert normalize_atom(f" {atom} ") == atom
    assert conjuncts(atom) == (atom,)
    assert atom_covers(atom, atom)
    assert [f.cache_info().currsize for f in (normalize_atom, conjuncts, atom_covers)] == kept
