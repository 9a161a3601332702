"""The rule registry: what a lint rule is, and how findings are made.

A rule is a function ``check(chain, ctx)`` that yields ``(element, message)``
pairs, decorated with :func:`rule`, which records its stable id, severity,
the SPEC or SKILL section it enforces, a fix hint, and whether a finding
leaves a commit-safety question unanswered (``blocks``: the chain is then
BLOCKED, not merely INVALID). ``docs/lint-rules.md`` is generated from this
registry, so the documentation cannot drift from the code.

Elements are :class:`~chains.core.paths.ElementPath` values, named by id
where there is one: ``actions[book]``, ``handles[search_id].staleness``,
``verdict_table[D3]``, ``verdict_table[#4]``,
``gates[price_consent].outcomes.accept``, ``policy.per_chain``. A finding
keeps the path's text, so findings, SARIF and the API all write one spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from ..paths import ElementPath

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .context import LintContext

__all__ = ["RULES", "Finding", "Found", "Rule", "Severity", "rule"]

Severity = Literal["error", "warning", "info"]
# What a rule yields: the element it concerns (a path, or its text) and the message.
Found = Iterator[tuple[ElementPath | str, str]]
Check = Callable[["ChainSpec", "LintContext"], Iterable[tuple[ElementPath | str, str]]]


@dataclass(frozen=True)
class Finding:
    """One thing a rule found, pointing at the element it concerns."""

    rule: str
    severity: Severity
    element: str  # an ElementPath's text
    message: str
    hint: str
    ref: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    ref: str
    summary: str
    hint: str
    family: str
    check: Check
    blocks: bool = False
    unknown: bool = False

    def run(self, spec: ChainSpec, ctx: LintContext) -> list[Finding]:
        return [
            Finding(self.id, self.severity, str(element), message, self.hint, self.ref)
            for element, message in self.check(spec, ctx)
        ]


RULES: dict[str, Rule] = {}


def rule(
    id: str,
    severity: Severity,
    ref: str,
    *,
    hint: str,
    blocks: bool = False,
    unknown: bool = False,
) -> Callable[[Check], Check]:
    """Register a check; its docstring's first line is the rule's summary.

    ``blocks``: a finding leaves a commit-safety question unanswered, so the
    chain is BLOCKED. ``unknown``: findings also go to the UNKNOWNs list
    (SKILL Step 6 §10), each message phrased as the question a human must
    answer.

    Ids are ``family.what-is-wrong`` and never change once published, since
    users suppress and search for them.
    """

    def register(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"duplicate lint rule id {id!r}")
        summary = (check.__doc__ or "").strip().splitlines()[0] if check.__doc__ else id
        family = check.__module__.rsplit(".", 1)[-1]
        RULES[id] = Rule(id, severity, ref, summary, hint, family, check, blocks, unknown)
        return check

    return register
