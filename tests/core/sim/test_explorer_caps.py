"""The explorer's caps (states, memory, time) and the fixed-size hashes a shard stores."""

from __future__ import annotations

import base64
import json

import pytest

from chains.core.sim.explorer import Bounds, ExploreResult, explore, merge

from .builders import fixture

WIDE = Bounds(max_faults=2)


class TimeUp(Exception):
    """Stands for Celery's SoftTimeLimitExceeded, which the core never imports."""


def test_a_search_stops_at_the_state_cap_and_says_so():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=2, max_states=40))
    assert result.states == 40
    assert result.truncated
    assert result.stopped_by == "states"


def test_a_search_under_its_state_cap_is_not_capped():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=0, max_states=10_000))
    assert not result.truncated
    assert result.stopped_by is None


def test_a_search_stops_at_the_memory_cap_and_says_so():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=2, max_memory_mb=1))
    assert result.truncated
    assert result.stopped_by == "memory"


def test_a_search_stops_at_its_time_limit_and_says_so():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=2, max_seconds=1e-9))
    assert result.truncated
    assert result.stopped_by == "time"


def test_a_time_up_exception_ends_the_search_with_what_it_found():
    calls = []

    def progress(states: int) -> None:
        calls.append(states)
        if len(calls) == 3:
            raise TimeUp

    result = explore(fixture("flight-roundtrip.yaml"), WIDE, progress=progress, time_up=(TimeUp,))
    assert result.truncated
    assert result.stopped_by == "time"
    assert result.states > 0
    assert result.reach is not None  # the coverage it reached is kept


def test_a_time_up_a_library_wraps_in_another_exception_still_ends_the_search_on_time():
    """orjson answers an exception raised in its ``default`` with a TypeError caused by it:
    Celery's soft limit, striking there, once failed a shard instead of stopping it."""
    calls = []

    def progress(states: int) -> None:
        calls.append(states)
        if len(calls) == 3:
            try:
                raise TimeUp
            except TimeUp as cause:
                raise TypeError("Type is not JSON serializable: Option") from cause

    result = explore(fixture("flight-roundtrip.yaml"), WIDE, progress=progress, time_up=(TimeUp,))
    assert result.stopped_by == "time"
    assert result.states > 0


def test_an_error_not_caused_by_the_time_limit_is_raised():
    def progress(states: int) -> None:
        raise TypeError("a real bug")

    with pytest.raises(TypeError, match="a real bug"):
        explore(fixture("flight-roundtrip.yaml"), WIDE, progress=progress, time_up=(TimeUp,))


def test_a_capped_result_says_why_in_its_dict():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=2, max_states=40))
    data = result.as_dict()
    assert data["stopped_by"] == "states"
    assert data["truncated"] is True
    assert "coverage" in data


@pytest.mark.parametrize("bounds", [{"max_states": 0}, {"max_seconds": 0}, {"max_memory_mb": -1}])
def test_a_cap_below_one_is_refused(bounds):
    with pytest.raises(ValueError, match=next(iter(bounds))):
        explore(fixture("flight-roundtrip.yaml"), Bounds(**bounds))


def test_a_result_says_the_peak_memory_of_its_process():
    result = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=0))
    assert result.peak_mb is not None and result.peak_mb > 1
    assert ExploreResult.from_dict(result.as_dict()).peak_mb == result.peak_mb


def test_a_result_stored_before_peak_memory_was_recorded_has_none():
    data = explore(fixture("flight-roundtrip.yaml"), Bounds(max_faults=0)).as_dict()
    del data["peak_mb"]
    assert ExploreResult.from_dict(data).peak_mb is None


def test_a_stored_shard_holds_eight_bytes_a_state_not_state_keys():
    result = explore(fixture("flight-roundtrip.yaml"), WIDE, shard=(0, 2))
    data = result.as_dict()
    assert "state_keys" not in data
    stored = sum(len(base64.b64decode(text)) for text in data["state_hashes"].values())
    assert stored == 8 * result.states
    assert len(json.dumps(data["state_hashes"])) < 11 * result.states + 200


def test_stored_shards_merge_to_exactly_the_unsharded_search():
    doc = fixture("flight-roundtrip.yaml")
    whole = explore(doc, WIDE)
    stored = [ExploreResult.from_dict(explore(doc, WIDE, shard=(i, 4)).as_dict()) for i in range(4)]
    merged = merge(stored)
    assert merged.states == whole.states
    assert merged.terminals == whole.terminals


def test_a_shard_stored_with_state_keys_still_loads_and_merges():
    doc = fixture("flight-roundtrip.yaml")
    whole = explore(doc, Bounds(max_faults=1))
    parts = [explore(doc, Bounds(max_faults=1), shard=(i, 2)) for i in range(2)]
    old = []
    for part in parts:
        data = part.as_dict()
        del data["state_hashes"]
        data["state_keys"] = {key.hex(): terminal for key, terminal in part.keys.items()}
        old.append(ExploreResult.from_dict(data))
    merged = merge(old)
    assert merged.states == whole.states
    assert merged.terminals == whole.terminals


def test_merged_capped_shards_say_they_were_capped():
    doc = fixture("flight-roundtrip.yaml")
    parts = [explore(doc, Bounds(max_faults=2, max_states=30), shard=(i, 2)) for i in range(2)]
    merged = merge([ExploreResult.from_dict(p.as_dict()) for p in parts])
    assert merged.truncated
    assert merged.stopped_by == "states"
