"""Shards that claim parts of the split level as they get free (``explore(..., claim=)``)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable

import pytest

from chains.core.sim.explorer import Bounds, ExploreResult, explore, merge
from chains.core.sim.search import Search
from chains.core.sim.shards import parts

from .builders import fixture

TWO = Bounds(max_faults=2)


def handing_out(numbers: Iterable[int]) -> Callable[[], int | None]:
    """A claim that hands out ``numbers`` in turn, then None."""
    it = iter(numbers)
    return lambda: next(it, None)


def count(doc) -> int:
    """How many parts one shard's split of ``doc`` has: the first number past them."""
    handed: list[int] = []
    explore(doc, TWO, shard=(0, 1), claim=lambda: handed.append(len(handed)) or handed[-1])
    return handed[-1]


def shape(result: ExploreResult) -> list[tuple[str, str, int]]:
    return [(v.invariant, v.message, len(v.scenario.events)) for v in result.violations]


def test_a_shard_that_claims_every_part_searches_each_state_once():
    doc = fixture("flight-roundtrip.yaml")
    whole = explore(doc, TWO)
    count = itertools.count()
    first = explore(doc, TWO, shard=(0, 2), claim=lambda: next(count))
    late = explore(doc, TWO, shard=(1, 2), claim=lambda: next(count))
    assert first.keys == whole.keys
    assert late.states < whole.states / 20  # only the levels above the split
    assert merge([first, late]).keys == whole.keys


@pytest.mark.parametrize("name", ["flight-roundtrip.yaml", "unsafe-retry-booking.yaml"])
def test_shards_that_claim_parts_alternately_merge_to_the_unsharded_search(name):
    doc = fixture(name)
    whole = explore(doc, TWO)
    even = explore(doc, TWO, shard=(0, 2), claim=handing_out(range(0, 100, 2)))
    odd = explore(doc, TWO, shard=(1, 2), claim=handing_out(range(1, 100, 2)))
    merged = merge([even, odd])
    assert (merged.states, merged.terminals) == (whole.states, whole.terminals)
    assert shape(merged) == shape(whole)


def test_parts_searched_in_any_order_find_every_violation_at_its_shortest_length():
    doc = fixture("unsafe-retry-booking.yaml")
    whole = explore(doc, TWO)
    backwards = explore(doc, TWO, shard=(0, 1), claim=handing_out(reversed(range(count(doc)))))
    assert shape(backwards) == shape(whole)
    assert backwards.keys == whole.keys


def test_a_state_reached_again_by_a_shorter_path_is_searched_again_from_there():
    # A part claimed later may reach, near its top, a state an earlier part reached deep.
    doc = fixture("flight-roundtrip.yaml")
    (root,) = Search(doc, TWO, None, None).start()
    search = Search(doc, TWO, None, None)
    search.depths = {}
    assert search._visit(dataclasses.replace(root, depth=6), [])
    assert search._visit(dataclasses.replace(root, depth=2), [])
    assert not search._visit(dataclasses.replace(root, depth=4), [])


def test_a_shard_given_no_part_walks_nothing():
    idle = explore(fixture("flight-roundtrip.yaml"), TWO, shard=(1, 2), claim=lambda: None)
    assert (idle.states, idle.paths, idle.violations) == (0, 0, [])


def test_a_shard_given_a_part_walks_to_the_split_and_says_how_many_parts_it_has():
    doc = fixture("flight-roundtrip.yaml")
    told: list[int] = []
    explore(doc, TWO, shard=(0, 1), claim=handing_out([0]), split_into=told.append)
    assert told == [count(doc)]


def test_a_shard_whose_first_part_is_past_the_last_walks_only_to_the_split():
    doc = fixture("flight-roundtrip.yaml")
    late = explore(doc, TWO, shard=(1, 2), claim=handing_out([100]))
    assert 0 < late.states < explore(doc, TWO).states / 5


def test_claiming_parts_needs_a_shard():
    with pytest.raises(ValueError, match="claim needs shard"):
        explore(fixture("flight-roundtrip.yaml"), TWO, claim=lambda: 0)


def test_parts_hold_every_position_once_the_heaviest_first_and_shrink_towards_the_end():
    weights = [float(w) for w in (5, 40, 3, 3, 12, 1, 8, 1, 20, 2, 6, 1)]
    dealt = parts(weights, 2)
    assert sorted(p for part in dealt for p in part) == list(range(len(weights)))
    assert dealt[0] == [1]
    sizes = [sum(weights[p] for p in part) for part in dealt]
    assert sizes[-1] < sizes[0] / 4
