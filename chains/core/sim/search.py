"""The search's machinery: state identity, the nodes of a search, and how one is expanded.

:func:`state_digest` says when two runs are one state; :class:`Search`
holds what a search has seen (states by digest with the fewest faults that
reached them, violations with their shortest scenario, what the chain's
coverage saw) and expands a node into its children: one per input the
chain tells apart (:mod:`.palette`), within the fault budget, each applied
to a copy of the parent's run (:func:`fork`), the last to the parent's run
itself. :mod:`.explorer` runs it breadth first and reports; :mod:`.shards`
deals its first levels out among shards.
"""

from __future__ import annotations

import operator
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import orjson
import xxhash
from pydantic import BaseModel

from ..memo import by_identity
from ..model import Action, ChainSpec
from .causes import Cause
from .classifier import repeats_read
from .invariants import Finding, Monitor, minted_read
from .palette import (
    Choice,
    choices,
    default_intent,
    observation_choices,
    probe_age,
    probe_choices,
    revocation_watches,
)
from .reach import Recorder
from .runtime import Run
from .scenario import STEP_EVENT_KINDS, Scenario
from .state import (
    CorrelationRecord,
    Event,
    HandleState,
    LandedCommit,
    Observation,
    Proposal,
    Snapshot,
    clone,
)
from .steps import keyed_commits

if TYPE_CHECKING:
    from .explorer import Bounds

__all__ = [
    "DIGEST_BYTES",
    "DIGEST_VERSION",
    "EXCHANGE_EVERY",
    "EventPath",
    "Exchange",
    "Node",
    "Search",
    "Written",
    "apply_event",
    "digest_and_written",
    "fork",
    "state_digest",
    "state_key",
]

DIGEST_BYTES = 8  # of xxh3-64 per state: see docs/explorer.md for why collisions don't matter
# What state_digest writes and how it hashes it: raise it with every change to either,
# so that merge never unions digests of shards written two ways (they would never meet,
# and every state two shards share would count twice).
DIGEST_VERSION = 13
_POLL = 50  # expansions between should_stop / progress calls (the first one included)
# Seconds between two exchanges of searched states with the other shards (Search.exchange).
# Shards reach the states they share at about the same time, so what one learns late it
# has searched already. Flight at three faults in a campaign of two shards on two Celery
# workers (PostgreSQL, Redis): exchanging every 0.25, 0.05 or 0.02 s, the two searched
# about 15,100, 14,240 or 14,210 states against 14,097 for the whole (medians), and ran
# 1.88, 1.94 or 2.04 times as fast as one worker (docs/benchmarks.md, tenth round). An
# exchange is a database write and read: fifty a second is little beside a search's work.
EXCHANGE_EVERY = 0.02
_KEPT_CHOICES = 4096  # lists of choices a search keeps (flight at 3 faults: 10)


def state_key(snapshot: Snapshot, monitor: Monitor) -> str:
    """:func:`state_digest` as hex text."""
    return state_digest(snapshot, monitor).hex()


def state_digest(snapshot: Snapshot, monitor: Monitor) -> bytes:
    """A canonical 8-byte hash of what can still change the run or a finding.

    Left out: ``run_id`` (one per search), ``seq`` (it numbers events; the
    backoff jitter is seeded from fields kept here, so merged states draw the
    same jitter later), ``dispatches`` (counted, never read by the runtime),
    ``sealed`` (written, never read: the sealed store keeps intent values
    for a replay), and result sets keyed ``step@seq``
    (read by nobody: selections read results by alias). Seq-valued fields
    the runtime compares with each other (``arrived_seq``, ``minted_seq``,
    ``attempt_seq``) are replaced by their rank, which keeps every comparison.
    The trace is left out: the runtime never reads it; the history the
    invariants need is the monitor's key.

    Reductions merge runs with the same future (docs/explorer.md says why
    each keeps every finding): the intent's values, with a correlation
    record's sealed references to them and its lookup keys, are left out (no
    decision and no invariant reads a value: predicates match by name);
    ``last_observation`` is left out unless the run is parked at a raised
    gate (its only reader, an ``ok`` answer there, lands the step with the
    response that raised the gate, which parking there writes); and of the
    steps' arrival counts only keyed commits' are kept, where the count
    numbers the idempotency key (coverage reads which steps were reached on
    every state it is fed, merged or not). Outside a fan-out, aliases are
    written numbered back from their handle's latest mint (0 is the latest)
    and of the mint counts only which of the handles a commit takes were
    ever minted (:func:`~.invariants.minted_read`): a count only numbers the
    next alias, which need only be new, and nothing a run decides, no
    invariant and no coverage reads an alias's number, only which aliases
    are equal. Two runs that minted a handle a different number of times
    before have the same future but for the names, and the states that
    follow them get the same keys, so shards still add up to the whole.
    """
    return digest_and_written(snapshot, monitor, None)[0]


