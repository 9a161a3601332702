"""The lint rule reference, generated from the registry.

``docs/lint-rules.md`` is this function's output (``python manage.py chain
rules --markdown``); a test keeps the file and the registry equal, so the
documentation cannot drift from the code.
"""

from __future__ import annotations

from itertools import groupby

from . import RULES

__all__ = ["FAMILY_TITLES", "rules_markdown"]

FAMILY_TITLES = {
    "structure": "Structure: ids, references, order",
    "edges": "Derivation edges",
    "commit": "Commit safety",
    "actions": "Actions: preconditions, deadlines and reversals",
    "handles": "Handles",
    "table": "Verdict table",
    "gates": "Gates",
    "policy": "Policy",
    "values": "Values: placeholders and durations",
    "evidence": "Evidence and UNKNOWNs",
    "binding": "HTTP binding",
}

_INTRO = """\
# Lint rules

Generated from the rule registry (`chains/core/lint/`) by
`python manage.py chain rules --markdown`; do not edit by hand.

Every finding names the rule, its severity, the element it concerns (an
element path: ids in brackets, `#n` for an item without one, such as
`actions[book].confirmation` or `verdict_table[#4]`), a message and a fix
hint. A chain's status is the worst that applies:

- **BLOCKED**: a rule marked *blocks* fired: a commit-safety question is
  unanswered (no way to learn whether an ambiguous commit landed).
- **INVALID**: at least one error.
- **WARNINGS**: at least one warning.
- **VALID**: nothing but info.

Rules marked *UNKNOWN* also add their findings to the UNKNOWNs list: the
questions a human must answer before the chain is implemented (SKILL Step 6
§10).

`python manage.py chain lint PATH_OR_CHAIN [--json]` exits 0 for VALID or
WARNINGS, 1 for INVALID and 2 for BLOCKED.
"""


def rules_markdown() -> str:
    """Markdown reference of every registered rule, grouped by family."""
    order = list(FAMILY_TITLES)
    rules = sorted(
        RULES.values(),
        key=lambda r: (order.index(r.family) if r.family in order else len(order), r.id),
    )
    parts = [_INTRO]
    for family, members in groupby(rules, key=lambda r: r.family):
        parts.append(f"\n## {FAMILY_TITLES.get(family, family)}\n")
        for r in members:
            flags = [flag for flag, on in (("blocks", r.blocks), ("UNKNOWN", r.unknown)) if on]
            tail = f" · {', '.join(flags)}" if flags else ""
            parts.append(
                f"\n### `{r.id}`\n\n{r.severity}{tail} · {r.ref}\n\n{r.summary}\n\nFix: {r.hint}\n"
            )
    return "".join(parts)
