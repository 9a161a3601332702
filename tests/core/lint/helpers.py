"""Small literal chains for lint tests, written as YAML in the SPEC dialect."""

from __future__ import annotations

import textwrap

from chains.core import formats
from chains.core.lint import Finding, lint
from chains.core.model import ChainSpec


def chain(text: str) -> ChainSpec:
    """Validate a YAML chain document; fails the test loudly when it does not load."""
    result = formats.load(textwrap.dedent(text), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


def found(doc: ChainSpec, rule_id: str) -> list[Finding]:
    """The findings of one rule on ``doc``."""
    return [f for f in lint(doc).findings if f.rule == rule_id]


def elements(doc: ChainSpec, rule_id: str) -> list[str]:
    return [f.element for f in found(doc, rule_id)]


# Shared by the edge rules' tests and their quick fixes' tests.
HOLD_FROM_TWO = """
    id: c
    handles:
      - {id: checkout_id, minted_by: checkout}
      - {id: seat_map_id, minted_by: seat_map}
      - {id: booking_id, minted_by: initiate, derived_from: [checkout_id]}
    actions:
      - {id: checkout, effect: mint, output: {handles: [checkout_id]}}
      - {id: seat_map, effect: read, output: {handles: [seat_map_id]}}
      - {id: initiate, effect: mint, input: {handles: [checkout_id, seat_map_id]},
         output: {handles: [booking_id]}}
"""


COUPLED_RETURNS = """
    id: c
    handles:
      - {id: results, minted_by: search}
      - {id: pick, minted_by: choose, derived_from: [results], rematch: {key: [flight]}}
      - {id: returns, minted_by: return_search, derived_from: [results]}
    actions:
      - {id: search, effect: read, output: {handles: [results]}}
      - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
      - {id: return_search, effect: read, input: {handles: [results, pick]},
         output: {handles: [returns]}}
"""
