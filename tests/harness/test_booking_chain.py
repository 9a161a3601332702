"""The chain of the harness's stand-in provider (fixtures/harness/booking.yaml) is safe."""

from __future__ import annotations

import functools
from pathlib import Path

from chains.core import formats
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.sim.explorer import Bounds, explore

BOOKING = Path(__file__).resolve().parents[2] / "fixtures" / "harness" / "booking.yaml"


@functools.cache
def booking() -> ChainSpec:
    result = formats.load(BOOKING.read_bytes(), filename=str(BOOKING))
    assert [str(p) for p in result.problems] == []
    (chain,) = result.chains
    return chain


def test_the_booking_chain_lints_with_only_the_final_booking_left_for_a_reviewer():
    findings = {(f.rule, f.severity) for f in lint(booking()).findings}
    assert findings == {("evidence.no-compensation", "info")}


def test_the_booking_chain_binds_every_provider_call_to_its_step():
    bound = {a.id: (a.http.method, a.http.path) for a in booking().actions if a.http}
    assert bound == {
        "search": ("POST", "/offers/search"),
        "quote": ("POST", "/quotes"),
        "book": ("POST", "/bookings"),
        "find_booking": ("GET", "/bookings"),
        "get_booking": ("GET", "/bookings/{booking_id}"),
    }


def test_the_explorer_finds_no_double_booking_within_two_faults():
    result = explore(booking(), Bounds(max_faults=2))
    assert result.violations == []
    assert result.verdict() == "pass"
