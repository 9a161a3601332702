"""Exhaustive exploration of a chain's failure sequences, checking invariants on every state.

:func:`explore` walks, breadth first, every sequence of outside inputs the
chain tells apart, up to a number of *faults*: at each dispatch every
observation the chain distinguishes for that step (success, each valid-empty,
each domain row's signals in scope, each staleness signal of a consumed
handle, business expiry, auto-repair triggers, revocation watches, timeout,
5xx, 429, an unknown code, each precondition), at each selection every
option, at each gate every outcome (params from what was presented), its
timeout and a model trying to answer it, at each reconcile every probe result
(landed, not landed, not landed with each cause, unknown) and the waits past
the async deadline and the sweep, a valid repair where one waits, and a crash
while a dispatch is out. The plain success choice at each point (success,
first option, the accepting outcome, landed, the repair) costs nothing;
every other choice is one fault.

States are deduplicated by :func:`state_key`: the snapshot as canonical JSON
minus what only numbers events or never feeds a decision (see its
docstring), plus the invariant monitor's history. Breadth-first order makes
the first path to a violation a shortest one; it is kept as a
:class:`~.scenario.Scenario` that :func:`~.scenario.simulate` replays to the
violating state.

Every result also says what the search saw of the chain: the main steps it
reached, the domain rows that fired, the gate outcomes taken and the
compensations run, against what the chain declares, with warnings in words
when the happy path does not reach ``done`` or a step is never reached
(:mod:`.reach`). A result without violations is a pass only when it is
also ``complete``.

A branch is a copy of the parent :class:`~.runtime.Run` (its snapshot, by
:func:`~.state.clone`; the trace is not needed to go on, only the new
events, which the monitor reads), not a re-simulation of the prefix, and
the last branch of a state takes the parent's run itself. What makes a
search fast and why none of it loses a finding is in docs/explorer.md
("Speed"); ``bench/explore.py`` compares it with the explorer of ce485a2.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import heapq
import json
import os
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel

from ..model import Action, ChainSpec
from .invariants import Finding, Monitor
from .palette import Choice, choices, default_intent, observation_choices, revocation_watches
from .reach import Reach, Recorder
from .runtime import Run
from .scenario import Scenario, _crash_and_resume
from .state import (
    CorrelationRecord,
    Event,
    LandedCommit,
    Observation,
    Proposal,
    Snapshot,
    clone,
)

__all__ = [
    "EXIT_CODES",
    "STOP_REASONS",
    "Bounds",
    "ExploreResult",
    "Violation",
    "explore",
    "merge",
    "state_digest",
    "state_key",
]

# What a pipeline reads from ``chain explore``: a broken invariant outranks incomplete
# coverage, and a clean search that did not see the whole chain is not a pass (0).
EXIT_CODES = {"pass": 0, "violations": 1, "incomplete": 3}

_POLL = 50  # expansions between should_stop / progress calls (the first one included)
# A sharded search splits at a level of at least _SHARD_WIDTH nodes per shard, deeper
# while one node outweighs _SHARD_HEAVY shares, never past _SHARD_DEEPEST nodes per shard.
# 1.5 and not 1: one level less that every shard repeats saves more than the
# balance it costs (flight, max_faults 3, 8 shards: 61,581 states in all and
# the largest shard 10,412, against 70,240 and 10,061 with 1).
_SHARD_WIDTH = 8
_SHARD_HEAVY = 1.5
_SHARD_DEEPEST = 128


# Why a search stopped early (``ExploreResult.stopped_by``), most telling first:
# a merged result reports the first of these that any shard gave.
STOP_REASONS = ("memory", "time", "states", "request")


@dataclass(frozen=True)
class Bounds:
    """How far :func:`explore` looks: faults per path, inputs per path, crashes or not.

    The caps end a search early, with ``truncated`` and ``stopped_by`` saying
    which one: ``max_states`` distinct states, ``max_seconds`` of search,
    ``max_memory_mb`` of resident memory of the whole process (read every 50
    expansions). None means no cap.
    """

    max_faults: int = 2
    max_events: int = 60
    crashes: bool = True
    max_states: int | None = None
    max_seconds: float | None = None
    max_memory_mb: int | None = None


@dataclass
class Violation:
    """A broken invariant and the shortest scenario found that reaches it."""

    invariant: str
    message: str
    scenario: Scenario

    def as_dict(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "message": self.message,
            "scenario": scenario_dict(self.scenario),
        }


@dataclass
class ExploreResult:
    """What a search found.

    ``states`` counts distinct states, ``paths`` the walks that ended (at a
    terminal state, at the event bound, or on a state already explored),
    ``terminals`` the distinct terminal states by run state, ``truncated``
    whether the search ended early, and ``stopped_by`` why (one of
    ``STOP_REASONS``: a cap of :class:`Bounds`, or ``request`` when
    ``should_stop`` asked). ``cut`` counts walks the event bound ended.
    ``keys`` maps every state's 8-byte digest (:func:`state_digest`) to its
    terminal state ("" when not terminal); :func:`merge` unions shards with
    it. ``reach`` is what the search saw of the chain (:mod:`.reach`); None
    only for a result stored before coverage was recorded. ``peak_mb`` is the
    process's peak resident memory in MB when the search ended (the largest
    shard's in a merged result); None where the platform does not say, or
    for a result stored before it was recorded.
    """

    states: int
    paths: int
    terminals: dict[str, int]
    violations: list[Violation]
    seconds: float
    truncated: bool
    cut: int = 0
    keys: dict[bytes, str] = field(default_factory=dict, repr=False)
    shard: tuple[int, int] | None = None
    reach: Reach | None = field(default=None, repr=False)
    stopped_by: str | None = None
    peak_mb: float | None = None

    @property
    def warnings(self) -> list[str]:
        """Why this result is not a pass even without violations (:meth:`.Reach.warnings`)."""
        return self.reach.warnings(self.truncated) if self.reach is not None else []

    @property
    def complete(self) -> bool:
        """Every main step reached, every happy path done, the search not cut short."""
        return self.reach is not None and not self.warnings

    def verdict(self) -> str:
        """``violations``, else ``incomplete`` (clean but warned), else ``pass``; see EXIT_CODES."""
        if self.violations:
            return "violations"
        return "pass" if self.complete else "incomplete"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready; a shard's result also carries its ``state_hashes`` and ``reach`` to merge.

        ``coverage`` has exactly the keys steps, rows, outcomes and
        compensations; ``not_covered`` names what each never saw.
        ``state_hashes`` maps each terminal state ("" for none) to the base64
        of its states' digests, 8 bytes each, sorted: a stored shard grows by
        about 11 characters a state, whatever the chain.
        """
        out: dict[str, Any] = {
            "states": self.states,
            "paths": self.paths,
            "terminals": dict(self.terminals),
            "violations": [v.as_dict() for v in self.violations],
            "seconds": round(self.seconds, 3),
            "truncated": self.truncated,
            "stopped_by": self.stopped_by,
            "cut": self.cut,
            "peak_mb": self.peak_mb,
        }
        if self.reach is not None:
            out["complete"] = self.complete
            out["warnings"] = self.warnings
            out["coverage"] = self.reach.coverage()
            out["not_covered"] = self.reach.missed()
            out["happy_path"] = self.reach.happy_path()
        if self.shard is not None:
            out["shard"] = list(self.shard)
            out["state_hashes"] = _pack(self.keys)
            if self.reach is not None:
                out["reach"] = self.reach.as_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExploreResult:
        """The inverse of :meth:`as_dict` (for shard results stored as JSON).

        Also reads shards stored before digests were packed, whose
        ``state_keys`` map each key's hex text to its terminal state.
        """
        shard = data.get("shard")
        return cls(
            states=data["states"],
            paths=data["paths"],
            terminals=dict(data["terminals"]),
            violations=[
                Violation(v["invariant"], v["message"], Scenario.model_validate(v["scenario"]))
                for v in data["violations"]
            ],
            seconds=data["seconds"],
            truncated=data["truncated"],
            cut=data.get("cut", 0),
            keys=_unpack(data),
            shard=(shard[0], shard[1]) if shard else None,
            reach=Reach.from_dict(data["reach"]) if data.get("reach") else None,
            stopped_by=data.get("stopped_by"),
            peak_mb=data.get("peak_mb"),
        )


