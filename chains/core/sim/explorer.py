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
The search itself (state identity, expanding a node) is :mod:`.search`;
how shards deal out its first levels, :mod:`.shards`.
"""

from __future__ import annotations

import base64
import gc
import json
import struct
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..model import ChainSpec
from .causes import Cause
from .invariants import Finding
from .reach import Reach
from .scenario import Scenario
from .search import DIGEST_BYTES, DIGEST_VERSION, Exchange, Search, state_digest, state_key
from .shards import parts, share, split

__all__ = [
    "EXIT_CODES",
    "STOP_REASONS",
    "Bounds",
    "ExploreResult",
    "Violation",
    "explore",
    "merge",
    "pack_states",
    "state_digest",
    "state_key",
    "unpack_states",
]

# What a pipeline reads from ``chain explore``: a broken invariant outranks incomplete
# coverage, and a clean search that did not see the whole chain is not a pass (0).
EXIT_CODES = {"pass": 0, "violations": 1, "incomplete": 3}


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
    cause: tuple[Cause, ...] = ()  # the decisions that led there, oldest first (.causes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "message": self.message,
            "cause": [c.as_dict() for c in self.cause],
            "scenario": scenario_dict(self.scenario),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Violation:
        """The inverse of :meth:`as_dict`; a violation stored before causes has none."""
        cause = tuple(
            Cause(c["step"], c["signal"], c["rule"], c["verdict"], c.get("element"))
            for c in data.get("cause", [])
        )
        scenario = Scenario.model_validate(data["scenario"])
        return cls(data["invariant"], data["message"], scenario, cause)


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
    for a result stored before it was recorded. ``digest_version`` says how
    ``keys`` were computed (the ``DIGEST_VERSION`` of the explorer that
    searched; None for a shard stored before it was recorded).
    ``states_exact`` is False when :func:`merge` could not union the shards'
    keys and added up their counts instead, which counts a state two shards
    share twice: ``states`` is then an upper bound.
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
    digest_version: int | None = DIGEST_VERSION
    states_exact: bool = True

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
            "states_exact": self.states_exact,
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
            out["digest_version"] = self.digest_version
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
            violations=[Violation.from_dict(v) for v in data["violations"]],
            seconds=data["seconds"],
            truncated=data["truncated"],
            cut=data.get("cut", 0),
            keys=_unpack(data),
            shard=(shard[0], shard[1]) if shard else None,
            reach=Reach.from_dict(data["reach"]) if data.get("reach") else None,
            stopped_by=data.get("stopped_by"),
            peak_mb=data.get("peak_mb"),
            digest_version=data.get("digest_version"),
            states_exact=data.get("states_exact", True),
        )


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
            for i in range(0, len(raw), DIGEST_BYTES):
                keys[raw[i : i + DIGEST_BYTES]] = terminal
        return keys
    return {bytes.fromhex(k): t for k, t in (data.get("state_keys") or {}).items()}


def _caused_by(exc: BaseException | None, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc``, or an exception it was raised from or during, is one of ``kinds``.

    A time limit that strikes inside a library's callback can come back wrapped:
    orjson answers an exception its ``default`` raises with a TypeError caused by it.

    >>> try:
    ...     raise TypeError("not serializable") from TimeoutError()
    ... except TypeError as wrapped:
    ...     _caused_by(wrapped, (TimeoutError,)), _caused_by(wrapped, (KeyError,))
    (True, False)
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def scenario_dict(scenario: Scenario) -> dict[str, Any]:
    """A scenario as plain data, ready for ``yaml.safe_dump`` and :func:`load_scenario`."""
    out: dict[str, Any] = {"chain": scenario.chain, "intent": scenario.intent}
    if scenario.variant is not None:
        out["variant"] = scenario.variant
    out["events"] = [e.model_dump(mode="json", exclude_defaults=True) for e in scenario.events]
    if scenario.expect is not None:
        out["expect"] = scenario.expect.model_dump(mode="json", exclude_none=True)
    return out


def explore(
    spec: ChainSpec,
    bounds: Bounds = Bounds(),
    *,
    shard: tuple[int, int] | None = None,
    claim: Callable[[], int | None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
    time_up: tuple[type[BaseException], ...] = (),
    exchange: Exchange | None = None,
    split_into: Callable[[int], None] | None = None,
) -> ExploreResult:
    """Search every failure sequence of ``chain`` within ``bounds``; check the invariants.

    ``shard=(index, count)`` explores a deterministic share: every shard
    walks the same first levels breadth first until a level holds at least
    eight nodes per shard, deeper while one node still outweighs one and a
    half shards' share. It estimates the work below each node of that level from its
    fault budget left (:class:`~.shards.Spread`) and deals the nodes out heaviest
    first to the lightest shard, ties by position, keeping those dealt to
    ``index``: every shard computes the same deal. A state reachable within
    the bounds is reachable through some node of that level, so
    :func:`merge` of all shards gives the unsharded states, terminal states
    and violations.
    ``claim``, with ``shard``: the level is not dealt up front but cut into
    parts (:func:`~.shards.parts`) that the shards claim as they get free.
    Each call returns the number of the next part this shard searches, from
    a count every shard of the search shares (0, 1, 2, ... across them all;
    a part handed out again, to a shard run a second time, is searched
    again), or None for no more; the shard ends when it gets None or a
    number past the last part. A state a later part reaches by a shorter
    path than an earlier part did is searched again from there, so every
    violation is still found at its shortest length.
    The first part is claimed before anything is walked, so a shard that
    gets None first searches nothing; ``split_into`` is told how many parts
    this shard's split has, once it has cut the level, so that the caller
    can answer None to the shards that start when every part is taken.
    ``should_stop`` is polled every 50 expansions and ends the
    search with ``truncated=True``; ``progress`` gets the states so far.
    The caps of ``bounds`` end it the same way, with ``stopped_by`` naming
    the cap. ``time_up``: exceptions that mean the caller's time ran out
    (Celery's soft time limit, raised anywhere in the search); the search
    ends with what it found so far, ``stopped_by="time"``.
    ``exchange``, with ``claim``: shards running at once tell each other the
    states they searched, so that one does not search again below a state
    another has (claimed parts overlap: flight at three faults, two shards
    searched a twentieth more states than the whole without it). Once the
    shard has cut the split level (which every shard must cut alike, so
    none skips a state above it), about every
    ``EXCHANGE_EVERY`` seconds it is called with this shard's states
    searched since the last call, as (key, faults, depth), and returns the
    other shards' the same way (:func:`pack_states` writes them as bytes).
    A state another shard searched with no more faults at no greater depth
    is not searched again here: that shard searches everything below it that
    this one would, and finds each violation there no later. Sound as long as
    every shard that sent a state searches below it to the end or the
    search ends truncated; a shard run a second time (its first worker
    died) must search without one, since the others may have skipped what
    its first run sent.

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
    if claim is not None and shard is None:
        raise ValueError("claim needs shard: the parts are those of the shards' split")
    if (exchange is not None or split_into is not None) and claim is None:
        raise ValueError("exchange and split_into need claim: they are about claimed parts")
    started = time.perf_counter()
    search = Search(spec, bounds, should_stop, progress)
    try:
        with _collector_paused():
            _run(search, shard, claim, split_into, exchange)
    except BaseException as exc:
        if not _caused_by(exc, time_up):
            raise
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


def _run(
    search: Search,
    shard: tuple[int, int] | None,
    claim: Callable[[], int | None] | None,
    split_into: Callable[[int], None] | None,
    exchange: Exchange | None,
) -> None:
    if claim is None:
        queue = search.start()
        search.bfs(deque(queue if shard is None else share(search, queue, shard)))
        return
    assert shard is not None  # explore checks it
    search.depths = {}  # parts come at any depth: see Search.depths
    n = claim()
    if n is None:  # every part taken already: nothing to walk to
        return
    level, weights = split(search, search.start(), shard[1])
    dealt = parts(weights, shard[1])
    if split_into is not None and not search.stopped:
        split_into(len(dealt))
    # Only now: every shard must cut the same level, so none may skip a state above it
    # because another shard sent it (they all walk those levels).
    search.exchange = exchange
    while not search.stopped and n is not None and n < len(dealt):
        search.bfs(deque(level[i] for i in dealt[n]))
        n = claim()
    if not search.stopped:  # the last states searched, for the shards still running
        search.share()


def _result(search: Search, seconds: float, shard: tuple[int, int] | None) -> ExploreResult:
    violations = [
        Violation(invariant, message, scenario, cause)
        for (invariant, message, _), (_, scenario, cause) in sorted(search.found.items())
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


# A searched state as an exchange sends it: its key, its faults and its depth.
_EXCHANGED = struct.Struct(f"<{DIGEST_BYTES}sHI")


def pack_states(states: Iterable[tuple[bytes, int, int]]) -> bytes:
    """Searched states (key, faults, depth), as ``exchange`` gets them, in 14 bytes each.

    >>> unpack_states(pack_states([(bytes(8), 1, 7)]))
    [(b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00', 1, 7)]
    """
    return b"".join(_EXCHANGED.pack(*state) for state in states)


def unpack_states(data: bytes) -> list[tuple[bytes, int, int]]:
    """What :func:`pack_states` wrote; ValueError when it is not a whole number of states."""
    if len(data) % _EXCHANGED.size:
        raise ValueError(f"{len(data)} bytes are not states of {_EXCHANGED.size} bytes each")
    return list(_EXCHANGED.iter_unpack(data))


def merge(results: list[ExploreResult]) -> ExploreResult:
    """Combine shard results: states and terminal states unioned by key, violations
    deduplicated as findings are (:meth:`.Finding.identity`) keeping the shortest scenario,
    paths and cut walks summed, seconds the slowest shard's, peak_mb the largest shard's.

    Results without keys (built from a dict that lost them), or whose keys
    were written by different explorer versions (``digest_version``: a
    campaign whose shards ran on both sides of an upgrade), add up their
    counts instead, which over-counts states the shards share; the merged
    result says so with ``states_exact=False``. Reach is
    unioned (:meth:`.Reach.merge`), so coverage and its warnings are the
    whole search's; it is None if any result lacks it.
    """
    if not results:
        raise ValueError("merge needs at least one result")
    keys: dict[bytes, str] = {}
    for r in results:
        keys.update(r.keys)
    best: dict[tuple[str, str, tuple[Cause, ...]], Violation] = {}
    for r in results:
        for v in r.violations:
            k = Finding(v.invariant, v.message, v.cause).identity()
            if k not in best or _shorter(v.scenario, best[k].scenario):
                best[k] = v
    versions = {r.digest_version for r in results}
    exact = len(versions) == 1 and all(r.keys and r.states_exact for r in results)
    if exact:
        states = len(keys)
        terminals = dict(Counter(k for k in keys.values() if k))
    else:
        keys = {}
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
        digest_version=versions.pop() if exact else None,
        states_exact=exact,
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
