"""Chains that mirror the shapes of the public material, parsed once per session.

``shape(name)`` reads ``tests/core/sim/fixtures/<name>``: small chains in our
own words for the real-world shapes the simulator got wrong (issue 12).
``ours(name)`` reads the project fixtures under ``fixtures/`` that already
mirror SPEC §6 and §7. The chain models are never mutated by a run, so one
parsed copy serves every test.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from chains.core import formats
from chains.core.model import ChainSpec

HERE = Path(__file__).resolve().parent
SHAPES = HERE / "fixtures"
OURS = HERE.parents[2] / "fixtures"


def _load(path: Path) -> ChainSpec:
    result = formats.load(path.read_text(), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


@cache
def shape(name: str) -> ChainSpec:
    return _load(SHAPES / name)


@cache
def ours(name: str) -> ChainSpec:
    return _load(OURS / name)


# The card fixture's run up to the consent gate's answer, with intent values that must
# never reach a trace (C7.3); scenarios append their own events to it.
CARD_PREFIX = """
chain: card_payment_manual_capture
intent:
  email: payer@example.com
  full_name: Payer Example
  amount: 4200
  currency: EUR
  instrument: pm_first_card
  amount_to_capture: 4200
events:
  - observe: "http:200"           # create_customer
  - observe: "http:200"           # create_intent
  - answer: {gate: payment_consent, outcome: approve}
"""
