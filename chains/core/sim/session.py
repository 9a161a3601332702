"""A simulation a person steps through: a scenario replayed event by event.

The simulator page keeps no run of its own. What a person has done so far is
a :class:`~.scenario.Scenario` (the intent and the events in order), and
:func:`play` replays it on every request: the runtime is a pure function of
its inputs, so the same events always give the same run. That makes every
point of the timeline a checkpoint: keeping the first *n* events and adding
a different one branches from there (:meth:`Session.branch`).

:func:`encode` turns the scenario into a short URL-safe token so a
simulation lives in its address (reload, back, share, bookmark) and
:func:`decode` reads one back with the same limits as any uploaded scenario
(size, depth, aliases), plus a bound on how far a compressed token may
expand. :func:`run_marks` colours the handle graph with the run's state.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ChainError, DocumentError
from ..keys import node_key
from ..model import ChainSpec
from ..policy import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_REWINDS
from .explorer import scenario_dict
from .runtime import Run
from .scenario import Scenario, ScenarioMismatch, apply_event, load_scenario, simulate

__all__ = [
    "MAX_TOKEN",
    "Gauge",
    "Session",
    "SessionError",
    "Step",
    "checkpoint_tokens",
    "decode",
    "encode",
    "gauges",
    "play",
    "play_branch",
    "run_marks",
]

MAX_TOKEN = 200_000  # characters of an encoded scenario
_MAX_EXPANDED = 2_000_000  # bytes it may expand to (the scenario reader's own limit)


class SessionError(ChainError):
    """A simulation token that cannot be read; the message says why."""


@dataclass(frozen=True)
class Step:
    """One applied event and the trace events it produced (``trace[first:last]``)."""

    number: int
    event: dict[str, Any]
    description: str
    first: int
    last: int
    accepted: bool | None = None


@dataclass
class Session:
    """A scenario replayed as far as it goes; ``refused`` says why it stopped early."""

    scenario: Scenario
    run: Run
    steps: list[Step] = field(default_factory=list)
    refused: str | None = None

    def owner(self, trace_index: int) -> int:
        """How many events had been applied when trace event ``trace_index`` was written."""
        for step in self.steps:
            if step.first <= trace_index < step.last:
                return step.number
        return 0

    def owners(self) -> list[int]:
        """:meth:`owner` of every trace event in order, in one pass over the steps."""
        owners = [0] * len(self.run.trace)
        for step in self.steps:
            owners[step.first : step.last] = [step.number] * (step.last - step.first)
        return owners

    def prefix(self, n: int) -> Scenario:
        """The scenario cut after its first ``n`` applied events (a checkpoint)."""
        return self.scenario.model_copy(update={"events": self.scenario.events[:n], "expect": None})

    def branch(self, event: dict[str, Any], at: int | None = None) -> Scenario:
        """The scenario with ``event`` added after the first ``at`` events (all, by default).

        Raises :class:`SessionError` when ``event`` is not a scenario event.
        """
        kept = self.steps if at is None else self.steps[:at]
        data = scenario_dict(self.prefix(len(kept)))
        data["events"].append(event)
        return _validated(data)


def play(spec: ChainSpec, scenario: Scenario) -> Session:
    """Replay ``scenario`` on ``chain`` one event at a time, stopping at the first misfit.

    The events that applied stay applied (the session shows the run they
    produced); the first event that does not fit, and every later one, is
    dropped and the reason kept in ``refused``. A scenario that cannot start
    at all raises :class:`~.scenario.ScenarioMismatch`.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    >>> s = play(doc, Scenario(events=[{"observe": "timeout"}, {"observe": "http:200"}]))
    >>> [step.description for step in s.steps], s.run.snapshot.state
    (['observes timeout', 'observes http:200'], 'done')
    """
    run = simulate(spec, scenario.model_copy(update={"events": [], "expect": None})).run
    return _applied(spec, scenario, run, [])


def play_branch(
    spec: ChainSpec, scenario: Scenario, event: dict[str, Any], at: int | None = None
) -> Session:
    """``play(chain, play(chain, scenario).branch(event, at))``, replaying the run once.

    Only the first ``at`` events (all by default) are replayed; ``event`` is
    then applied to that run, not to a second replay of it. Raises
    :class:`SessionError` when ``event`` is not a scenario event.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    >>> s = play_branch(doc, Scenario(events=[{"observe": "timeout"}]), {"observe": "http:200"})
    >>> [step.description for step in s.steps], s.run.snapshot.state
    (['observes timeout', 'observes http:200'], 'done')
    """
    kept = scenario.events if at is None else scenario.events[:at]
    before = play(spec, scenario.model_copy(update={"events": kept}))
    branched = before.branch(event)
    return _applied(spec, branched, before.run, before.steps)


def _applied(spec: ChainSpec, scenario: Scenario, run: Run, applied: list[Step]) -> Session:
    """The session of ``scenario`` on ``run``, which has applied its first ``applied`` events.

    The rest are applied in order up to the first that does not fit.
    """
    applied = list(applied)
    refused = None
    for number, event in enumerate(scenario.events[len(applied) :], len(applied) + 1):
        first = len(run.trace)
        try:
            run, accepted = apply_event(spec, run, event, number)
        except ScenarioMismatch as exc:
            refused = str(exc)
            break
        dumped = event.model_dump(mode="json", exclude_defaults=True)
        applied.append(Step(number, dumped, event.describe(), first, len(run.trace), accepted))
    kept = scenario.model_copy(update={"events": scenario.events[: len(applied)], "expect": None})
    return Session(kept, run, applied, refused)


def encode(scenario: Scenario) -> str:
    """A URL-safe token for ``scenario`` (its intent, variant and events; never ``expect``)."""
    data = scenario_dict(scenario.model_copy(update={"expect": None}))
    raw = _json(data).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def checkpoint_tokens(scenario: Scenario) -> list[str]:
    """The token of every checkpoint: ``[encode(prefix) for n in 0..len(events)]``, in linear time.

    Encoding each prefix anew costs the square of the events. The JSON of a
    prefix is the scenario's up to its ``n``-th event and the same closing,
    so one compressor is fed the events one by one and a copy of it is
    closed at each checkpoint.

    >>> s = Scenario(events=[{"wait": 1}, {"observe": "timeout"}])
    >>> [len(decode(t).events) for t in checkpoint_tokens(s)]
    [0, 1, 2]
    """
    data = scenario_dict(scenario.model_copy(update={"expect": None}))
    events, data["events"] = data["events"], ["\x00"]
    # Keys are sorted, so the top-level events come before the intent and its strings.
    opening, _, closing = _json(data).partition('"events":["\\u0000"]')
    opening += '"events":['
    closing = "]" + closing
    compressor = zlib.compressobj(9)
    head = compressor.compress(opening.encode())
    tokens = []
    for n in range(len(events) + 1):
        if n:
            head += compressor.compress(((n > 1) * "," + _json(events[n - 1])).encode())
        ending = compressor.copy()
        packed = head + ending.compress(closing.encode()) + ending.flush()
        tokens.append(base64.urlsafe_b64encode(packed).decode().rstrip("="))
    return tokens


def _json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def decode(token: str) -> Scenario:
    """The scenario in ``token``; :class:`SessionError` says what is wrong with a bad one."""
    if len(token) > MAX_TOKEN:
        raise SessionError(f"simulation token: longer than {MAX_TOKEN} characters")
    try:
        packed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, _MAX_EXPANDED)
    except (binascii.Error, ValueError, zlib.error) as exc:
        raise SessionError(f"simulation token: not one this app wrote ({exc})") from exc
    if inflater.unconsumed_tail:
        raise SessionError(f"simulation token: expands past {_MAX_EXPANDED} bytes")
    return _validated(raw, "simulation token: ")


def _validated(data: dict[str, Any] | bytes, prefix: str = "") -> Scenario:
    """A scenario read with the uploaded-scenario limits; problems name paths, not lines.

    (Lines and columns of generated JSON would mean nothing to the person reading.)
    """
    try:
        text = data if isinstance(data, bytes) else json.dumps(data)
        scenario = load_scenario(text, "s.json", locations=False)
    except DocumentError as exc:
        found = "; ".join(str(replace(p, line=None, column=None)) for p in exc.problems)
        raise SessionError(prefix + found) from None
    for event in scenario.events:
        event._line = None
    return scenario


def run_marks(spec: ChainSpec, run: Run) -> dict[str, str]:
    """CSS classes for the handle graph (:func:`chains.core.render.handle_graph_dot`).

    ``action:<id>``: ``sim-cursor`` on the step the run waits on, ``sim-landed`` on
    commits that landed (``sim-compensated`` once undone), ``sim-dispatched`` on
    other steps dispatched at least once. ``handle:<id>``: ``sim-live``,
    ``sim-spent`` (single-use, presented) or ``sim-invalidated`` (minted once,
    no longer live).
    """
    s = run.snapshot
    marks: dict[str, str] = {}
    for step, count in s.dispatches.items():
        if count:
            marks[node_key("action", step)] = "sim-dispatched"
    for landed in s.commits_landed:
        marks[node_key("action", landed.step)] = (
            "sim-compensated" if landed.compensated else "sim-landed"
        )
    minted = {h for e in run.trace for h in e.handles_minted}
    for alias in minted:
        marks[node_key("handle", alias.split("#", 1)[0])] = "sim-invalidated"
    for hid, state in s.handles.items():
        marks[node_key("handle", hid)] = "sim-spent" if state.spent else "sim-live"
    current = s.waiting.step or s.cursor
    if current and not run.finished:
        key = node_key("action", current)
        marks[key] = marks.get(key, "") + " sim-cursor"
    return {k: v.strip() for k, v in marks.items()}


@dataclass(frozen=True)
class Gauge:
    """A budget as a person reads it: what is left of how much."""

    label: str
    left: float
    total: float
    unit: str = ""


def gauges(spec: ChainSpec, run: Run) -> list[Gauge]:
    """The run's budgets: attempts on the current step, rewinds, repairs, wall clock."""
    s = run.snapshot
    b = s.budgets
    pc = spec.policy.per_chain
    out = []
    if s.waiting.kind == "observe" and s.waiting.step:
        left = max(b.step_attempts_left, 0)
        out.append(Gauge(f"attempts on {s.waiting.step}", left, s.attempt + left))
    rewinds = pc.max_rewinds if pc.max_rewinds is not None else DEFAULT_MAX_REWINDS
    repairs = pc.max_repairs if pc.max_repairs is not None else DEFAULT_MAX_REPAIRS
    out.append(Gauge("rewinds", max(b.rewinds_left, 0), rewinds))
    out.append(Gauge("repairs", max(b.repairs_left, 0), repairs))
    if b.wall_limit is not None:
        out.append(Gauge("wall clock", max(b.wall_limit - b.wall_used, 0.0), b.wall_limit, "s"))
    return out
