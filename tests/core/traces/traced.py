"""What the trace reader tests share: the Duffel chain, its trace fixtures, small HTTP traces."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from chains.core import traces
from chains.core.model import ChainSpec
from chains.core.sim.audit import AuditResult, audit
from tests.conftest import fixture_chains

TRACES = Path(__file__).resolve().parents[3] / "fixtures" / "traces"


def duffel() -> ChainSpec:
    """The Duffel instant-order fixture (shared: do not mutate)."""
    return fixture_chains("duffel-instant-order.yaml")[0]


def flight() -> ChainSpec:
    return fixture_chains("flight-roundtrip.yaml")[0]


def text(name: str) -> str:
    return (TRACES / name).read_text()


@functools.cache
def _loaded(name: str) -> Any:
    return json.loads(text(name))


def loaded(name: str) -> Any:
    """A JSON trace fixture as data, a fresh copy to change."""
    return copy.deepcopy(_loaded(name))


def audited(source: str | Any, spec: ChainSpec | None = None, **options: Any) -> AuditResult:
    """The audit of a trace (a fixture's name, or its data) against the Duffel chain."""
    spec = spec or duffel()
    body = text(source) if isinstance(source, str) else json.dumps(source)
    return audit(spec, traces.read(body, spec, **options))