# A sharded search's exchange with its other shards (explore's ``exchange``): it takes the
# states this shard searched since the last call, as (key, faults, depth), and returns
# those the other shards searched since, the same way.
Exchange = Callable[[list[tuple[bytes, int, int]]], Iterable[tuple[bytes, int, int]]]


# What a state's key wrote of its result sets and selections, kept for its children
# (see digest_and_written): per field, a copy of the value and the JSON written for it.
Written = tuple[Any, ...]


def digest_and_written(
    snapshot: Snapshot, monitor: Monitor, parent: Written | None
) -> tuple[bytes, Written]:
    """:func:`state_digest`, reusing what the parent's key wrote of fields left unchanged.

    ``parent`` is what the parent state's key wrote (None for a root). The
    result sets and the selections are a large part of a key's bytes and
    change at few inputs (a search's options, a pick): a field equal to the
    parent's copy reuses the JSON written for it. Equal values write the same
    JSON here (strings, whole numbers and frozen options), so the key is the
    one :func:`state_digest` writes whole, however the state was reached.
    The handles and mint counts change at most inputs (every success mints),
    and keeping their copies for every queued state cost more memory than
    the writing they saved.
    """
    s = snapshot
    # most states have landed nothing and persisted no record yet: only non-empty groups
    landed: list[tuple[int, list[LandedCommit]]] = [
        (at, group)
        for at, group in (
            (_AT_COMMITS, s.commits_landed),
            (_AT_COMPENSATORS, s.compensators_landed),
        )
        if group
    ]
    seqs = [s.arrived_seq, *[h.minted_seq for h in s.handles.values()]]
    for _, group in landed:
        seqs += [r.attempt_seq for r in group]
    seqs += [r.attempt_seq for r in s.correlation]
    rank = {v: i for i, v in enumerate(sorted(set(seqs)))}

    kept = parent or (None, None)
    written = (
        _written(s.results, kept[0], _results_json),
        _written(s.selections, kept[1], _selections_json),
    )
    # Aliases are written numbered back from their handle's latest mint; a fan-out's
    # branches number shared handles through the group, so theirs are written as they are
    # (negated), with the counts.
    plain = s.fanout is None and s.branch_of is None
    counts = s.mint_counts if plain else _NO_COUNTS

    def name(alias: str) -> tuple[str, int]:
        hid, n = _parts(alias)
        return hid, counts.get(hid, 0) - n

    # The key is a row of the kept fields' values in the model's field order (a fixed
    # order: no names to write, nothing to sort at the top). orjson writes a model as the
    # dict of its fields (no model_dump copy first). Handles and records are written as
    # their seq's rank, their aliases and the values of their other kept fields, and
    # result options as dicts, so orjson need not call back.
    row = list(_kept_fields(s.__dict__))
    row[_AT_ARRIVED] = rank[s.arrived_seq]
    if plain:  # a live alias is its handle's latest mint (Handles.mint), (h, 0): left out
        row[_AT_HANDLES] = {
            h: (rank[st.minted_seq], [*map(name, st.lineage)], _handle_rest(st))
            for h, st in s.handles.items()
        }
    else:  # a fan-out's shared handles take their numbers from the group
        row[_AT_HANDLES] = {
            h: (rank[st.minted_seq], name(st.alias), [*map(name, st.lineage)], _handle_rest(st))
            for h, st in s.handles.items()
        }
    for at, group in landed:
        row[at] = [
            (
                rank[r.attempt_seq],
                [*map(name, r.handles)],
                [*map(name, r.consumed)],
                _landed_rest(r),
            )
            for r in group
        ]
    if s.correlation:
        row[_AT_CORRELATION] = [(rank[r.attempt_seq], _correlation_rest(r)) for r in s.correlation]
    row[_AT_RESULTS] = sorted((name(alias), options) for alias, options in written[0][1].items())
    row[_AT_SELECTIONS] = written[1][1]
    row[_AT_WAITING] = s.waiting.__dict__  # every key has one: no call back for it
    if s.gate_context is None or s.gate_context.kind != "raised":
        row[_AT_OBSERVATION] = None
    if s.auto_repairs_fired or s.stale_recurrences:  # few states have either
        once, caps = repeats_read(monitor.spec)
        row[_AT_FIRED] = sorted(once.intersection(s.auto_repairs_fired))
        row[_AT_STALE] = {
            k: min(n, caps.get(k.split("|", 1)[0], n)) for k, n in s.stale_recurrences.items()
        }
    if plain:
        row[_AT_MINT_COUNTS] = [h for h in minted_read(monitor.spec) if h in counts]
    named = keyed_commits(monitor.spec)
    row[_AT_ARRIVALS] = {h: n for h, n in s.arrivals.items() if h in named} if named else None
    row.append(monitor.key(snapshot, name))
    digest = xxhash.xxh3_64_digest(orjson.dumps(row, default=_fields, option=orjson.OPT_SORT_KEYS))
    return digest, written


