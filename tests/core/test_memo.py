"""Answers kept per chain (chains/core/memo.py): never another chain's, computed once."""

from __future__ import annotations

import doctest
import gc
import weakref

from chains.core import memo
from chains.core.model import ChainSpec


def spec(*actions: str) -> ChainSpec:
    return ChainSpec.model_validate(
        {"id": "c", "actions": [{"id": a, "effect": "read"} for a in actions]}
    )


def test_the_examples_in_the_module_hold():
    assert doctest.testmod(memo).failed == 0


def test_an_answer_is_computed_once_per_chain():
    chain, calls = spec("a"), []
    for _ in range(3):
        memo.remember(chain, "k", lambda: calls.append(1) or len(calls))
    assert calls == [1]


def test_an_equal_copy_of_a_chain_gets_answers_of_its_own():
    chain = spec("a")
    memo.remember(chain, "k", lambda: "first")
    assert memo.remember(chain.model_copy(deep=True), "k", lambda: "copy") == "copy"


def test_a_chain_found_by_id_lookup_is_the_one_asked_about():
    first, second = spec("a"), spec("b")
    assert first.action("a") is first.actions[0] and first.action("b") is None
    assert second.action("b") is second.actions[0] and second.action("a") is None


def test_the_oldest_chains_give_way_and_are_recomputed():
    chains = [spec("a") for _ in range(20)]
    for n, chain in enumerate(chains):
        memo.remember(chain, "n", lambda n=n: n)
    assert memo.remember(chains[0], "n", lambda: "again") == "again"
    assert memo.remember(chains[-1], "n", lambda: "again") == 19


def test_an_answer_by_identity_is_computed_once_per_object():
    calls: list[tuple[int, ...]] = []
    size = memo.by_identity(limit=8)(lambda items: calls.append(items) or len(items))
    first, equal = (1, 2), tuple([1, 2])
    assert size(first) == size(first) == 2 and calls == [first]
    assert size(equal) == 2 and len(calls) == 2  # an equal object is another question


def test_answers_by_identity_are_forgotten_at_the_limit_and_computed_again():
    calls: list[object] = []
    name = memo.by_identity(limit=2)(lambda o: calls.append(o) or id(o))
    kept = [object() for _ in range(3)]
    for o in kept:
        name(o)
    name(kept[0])
    assert calls == [*kept, kept[0]]


def test_the_answers_kept_for_a_chain_do_not_keep_the_chain_alive():
    chain = spec("a")
    memo.remember(chain, "k", lambda: "answer")
    alive = weakref.ref(chain)
    del chain
    gc.collect()
    assert alive() is None
