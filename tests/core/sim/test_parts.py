"""The parts of a run: what each declares it calls, and what holding each other costs."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path

import pytest

from chains.core.sim import backtrack, compensation, gates, outcomes, reconcile, shield, steps
from chains.core.sim.runtime import Run
from chains.core.sim.state import Observation

from .builders import fixture

ROOT = Path(__file__).resolve().parents[3]
DECLARING = (steps, outcomes, backtrack, gates, reconcile, compensation)


def declared(module) -> set[str]:
    """The parts ``module``'s part calls: the properties of its ``Needs`` protocol."""
    return {name for name, value in vars(module.Needs).items() if isinstance(value, property)}


def test_no_part_declares_that_it_calls_itself():
    for module in DECLARING:
        assert module.__name__.rsplit(".", 1)[1] not in declared(module)


def test_the_architecture_page_gives_the_number_of_edges_the_parts_declare():
    text = (ROOT / "docs" / "architecture.md").read_text()
    found = re.search(r"the parts declare\s+(\d+) directed edges", text)
    assert found, "docs/architecture.md no longer states the parts' edges"
    assert int(found.group(1)) == sum(len(declared(m)) for m in DECLARING)


@pytest.mark.parametrize("module", [*DECLARING, shield], ids=lambda m: m.__name__)
def test_a_part_calls_every_part_its_needs_declare_and_no_other(module):
    called = set(re.findall(r"\bpeers\.(\w+)\b", Path(module.__file__).read_text()))
    assert called == declared(module)


@pytest.fixture
def no_cycle_collector():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_a_dropped_run_is_freed_at_once_without_the_cycle_collector(no_cycle_collector):
    run = Run.start(fixture("flight-roundtrip.yaml"))
    run.observe(Observation(transport="timeout"))
    gone, table = weakref.ref(run), weakref.ref(run.parts)
    del run
    assert gone() is None
    assert table() is None
