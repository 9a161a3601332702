"""Auditing a real run's trace against the chain it was meant to follow.

A runtime that executes a chain writes a trace (SPEC §2.5): an attempt per
provider dispatch with the signal it got and the verdict it applied, and
transition and reconcile events. When an incident happens ("why did the
agent book twice?"), :func:`audit` replays that trace against the approved
chain and reports each divergence at its event:

- ``forbidden_dispatch``: a dispatch the SPEC's invariants forbid (the
  explorer's :class:`~.invariants.Monitor` reads the trace as it goes): a
  second dispatch of an unkeyed commit whose first was never resolved, a
  spent single-use handle presented again, a money or consent gate
  answered by the model;
- ``invalidated_handle``: an attempt presenting an alias the trace (or the
  chain's own rules, replayed) had invalidated before;
- ``out_of_order``: an attempt of another step than the one the chain
  waits for at that point;
- ``unknown_step``: an attempt naming no step, or one the chain does not
  have (the audit goes on past it);
- ``wrong_verdict``: a verdict other than the one the deciding row gives
  for the signal the attempt got.

The last three come from a shadow run of our runtime fed the trace's own
inputs (the observation of each attempt, and picks, answers and probe
results where the trace recorded them) at the trace's times; the inputs a
trace of HTTP calls cannot record are inferred where the next call makes
them certain (:mod:`.inference`), and listed. Once the real run left the
chain's path the shadow cannot follow it: it stops there, the result says
so, and the invariants are still checked to the end.

The audit reads a :class:`Reading`: events with the :class:`Place` in their
file each came from. This module reads the simulator's own JSON lines
(:func:`read_simulator`); :mod:`chains.core.traces` reads the shapes real
systems emit into the same.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..errors import DocumentError, Problem
from ..model import ChainSpec
from .inference import Inferred, apply, gate_deadline, needed, probe_result
from .invariants import Monitor, abandoned
from .palette import default_intent
from .replay import replay_input
from .runtime import Run, SimulationError
from .scenario import MAX_EVENTS, Scenario
from .state import Event

__all__ = [
    "MAX_SECONDS",
    "AuditResult",
    "Divergence",
    "Inferred",
    "Place",
    "Reading",
    "UnknownCall",
    "audit",
    "in_seq_order",
    "read_simulator",
    "read_trace",
    "scenario_at",
    "scenario_until",
    "seconds",
]

Kind = Literal[
    "forbidden_dispatch", "invalidated_handle", "out_of_order", "unknown_step", "wrong_verdict"
]
_OBSERVED = ("transport", "code", "predicates", "events")
MAX_SECONDS = 1_000_000_000  # an event's ``t``: about 31 years of a run's virtual time
_MAX_COUNT = 2**63 - 1  # ``seq`` and ``attempt``: what a runtime's 64-bit counter holds


@dataclass(frozen=True)
class Place:
    """Where an event is in its file: a line, and a JSON pointer inside that line's value."""

    line: int | None = None
    pointer: str | None = None

    def __str__(self) -> str:
        if self.line is not None and self.pointer:
            return f"line {self.line}, {self.pointer}"
        if self.line is not None:
            return f"line {self.line}"
        return self.pointer or "the trace"

    def problem(self, message: str) -> Problem:
        """A problem at this place (the pointer rides in the problem's path)."""
        return Problem(message, self.line, path=self.pointer)


@dataclass(frozen=True)
class UnknownCall:
    """An HTTP call no action of the chain is bound to: named, never dropped."""

    method: str
    path: str
    place: Place
    status: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "at": str(self.place),
            "line": self.place.line,
            "pointer": self.place.pointer,
            "status": self.status,
        }


@dataclass
class Reading:
    """A trace as read: its format, its events with their places, the calls it could not bind."""

    format: str
    events: list[Event]
    places: list[Place]
    unknown_calls: list[UnknownCall] = field(default_factory=list)
    run_id: str | None = None


@dataclass(frozen=True)
class Divergence:
    """Where the run left the chain: the event (its seq, line and place), what kind, and why.

    ``line`` is the event's line in the file, or its position in the trace
    where the file is one JSON document; ``at`` says where it is in words
    (``line 7``, ``/log/entries/4``).
    """

    seq: int
    line: int
    kind: Kind
    step: str | None
    message: str
    at: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "line": self.line,
            "at": self.at or f"line {self.line}",
            "kind": self.kind,
            "step": self.step,
            "message": self.message,
        }


