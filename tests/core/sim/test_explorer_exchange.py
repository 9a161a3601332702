"""Shards that tell each other the states they searched (``explore(..., exchange=)``)."""

from __future__ import annotations

import itertools
import threading

import pytest

from chains.core.sim import search
from chains.core.sim.explorer import Bounds, explore, merge, pack_states, unpack_states

from .builders import fixture

TWO = Bounds(max_faults=2)


@pytest.fixture
def every_poll(monkeypatch):
    """Exchange at every poll of the search instead of every fiftieth of a second."""
    monkeypatch.setattr(search, "EXCHANGE_EVERY", 0)


def shape(result):
    return sorted((v.invariant, v.message, len(v.scenario.events)) for v in result.violations)


def recording(sent: list) -> search.Exchange:
    """An exchange that keeps what the shard sends and gets nothing back."""
    return lambda fresh: sent.extend(fresh) or []


@pytest.mark.usefixtures("every_poll")
def test_a_shard_does_not_search_below_states_another_shard_searched():
    doc = fixture("flight-roundtrip.yaml")
    sent: list = []
    numbers = itertools.count()
    first = explore(doc, TWO, shard=(0, 2), claim=lambda: next(numbers), exchange=recording(sent))
    told = iter([sent])
    second = explore(
        doc, TWO, shard=(1, 2), claim=itertools.count().__next__, exchange=lambda _: next(told, [])
    )
    whole = explore(doc, TWO)
    # it sends what it searched below the split level; every shard walks the levels above
    above = explore(doc, TWO, shard=(1, 2), claim=iter([100]).__next__)
    assert {key for key, _, _ in sent} | above.keys.keys() == whole.keys.keys()
    # the levels above, then its parts until its first exchange (at most 50 expansions)
    assert second.states < whole.states / 10
    assert merge([first, second]).keys == whole.keys


@pytest.mark.usefixtures("every_poll")
def test_a_shard_cuts_the_same_split_level_whatever_the_others_sent_while_it_walked_there():
    # Every shard deals out the parts of one level; a shard that skipped states above it
    # would cut another level, and parts numbered alike would hold other nodes.
    doc = fixture("flight-roundtrip.yaml")
    sent: list = []
    plain: list[int] = []
    explore(
        doc, TWO, shard=(0, 2), claim=itertools.count().__next__, exchange=recording(sent),
        split_into=plain.append,
    )  # fmt: skip
    told: list[int] = []
    explore(
        doc, TWO, shard=(1, 2), claim=itertools.count().__next__, exchange=lambda _: sent,
        split_into=told.append,
    )  # fmt: skip
    assert told == plain


@pytest.mark.usefixtures("every_poll")
def test_a_state_another_shard_searched_with_more_faults_is_searched_again():
    doc = fixture("flight-roundtrip.yaml")
    sent: list = []
    explore(doc, TWO, shard=(0, 2), claim=itertools.count().__next__, exchange=recording(sent))
    costlier = [(key, faults + 1, depth) for key, faults, depth in sent]
    told = iter([costlier])
    again = explore(
        doc, TWO, shard=(1, 2), claim=itertools.count().__next__, exchange=lambda _: next(told, [])
    )
    assert again.keys == explore(doc, TWO).keys


@pytest.mark.usefixtures("every_poll")
@pytest.mark.parametrize("name", ["flight-roundtrip.yaml", "unsafe-retry-booking.yaml"])
def test_shards_running_at_once_and_exchanging_merge_to_the_unsharded_search(name):
    doc = fixture(name)
    whole = explore(doc, TWO)
    lock, numbers, board = threading.Lock(), itertools.count(), []
    read = [0, 0]

    def exchange_of(index):
        def exchange(fresh):
            with lock:
                board.extend((index, state) for state in fresh)
                news = [state for owner, state in board[read[index] :] if owner != index]
                read[index] = len(board)
            return news

        return exchange

    def claim():
        with lock:
            return next(numbers)

    results = [None, None]

    def run(index):
        results[index] = explore(
            doc, TWO, shard=(index, 2), claim=claim, exchange=exchange_of(index)
        )

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    merged = merge(results)
    assert (merged.states, merged.terminals) == (whole.states, whole.terminals)
    assert shape(merged) == shape(whole)
    assert merged.reach.coverage() == whole.reach.coverage()


def test_exchanging_states_needs_claimed_parts():
    with pytest.raises(ValueError, match="exchange and split_into need claim"):
        explore(fixture("flight-roundtrip.yaml"), TWO, shard=(0, 2), exchange=lambda _: [])


def test_packed_states_read_back_as_they_were_sent():
    states = [(bytes(range(8)), 0, 1), (b"\xff" * 8, 3, 70_000)]
    assert unpack_states(pack_states(states)) == states


def test_bytes_that_are_not_whole_states_are_refused():
    with pytest.raises(ValueError, match="not states of 14 bytes"):
        unpack_states(b"\x00" * 15)
