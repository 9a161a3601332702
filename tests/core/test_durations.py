"""Durations as written in chain documents: the text stays, the number is read."""

from __future__ import annotations

import pytest

from chains.core.model import Duration, parse_duration


@pytest.mark.parametrize(
    ("written", "seconds", "upper", "bound"),
    [
        ("30m", 1800, None, "exact"),
        ("24h", 86400, None, "exact"),
        ("30s", 30, None, "exact"),
        ("500ms", 0.5, None, "exact"),
        ("2d", 172800, None, "exact"),
        ("1w", 604800, None, "exact"),
        ("15 min", 900, None, "exact"),
        ("1.5h", 5400, None, "exact"),
        ("~5m", 300, None, "approx"),
        (">25m", 1500, None, "at_least"),
        (">=1h", 3600, None, "at_least"),
        ("≥1h", 3600, None, "at_least"),
        ("<2s", 2, None, "at_most"),
        ("≤3d", 259200, None, "at_most"),
        ("10-15m", 600, 900, "exact"),
        ("10 – 15m", 600, 900, "exact"),
        ("2s-1m", 2, 60, "exact"),
        ("200", 200, None, "exact"),
    ],
)
def test_a_stated_duration_is_read_as_seconds(written, seconds, upper, bound):
    duration = parse_duration(written)
    assert (duration.seconds, duration.upper, duration.bound) == (seconds, upper, bound)


@pytest.mark.parametrize("written", ["unknown", "n/a", "per-payment", "unlimited", "a few days"])
def test_a_duration_without_a_number_keeps_only_its_text(written):
    duration = parse_duration(written)
    assert (duration.text, duration.seconds, duration.bound) == (written, None, "none")


@pytest.mark.parametrize(("number", "text"), [(200, "200"), (0, "0"), (1.5, "1.5")])
def test_a_bare_number_is_seconds(number, text):
    duration = parse_duration(number)
    assert (duration.text, duration.seconds) == (text, number)


def test_the_text_is_kept_as_written_without_surrounding_space():
    assert parse_duration("  ~5m ").text == "~5m"


def test_a_duration_prints_as_its_text():
    assert str(parse_duration("10-15m")) == "10-15m"


def test_a_duration_value_passes_through_unchanged():
    duration = parse_duration("30m")
    assert parse_duration(duration) is duration


def test_a_stored_duration_mapping_is_read_from_its_text():
    assert parse_duration({"text": "~5m", "seconds": 1}) == parse_duration("~5m")


@pytest.mark.parametrize("value", [True, None, [], {"seconds": 5}])
def test_a_value_that_is_no_duration_is_refused(value):
    with pytest.raises(ValueError, match="expected a duration"):
        parse_duration(value)


def test_an_empty_duration_is_refused():
    with pytest.raises(ValueError, match="empty"):
        parse_duration("   ")


def test_equal_text_gives_equal_durations():
    assert parse_duration("24h") == Duration(text="24h", seconds=86400, bound="exact")
