"""A bad and a good example for every lint rule, shown on the rule's page.

Each :class:`Example` is two small whole chains in YAML (the SPEC dialect
the import reads): ``bad`` makes the rule fire, ``good`` is the same chain
with the mistake fixed, so the rule is quiet; ``why`` says in a sentence
what changed and why that satisfies the rule. One module per rule family
holds its examples as ``EXAMPLES``; :data:`EXAMPLES` merges them. A test
loads every pair and checks both claims, so an example cannot drift from
the rule it teaches.
"""

from __future__ import annotations

from . import (
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
from .example import Example, changed_lines

__all__ = ["EXAMPLES", "Example", "changed_lines"]

EXAMPLES: dict[str, Example] = {
    **structure.EXAMPLES,
    **edges.EXAMPLES,
    **commit.EXAMPLES,
    **actions.EXAMPLES,
    **handles.EXAMPLES,
    **table.EXAMPLES,
    **gates.EXAMPLES,
    **policy.EXAMPLES,
    **values.EXAMPLES,
    **evidence.EXAMPLES,
    **binding.EXAMPLES,
}
