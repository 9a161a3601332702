"""Lookups every lint rule needs, computed once per chain.

Rules stay short because the questions they share live here: which action
has an id, who mints and who consumes a handle, in what order actions run,
whether a commit is keyed, and how many attempts the policy really gives a
step once per-action overrides and SPEC §2.4 defaults are applied.
Duplicate ids keep their first definition here; the structure rules report
the duplicates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

import networkx as nx

from ..model import (
    Action,
    ChainSpec,
    Element,
    first_by_id,
    is_commit_class,
    is_keyed,
    is_unkeyed_commit,
)
from ..paths import ElementPath
from ..policy import attempts as policy_attempts

if TYPE_CHECKING:
    from ..graph import Ancestry

__all__ = [
    "LintContext",
    "is_commit_class",
    "is_keyed",
    "is_unkeyed_commit",
    "walk",
]


def walk(node: Element, path: str = "chain") -> Iterator[tuple[str, Element]]:
    """Every document element at or below ``node``, with its element path.

    Paths are :class:`~chains.core.paths.ElementPath` text, by id:
    ``actions[book].confirmation.async``, ``gates[consent].outcomes.approve``,
    ``policy.per_step.book``; list items without an id are numbered from 1
    (``known_unmatched[#1]``). The chain itself is ``chain`` and its children
    start without a prefix.
    """
    top = path == "chain"
    for at, element in _walk(node, ElementPath(()) if top else ElementPath.parse(path)):
        yield (str(at) if at.parts else "chain"), element


def _walk(node: Element, path: ElementPath) -> Iterator[tuple[ElementPath, Element]]:
    yield path, node
    for name, field in type(node).model_fields.items():
        if name not in ("source", "extras"):
            yield from _walk_value(getattr(node, name), path.field(field.alias or name))


def _walk_value(value: Any, path: ElementPath) -> Iterator[tuple[ElementPath, Element]]:
    if isinstance(value, Element):
        yield from _walk(value, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, Element):
                yield from _walk(item, path.item_at(i, item))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, Element):
                yield from _walk(item, path.field(key))


class LintContext:
    """Indexes over one chain, built lazily."""

    def __init__(self, spec: ChainSpec):
        self.spec = spec
        self.actions = first_by_id(spec.actions)
        self.handles = first_by_id(spec.handles)
        self.gates = first_by_id(spec.gates)
        self.order = {a.id: i for i, a in reversed(list(enumerate(spec.actions)))}

    @cached_property
    def consumers(self) -> dict[str, list[str]]:
        """Handle id → ids of the actions that take it as input, in chain order."""
        return self._by_handle(lambda a: a.input.handles)

    @cached_property
    def minters(self) -> dict[str, list[str]]:
        """Handle id → ids of the actions that list it in output.handles."""
        return self._by_handle(lambda a: a.output.handles)

    def _by_handle(self, handles_of: Callable[[Action], list[str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for a in self.spec.actions:
            for h in handles_of(a):
                out[h].append(a.id)
        return dict(out)

    @cached_property
    def derivation(self) -> nx.DiGraph:
        """Derivation DAG: an edge parent → child for every ``derived_from``."""
        from ..graph import derivation_graph

        return derivation_graph(self.spec)

    @cached_property
    def elements(self) -> list[tuple[str, Element]]:
        """Every element of the chain with its readable path (see :func:`walk`)."""
        return list(walk(self.spec))

    @cached_property
    def ancestry(self) -> Ancestry:
        """Answers "does handle A derive from B?" from ancestor sets built once."""
        from ..graph import Ancestry

        return Ancestry(self.derivation)

    @cached_property
    def intent_fields(self) -> set[str]:
        return {f for a in self.spec.actions for f in a.input.intent}

    def attempts(self, action: Action) -> int:
        """Attempts the policy gives ``action``: override, then class, then SPEC default."""
        return policy_attempts(self.spec, action)
