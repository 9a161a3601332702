"""networkx views of a chain: the derivation DAG, the flow graph, and what they imply.

This module owns the questions SPEC §4 answers from a chain's structure
alone: what dies when a handle is re-minted (I1, stopping at landed commits
per I5), what a repair invalidates (I6), which ``derived_from`` edges look
missing (SKILL Step 2 "verify by contradiction", I3), and the cycles that
make a derivation graph meaningless.

Assumptions: a handle's minting action is its ``minted_by`` when that names
an action of the chain, else the first action listing it in
``output.handles``; duplicate ids keep their first definition (the structure
rules report duplicates). Functions build their graphs afresh from the
document, so a caller may edit a chain between calls; :func:`cascades`
computes every handle's cascade in one pass for callers that need them all.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, NoReturn

import networkx as nx

from .errors import ChainError
from .model import Action, ChainSpec, Independence, compensators, first_by_id, is_commit_class
from .paths import ElementPath
from .signals import scope_applies_to
from .verdicts import Verdict

__all__ = [
    "Ancestry",
    "Cascade",
    "GraphError",
    "IndependenceQuestion",
    "MissingEdge",
    "RepairScope",
    "SelectionGap",
    "action_verdicts",
    "cascade",
    "cascades",
    "derivation_cycles",
    "derivation_graph",
    "flow_graph",
    "independence_questions",
    "minters",
    "missing_edges",
    "repair_scope",
    "selection_coupling_gaps",
    "selection_handles",
]

# Upper bound on the cycles :func:`derivation_cycles` lists: a dense cyclic
# graph has exponentially many, and the first few already say what is wrong.
MAX_CYCLES = 50


class GraphError(ChainError):
    """A graph question has no answer for this chain (unknown name, or a cycle)."""


# --- building blocks -------------------------------------------------------


def minters(spec: ChainSpec) -> dict[str, str]:
    """Handle id → id of the action that mints it.

    ``minted_by`` wins when it names an action of the chain; otherwise the
    first action that lists the handle in ``output.handles``.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "h", "minted_by": "a"}],
    ...     "actions": [{"id": "a", "effect": "read", "output": {"handles": ["h"]}}]})
    >>> minters(doc)
    {'h': 'a'}
    """
    actions = first_by_id(spec.actions)
    out: dict[str, str] = {}
    for action in spec.actions:
        for handle_id in action.output.handles:
            out.setdefault(handle_id, action.id)
    for handle in spec.handles:
        if handle.minted_by in actions:
            out[handle.id] = handle.minted_by
    return out


def selection_handles(spec: ChainSpec) -> set[str]:
    """Ids of the selection pseudo-handles: handles minted by an ``effect: select`` action."""
    actions = first_by_id(spec.actions)
    return {h for h, a in minters(spec).items() if actions[a].effect == "select"}


def derivation_graph(spec: ChainSpec) -> nx.DiGraph:
    """The invalidation graph: an edge parent → child for every ``derived_from`` entry.

    Every defined handle is a node with ``defined=True``, its ``minted_by``
    and ``fact`` (minted by a commit-class action, so a landed fact per I5);
    a name used in ``derived_from`` but never defined is a node with
    ``defined=False``.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "handles": [
    ...     {"id": "search_id"}, {"id": "pick", "derived_from": ["search_id", "ghost"]}]})
    >>> g = derivation_graph(doc)
    >>> sorted(g.edges), g.nodes["ghost"]["defined"]
    ([('ghost', 'pick'), ('search_id', 'pick')], False)
    """
    actions = first_by_id(spec.actions)
    minted = minters(spec)
    graph = nx.DiGraph()
    for handle in spec.handles:
        if handle.id in graph:
            continue
        minter = actions.get(minted.get(handle.id, ""))
        graph.add_node(
            handle.id,
            defined=True,
            minted_by=handle.minted_by,
            fact=minter is not None and is_commit_class(minter),
        )
    seen: set[str] = set()
    for handle in spec.handles:
        if handle.id in seen:
            continue
        seen.add(handle.id)
        for parent in handle.derived_from:
            if parent not in graph:
                graph.add_node(parent, defined=False, minted_by=None, fact=False)
            graph.add_edge(parent, handle.id)
    return graph


def action_verdicts(action: Action) -> list[tuple[ElementPath, Verdict]]:
    """Every verdict written on ``action``, with its path below ``actions[<id>]``."""
    here = ElementPath(())
    out: list[tuple[ElementPath, Verdict | None]] = []
    output = action.output
    if output.empty is not None:
        out.append((here.field("output", "empty", "route"), output.empty.route))
    if output.business_expiry is not None:
        expiry = output.business_expiry
        out.append((here.field("output", "business_expiry", "on_expiry"), expiry.on_expiry))
    for i, pre in enumerate(action.preconditions, 1):
        out.append((here.field("preconditions").item(i).field("verdict"), pre.verdict))
    if action.revocation is not None:
        out.append((here.field("revocation", "route"), action.revocation.route))
    if action.compensation is not None:
        for i, rung in enumerate(action.compensation.ladder, 1):
            out.append((here.field("compensation", "ladder").item(i).field("else"), rung.else_))
    return [(path, v) for path, v in out if v is not None]


def flow_graph(spec: ChainSpec) -> nx.MultiDiGraph:
    """Actions, handles and gates with every relation between them, for drawing.

    Nodes are ``("action", id)`` (with ``order``, the chain position, and
    ``effect``), ``("handle", id)`` and ``("gate", id)``; each has
    ``defined``. Edges carry ``kind``: consumes (handle → action), mints
    (action → handle), derived_from (parent → child handle), probe (commit →
    its confirmation probe), compensates (compensator → commit, from
    ``compensation.action``, ``chain`` or ladder rungs), entry_gate (gate →
    action), raises (action → gate, for gates named by the action's own
    verdicts or by verdict rows scoped to it) and next (action → the next
    action in chain order).

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "h", "minted_by": "a"}],
    ...     "actions": [{"id": "a", "effect": "read", "output": {"handles": ["h"]}},
    ...                 {"id": "b", "effect": "read", "input": {"handles": ["h"]}}]})
    >>> sorted((u[1], v[1], k) for u, v, k in flow_graph(doc).edges(data="kind"))
    [('a', 'b', 'next'), ('a', 'h', 'mints'), ('h', 'b', 'consumes')]
    """
    graph = nx.MultiDiGraph()
    ordered = list(first_by_id(spec.actions).values())
    for i, action in enumerate(ordered):
        graph.add_node(("action", action.id), defined=True, order=i, effect=action.effect)
    for handle in spec.handles:
        graph.add_node(("handle", handle.id), defined=True)
    for gate in spec.gates:
        graph.add_node(("gate", gate.id), defined=True)

    def link(u: tuple[str, str], v: tuple[str, str], kind: str) -> None:
        for node in (u, v):
            if node not in graph:
                graph.add_node(node, defined=False)
        graph.add_edge(u, v, kind=kind)

    derivation = derivation_graph(spec)
    for parent, child in derivation.edges:
        link(("handle", parent), ("handle", child), "derived_from")
    for i, action in enumerate(ordered):
        node = ("action", action.id)
        for h in action.input.handles:
            link(("handle", h), node, "consumes")
        for h in action.output.handles:
            link(node, ("handle", h), "mints")
        if action.confirmation is not None and action.confirmation.probe:
            link(node, ("action", action.confirmation.probe), "probe")
        for compensator in compensators(action):
            link(("action", compensator), node, "compensates")
        if action.entry_gate:
            link(("gate", action.entry_gate), node, "entry_gate")
        raised = [v.gate for _, v in action_verdicts(action) if v.gate]
        raised += [
            r.verdict.gate
            for r in spec.verdict_table
            if r.verdict.gate and scope_applies_to(r.scope, action) is True
        ]
        for gate_id in dict.fromkeys(raised):
            link(node, ("gate", gate_id), "raises")
        if i + 1 < len(ordered):
            link(node, ("action", ordered[i + 1].id), "next")
    return graph


# --- invalidation (I1, I5) -------------------------------------------------


@dataclass
class Cascade:
    """What re-minting ``handle`` invalidates (I1) and which landed facts it reaches (I5)."""

    handle: str
    invalidated: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


class _Lineage:
    """One derivation graph with its topological positions, for many cascade questions."""

    def __init__(self, graph: nx.DiGraph):
        self.graph = graph
        self.defined = {n for n, defined in graph.nodes(data="defined") if defined}
        self.landed = {n for n, fact in graph.nodes(data="fact") if fact}
        # Plain adjacency lists: on a deep chain the walks below visit millions of edges.
        self.succ = {n: list(children) for n, children in graph.adjacency()}
        self.document_order = {node: i for i, node in enumerate(graph)}
        try:
            order = nx.lexicographical_topological_sort(graph, key=self.document_order.__getitem__)
            self.position: dict[str, int] | None = {node: i for i, node in enumerate(order)}
        except nx.NetworkXUnfeasible:
            self.position = None  # some cycle; cascades that avoid it still have answers

    def reach(self, sources: Iterable[str]) -> tuple[set[str], set[str]]:
        """Handles invalidated from ``sources`` (I1) and the landed facts met on the way (I5)."""
        succ, landed = self.succ, self.landed
        invalidated: set[str] = set()
        facts: set[str] = set()
        stack = list(sources)
        while stack:
            for child in succ[stack.pop()]:
                if child in invalidated or child in facts:
                    continue
                if child in landed:
                    facts.add(child)  # reported, never passed through
                else:
                    invalidated.add(child)
                    stack.append(child)
        return invalidated, facts

    def cascade(self, handle_id: str) -> Cascade:
        if handle_id not in self.defined:
            raise GraphError(f"unknown handle {handle_id!r}")
        invalidated, facts = self.reach([handle_id])
        if handle_id in invalidated or handle_id in facts:
            self._raise_cycle(handle_id, invalidated)
        position = self.position or self._local_position(handle_id, invalidated | facts)
        return Cascade(
            handle_id,
            sorted(invalidated, key=position.__getitem__),
            sorted(facts, key=position.__getitem__),
        )

    def _local_position(self, handle_id: str, reached: set[str]) -> dict[str, int]:
        sub = self.graph.subgraph(reached | {handle_id})
        try:
            order = nx.lexicographical_topological_sort(sub, key=self.document_order.__getitem__)
            return {node: i for i, node in enumerate(order)}
        except nx.NetworkXUnfeasible:
            self._raise_cycle(handle_id, reached)

    def _raise_cycle(self, handle_id: str, reached: set[str]) -> NoReturn:
        cycle = _first_cycle(self.graph, reached | {handle_id})
        raise GraphError(f"derived_from cycle: {_cycle_text(cycle)}")


def _first_cycle(graph: nx.DiGraph, nodes: set[str] | None = None) -> list[str]:
    sub = graph if nodes is None else graph.subgraph(nodes)
    return [u for u, _ in nx.find_cycle(sub)]


def _cycle_text(cycle: list[str]) -> str:
    return " → ".join([*cycle, cycle[0]])


def cascade(spec: ChainSpec, handle_id: str) -> Cascade:
    """What dies when ``handle_id`` is re-minted: SPEC §4 I1, bounded by I5.

    ``invalidated`` lists, in topological order, every handle with a
    ``derived_from`` path from ``handle_id`` (selection and result-collection
    pseudo-handles included), not the re-minted handle itself. A handle
    minted by a commit-class action is a landed fact: it goes to ``facts``
    instead, and invalidation does not pass through it. Raises
    :class:`GraphError` for an unknown handle or a ``derived_from`` cycle
    reachable from it.

    The round trip of SPEC §6.4: the user changes the outbound pick.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "trip",
    ...     "handles": [
    ...         {"id": "search_id", "minted_by": "search"},
    ...         {"id": "pick", "minted_by": "select", "derived_from": ["search_id"]},
    ...         {"id": "return_results", "derived_from": ["search_id", "pick"]},
    ...         {"id": "checkout_id", "derived_from": ["search_id", "pick"]},
    ...         {"id": "seat_map_id", "derived_from": ["search_id", "pick"]},
    ...         {"id": "initiate_id", "derived_from": ["checkout_id", "seat_map_id"]},
    ...         {"id": "booking_id", "derived_from": ["checkout_id", "initiate_id"]},
    ...         {"id": "pnr_id", "minted_by": "create_pnr", "derived_from": ["booking_id"]}],
    ...     "actions": [
    ...         {"id": "create_pnr", "effect": "commit", "output": {"handles": ["pnr_id"]}}]})
    >>> c = cascade(doc, "pick")
    >>> c.invalidated
    ['return_results', 'checkout_id', 'seat_map_id', 'initiate_id', 'booking_id']
    >>> c.facts
    ['pnr_id']
    """
    return _Lineage(derivation_graph(spec)).cascade(handle_id)


def cascades(spec: ChainSpec) -> dict[str, Cascade]:
    """:func:`cascade` for every defined handle, in one topological pass.

    Each handle's descendants are a bit set over the topological order,
    built from its children's, so the cost is the size of the answer rather
    than one graph walk per handle. Raises :class:`GraphError` naming a
    cycle if the derivation graph has one.
    """
    lineage = _Lineage(derivation_graph(spec))
    if lineage.position is None:
        raise GraphError(f"derived_from cycle: {_cycle_text(_first_cycle(lineage.graph))}")
    topo = sorted(lineage.position, key=lineage.position.__getitem__)
    bit = {node: 1 << i for i, node in enumerate(topo)}
    invalidated: dict[str, int] = {}
    facts: dict[str, int] = {}
    for node in reversed(topo):
        dead = landed = 0
        for child in lineage.succ[node]:
            if child in lineage.landed:
                landed |= bit[child]  # I5: a fact stops the walk
            else:
                dead |= bit[child] | invalidated[child]
                landed |= facts[child]
        invalidated[node], facts[node] = dead, landed

    def names(mask: int) -> list[str]:
        if mask.bit_count() * 16 < mask.bit_length():  # sparse: visit the set bits only
            out = []
            while mask:
                low = mask & -mask
                out.append(topo[low.bit_length() - 1])
                mask ^= low
            return out
        # bin() lists bits high to low; reversed, character i is bit i.
        return list(itertools.compress(topo, bin(mask)[:1:-1].translate(_BITS).encode()))

    return {
        h: Cascade(h, names(invalidated[h]), names(facts[h]))
        for h in dict.fromkeys(h.id for h in spec.handles)
    }


_BITS = str.maketrans("01", "\x00\x01")


# --- repair scope (I6) -----------------------------------------------------


@dataclass
class RepairScope:
    """What ``repair(to: step, fields: ...)`` invalidates (I6) and what survives it."""

    step: str
    fields: list[str]
    invalidated: list[str] = field(default_factory=list)
    survives: list[str] = field(default_factory=list)


def repair_scope(spec: ChainSpec, step: str, fields: Iterable[str]) -> RepairScope:
    """Which handles a repair of intent ``fields`` at ``step`` invalidates: SPEC §4 I6.

    Invalidated: every handle ``step`` mints, every handle minted by an
    action whose ``input.intent`` includes a repaired field (wherever that
    action stands: an upstream handle survives only if its minting inputs
    did not include the repaired fields), and their cascades
    (:func:`cascade`, landed facts excluded). Everything else survives, in
    document order. Raises
    :class:`GraphError` for an unknown step or a field that no action takes
    as intent.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "search_id", "minted_by": "search"},
    ...                 {"id": "hold", "minted_by": "hold_seats", "derived_from": ["search_id"]},
    ...                 {"id": "lock", "minted_by": "revalidate", "derived_from": ["hold"]}],
    ...     "actions": [
    ...         {"id": "search", "effect": "read", "input": {"intent": ["dates"]},
    ...          "output": {"handles": ["search_id"]}},
    ...         {"id": "hold_seats", "effect": "mint", "input": {"intent": ["seats"]},
    ...          "output": {"handles": ["hold"]}},
    ...         {"id": "revalidate", "effect": "mint", "output": {"handles": ["lock"]}}]})
    >>> scope = repair_scope(doc, "hold_seats", ["seats"])
    >>> scope.invalidated, scope.survives
    (['hold', 'lock'], ['search_id'])
    """
    fields = list(fields)
    actions = first_by_id(spec.actions)
    if step not in actions:
        raise GraphError(f"unknown step {step!r}")
    intent_fields = {f for a in spec.actions for f in a.input.intent}
    unknown = [f for f in fields if f not in intent_fields]
    if unknown:
        raise GraphError(f"not an intent field of any action: {', '.join(map(repr, unknown))}")
    lineage = _Lineage(derivation_graph(spec))
    minted = minters(spec)
    repaired = set(fields)
    dead: set[str] = {h for h, a in minted.items() if a == step}
    dead |= {
        h
        for h, a in minted.items()
        if a in actions and repaired & set(actions[a].input.intent) and h not in lineage.landed
    }
    dead &= lineage.defined
    downstream, _ = lineage.reach(dead)
    dead |= downstream
    if lineage.position is None and not nx.is_directed_acyclic_graph(lineage.graph.subgraph(dead)):
        raise GraphError(f"derived_from cycle: {_cycle_text(_first_cycle(lineage.graph, dead))}")
    handles = list(dict.fromkeys(h.id for h in spec.handles))
    return RepairScope(
        step,
        fields,
        [h for h in handles if h in dead],
        [h for h in handles if h not in dead],
    )


# --- missing edges (SKILL Step 2, I3) --------------------------------------


class MissingEdge(NamedTuple):
    """``action`` consumes ``consumed`` and mints ``minted``, which does not derive from it."""

    action: str
    consumed: str
    minted: str


class Ancestry:
    """ "Derives from" questions on one graph, answered from ancestor sets built once.

    On an acyclic graph every node's ancestors are a bit set over the
    topological order, built in one pass from its parents' (a few MB at
    5,000 handles); a cyclic or very large graph falls back to networkx
    searches, cached per node.
    """

    def __init__(self, graph: nx.DiGraph):
        self.graph = graph
        self._ancestors: dict[str, set[str]] = {}
        self._bits: dict[str, int] = {}
        self._below: dict[str, int] = {}
        if len(graph) > _BITSET_LIMIT or not nx.is_directed_acyclic_graph(graph):
            return
        for i, node in enumerate(nx.topological_sort(graph)):
            self._bits[node] = 1 << i
            above = 0
            for parent in graph.predecessors(node):
                above |= self._bits[parent] | self._below[parent]
            self._below[node] = above

    def derives_from(self, child: str, parent: str) -> bool:
        if child not in self.graph or parent not in self.graph:
            return False
        if self._bits:
            return bool(self._below[child] & self._bits[parent])
        if self.graph.has_edge(parent, child):
            return True
        if child not in self._ancestors:
            self._ancestors[child] = nx.ancestors(self.graph, child)
        return parent in self._ancestors[child]

    def related(self, a: str, b: str) -> bool:
        return self.derives_from(a, b) or self.derives_from(b, a)


# Past this many nodes the ancestor bit sets (n² bits) cost more memory than they save time.
_BITSET_LIMIT = 20_000


def missing_edges(spec: ChainSpec) -> list[MissingEdge]:
    """Minted handles that do not derive from what their action consumed (SKILL Step 2).

    When an action consumes A and mints C, C's validity almost always
    depends on A; if C has no ``derived_from`` path from A, re-minting A
    leaves a stale C alive. One entry per (C, missing A), in chain order.
    Selection steps are included: a pick must derive from the results it
    picks from.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "quote"}, {"id": "seats"},
    ...                 {"id": "hold", "derived_from": ["quote"]}],
    ...     "actions": [{"id": "initiate", "effect": "mint",
    ...                  "input": {"handles": ["quote", "seats"]},
    ...                  "output": {"handles": ["hold"]}}]})
    >>> missing_edges(doc)
    [MissingEdge(action='initiate', consumed='seats', minted='hold')]
    """
    ancestry = Ancestry(derivation_graph(spec))
    out: list[MissingEdge] = []
    for action in first_by_id(spec.actions).values():
        for minted in dict.fromkeys(action.output.handles):
            for consumed in dict.fromkeys(action.input.handles):
                if consumed != minted and not ancestry.derives_from(minted, consumed):
                    out.append(MissingEdge(action.id, consumed, minted))
    return out


class SelectionGap(NamedTuple):
    """``action`` consumes the selection ``selection`` and mints ``minted``, not derived from it."""

    action: str
    selection: str
    minted: str


def selection_coupling_gaps(spec: ChainSpec) -> list[SelectionGap]:
    """Results coupled to a selection that do not derive from it (SPEC §4 I3).

    A subset of :func:`missing_edges`: those where the consumed handle is a
    selection pseudo-handle, so a fresh pick would leave the old results
    (priced against the old pick) alive.
    """
    picks = selection_handles(spec)
    return [
        SelectionGap(m.action, m.consumed, m.minted)
        for m in missing_edges(spec)
        if m.consumed in picks
    ]


# --- independence (SKILL Step 2, "verify by contradiction") ----------------


class IndependenceQuestion(NamedTuple):
    """Two handles consumed together with no derivation path between them."""

    handles: tuple[str, str]
    actions: list[str]
    answered: Independence | None = None


def independence_questions(spec: ChainSpec) -> list[IndependenceQuestion]:
    """Pairs of handles some action consumes together, unrelated by any derivation path.

    Only co-consumed pairs are asked about (never all pairs of the chain);
    a pair is sorted, the list is sorted by pair, and ``actions`` lists the
    consuming actions in chain order. ``answered`` is the chain's
    ``independence`` entry for the pair, in either order, if any.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "handles": [{"id": "address"}, {"id": "instance"}],
    ...     "actions": [{"id": "bind", "effect": "commit",
    ...                  "input": {"handles": ["instance", "address"]}}]})
    >>> q, = independence_questions(doc)
    >>> q.handles, q.actions, q.answered
    (('address', 'instance'), ['bind'], None)
    """
    graph = derivation_graph(spec)
    ancestry = Ancestry(graph)
    pairs: dict[tuple[str, str], list[str]] = {}
    for action in first_by_id(spec.actions).values():
        consumed = sorted(set(action.input.handles))
        for a, b in itertools.combinations(consumed, 2):
            pairs.setdefault((a, b), []).append(action.id)
    answers: dict[frozenset[str], Independence] = {}
    for answer in spec.independence:
        answers.setdefault(frozenset(answer.handles), answer)
    return [
        IndependenceQuestion(pair, acting, answers.get(frozenset(pair)))
        for pair, acting in sorted(pairs.items())
        if not ancestry.related(*pair)
    ]


# --- cycles ----------------------------------------------------------------


def derivation_cycles(spec: ChainSpec) -> list[list[str]]:
    """The ``derived_from`` cycles (at most ``MAX_CYCLES``), parent to child, smallest id first.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "handles": [
    ...     {"id": "b", "derived_from": ["a"]}, {"id": "a", "derived_from": ["b"]}]})
    >>> derivation_cycles(doc)
    [['a', 'b']]
    """
    graph = derivation_graph(spec)
    if nx.is_directed_acyclic_graph(graph):
        return []
    found = []
    for cycle in itertools.islice(nx.simple_cycles(graph), MAX_CYCLES):
        start = cycle.index(min(cycle))
        found.append(cycle[start:] + cycle[:start])
    return sorted(found)