@dataclass
class AuditResult:
    """The divergences in trace order; ``followed`` whether the shadow run kept up to the end.

    ``inferred`` lists the inputs the trace did not record that the audit
    took as certain (a pick, a gate answer, a probe result), each with the
    event that made it so; ``unknown_calls`` the HTTP calls no action is
    bound to. ``replayed`` is the trace with those inputs in their places,
    what the simulator is opened on.
    """

    events: int
    attempts: int
    divergences: list[Divergence] = field(default_factory=list)
    followed: bool = True
    stopped_at: int | None = None  # the seq at which the shadow run stopped following
    format: str = "simulator"
    inferred: list[Inferred] = field(default_factory=list)
    unknown_calls: list[UnknownCall] = field(default_factory=list)
    replayed: list[Event] = field(default_factory=list, repr=False)

    @property
    def clean(self) -> bool:
        return not self.divergences

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "format": self.format,
            "events": self.events,
            "attempts": self.attempts,
            "followed": self.followed,
            "stopped_at": self.stopped_at,
            "divergences": [d.as_dict() for d in self.divergences],
            "inferred": [i.as_dict() for i in self.inferred],
            "unknown_calls": [c.as_dict() for c in self.unknown_calls],
        }


def read_simulator(text: str) -> Reading:
    """The simulator's JSON lines as a :class:`Reading`; every bad line named.

    >>> read_simulator('{"seq": 1, "event_type": "attempt", "step_id": "a"}').events[0].step_id
    'a'
    """
    events: list[Event] = []
    places: list[Place] = []
    iso: list[bool] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        place = Place(number)
        try:
            event, written = _event(line, place)
        except DocumentError as exc:
            problems += exc.problems
            continue
        events.append(event)
        places.append(place)
        iso.append(written)
    if not problems and any(iso):
        problems += _rebased(events, places, iso)
    for event, place in zip(events, places, strict=True):
        problems += [place.problem(message) for message in _out_of_range(event)]
    if problems:
        raise DocumentError(problems)
    if not events:
        raise DocumentError([Problem("the trace holds no event")])
    in_seq_order(events, places)
    return Reading("simulator", events, places)


def _event(line: str, place: Place) -> tuple[Event, bool]:
    """The line's event, and whether its ``t`` was ISO-8601 text (seconds since the epoch)."""
    try:
        return Event.model_validate_json(line), False
    except ValueError as exc:
        first = _first_error(exc)
        data = _object(line)
        if data is None or not isinstance(data.get("t"), str):
            raise DocumentError([place.problem(f"not a trace event: {first}")]) from None
    data["t"] = seconds(data["t"], "t", place)
    try:
        return Event.model_validate(data), True
    except ValueError as exc:
        raise DocumentError([place.problem(f"not a trace event: {_first_error(exc)}")]) from None


