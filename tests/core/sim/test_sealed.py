"""The sealed store (chains/core/sim/sealed.py): references stable across runs and releases."""

from __future__ import annotations

import hashlib
import json

import pytest

from chains.core.sim import sealed
from chains.core.sim.sealed import seal, unseal


def reference(key: str, name: str, value: object) -> str:
    """How a reference was always spelled: traces stored earlier hold these."""
    text = json.dumps([key, name, value], sort_keys=True, default=str)
    return f"sealed:{name}:{hashlib.blake2b(text.encode(), digest_size=8).hexdigest()}"


@pytest.mark.parametrize(
    "value",
    ["ada@example.org", 1, True, 1.0, None, {"a": 1, "b": "x"}, {"a": True}, {}, [1, 2]],
)
def test_a_reference_is_spelled_as_stored_traces_expect(value):
    for _ in range(2):  # the second time from what was kept
        assert seal({}, "run-1", {"v": value})["v"] == reference("run-1", "v", value)


def test_values_equal_in_json_but_not_in_type_get_their_own_references():
    refs = [seal({}, "run-1", {"v": v})["v"] for v in (1, True, 1.0, {"a": 1}, {"a": True})]
    assert len(set(refs)) == len(refs)


@pytest.mark.parametrize("value", ["a" * 501, {"note": "b" * 501}])
def test_a_long_value_is_sealed_as_ever_but_its_reference_is_not_kept(value):
    kept = sealed._kept.cache_info().currsize
    store: dict = {}
    refs = seal(store, "run-1", {"x": value})
    assert refs["x"] == reference("run-1", "x", value)
    assert unseal(store, refs) == {"x": value}
    assert sealed._kept.cache_info().currsize == kept