_DIGEST = 8  # bytes of blake2b per state: see docs/explorer.md for why collisions don't matter


def _pack(keys: dict[bytes, str]) -> dict[str, str]:
    groups: dict[str, list[bytes]] = {}
    for digest, terminal in keys.items():
        groups.setdefault(terminal, []).append(digest)
    return {t: base64.b64encode(b"".join(sorted(d))).decode() for t, d in sorted(groups.items())}


def _unpack(data: dict[str, Any]) -> dict[bytes, str]:
    if "state_hashes" in data:
        keys = {}
        for terminal, text in data["state_hashes"].items():
            raw = base64.b64decode(text)
            for i in range(0, len(raw), _DIGEST):
                keys[raw[i : i + _DIGEST]] = terminal
        return keys
    return {bytes.fromhex(k): t for k, t in (data.get("state_keys") or {}).items()}


def scenario_dict(scenario: Scenario) -> dict[str, Any]:
    """A scenario as plain data, ready for ``yaml.safe_dump`` and :func:`load_scenario`."""
    out: dict[str, Any] = {"chain": scenario.chain, "intent": scenario.intent}
    if scenario.variant is not None:
        out["variant"] = scenario.variant
    out["events"] = [e.model_dump(mode="json", exclude_defaults=True) for e in scenario.events]
    if scenario.expect is not None:
        out["expect"] = scenario.expect.model_dump(mode="json", exclude_none=True)
    return out