def _object(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _rebased(events: list[Event], places: list[Place], iso: list[bool]) -> list[Problem]:
    """ISO times made seconds since the first event; a trace mixing them with numbers refused."""
    if not all(iso):
        mixed = next(p for p, written in zip(places, iso, strict=True) if not written)
        return [mixed.problem("t: this trace writes ISO-8601 times; write this one so too")]
    start = min(e.t for e in events)
    for event in events:
        event.t -= start
    return []


def _out_of_range(event: Event) -> list[str]:
    """What in ``event`` no run writes: a time that is not a number of seconds, a huge count.

    JSON admits ``1e308`` and ``NaN``; the shadow run and the simulator's
    waits take neither.
    """
    found = []
    if not 0 <= event.t <= MAX_SECONDS:  # also false for NaN
        found.append(f"t: expected seconds from 0 to {MAX_SECONDS:,}; got {event.t!r}")
    for name, count in (("seq", event.seq), ("attempt", event.attempt)):
        if count is not None and not 0 <= count <= _MAX_COUNT:
            found.append(f"{name}: expected a whole number from 0 to {_MAX_COUNT:,}")
    return found


def seconds(value: Any, name: str, place: Place) -> float:
    """A time as seconds: a number as it is, ISO-8601 text as seconds since the epoch.

    A text time must say its zone (``Z`` or ``+02:00``): two events in
    different zones are otherwise out of order by hours.

    >>> seconds("2026-03-01T10:00:30Z", "t", Place(1)) - seconds(1772359200, "t", Place(2))
    30.0
    """
    if isinstance(value, bool):
        raise DocumentError([place.problem(f"{name}: expected a time; got {value!r}")])
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise DocumentError([place.problem(f"{name}: expected a time; got {value!r}")])
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            when = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            why = f"{name}: expected seconds or an ISO-8601 time; got {value!r}"
            raise DocumentError([place.problem(why)]) from None
        if when.tzinfo is None:
            why = f"{name}: the ISO-8601 time {value!r} names no zone; add Z or an offset"
            raise DocumentError([place.problem(why)])
        return when.timestamp()
    raise DocumentError([place.problem(f"{name}: expected a time; got {type(value).__name__}")])


def in_seq_order(events: list[Event], places: list[Place]) -> None:
    """Events in increasing ``seq``: the first one out of order is named with its place."""
    for before, event, place in zip(events, events[1:], places[1:], strict=False):
        if event.seq <= before.seq:
            why = (
                f"seq: events must be in increasing seq order; seq {event.seq} "
                f"comes after seq {before.seq}"
            )
            raise DocumentError([place.problem(why)])


def read_trace(text: str) -> list[Event]:
    """A trace in the simulator's JSON lines (one event a line, blank lines skipped); every
    bad line named (:mod:`chains.core.traces` reads the other shapes).

    >>> [e.step_id for e in read_trace('{"seq": 1, "event_type": "attempt", "step_id": "a"}')]
    ['a']
    """
    return read_simulator(text).events


def audit(spec: ChainSpec, trace: Iterable[Event] | Reading) -> AuditResult:
    """Replay ``trace`` against ``chain``; every divergence at the event where it shows.

    ``trace`` is a list of events, or a :class:`~chains.core.traces.Reading`
    (events with the places in their file, and the calls no action is bound to).
    """
    if isinstance(trace, Reading):
        events, places = trace.events, trace.places
        result = AuditResult(len(events), 0, format=trace.format)
        result.unknown_calls = list(trace.unknown_calls)
    else:
        events = list(trace)
        places = [Place(n) for n in range(1, len(events) + 1)]
        result = AuditResult(len(events), 0)
    monitor = Monitor(spec)
    # a start the chain cannot take (an unknown variant, a seed "x") parts at the first event
    shadow: _Shadow | tuple[Kind, str] | None = _Shadow.start(spec, events, places)
    if isinstance(shadow, _Shadow):
        result.inferred = shadow.inferred  # the shadow adds to it as it follows
    invalidated: set[str] = set()
    for index, event in enumerate(events):
        place = places[index]
        found: list[tuple[Kind, str]] = []
        if event.event_type == "attempt":
            result.attempts += 1
            found += [
                ("invalidated_handle", f"presented {alias}, invalidated before")
                for alias in event.handles_consumed
                if alias in invalidated
            ]
        seen = [event]
        if isinstance(shadow, _Shadow):
            step = shadow.follow(index)
            seen = step.read
            found += step.found
            if step.stop:
                shadow, result.followed, result.stopped_at = None, False, event.seq
            else:
                invalidated.update(shadow.invalidated())
        elif shadow is not None:
            found.append(shadow)
            shadow, result.followed, result.stopped_at = None, False, event.seq
        result.replayed += seen
        said = monitor.feed(seen)
        if index == len(events) - 1:  # a trace that ends a run must leave no outcome unknown
            said += abandoned(monitor, event.state)
        found += [("forbidden_dispatch", f"[{f.invariant}] {f.message}") for f in said]
        invalidated.update(event.handles_invalidated)
        line = place.line if place.line is not None else index + 1
        result.divergences += [
            Divergence(event.seq, line, k, event.step_id, m, str(place)) for k, m in found
        ]
    return result


@dataclass
class _Step:
    """What following one event gave: divergences, whether the shadow stops, what was read."""

    found: list[tuple[Kind, str]] = field(default_factory=list)
    stop: bool = False
    read: list[Event] = field(default_factory=list)


class _Shadow:
    """Our runtime on the trace's inputs: what the chain would have done at each event."""

    def __init__(self, spec: ChainSpec, run: Run, events: list[Event], places: list[Place]):
        self.spec = spec
        self.run = run
        self.events = events
        self.places = places
        self.seen = len(run.trace)
        self.inferred: list[Inferred] = []
        self.timed_out: tuple[str, float] | None = None  # a gate whose timeout fired, and when

    @classmethod
    def start(
        cls, spec: ChainSpec, events: list[Event], places: list[Place]
    ) -> _Shadow | tuple[Kind, str]:
        """The shadow run, started as the trace's first event says; else why it cannot start."""
        given: dict[str, Any] = {}
        first = (events[0].input or {}) if events else {}
        if first.get("kind") == "start":
            given = {k: first[k] for k in ("variant", "mode", "seed", "run_key") if k in first}
        try:
            return cls(spec, Run.start(spec, **given), events, places)
        except (SimulationError, TypeError, ValueError) as exc:
            return "out_of_order", f"the chain cannot start this run: {_first_error(exc)}"

    def invalidated(self) -> list[str]:
        """Aliases the shadow run invalidated since the last call."""
        fresh = self.run.trace[self.seen :]
        self.seen = len(self.run.trace)
        return [alias for e in fresh for alias in e.handles_invalidated]

    def follow(self, index: int) -> _Step:
        """Apply the event's input; what diverged, and the events the invariants read for it."""
        event = self.events[index]
        run = self.run
        step = _Step(read=[event])
        waiting = run.snapshot.waiting
        if event.event_type == "attempt" and event.step_id and self.spec.action(event.step_id):
            if waiting.kind == "probe" and self._probes(waiting.step, event.step_id):
                return self._probe(index)
            if waiting.kind in ("select", "answer", "probe"):
                step.read = [*self._infer(index), event]
        self._wait(event.t)
        given = event.input or {}
        if event.event_type == "attempt":
            return self._attempt(event, given, step)
        if given.get("kind") in ("select", "answer", "probe", "propose", "resume"):
            if (
                given["kind"] == "answer" and event.step_id is None
            ):  # a log's row names the gate only
                step.read = [event.model_copy(update={"step_id": run.snapshot.waiting.step})]
            return self._parted(step, self._apply(event))
        waiting = run.snapshot.waiting
        if event.step_id and waiting.kind == "select" and waiting.step == event.step_id:
            # a pick the trace did not record: which option does not change a decision
            first = waiting.options[0].id if waiting.options else None
            return self._parted(step, self._apply(event, {"kind": "select", "option": first}))
        if event.event_type == "reconcile" and event.signal and "probe" in event.signal:
            result = event.signal["probe"]
            return self._parted(step, self._apply(event, {"kind": "probe", "result": result}))
        answered = _answered(event.row)
        if answered and waiting.kind == "answer" and waiting.gate == answered[0]:
            # an answer the trace names by its row (``gate:<id>.<outcome>``) without its input
            given = {"kind": "answer", "outcome": answered[1]}
            return self._parted(step, self._apply(event, given))
        return step

    def _parted(self, step: _Step, parted: tuple[Kind, str] | None) -> _Step:
        if parted is not None:
            step.found.append(parted)
            step.stop = True
        return step

    def _wait(self, t: float) -> None:
        """Let the run's clock reach ``t``; a gate whose timeout fires meanwhile is remembered."""
        run = self.run
        if t <= run.snapshot.clock:
            return
        parked = gate_deadline(self.spec, run)
        run.wait(t - run.snapshot.clock)
        if parked is not None and run.snapshot.waiting.gate != parked[0]:
            self.timed_out = parked

    def _probes(self, step: str | None, dispatched: str) -> bool:
        """Is ``dispatched`` the confirmation probe of ``step``, the commit being reconciled?"""
        action = self.spec.action(step or "")
        return bool(action and action.confirmation and action.confirmation.probe == dispatched)

    def _probe(self, index: int) -> _Step:
        """A call of the probe while the run reconciles: its result, read or inferred, applied."""
        event = self.events[index]
        committed = self.run.snapshot.waiting.step
        self._wait(event.t)
        result = (event.signal or {}).get("probe")
        if result is None:
            after = range(index + 1, len(self.events))
            later = next((n for n in after if self.events[n].event_type == "attempt"), None)
            if later is not None:
                following = (self.events[later].step_id or "", self.events[later].t)
                result = probe_result(self.spec, self.run, following)
                if result is not None:
                    at = str(self.places[later])
                    seq = self.events[later].seq
                    self.inferred.append(Inferred("probe", committed, result, seq, at))
        before = len(self.run.trace)
        parted = self._apply(event, {"kind": "probe", "result": result or "unknown"})
        # the invariants read the probe as the runtime would have written it
        found = [e.model_copy(update={"seq": event.seq}) for e in self.run.trace[before:]]
        return self._parted(_Step(read=found or [event]), parted)

    def _infer(self, index: int) -> list[Event]:
        """Picks, answers and probe results that make this dispatch the one the chain waits for."""
        event = self.events[index]
        inputs = needed(self.spec, self.run, event.step_id or "", event.t)
        if not inputs:
            return []
        before = len(self.run.trace)
        at = str(self.places[index])
        for given in inputs:
            apply(self.run, given)
            value = given.get("outcome") or given.get("result")  # a pick's option is not known
            self.inferred.append(
                Inferred(given["kind"], given.get("step"), value, event.seq, at, given.get("gate"))
            )
        # what the runtime would have written for them, without the aliases it made up
        return [
            e.model_copy(update={"seq": event.seq, "handles_minted": [], "handles_invalidated": []})
            for e in self.run.trace[before:]
        ]

    def _attempt(self, event: Event, given: dict[str, Any], step: _Step) -> _Step:
        if event.step_id is None:
            why = "the attempt has no step_id: which step it dispatched is unknown"
            step.found.append(("unknown_step", why))
            return step
        if self.spec.action(event.step_id) is None:
            step.found.append(("unknown_step", self._unknown(event.step_id)))
            return step
        waiting = self.run.snapshot.waiting
        if waiting.kind != "observe" or waiting.step != event.step_id:
            expected = f"{waiting.kind} at {waiting.step}" if waiting.step else waiting.kind
            why = f"dispatched {event.step_id}; the chain waits for {expected}"
            return self._parted(step, ("out_of_order", why + self._finished()))
        if given.get("kind") != "observe":
            given = {"kind": "observe", "observation": _observation(event.signal or {})}
        before = len(self.run.trace)
        failed = self._apply(event, given)
        if failed is not None:
            return self._parted(step, failed)
        ours = next((e for e in self.run.trace[before:] if e.event_type == "attempt"), None)
        if ours is None:
            return step
        if event.verdict is None:  # the trace did not say: the invariants read the chain's
            done = event.model_copy(
                update={
                    "verdict": ours.verdict,
                    "row": ours.row,
                    "verdict_source": ours.verdict_source,
                }
            )
            step.read = [*step.read[:-1], done]
            return step
        if _spelled(ours.verdict) != _spelled(event.verdict):
            row = f"row {ours.row}" if ours.row else "the chain"
            seen = _signal_text(event.signal)
            why = f"{seen} -> {event.verdict}, but {row} gives {ours.verdict}"
            return self._parted(step, ("wrong_verdict", why))
        return step

    def _unknown(self, name: str) -> str:
        ids = [a.id for a in self.spec.actions]
        close = difflib.get_close_matches(name, ids, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return f"unknown step {name}: the chain has no action of that name{hint}"

    def _finished(self) -> str:
        """Why a finished run waits for nothing, when a gate's timeout ended it."""
        if self.run.snapshot.waiting.kind != "nothing" or self.timed_out is None:
            return ""
        gate, at = self.timed_out
        return f" (the run ended when gate {gate} timed out at t={at:g}s)"

    def _apply(self, event: Event, given: dict[str, Any] | None = None) -> tuple[Kind, str] | None:
        try:
            replay_input(self.run, self.spec, event if given is None else _with(event, given))
        except (SimulationError, KeyError, TypeError, ValueError) as exc:
            kind = (given or event.input or {}).get("kind")
            if kind == "answer" and self.timed_out is not None:
                gate, at = self.timed_out
                row = f"gate:{gate}.timeout"
                took = next((e.verdict for e in reversed(self.run.trace) if e.row == row), None)
                return "out_of_order", (
                    f"answered gate {gate} at t={event.t:g}s, but the gate timed out at "
                    f"t={at:g}s and the chain had taken its timeout verdict"
                    + (f" {took}" if took else "")
                )
            return "out_of_order", f"the chain cannot take this here: {exc}"
        return None


def scenario_at(spec: ChainSpec, events: list[Event], seq: int) -> Scenario:
    """:func:`scenario_until` for ``spec``'s simulator: the run as it stood at event ``seq``,
    named for the chain and with its default intent (what the audit page and the harness
    open); :class:`DocumentError` as there."""
    return scenario_until(events, seq).model_copy(
        update={"chain": spec.id, "intent": default_intent(spec)}
    )


def scenario_until(events: list[Event], seq: int) -> Scenario:
    """The trace's inputs up to event ``seq`` (included) as a simulator scenario.

    So the simulator opens the run where the audit found a divergence:
    a wait before each input re-creates the time since the event before it
    (what the run did on its own, a backoff, it does again), each attempt
    observes what it got,
    and picks, answers and probe results follow the trace (a pick it did not
    record takes the option its observation stands for). Times are kept to
    the millisecond. An input the simulator cannot take (a pick without its
    option) raises :class:`DocumentError` naming the event's line.
    """
    first = (events[0].input or {}) if events else {}
    started = first.get("kind") == "start"
    scenario = {k: first[k] for k in ("variant", "seed", "run_key") if started and first.get(k)}
    steps: list[dict[str, Any]] = []
    lines: list[int] = []  # the event each step comes from, to name it when the step is refused
    last = 0.0  # the time of the previous event: the run's own backoff moved the clock already
    for line, event in enumerate(events, 1):
        if event.seq > seq:
            break
        step = _scenario_event(event, line)
        # to the millisecond: a wait of 1e-06 s is written in a form no duration takes
        at = round(event.t, 3)
        if step is not None:
            if at > last:
                steps.append({"wait": round(at - last, 3)})
                lines.append(line)
            steps.append(step)
            lines.append(line)
        last = max(last, at)
    try:
        return Scenario.model_validate({**scenario, "events": steps[:MAX_EVENTS]})
    except ValueError as exc:
        raise DocumentError([_refused_step(exc, lines)]) from None


def _scenario_event(event: Event, line: int) -> dict[str, Any] | None:
    try:
        return _scenario_step(event)
    except KeyError as exc:
        kind = (event.input or {}).get("kind")
        raise DocumentError(
            [Problem(f"input: a {kind} input needs {exc.args[0]!r}", line)]
        ) from None


def _scenario_step(event: Event) -> dict[str, Any] | None:
    given = event.input or {}
    kind = given.get("kind")
    if event.event_type == "attempt":
        observed = given.get("observation") if kind == "observe" else None
        return {"observe": observed if observed is not None else _observation(event.signal or {})}
    if kind == "select":
        return {"select": given["option"]}
    if kind == "answer":
        return {"answer": {"outcome": given["outcome"], "params": given.get("params") or {}}}
    if kind == "probe":
        return {"probe": given["result"]}
    if event.event_type == "reconcile" and event.signal and "probe" in event.signal:
        return {"probe": event.signal["probe"]}
    if event.event_type == "transition" and event.step_id and _is_pick(event):
        return {"select": "from-trace"}
    return None


def _is_pick(event: Event) -> bool:
    """A selection transition whose pick the trace did not record (row ``select``)."""
    return event.row == "select" or "selection" in (event.note or "")


def _observation(signal: dict[str, Any]) -> dict[str, Any]:
    """What a trace's signal says a dispatch returned (SPEC spellings too).

    A runtime's trace keeps no result sets, so a success that does not say it
    was empty stands for a result with one option, which a selection after it
    can pick.
    """
    seen = {k: signal[k] for k in _OBSERVED if k in signal}
    if signal.get("provider_code") and "code" not in seen:
        seen["code"] = signal["provider_code"]
    predicates = [*seen.get("predicates", []), *signal.get("payload_predicates", [])]
    if predicates:
        seen["predicates"] = predicates
    succeeded = str(seen.get("transport", "http:200")).startswith("http:2")
    if succeeded and "empty:true" not in predicates:
        seen["options"] = [{"id": "from-trace"}]
    return seen


def _answered(row: str | None) -> tuple[str, str] | None:
    """The gate and outcome a ``gate:<id>.<outcome>`` row names; None for any other row."""
    if not row or not row.startswith("gate:") or "." not in row:
        return None
    gate, _, outcome = row.removeprefix("gate:").rpartition(".")
    return None if outcome == "timeout" else (gate, outcome)


def _with(event: Event, given: dict[str, Any]) -> Event:
    return event.model_copy(update={"input": given})


def _spelled(verdict: str | None) -> str:
    return "".join((verdict or "").split())


def _signal_text(signal: dict[str, Any] | None) -> str:
    signal = signal or {}
    return " ".join(str(signal[k]) for k in ("transport", "code") if signal.get(k)) or "response"


def _refused_step(exc: ValueError, lines: list[int]) -> Problem:
    """The scenario step the simulator refused, at the line of the event it came from."""
    errors = getattr(exc, "errors", None)
    first = errors()[0] if callable(errors) else {"loc": (), "msg": str(exc)}
    loc = first.get("loc", ())
    if len(loc) > 2 and loc[0] == "events" and isinstance(loc[1], int) and loc[1] < len(lines):
        return Problem(
            f"input: the simulator cannot take this {loc[2]}: {first['msg']}", lines[loc[1]]
        )
    return Problem(f"input: the simulator cannot take it: {first['msg']}")


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(exc)
