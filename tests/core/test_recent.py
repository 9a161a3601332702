"""The bounded memory of values derived from content: by count and by bytes."""

from __future__ import annotations

import pytest

from chains.core.recent import Recent


def test_a_value_put_is_got_back_by_its_key():
    recent = Recent(size=2)
    recent.put("a", 1)
    assert recent.get("a") == 1


def test_the_oldest_value_goes_when_the_count_is_reached():
    recent = Recent(size=2)
    recent.put("a", 1)
    recent.put("b", 2)
    recent.put("c", 3)
    assert recent.get("a") is None
    assert recent.get("c") == 3


def test_the_oldest_values_go_when_their_weight_passes_the_budget():
    recent = Recent(size=64, budget=100)
    recent.put("a", "A", weight=40)
    recent.put("b", "B", weight=40)
    recent.put("c", "C", weight=40)
    assert recent.get("a") is None
    assert recent.get("b") == "B" and recent.get("c") == "C"
    assert recent.weight == 80


def test_a_value_heavier_than_the_whole_budget_is_returned_but_not_kept():
    recent = Recent(size=64, budget=100)
    recent.put("small", "s", weight=10)
    assert recent.put("huge", "H", weight=500) == "H"
    assert recent.get("huge") is None
    assert recent.get("small") == "s"


def test_putting_a_key_again_replaces_its_weight():
    recent = Recent(size=64, budget=100)
    recent.put("a", "A", weight=60)
    recent.put("a", "A2", weight=30)
    assert recent.weight == 30
    assert recent.get("a") == "A2"


def test_a_negative_budget_is_refused():
    with pytest.raises(ValueError, match="budget"):
        Recent(budget=-1)