def _written(value: dict, kept: tuple | None, write: Callable[[dict], Any]) -> tuple:
    """(a copy of ``value``, what ``write`` makes of it): ``kept`` when it holds an equal value.

    A shallow copy serves: these dicts hold frozen options, or lists of them
    the runtime replaces and never changes.
    """
    if kept is not None and kept[0] == value:
        return kept
    return (dict(value), write(value))


def _json(value: Any) -> orjson.Fragment:
    return orjson.Fragment(orjson.dumps(value, default=_fields, option=orjson.OPT_SORT_KEYS))


def _results_json(results: dict[str, list[Any]]) -> dict[str, orjson.Fragment]:
    """Each result set's options by the alias that produced them (the key writes the alias)."""
    return {k: _json([o.__dict__ for o in v]) for k, v in results.items() if "@" not in k}


_selections_json = _json


def _rest(kind: Any, *left_out: str) -> Callable[[Any], tuple[Any, ...]]:
    """The values of a plain record's fields but ``left_out``, in field order."""
    return operator.attrgetter(*(f.name for f in fields(kind) if f.name not in left_out))


_handle_rest = _rest(HandleState, "minted_seq", "alias", "lineage")
_landed_rest = _rest(LandedCommit, "attempt_seq", "handles", "consumed")
# A correlation record's sealed references to intent values, and the keys a probe would
# look its result up by: written for a replay or an operator, read by nothing the run does.
_correlation_rest = _rest(CorrelationRecord, "attempt_seq", "intent_ref", "lookup")
_NO_COUNTS: dict[str, int] = {}


class _Aliases(dict[str, tuple[str, int]]):
    """Alias -> (handle id, number), each alias parsed the first time it is met."""

    def __missing__(self, alias: str) -> tuple[str, int]:
        if len(self) >= 65536:
            self.clear()
        hid, _, n = alias.rpartition("#")
        parts = self[alias] = (hid, int(n))
        return parts


_parts = _Aliases().__getitem__


def _fields(model: Any) -> dict[str, Any]:
    if not isinstance(model, BaseModel):
        raise TypeError(f"{type(model).__name__} is not part of a run's state")
    return model.__dict__


_NOT_STATE = ("run_id", "seq", "dispatches", "sealed", "intent")
_KEPT = tuple(name for name in Snapshot.model_fields if name not in _NOT_STATE)
_kept_fields = operator.itemgetter(*_KEPT)
_AT = {name: at for at, name in enumerate(_KEPT)}
_AT_ARRIVED, _AT_ARRIVALS, _AT_HANDLES, _AT_RESULTS, _AT_OBSERVATION = (
    _AT[name] for name in ("arrived_seq", "arrivals", "handles", "results", "last_observation")
)
_AT_SELECTIONS, _AT_WAITING = _AT["selections"], _AT["waiting"]
_AT_MINT_COUNTS = _AT["mint_counts"]
_AT_FIRED, _AT_STALE = _AT["auto_repairs_fired"], _AT["stale_recurrences"]
_AT_COMMITS, _AT_COMPENSATORS, _AT_CORRELATION = (
    _AT[name] for name in ("commits_landed", "compensators_landed", "correlation")
)


