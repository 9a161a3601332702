"""Small literal chains for lint tests, written as YAML in the SPEC dialect."""

from __future__ import annotations

import textwrap

from chains.core import formats
from chains.core.lint import Finding, lint
from chains.core.model import Chain


def chain(text: str) -> Chain:
    """Validate a YAML chain document; fails the test loudly when it does not load."""
    result = formats.load(textwrap.dedent(text), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


def found(doc: Chain, rule_id: str) -> list[Finding]:
    """The findings of one rule on ``doc``."""
    return [f for f in lint(doc).findings if f.rule == rule_id]


def elements(doc: Chain, rule_id: str) -> list[str]:
    return [f.element for f in found(doc, rule_id)]
