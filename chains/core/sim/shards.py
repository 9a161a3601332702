"""How a sharded search deals its nodes out, the same way in every shard.

Every shard of a search walks the same first levels, whole, down to one
level (:func:`split`): deep enough that no node outweighs much more than one
shard's fair share of the work, by the estimate of :class:`Spread`. Its
nodes are then shared one of two ways, both the same in every shard:

- dealt out up front, heaviest first to the lightest shard (:func:`share`,
  :func:`assign`), when shards run apart and cannot talk;
- in parts that shards claim in turn as they get free (:func:`parts`),
  heaviest first and smaller towards the end, when they share a counter (a
  campaign's database row): a worker that drew light nodes takes more, so
  the estimate's errors even out instead of setting the slowest shard.

Each shard searches breadth first from its nodes, so every violation is
still found at its shortest length, and :func:`~.explorer.merge` of all
shards gives the unsharded result.
"""

from __future__ import annotations

import heapq

from .search import Node, Search, apply_event, fork

__all__ = ["Spread", "assign", "parts", "share", "split"]

# A sharded search splits at a level of at least _SHARD_WIDTH nodes per shard, deeper
# while one node outweighs _SHARD_HEAVY shares, never past _SHARD_DEEPEST nodes per shard.
# 1.5 and not 1: one level less that every shard repeats saves more than the
# balance it costs (flight, max_faults 3, 8 shards: 61,581 states in all and
# the largest shard 10,412, against 70,240 and 10,061 with 1).
_SHARD_WIDTH = 8
_SHARD_HEAVY = 1.5
_SHARD_DEEPEST = 128


def share(search: Search, level: list[Node], shard: tuple[int, int]) -> list[Node]:
    """This shard's nodes of the level where every shard splits, the same in every shard.

    The level is :func:`split`'s; its nodes go to shards by :func:`assign`
    on the weights :class:`Spread` estimates.
    """
    index, count = shard
    if count == 1:
        return level
    level, weights = split(search, level, count)
    if not level:
        return level
    owners = assign(weights, count)
    return [node for node, owner in zip(level, owners, strict=True) if owner == index]


def split(search: Search, level: list[Node], count: int) -> tuple[list[Node], list[float]]:
    """The level where ``count`` shards split, and the work estimated below each of its nodes.

    Levels are expanded whole, so each shard still searches breadth first
    and finds every violation at its shortest length. The split waits for
    a level of at least ``_SHARD_WIDTH`` nodes a shard, then goes on
    while one node would weigh more than ``_SHARD_HEAVY`` shards' fair
    share (a node with its whole fault budget left, early on) and the
    level is under ``_SHARD_DEEPEST`` nodes a shard (every shard repeats
    the levels before the split, so they must stay cheap). A small search
    splits at the first level narrower than the one before: deeper, the
    levels only shrink. An empty level when the search stopped or ended
    before the split (then :meth:`Search.bfs` has nothing or no time left).
    """
    spread, widest = Spread(search), 0
    while level and not search.stopped:
        weights = spread.weights(level)
        light = max(weights) <= _SHARD_HEAVY * sum(weights) / count
        wide = len(level) >= _SHARD_WIDTH * count
        if len(level) < widest or (wide and (light or len(level) >= _SHARD_DEEPEST * count)):
            return level, weights
        widest = max(widest, len(level))
        following: list[Node] = []
        for node in level:
            following.extend(spread.expand(node))
        level = following
    return [], []


class Spread:
    """How much work lies below a node, estimated from what every shard has seen alike.

    The branching of faults is measured on the levels expanded so far: the
    children that spent a fault and reached a new state, per expanded node
    that had one to spend. A faulted path is taken to have about as many
    steps left as it walked (never past ``max_events``), so each fault it
    may still spend multiplies the work below it by 1 + branching * steps.
    A fault-free node spends its first fault somewhere along the rest of its
    happy path (walked to its end on a copy, so known, not guessed) and is a
    faulted path after that. Rough, but of the right size: on the flight
    fixture at levels 4 to 8, each fault a faulted node had still to spend
    made its subtree 12 to 21 times larger (estimated 10 to 24), and the
    fault-free node weighed 2.4 to 12.8 one-fault nodes (estimated 2.9 to
    10.8), falling as its happy path nears its end.
    """

    def __init__(self, search: Search) -> None:
        self.search = search
        self.spent = 0  # children that spent a fault and reached a new state
        self.could = 0  # expanded nodes with a fault left to spend

    def expand(self, node: Node) -> list[Node]:
        """:meth:`Search.expand`, counting how the faults it could spend branched."""
        children = self.search.expand(node)
        if node.faults < self.search.bounds.max_faults:
            self.could += 1
            self.spent += sum(1 for child in children if child.faults > node.faults)
        return children

    def weights(self, level: list[Node]) -> list[float]:
        bounds = self.search.bounds
        branching = self.spent / self.could if self.could else 0.0
        out = []
        for node in level:
            budget = bounds.max_faults - node.faults
            ratio = 1 + branching * min(node.depth, bounds.max_events - node.depth)
            if node.faults > 0 or budget == 0:
                out.append(ratio**budget)
            else:
                out.append(1 + branching * self.happy_steps(node) * ratio ** (budget - 1))
        return out

    def happy_steps(self, node: Node) -> int:
        """Steps left on the node's fault-free path, walked on a copy of its run."""
        run, steps, chain = fork(node.run), 0, self.search.spec
        while not run.finished and node.depth + steps < self.search.bounds.max_events:
            free = next((c for c in self.search.choices(run) if not c.fault), None)
            if free is None:
                break
            run = apply_event(chain, run, free.event)
            run.trace = []
            steps += 1
        return steps


def assign(weights: list[float], count: int) -> list[int]:
    """Longest processing time first: the heaviest node to the lightest shard, ties by position.

    >>> assign([1.0, 9.0, 1.0, 4.0, 4.0], 2)
    [1, 0, 0, 1, 1]
    """
    loads = [(0.0, shard) for shard in range(count)]
    owners = [0] * len(weights)
    for position in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        load, shard = heapq.heappop(loads)
        owners[position] = shard
        heapq.heappush(loads, (load + weights[position], shard))
    return owners


def parts(weights: list[float], count: int) -> list[list[int]]:
    """Positions of the split level in the parts ``count`` shards claim in turn.

    Heaviest nodes first, ties by position; a part closes once it weighs
    a ``2 * count``-th of what is left (guided self-scheduling), and never
    less than a ``8 * count``-th of the whole, so the first parts are big
    and the last small: the shard that claims the last one is done soon
    after the others, and the claims stay few (flight, two shards: a dozen).

    >>> parts([1.0, 9.0, 1.0, 4.0, 4.0], 2)
    [[1], [3], [4], [0, 2]]
    """
    order = sorted(range(len(weights)), key=lambda i: (-weights[i], i))
    left = total = sum(weights)
    out: list[list[int]] = []
    part: list[int] = []
    weight = 0.0
    for position in order:
        part.append(position)
        weight += weights[position]
        if weight >= max(left / (2 * count), total / (8 * count)):
            out.append(part)
            left -= weight
            part, weight = [], 0.0
    if part:
        out.append(part)
    return out