# --- the search --------------------------------------------------------------


@dataclass(slots=True)
class EventPath:
    """Scenario events as a shared-tail list, so a million paths don't copy their prefixes."""

    event: dict[str, Any]
    parent: EventPath | None

    def events(self) -> list[dict[str, Any]]:
        out = []
        node: EventPath | None = self
        while node is not None:
            out.append(node.event)
            node = node.parent
        return out[::-1]


@dataclass(slots=True)
class Node:
    run: Run
    monitor: Monitor
    root: int
    path: EventPath | None
    faults: int
    depth: int
    written: Written | None = None  # what its key wrote (digest_and_written)


FoundAt = tuple[int, Scenario, tuple[Cause, ...]]


class Search:
    def __init__(self, spec: ChainSpec, bounds: Bounds, should_stop, progress):
        self.spec = spec
        self.bounds = bounds
        self.should_stop = should_stop
        self.progress = progress
        self.seen: dict[bytes, int] = {}
        # Each state's depth when last searched from, for a search whose queue is not one
        # breadth-first walk (explore's claimed parts): reached again by a shorter path, it
        # is searched again from there. None while depth only grows along the queue.
        self.depths: dict[bytes, int] | None = None
        self.keys: dict[bytes, str] = {}
        self.paths = 0
        self.cut = 0
        # (invariant, message, first cause) -> depth, shortest scenario, its whole cause
        self.found: dict[tuple[str, str, tuple[Cause, ...]], FoundAt] = {}
        self.expanded = 0
        self.stopped = False
        self.stopped_by: str | None = None
        self.started = time.monotonic()
        self.roots: list[tuple[dict[str, Any], str | None]] = []
        self._kept_choices: dict[tuple, list[Choice]] = {}
        self._revocable = any(a.revocation is not None for a in spec.actions)
        # An observation per choice event; choices are kept per step (see observations()).
        self._observation = by_identity(limit=1 << 16)(Observation.model_validate)
        self.recorder = Recorder(spec)
        # Other shards' searched states, key -> (faults, depth), and this one's since the
        # last exchange (see Search.exchange).
        self.exchange: Exchange | None = None
        self.elsewhere: dict[bytes, tuple[int, int]] = {}
        self.fresh: list[tuple[bytes, int, int]] = []
        self.exchanged = self.started

    # roots: one per variant, no fault

    def start(self) -> list[Node]:
        intent = default_intent(self.spec)
        variants = self.spec.variants.values if self.spec.variants else [None]
        nodes = []
        for i, variant in enumerate(variants):
            self.roots.append((intent, variant))
            run = Run.start(self.spec, intent=dict(intent), variant=variant)
            monitor = Monitor(self.spec)
            found = monitor.feed(run.trace)
            events = list(run.trace)
            self.recorder.feed(run.snapshot, events)
            node = Node(detach(run), monitor, i, None, 0, 0)
            self._record(found, node)
            if self._visit(node, events):
                nodes.append(node)
        return nodes

    def _visit(self, node: Node, events: list[Event]) -> bool:
        """Count the node; whether it is worth expanding. ``events``: what led to it.

        A state's own findings are looked for the first time it is reached
        only: they read nothing its key leaves out, so a state reached again
        shows the same ones, already recorded at a depth no greater (or,
        with ``depths``, looked for again when reached by a shorter path).
        """
        snapshot = node.run.snapshot
        key, node.written = digest_and_written(snapshot, node.monitor, node.written)
        before = self.seen.get(key)
        if before is None and self.elsewhere:
            other = self.elsewhere.get(key)
            if other is not None and other[0] <= node.faults and other[1] <= node.depth:
                self.paths += 1  # joins a state another shard searches, as far as this one would
                return False
        finished = node.run.finished
        depths = self.depths
        shorter = depths is not None and before is not None and node.depth < depths[key]
        if before is None or shorter:
            self._record(node.monitor.state_findings(snapshot, node.run), node)
        if before is None:
            cap = self.bounds.max_states
            if cap is not None and len(self.seen) >= cap:
                self.stop("states")
                return False
            self.keys[key] = snapshot.state if finished else ""
        elif before <= node.faults and not shorter:
            self.paths += 1  # joins a state already explored with as few faults
            if node.faults == 0:  # only a fault-free walk can join itself: it loops
                self.recorder.ended(snapshot, events, 0, "loop")
            return False
        self.seen[key] = node.faults
        if depths is not None:
            depths[key] = node.depth
        if self.exchange is not None:
            self.fresh.append((key, node.faults, node.depth))
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

    def expand(self, node: Node) -> list[Node]:
        self.expanded += 1
        if self.expanded % _POLL == 1:
            self.poll()
        children = []
        budget = self.bounds.max_faults - node.faults
        offered = self.choices(node.run)  # a choice is one fault or none
        allowed = offered if budget > 0 else [c for c in offered if not c.fault]
        for n, choice in enumerate(allowed, 1):
            faults = node.faults + choice.fault
            # The last child takes the parent's run and monitor instead of copies: the
            # parent is done with once expanded, and most nodes have a single child.
            last = n == len(allowed)
            run = fork(node.run) if not last else node.run
            if choice.observation is not None:  # as apply_event observes, its lookup made once
                run.observe(choice.observation)
            else:
                run = apply_event(self.spec, run, choice.event, self._observation)
            monitor = node.monitor if last else node.monitor.copy()
            found = monitor.feed(run.trace)
            events, run.trace = run.trace, []
            self.recorder.feed(run.snapshot, events)
            path = EventPath(choice.event, node.path)
            child = Node(run, monitor, node.root, path, faults, node.depth + 1, node.written)
            if found:
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
        elif bounds.max_memory_mb is not None and resident_mb() >= bounds.max_memory_mb:
            self.stop("memory")
        elif self.should_stop is not None and self.should_stop():
            self.stop("request")
        if self.exchange is not None and time.monotonic() - self.exchanged >= EXCHANGE_EVERY:
            self.share()

    def share(self) -> None:
        """Send the states searched since the last exchange; keep what the other shards sent."""
        if self.exchange is None:
            return
        self.exchanged = time.monotonic()
        fresh, self.fresh = self.fresh, []
        elsewhere = self.elsewhere
        for key, faults, depth in self.exchange(fresh):
            kept = elsewhere.get(key)
            if kept is None or (faults <= kept[0] and depth <= kept[1]):
                elsewhere[key] = (faults, depth)

    def stop(self, reason: str) -> None:
        if not self.stopped:
            self.stopped, self.stopped_by = True, reason

    def _record(self, found: list[Finding], node: Node) -> None:
        for f in found:
            k = f.identity()
            if k in self.found and self.found[k][0] <= node.depth:
                continue
            self.found[k] = (node.depth, self._scenario(node), f.cause)

    def _scenario(self, node: Node) -> Scenario:
        """The node's inputs as a scenario, each naming the step (or gate) it answered.

        A path keeps the inputs alone (a million paths share their prefixes),
        so the steps are found by replaying it from its root as the search
        applied it: once per finding kept, never per state.
        """
        intent, variant = self.roots[node.root]
        s = node.run.snapshot
        data: dict[str, Any] = {"chain": self.spec.id, "intent": intent}
        if variant is not None:
            data["variant"] = variant
        run = detach(Run.start(self.spec, intent=dict(intent), variant=variant))
        events: list[dict[str, Any]] = []
        for event in node.path.events() if node.path else []:
            waiting = run.snapshot.waiting
            kind, value = next(iter(event.items()))
            if kind == "answer" and waiting.gate:
                events.append({"answer": {**value, "gate": waiting.gate}})
            elif kind in STEP_EVENT_KINDS and waiting.step:
                events.append({"step": waiting.step, kind: value})
            else:
                events.append(event)
            run = apply_event(self.spec, run, event, self._observation)
            run.trace = []
        data["events"] = events
        data["expect"] = {"state": s.state, "dispatches": dict(s.dispatches)}
        return Scenario.model_validate(data, strict=False)

    def bfs(self, queue: deque[Node]) -> None:
        while queue and not self.stopped:
            queue.extend(self.expand(queue.popleft()))

    # --- what can happen next ----------------------------------------------

    def choices(self, run: Run) -> list[Choice]:
        """What can happen next; a list the caller must not change (it may be kept)."""
        s = run.snapshot
        w = s.waiting
        if w.kind == "observe" and w.step:
            return self.observations(s, self.spec.action(w.step))
        if w.kind == "probe" and w.step:
            return self.probes(s, w.step)
        return choices(self.spec, run)

    def observations(self, s: Snapshot, action: Action | None) -> list[Choice]:
        """:func:`~.palette.observation_choices` and a crash, kept by what decides them."""
        if action is None:
            return self._with_crash(observation_choices(self.spec, s, None))
        stale = tuple(filter(s.handles.__contains__, action.input.handles))  # its live inputs
        watches = tuple(revocation_watches(self.spec, s)) if self._revocable else ()
        cache_key = (action.id, s.variant, stale, watches)
        cached = self._kept_choices.get(cache_key)
        if cached is None:
            found = [_observed(c) for c in observation_choices(self.spec, s, action)]
            cached = self._kept_choices[cache_key] = self._with_crash(found)
        return cached

    def probes(self, s: Snapshot, step: str) -> list[Choice]:
        """:func:`~.palette.probe_choices`, kept by what decides them: the step and the age."""
        cache_key = ("probe", step, probe_age(s, step))
        cached = self._kept_choices.get(cache_key)
        if cached is None:
            if len(self._kept_choices) >= _KEPT_CHOICES:  # ages are as many as the clock's values
                self._kept_choices.clear()
            found = probe_choices(self.spec, s, self.spec.action(step))
            cached = self._kept_choices[cache_key] = found
        return cached

    def _with_crash(self, found: list[Choice]) -> list[Choice]:
        return [*found, Choice({"crash": True}, True)] if self.bounds.crashes else found


