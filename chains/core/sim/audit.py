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
- ``wrong_verdict``: a verdict other than the one the deciding row gives
  for the signal the attempt got.

The last two come from a shadow run of our runtime fed the trace's own
inputs (the observation of each attempt, and picks, answers and probe
results where the trace recorded them) at the trace's times. Once the real
run left the chain's path the shadow cannot follow it: it stops there, the
result says so, and the invariants are still checked to the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import DocumentError, Problem
from ..model import ChainSpec
from .invariants import Monitor, abandoned
from .replay import replay_input
from .runtime import Run, SimulationError
from .scenario import MAX_EVENTS, Scenario
from .state import Event

__all__ = ["MAX_SECONDS", "AuditResult", "Divergence", "audit", "read_trace", "scenario_until"]

Kind = Literal["forbidden_dispatch", "invalidated_handle", "out_of_order", "wrong_verdict"]
_OBSERVED = ("transport", "code", "predicates", "events")
MAX_SECONDS = 1_000_000_000  # an event's ``t``: about 31 years of a run's virtual time
_MAX_COUNT = 2**63 - 1  # ``seq`` and ``attempt``: what a runtime's 64-bit counter holds


@dataclass(frozen=True)
class Divergence:
    """Where the run left the chain: the event (its seq and line), what kind, and why."""

    seq: int
    line: int
    kind: Kind
    step: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "line": self.line,
            "kind": self.kind,
            "step": self.step,
            "message": self.message,
        }


@dataclass
class AuditResult:
    """The divergences in trace order; ``followed`` whether the shadow run kept up to the end."""

    events: int
    attempts: int
    divergences: list[Divergence] = field(default_factory=list)
    followed: bool = True
    stopped_at: int | None = None  # the seq at which the shadow run stopped following

    @property
    def clean(self) -> bool:
        return not self.divergences

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "events": self.events,
            "attempts": self.attempts,
            "followed": self.followed,
            "stopped_at": self.stopped_at,
            "divergences": [d.as_dict() for d in self.divergences],
        }


def read_trace(text: str) -> list[Event]:
    """A trace in JSON lines (one event a line, blank lines skipped); every bad line named.

    >>> [e.step_id for e in read_trace('{"seq": 1, "event_type": "attempt", "step_id": "a"}')]
    ['a']
    """
    events: list[Event] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = Event.model_validate_json(line)
        except ValueError as exc:
            problems.append(Problem(f"not a trace event: {_first_error(exc)}", number))
            continue
        problems += [Problem(message, number) for message in _out_of_range(event)]
        events.append(event)
    if problems:
        raise DocumentError(problems)
    if not events:
        raise DocumentError([Problem("the trace holds no event")])
    seqs = [e.seq for e in events]
    if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
        raise DocumentError([Problem("events must be in increasing seq order")])
    return events


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


def audit(spec: ChainSpec, trace: Iterable[Event]) -> AuditResult:
    """Replay ``trace`` against ``chain``; every divergence at the event where it shows."""
    events = list(trace)
    result = AuditResult(events=len(events), attempts=0)
    monitor = Monitor(spec)
    # a start the chain cannot take (an unknown variant, a seed "x") parts at the first event
    shadow: _Shadow | tuple[Kind, str] | None = _Shadow.start(spec, events)
    invalidated: set[str] = set()
    for line, event in enumerate(events, 1):
        found: list[tuple[Kind, str]] = []
        if event.event_type == "attempt":
            result.attempts += 1
            found += [
                ("invalidated_handle", f"presented {alias}, invalidated before")
                for alias in event.handles_consumed
                if alias in invalidated
            ]
        said = monitor.feed([event])
        if line == len(events):  # a trace that ends a run must leave no commit's outcome unknown
            said += abandoned(monitor, event.state)
        found += [("forbidden_dispatch", f"[{f.invariant}] {f.message}") for f in said]
        parted = shadow.follow(event) if isinstance(shadow, _Shadow) else shadow
        if parted is not None:
            found.append(parted)
            shadow = None
            result.followed, result.stopped_at = False, event.seq
        elif isinstance(shadow, _Shadow):
            invalidated.update(shadow.invalidated())
        invalidated.update(event.handles_invalidated)
        result.divergences += [Divergence(event.seq, line, k, event.step_id, m) for k, m in found]
    return result


class _Shadow:
    """Our runtime on the trace's inputs: what the chain would have done at each event."""

    def __init__(self, spec: ChainSpec, run: Run):
        self.spec = spec
        self.run = run
        self.seen = len(run.trace)

    @classmethod
    def start(cls, spec: ChainSpec, events: list[Event]) -> _Shadow | tuple[Kind, str]:
        """The shadow run, started as the trace's first event says; else why it cannot start."""
        given: dict[str, Any] = {}
        first = events[0].input or {}
        if first.get("kind") == "start":
            given = {k: first[k] for k in ("variant", "mode", "seed", "run_key") if k in first}
        try:
            return cls(spec, Run.start(spec, **given))
        except (SimulationError, TypeError, ValueError) as exc:
            return "out_of_order", f"the chain cannot start this run: {_first_error(exc)}"

    def invalidated(self) -> list[str]:
        """Aliases the shadow run invalidated since the last call."""
        fresh = self.run.trace[self.seen :]
        self.seen = len(self.run.trace)
        return [alias for e in fresh for alias in e.handles_invalidated]

    def follow(self, event: Event) -> tuple[Kind, str] | None:
        """Apply the event's input; a divergence (kind, message) when the chain parts ways."""
        run = self.run
        if event.t > run.snapshot.clock:
            run.wait(event.t - run.snapshot.clock)
        given = event.input or {}
        if event.event_type == "attempt":
            return self._attempt(event, given)
        if given.get("kind") in ("select", "answer", "probe", "propose", "resume"):
            return self._apply(event)
        waiting = run.snapshot.waiting
        if event.step_id and waiting.kind == "select" and waiting.step == event.step_id:
            # a pick the trace did not record: which option does not change a decision
            first = waiting.options[0].id if waiting.options else None
            return self._apply(event, {"kind": "select", "option": first})
        if event.event_type == "reconcile" and event.signal and "probe" in event.signal:
            return self._apply(event, {"kind": "probe", "result": event.signal["probe"]})
        return None

    def _attempt(self, event: Event, given: dict[str, Any]) -> tuple[Kind, str] | None:
        waiting = self.run.snapshot.waiting
        if waiting.kind != "observe" or waiting.step != event.step_id:
            expected = f"{waiting.kind} at {waiting.step}" if waiting.step else waiting.kind
            return "out_of_order", f"dispatched {event.step_id}; the chain waits for {expected}"
        if given.get("kind") != "observe":
            given = {"kind": "observe", "observation": _observation(event.signal or {})}
        before = len(self.run.trace)
        failed = self._apply(event, given)
        if failed is not None:
            return failed
        ours = next((e for e in self.run.trace[before:] if e.event_type == "attempt"), None)
        if ours is None or event.verdict is None:
            return None
        if _spelled(ours.verdict) != _spelled(event.verdict):
            row = f"row {ours.row}" if ours.row else "the chain"
            seen = _signal_text(event.signal)
            return "wrong_verdict", f"{seen} -> {event.verdict}, but {row} gives {ours.verdict}"
        return None

    def _apply(self, event: Event, given: dict[str, Any] | None = None) -> tuple[Kind, str] | None:
        try:
            replay_input(self.run, self.spec, event if given is None else _with(event, given))
        except (SimulationError, KeyError, TypeError, ValueError) as exc:
            return "out_of_order", f"the chain cannot take this here: {exc}"
        return None


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