# --- state identity ----------------------------------------------------------


def state_key(snapshot: Snapshot, monitor: Monitor) -> str:
    """:func:`state_digest` as hex text."""
    return state_digest(snapshot, monitor).hex()


def state_digest(snapshot: Snapshot, monitor: Monitor) -> bytes:
    """A canonical 8-byte hash of what can still change the run or a finding.

    Left out: ``run_id`` (one per search), ``seq`` (it numbers events; the
    backoff jitter is seeded from fields kept here, so merged states draw the
    same jitter later), ``dispatches``
    (counted, never read by the runtime) and result sets keyed ``step@seq``
    (read by nobody: selections read results by alias). Seq-valued fields the
    runtime compares with each other (``arrived_seq``, ``minted_seq``,
    ``attempt_seq``) are replaced by their rank, which keeps every comparison.
    The trace is left out: the runtime never reads it; the history the
    invariants need is the monitor's key. ``last_observation`` is left out
    while the run waits for an observation: the only reader is a gate
    answered ok, and the observation that raises a gate always writes it
    first, so two runs that differ only there have the same future.
    """
    s = snapshot
    handles = list(s.handles.values())
    records: list[LandedCommit | CorrelationRecord] = [
        *s.commits_landed,
        *s.compensators_landed,
        *s.correlation,
    ]
    seqs = {s.arrived_seq, *(h.minted_seq for h in handles), *(r.attempt_seq for r in records)}
    rank = {v: i for i, v in enumerate(sorted(seqs))}
    ranked = {id(h): "minted_seq" for h in handles} | {id(r): "attempt_seq" for r in records}

    # orjson writes each model as the dict of its fields (no model_dump copy first),
    # with the seq numbers of the snapshot's own handles and records as ranks.
    def fields(model: Any) -> dict[str, Any]:
        if not isinstance(model, BaseModel):
            raise TypeError(f"{type(model).__name__} is not part of a run's state")
        seq = ranked.get(id(model))
        if seq is None:
            return model.__dict__
        return {**model.__dict__, seq: rank[getattr(model, seq)]}

    d = {k: v for k, v in s.__dict__.items() if k not in _NOT_STATE}
    d["arrived_seq"] = rank[s.arrived_seq]
    d["results"] = {k: v for k, v in s.results.items() if "@" not in k}
    if s.waiting.kind == "observe":
        d["last_observation"] = None
    d["monitor"] = monitor.key(snapshot)
    text = orjson.dumps(d, default=fields, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(text, digest_size=_DIGEST).digest()


_NOT_STATE = {"run_id", "seq", "dispatches"}


# --- the search --------------------------------------------------------------


@dataclass
class _Path:
    """Scenario events as a shared-tail list, so a million paths don't copy their prefixes."""

    event: dict[str, Any]
    parent: _Path | None

    def events(self) -> list[dict[str, Any]]:
        out = []
        node: _Path | None = self
        while node is not None:
            out.append(node.event)
            node = node.parent
        return out[::-1]


@dataclass
class _Node:
    run: Run
    monitor: Monitor
    root: int
    path: _Path | None
    faults: int
    depth: int


class _Search:
    def __init__(self, chain: ChainSpec, bounds: Bounds, should_stop, progress):
        self.chain = chain
        self.bounds = bounds
        self.should_stop = should_stop
        self.progress = progress
        self.seen: dict[bytes, int] = {}
        self.keys: dict[bytes, str] = {}
        self.paths = 0
        self.cut = 0
        self.found: dict[tuple[str, str], tuple[int, Scenario]] = {}
        self.expanded = 0
        self.stopped = False
        self.stopped_by: str | None = None
        self.started = time.monotonic()
        self.roots: list[tuple[dict[str, Any], str | None]] = []
        self._obs_cache: dict[tuple, list[Choice]] = {}
        self._observations: dict[int, tuple] = {}
        self.recorder = Recorder(chain)

    # roots: one per variant, no fault

    def start(self) -> list[_Node]:
        intent = default_intent(self.chain)
        variants = self.chain.variants.values if self.chain.variants else [None]
        nodes = []
        for i, variant in enumerate(variants):
            self.roots.append((intent, variant))
            run = Run.start(self.chain, intent=dict(intent), variant=variant)
            monitor = Monitor(self.chain)
            found = monitor.feed(run.trace) + monitor.state_findings(run.snapshot, run)
            events = list(run.trace)
            self.recorder.feed(run.snapshot, events)
            node = _Node(_detach(run), monitor, i, None, 0, 0)
            self._record(found, node)
            if self._visit(node, events):
                nodes.append(node)
        return nodes

    def _visit(self, node: _Node, events: list[Event]) -> bool:
        """Count the node; whether it is worth expanding. ``events``: what led to it."""
        snapshot = node.run.snapshot
        key = state_digest(snapshot, node.monitor)
        before = self.seen.get(key)
        finished = node.run.finished
        if before is None:
            cap = self.bounds.max_states
            if cap is not None and len(self.seen) >= cap:
                self.stop("states")
                return False
            self.keys[key] = snapshot.state if finished else ""
        if before is not None and before <= node.faults:
            self.paths += 1  # joins a state already explored with as few faults
            if node.faults == 0:  # only a fault-free walk can join itself: it loops
                self.recorder.ended(snapshot, events, 0, "loop")
            return False
        self.seen[key] = node.faults
        if finished:
            self.paths += 1
            self.recorder.ended(snapshot, events, node.faults, "terminal")
            return False
        if node.depth >= self.bounds.max_events:
            self.paths += 1
            self.cut += 1
            self.recorder.ended(snapshot, events, node.faults, "cut")
            return False
        return True

    def expand(self, node: _Node) -> list[_Node]:
        self.expanded += 1
        if self.expanded % _POLL == 1:
            self.poll()
        children = []
        budget = self.bounds.max_faults - node.faults
        allowed = [c for c in self.choices(node.run) if c.fault <= budget]
        for n, choice in enumerate(allowed, 1):
            faults = node.faults + choice.fault
            # The last child takes the parent's run and monitor instead of copies: the
            # parent is done with once expanded, and most nodes have a single child.
            last = n == len(allowed)
            run = _fork(node.run) if not last else node.run
            run = _apply(self.chain, run, choice.event, self._observations)
            monitor = node.monitor if last else node.monitor.copy()
            found = monitor.feed(run.trace) + monitor.state_findings(run.snapshot, run)
            events, run.trace = run.trace, []
            self.recorder.feed(run.snapshot, events)
            child = _Node(run, monitor, node.root, _Path(choice.event, node.path), faults, 0)
            child.depth = node.depth + 1
            self._record(found, child)
            if self._visit(child, events):
                children.append(child)
        return children

    def poll(self) -> None:
        """Report progress, then stop at the time or memory cap or when asked to."""
        if self.progress is not None:
            self.progress(len(self.seen))
        bounds = self.bounds
        if bounds.max_seconds is not None and time.monotonic() - self.started >= bounds.max_seconds:
            self.stop("time")
        elif bounds.max_memory_mb is not None and _resident_mb() >= bounds.max_memory_mb:
            self.stop("memory")
        elif self.should_stop is not None and self.should_stop():
            self.stop("request")

    def stop(self, reason: str) -> None:
        if not self.stopped:
            self.stopped, self.stopped_by = True, reason

    def _record(self, found: list[Finding], node: _Node) -> None:
        for f in found:
            k = (f.invariant, f.message)
            if k in self.found and self.found[k][0] <= node.depth:
                continue
            self.found[k] = (node.depth, self._scenario(node))

    def _scenario(self, node: _Node) -> Scenario:
        intent, variant = self.roots[node.root]
        s = node.run.snapshot
        data: dict[str, Any] = {"chain": self.chain.id, "intent": intent}
        if variant is not None:
            data["variant"] = variant
        data["events"] = node.path.events() if node.path else []
        data["expect"] = {"state": s.state, "dispatches": dict(s.dispatches)}
        return Scenario.model_validate(data, strict=False)

    def bfs(self, queue: deque[_Node]) -> None:
        while queue and not self.stopped:
            queue.extend(self.expand(queue.popleft()))

    # --- what can happen next ----------------------------------------------

    def choices(self, run: Run) -> list[Choice]:
        s = run.snapshot
        w = s.waiting
        if w.kind != "observe" or not w.step:
            return choices(self.chain, run)
        action = self.chain.action(w.step)
        out = list(self.observations(s, action))
        if self.bounds.crashes:
            out.append(Choice({"crash": True}, True))
        return out

    def observations(self, s: Snapshot, action: Action | None) -> list[Choice]:
        """:func:`~.palette.observation_choices`, kept per step and what it depends on."""
        if action is None:
            return observation_choices(self.chain, s, None)
        stale = tuple(h for h in action.input.handles if h in s.handles)
        cache_key = (action.id, s.variant, stale, tuple(revocation_watches(self.chain, s)))
        cached = self._obs_cache.get(cache_key)
        if cached is None:
            cached = self._obs_cache[cache_key] = observation_choices(self.chain, s, action)
        return cached


def _resident_mb() -> float:
    """This process's resident memory in MB (peak memory where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _detach(run: Run) -> Run:
    run.trace = []
    return run


def _fork(run: Run) -> Run:
    """A branch: the snapshot copied, the trace left behind (the runtime never reads it)."""
    return Run(run.chain, clone(run.snapshot), [])


def _apply(
    chain: ChainSpec, run: Run, event: dict[str, Any], seen: dict[int, tuple] | None = None
) -> Run:
    """Apply one scenario event exactly as :func:`~.scenario.simulate` does.

    ``seen`` keeps the observations built from event dicts the caller holds
    on to (the explorer's choices): the runtime never changes an observation,
    so one object serves every branch that makes the same one.
    """
    kind, value = next(iter(event.items()))
    if kind == "observe":
        kept = seen.get(id(value)) if seen is not None else None
        if kept is None or kept[0] is not value:
            kept = (value, Observation(**value))
            if seen is not None:
                seen[id(value)] = kept
        run.observe(kept[1])
    elif kind == "select":
        run.select(value)
    elif kind == "answer":
        run.answer(value["outcome"], value.get("params"))
    elif kind == "probe":
        cause = value.get("cause")
        run.probe(value["result"], Observation(**cause) if cause is not None else None)
    elif kind == "wait":
        run.wait(value)
    elif kind == "propose":
        run.propose(Proposal(**value))
    elif kind == "crash":
        before = len(run.trace)
        resumed = _crash_and_resume(chain, run)
        resumed.trace = resumed.trace[before:]
        return resumed
    return run


def explore(
    chain: ChainSpec,
    bounds: Bounds = Bounds(),
    *,
    shard: tuple[int, int] | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
    time_up: tuple[type[BaseException], ...] = (),
) -> ExploreResult:
    """Search every failure sequence of ``chain`` within ``bounds``; check the invariants.

    ``shard=(index, count)`` explores a deterministic share: every shard
    walks the same first levels breadth first until a level holds at least
    eight nodes per shard, deeper while one node still outweighs one and a
    half shards' share. It estimates the work below each node of that level from its
    fault budget left (:class:`_Spread`) and deals the nodes out heaviest
    first to the lightest shard, ties by position, keeping those dealt to
    ``index``: every shard computes the same deal. A state reachable within
    the bounds is reachable through some node of that level, so
    :func:`merge` of all shards gives the unsharded states, terminal states
    and violations.
    ``should_stop`` is polled every 50 expansions and ends the
    search with ``truncated=True``; ``progress`` gets the states so far.
    The caps of ``bounds`` end it the same way, with ``stopped_by`` naming
    the cap. ``time_up``: exceptions that mean the caller's time ran out
    (Celery's soft time limit, raised anywhere in the search); the search
    ends with what it found so far, ``stopped_by="time"``.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    >>> r = explore(doc, Bounds(max_faults=1, crashes=False))
    >>> r.terminals, r.violations
    ({'done': 2, 'dead_end': 1}, [])
    """
    if bounds.max_faults < 0 or bounds.max_events < 1:
        raise ValueError(f"bounds need max_faults >= 0 and max_events >= 1; got {bounds}")
    for cap in ("max_states", "max_seconds", "max_memory_mb"):
        value = getattr(bounds, cap)
        if value is not None and value <= 0:
            raise ValueError(f"bounds need {cap} above 0 (or None for no cap); got {value}")
    if shard is not None and not (shard[1] >= 1 and 0 <= shard[0] < shard[1]):
        raise ValueError(f"shard is (index, count) with 0 <= index < count; got {shard}")
    started = time.perf_counter()
    search = _Search(chain, bounds, should_stop, progress)
    try:
        with _collector_paused():
            _run(search, shard)
    except time_up:
        search.stop("time")
    if progress is not None:
        progress(len(search.seen))
    return _result(search, time.perf_counter() - started, shard)


# Python's cyclic collector walks every live object on each full pass, and a search
# holds tens of thousands of queued states: with it running, a 3-fault search of the
# flight chain spends about a third of its time there. The runtime makes almost no
# cycles (a run's parts hold it by weak proxy), so it waits until the search ends;
# the memory cap (Bounds.max_memory_mb) still stops a search that grows too big.
_paused = 0
_paused_lock = threading.Lock()


@contextmanager
def _collector_paused() -> Iterator[None]:
    global _paused
    with _paused_lock:
        _paused += 1
        was_enabled = gc.isenabled()
        gc.disable()
    try:
        yield
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0 and was_enabled:
                gc.enable()


def _run(search: _Search, shard: tuple[int, int] | None) -> None:
    queue = search.start()
    if shard is not None:
        queue = _share(search, queue, shard)
    search.bfs(deque(queue))


def _share(search: _Search, level: list[_Node], shard: tuple[int, int]) -> list[_Node]:
    """This shard's nodes of the level where every shard splits, the same in every shard.

    Levels are expanded whole, so each shard still searches breadth first
    and finds every violation at its shortest length. The split waits for
    a level of at least ``_SHARD_WIDTH`` nodes a shard, then goes on
    while one node would weigh more than ``_SHARD_HEAVY`` shards' fair
    share (a node with its whole fault budget left, early on) and the
    level is under ``_SHARD_DEEPEST`` nodes a shard (every shard repeats
    the levels before the split, so they must stay cheap). A small search
    splits at the first level narrower than the one before: deeper, the
    levels only shrink. Nodes go to shards by :func:`_assign` on the
    weights :class:`_Spread` estimates.
    """
    index, count = shard
    if count == 1:
        return level
    spread, widest = _Spread(search), 0
    while level and not search.stopped:
        weights = spread.weights(level)
        light = max(weights) <= _SHARD_HEAVY * sum(weights) / count
        wide = len(level) >= _SHARD_WIDTH * count
        if len(level) < widest or (wide and (light or len(level) >= _SHARD_DEEPEST * count)):
            owners = _assign(weights, count)
            return [node for node, owner in zip(level, owners, strict=True) if owner == index]
        widest = max(widest, len(level))
        following: list[_Node] = []
        for node in level:
            following.extend(spread.expand(node))
        level = following
    return level  # stopped or ended before the split: bfs() has nothing or no time left


class _Spread:
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

    def __init__(self, search: _Search) -> None:
        self.search = search
        self.spent = 0  # children that spent a fault and reached a new state
        self.could = 0  # expanded nodes with a fault left to spend

    def expand(self, node: _Node) -> list[_Node]:
        """:meth:`_Search.expand`, counting how the faults it could spend branched."""
        children = self.search.expand(node)
        if node.faults < self.search.bounds.max_faults:
            self.could += 1
            self.spent += sum(1 for child in children if child.faults > node.faults)
        return children

    def weights(self, level: list[_Node]) -> list[float]:
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

    def happy_steps(self, node: _Node) -> int:
        """Steps left on the node's fault-free path, walked on a copy of its run."""
        run, steps, chain = _fork(node.run), 0, self.search.chain
        while not run.finished and node.depth + steps < self.search.bounds.max_events:
            free = next((c for c in self.search.choices(run) if not c.fault), None)
            if free is None:
                break
            run = _apply(chain, run, free.event)
            run.trace = []
            steps += 1
        return steps


def _assign(weights: list[float], count: int) -> list[int]:
    """Longest processing time first: the heaviest node to the lightest shard, ties by position.

    >>> _assign([1.0, 9.0, 1.0, 4.0, 4.0], 2)
    [1, 0, 0, 1, 1]
    """
    loads = [(0.0, shard) for shard in range(count)]
    owners = [0] * len(weights)
    for position in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        load, shard = heapq.heappop(loads)
        owners[position] = shard
        heapq.heappush(loads, (load + weights[position], shard))
    return owners


def _result(search: _Search, seconds: float, shard: tuple[int, int] | None) -> ExploreResult:
    violations = [
        Violation(invariant, message, scenario)
        for (invariant, message), (_, scenario) in sorted(search.found.items())
    ]
    return ExploreResult(
        states=len(search.seen),
        paths=search.paths,
        terminals=dict(Counter(k for k in search.keys.values() if k)),
        violations=violations,
        seconds=seconds,
        truncated=search.stopped,
        cut=search.cut,
        keys=search.keys,
        shard=shard,
        reach=search.recorder.reach,
        stopped_by=search.stopped_by,
        peak_mb=_peak_mb(),
    )


def _peak_mb() -> float | None:
    """This process's peak resident memory in MB so far (ru_maxrss: KiB on Linux, bytes on Mac)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def merge(results: list[ExploreResult]) -> ExploreResult:
    """Combine shard results: states and terminal states unioned by key, violations
    deduplicated by invariant and message keeping the shortest scenario, paths and
    cut walks summed, seconds the slowest shard's, peak_mb the largest shard's.

    Results without keys (built from a dict that lost them) add up their
    counts instead, which over-counts states the shards share. Reach is
    unioned (:meth:`.Reach.merge`), so coverage and its warnings are the
    whole search's; it is None if any result lacks it.
    """
    if not results:
        raise ValueError("merge needs at least one result")
    keys: dict[bytes, str] = {}
    for r in results:
        keys.update(r.keys)
    best: dict[tuple[str, str], Violation] = {}
    for r in results:
        for v in r.violations:
            k = (v.invariant, v.message)
            if k not in best or _shorter(v.scenario, best[k].scenario):
                best[k] = v
    if all(r.keys for r in results):
        states = len(keys)
        terminals = dict(Counter(k for k in keys.values() if k))
    else:
        states = sum(r.states for r in results)
        terminals = dict(sum((Counter(r.terminals) for r in results), Counter()))
    return ExploreResult(
        states=states,
        paths=sum(r.paths for r in results),
        terminals=terminals,
        violations=[best[k] for k in sorted(best)],
        seconds=max(r.seconds for r in results),
        truncated=any(r.truncated for r in results),
        cut=sum(r.cut for r in results),
        keys=keys,
        reach=_merged_reach(results),
        stopped_by=next((s for s in STOP_REASONS if any(r.stopped_by == s for r in results)), None),
        peak_mb=max((r.peak_mb for r in results if r.peak_mb is not None), default=None),
    )


def _merged_reach(results: list[ExploreResult]) -> Reach | None:
    reaches = [r.reach for r in results if r.reach is not None]
    if len(reaches) < len(results):
        return None
    merged = reaches[0]
    for reach in reaches[1:]:
        merged = merged.merge(reach)
    return merged


def _shorter(a: Scenario, b: Scenario) -> bool:
    if len(a.events) != len(b.events):
        return len(a.events) < len(b.events)
    return json.dumps(scenario_dict(a), sort_keys=True) < json.dumps(
        scenario_dict(b), sort_keys=True
    )