def _observed(choice: Choice) -> Choice:
    """``choice`` with its observation made, if it is one (see :attr:`Choice.observation`)."""
    value = choice.event.get("observe")
    if value is None:
        return choice
    return replace(choice, observation=Observation.model_validate(value))


def resident_mb() -> float:
    """This process's resident memory in MB (peak memory where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def detach(run: Run) -> Run:
    """``run`` as a search keeps it: no trace, and events written for the search alone.

    A search reads each input's events once (the invariants' monitor, the
    coverage recorder) and drops them; neither reads the budgets an event
    stamps, so its runs do not stamp them, nor seal the responses they write
    (C7.3 is about traces someone reads; a counterexample is inputs, run again
    where it is shown).
    """
    run.trace = []
    run.log.stamps_budgets = False
    run.log.seals = False
    return run


def fork(run: Run) -> Run:
    """A branch: the snapshot copied, the trace left behind (the runtime never reads it)."""
    return detach(Run(run.spec, clone(run.snapshot), []))


def apply_event(
    spec: ChainSpec,
    run: Run,
    event: dict[str, Any],
    observation: Callable[[dict[str, Any]], Observation] = Observation.model_validate,
) -> Run:
    """Apply one scenario event exactly as :func:`~.scenario.simulate` does.

    ``observation`` makes the observation of an ``observe`` event; the
    explorer passes one that keeps each by its event (its choices are made
    once): the runtime never changes an observation, so one object serves
    every branch that makes the same one.
    """
    kind, value = next(iter(event.items()))
    if kind == "observe":
        run.observe(observation(value))
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
        # The simulator resumes from JSON copies of the snapshot and trace; the
        # explorer's run has no trace and its snapshot comes back from JSON equal
        # (test_explorer checks every crash of the fixtures), so resume's own copy serves.
        resumed = Run.resume(spec, run.snapshot, [])
        resumed.log.stamps_budgets = run.log.stamps_budgets
        resumed.log.seals = run.log.seals
        return resumed
    return run
