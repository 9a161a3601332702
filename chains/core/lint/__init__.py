"""The linter: SPEC v0.4's invalid-config rules and SKILL Step 7, mechanically.

:func:`lint` runs every registered rule (one module per family, each rule
with a stable id, a severity, the section it enforces and a fix hint) and
returns a :class:`LintReport`: the findings, the chain's status, the
UNKNOWNs a human must answer, and every handle's invalidation cascade.

Status, worst first: BLOCKED (a commit-safety question is unanswered: no
confirmation, no probe, or an unkeyed commit whose probe needs its lost
output with no correlation lookup documented — SPEC §2.1's "if neither
exists"), INVALID (an error), WARNINGS, VALID.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import SEVERITY_ORDER
from ..model import ChainSpec
from . import (  # noqa: F401
    actions,
    binding,
    commit,
    edges,
    evidence,
    gates,
    handles,
    policy,
    structure,
    table,
    values,
)
from .context import LintContext
from .registry import RULES, Finding, Rule

__all__ = ["EXIT_CODES", "RULES", "Finding", "LintReport", "Rule", "Status", "lint", "worst_status"]

Status = Literal["VALID", "WARNINGS", "INVALID", "BLOCKED"]
_STATUS_ORDER: tuple[Status, ...] = ("VALID", "WARNINGS", "INVALID", "BLOCKED")
# What a pipeline should exit with: 0 passes, 1 invalid, 2 blocked.
EXIT_CODES: dict[str, int] = {"VALID": 0, "WARNINGS": 0, "INVALID": 1, "BLOCKED": 2}


@dataclass
class LintReport:
    status: Status
    findings: list[Finding] = field(default_factory=list)
    unknowns: list[Finding] = field(default_factory=list)
    cascades: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "findings": [f.as_dict() for f in self.findings],
            "unknowns": [f.as_dict() for f in self.unknowns],
            "cascades": self.cascades,
        }


def lint(spec: ChainSpec) -> LintReport:
    """Run every rule on ``chain``; findings sorted by severity, then rule, then element."""
    ctx = LintContext(spec)
    findings: list[Finding] = []
    blocked = False
    unknowns: list[Finding] = []
    for rule in RULES.values():
        found = rule.run(spec, ctx)
        findings.extend(found)
        blocked = blocked or (rule.blocks and bool(found))
        if rule.unknown:
            unknowns.extend(found)
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.rule, f.element))
    return LintReport(_status(findings, blocked), findings, unknowns, _cascades(spec))


def worst_status(statuses: list[str]) -> Status:
    """The worst of several statuses (INVALID for none: there was nothing to pass).

    >>> worst_status(["VALID", "BLOCKED", "WARNINGS"])
    'BLOCKED'
    """
    if not statuses:
        return "INVALID"
    return _STATUS_ORDER[max(_STATUS_ORDER.index(s) for s in statuses)]


def _status(findings: list[Finding], blocked: bool) -> Status:
    if blocked:
        return "BLOCKED"
    severities = {f.severity for f in findings}
    if "error" in severities:
        return "INVALID"
    if "warning" in severities:
        return "WARNINGS"
    return "VALID"


def _cascades(spec: ChainSpec) -> dict[str, list[str]]:
    from ..graph import GraphError, cascades

    try:
        return {handle: c.invalidated for handle, c in cascades(spec).items()}
    except GraphError:  # a cycle; the structure rules report it
        return {}
