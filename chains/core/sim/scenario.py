"""Scenarios: a scripted run of a chain, read from YAML or JSON and replayed.

A scenario names the intent a run starts from and lists, in order, what the
outside world does: a provider answers (``observe``), someone picks an option
(``select``), answers a gate (``answer``), a confirmation probe reports
(``probe``), time passes (``wait``), the process dies (``crash``), the
caller cancels the run (``cancel``) or a model offers something
(``propose``). The events that answer a step may name it
(``step``, as an answer may name its gate), so that a scenario reads on its
own. :func:`simulate` feeds the events to a
:class:`~.runtime.Run` and refuses, with :class:`ScenarioMismatch`, any event
that is not what the run waits for: a scenario is a claim about the chain's
behaviour, so a divergence is the finding, never something to skip over.
Optional ``expect`` checks turn a scenario into a regression test.

Reading reuses the chain-document machinery (:mod:`..formats`): the same
size, encoding, alias and depth limits, and problems that carry the path and
the line of what was refused.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import ChainError, DocumentError, Problem
from ..formats import decode, detect_format, parse_json, validation_problems
from ..formats.yamlio import parse_yaml
from ..model import ChainSpec, parse_duration
from ..verdicts import VERDICT_TYPES, format_verdict, parse_verdict
from ..words import article
from .runs import RunStore
from .runtime import Run, SimulationError
from .state import Event, Observation, Proposal, RunState, Snapshot, Waiting

__all__ = [
    "EVENT_KINDS",
    "MAX_EVENTS",
    "AnswerEvent",
    "CancelEvent",
    "CrashEvent",
    "ExpectationResult",
    "Expectations",
    "ObserveEvent",
    "ProbeEvent",
    "ProposeEvent",
    "Scenario",
    "ScenarioEvent",
    "ScenarioMismatch",
    "SelectEvent",
    "STEP_EVENT_KINDS",
    "SimulationResult",
    "WaitEvent",
    "apply_event",
    "load_scenario",
    "simulate",
]

MAX_EVENTS = 10_000


class ScenarioMismatch(ChainError):
    """The scenario and the run disagree; the message names both sides.

    ``index`` counts events from 1 (``None`` when the run could not start or
    the scenario does not fit the chain), ``line`` is where the event is
    written, ``run`` is the run as it stood, for showing the trace so far.
    """

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        line: int | None = None,
        run: Run | None = None,
    ):
        super().__init__(message)
        self.index = index
        self.line = line
        self.run = run


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --- events ----------------------------------------------------------------


class _ScenarioEvent(_Model):
    """One thing that happens to the run; the single key of its mapping names it."""

    kind: ClassVar[str]
    # The field a bare string under the event's key fills (``observe: timeout``), if any.
    shorthand: ClassVar[str | None] = None
    _line: int | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _expand_shorthand(cls, data: Any) -> Any:
        value = data.get(cls.kind) if isinstance(data, dict) else None
        if cls.shorthand is not None and isinstance(value, str):
            return {**data, cls.kind: {cls.shorthand: value}}
        return data

    @property
    def line(self) -> int | None:
        """The line the event is written on, when it was read from text."""
        return self._line

    def describe(self) -> str:
        raise NotImplementedError


class _StepEvent(_ScenarioEvent):
    """An event that answers what one step waits for, written beside the step it names.

    ``step`` sits beside the event's key (``{step: book, observe: timeout}``),
    so the shorthand keeps its form; without it the event answers whatever
    step the run waits at, as scenarios written before it did.
    """

    step: str | None = Field(
        None, min_length=1, description="checked against the step the run waits at"
    )

    def _at(self) -> str:
        return f" at {self.step}" if self.step else ""


class ObserveEvent(_StepEvent):
    """The dispatched step returned this (``observe: timeout`` names the transport only)."""

    kind: ClassVar[str] = "observe"
    shorthand: ClassVar[str | None] = "transport"
    observe: Observation

    def describe(self) -> str:
        obs = self.observe
        return f"observes {obs.transport}" + (f" {obs.code}" if obs.code else "") + self._at()


class SelectEvent(_StepEvent):
    """The user or model picks an option by its id."""

    kind: ClassVar[str] = "select"
    select: str = Field(min_length=1)

    def describe(self) -> str:
        return f"selects option {self.select}{self._at()}"


class Answer(_Model):
    outcome: str = Field(min_length=1)
    params: dict[str, Any] | None = None
    gate: str | None = Field(None, description="checked against the gate the run waits at")


class AnswerEvent(_ScenarioEvent):
    """A gate answer: ``answer: accept`` or ``{outcome, params, gate}``."""

    kind: ClassVar[str] = "answer"
    shorthand: ClassVar[str | None] = "outcome"
    answer: Answer

    def describe(self) -> str:
        gate = self.answer.gate
        return (
            f"answers gate {gate} with {self.answer.outcome}"
            if gate
            else (f"answers {self.answer.outcome}")
        )


class ProbeResult(_Model):
    result: Literal["landed", "not_landed", "unknown"]
    cause: Observation | None = Field(None, description="a cause signal the probe observed")


class ProbeEvent(_StepEvent):
    """A confirmation probe's finding: ``probe: landed`` or ``{result, cause}``."""

    kind: ClassVar[str] = "probe"
    shorthand: ClassVar[str | None] = "result"
    probe: ProbeResult

    def describe(self) -> str:
        cause = self.probe.cause
        seen = (
            f" (cause {cause.transport}{' ' + cause.code if cause.code else ''})" if cause else ""
        )
        return f"reports the probe result {self.probe.result}{seen}{self._at()}"


class WaitEvent(_ScenarioEvent):
    """Virtual time passes: a duration (``30m``) or a number of seconds."""

    kind: ClassVar[str] = "wait"
    wait: float = Field(ge=0, allow_inf_nan=False, description="seconds")

    @field_validator("wait", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        duration = parse_duration(value)
        if duration.seconds is None:
            raise ValueError(f"expected a duration such as 30s, 15m or 24h, got {value!r}")
        return float(duration.seconds)

    def describe(self) -> str:
        return f"waits {self.wait:g}s"


class CrashEvent(_ScenarioEvent):
    """The process dies; the run resumes from its snapshot and trace alone."""

    kind: ClassVar[str] = "crash"
    crash: Literal[True]

    def describe(self) -> str:
        return "crashes"


class CancelEvent(_ScenarioEvent):
    """The caller cancels the run; a commit that is out is reconciled first (SPEC P3)."""

    kind: ClassVar[str] = "cancel"
    cancel: Literal[True]

    def describe(self) -> str:
        return "cancels the run"


class ProposeEvent(_ScenarioEvent):
    """A model offers a repair, retry, classification, handle, selection or answer."""

    kind: ClassVar[str] = "propose"
    propose: Proposal

    def describe(self) -> str:
        return f"proposes {article(self.propose.kind)}"


_EVENT_MODELS: dict[str, type[_ScenarioEvent]] = {
    m.kind: m
    for m in (
        ObserveEvent,
        SelectEvent,
        AnswerEvent,
        ProbeEvent,
        WaitEvent,
        CrashEvent,
        CancelEvent,
        ProposeEvent,
    )
}
EVENT_KINDS: tuple[str, ...] = tuple(_EVENT_MODELS)
# The events that answer a step and may name it beside their key.
STEP_EVENT_KINDS: tuple[str, ...] = tuple(
    k for k, m in _EVENT_MODELS.items() if issubclass(m, _StepEvent)
)
_STEP_KINDS_TEXT = ", ".join(STEP_EVENT_KINDS[:-1]) + f" and {STEP_EVENT_KINDS[-1]}"
_ONE_KEY = (
    f"an event is a mapping with exactly one key: {' | '.join(EVENT_KINDS)} "
    f"({_STEP_KINDS_TEXT} may add step)"
)


def _names(value: dict) -> list[str]:
    """The keys of an event's mapping but ``step``: the one left names the event."""
    return [str(k) for k in value if k != "step"]


def _event_kind(value: Any) -> str | None:
    if isinstance(value, _ScenarioEvent):
        return value.kind
    if isinstance(value, dict):
        names = _names(value)
        return names[0] if len(names) == 1 else None
    return None


ScenarioEvent = Annotated[
    Annotated[ObserveEvent, Tag("observe")]
    | Annotated[SelectEvent, Tag("select")]
    | Annotated[AnswerEvent, Tag("answer")]
    | Annotated[ProbeEvent, Tag("probe")]
    | Annotated[WaitEvent, Tag("wait")]
    | Annotated[CrashEvent, Tag("crash")]
    | Annotated[CancelEvent, Tag("cancel")]
    | Annotated[ProposeEvent, Tag("propose")],
    Discriminator(_event_kind, custom_error_type="event_kind", custom_error_message=_ONE_KEY),
]


# --- the scenario ----------------------------------------------------------


def _expected_verdict(text: str) -> str:
    """A bare verdict name as written, else the canonical spelling of the expression."""
    text = text.strip()
    return text if text in VERDICT_TYPES else _canonical(text)


class Expectations(_Model):
    """Checked after the run; only what is written is checked."""

    state: RunState | None = None
    dispatches: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="dispatch counts of the listed steps"
    )
    verdicts: list[Annotated[str, AfterValidator(_expected_verdict)]] | None = Field(
        None, description="the verdicts of the trace, in order; a bare name matches any of its type"
    )
    commits_landed: list[str] | None = Field(None, description="steps, in landing order")


class Scenario(_Model):
    """A scripted run: where it starts, what happens, what should come of it."""

    chain: str | None = Field(None, description="the chain id it is for; checked when given")
    intent: dict[str, Any] = Field(default_factory=dict)
    run_key: str | None = None
    variant: str | None = None
    seed: int = Field(0, description="jitter seed")
    events: list[ScenarioEvent] = Field(default_factory=list, max_length=MAX_EVENTS)
    expect: Expectations | None = None

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            kind = "nothing" if data is None else type(data).__name__
            raise ValueError(f"a scenario is a mapping, got {kind}")
        return data


def load_scenario(
    data: bytes | str, filename: str | None = None, *, locations: bool = True
) -> Scenario:
    """Read a YAML or JSON scenario; raise :class:`DocumentError` on any problem.

    Every problem carries the path and the line of what was refused; events
    remember their line for mismatch messages. Generated JSON (a simulation
    token) has no lines worth naming: ``locations=False`` reads it without
    them, which is several times faster.

    >>> s = load_scenario("intent: {origin: LHR}\\nevents:\\n  - observe: timeout\\n")
    >>> s.events[0].observe.transport, s.events[0].line
    ('timeout', 3)
    >>> load_scenario("events:\\n  - probe: maybe\\n")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.errors.DocumentError: line 2, column 12: events[0].probe.result: expected ...
    """
    text = decode(data)
    fmt = detect_format(text, filename)
    if fmt == "md":
        raise DocumentError([Problem("a scenario is a YAML or JSON document, not Markdown")])
    raw, where = parse_json(text, locations=locations) if fmt == "json" else parse_yaml(text)
    if not isinstance(raw, dict):
        kind = "nothing" if raw is None else type(raw).__name__
        raise DocumentError([Problem(f"a scenario is a mapping, got {kind}", 1)])
    events, problems = _validate_events(raw.get("events"), where)
    rest = {**raw, "events": events} if "events" in raw else raw
    try:
        scenario = Scenario.model_validate(rest)
    except ValidationError as exc:
        problems += validation_problems(exc, rest, where)
    if problems:
        raise DocumentError(sorted(problems, key=lambda p: (p.line or 0, p.column or 0)))
    return scenario


def _validate_events(items: Any, where: dict) -> tuple[Any, list[Problem]]:
    """Validate each event by the model its key names, so paths read ``events[3].probe``.

    (Through the union pydantic would put the tag in every path as well.)
    """
    if not isinstance(items, list) or len(items) > MAX_EVENTS:
        return items, []  # the scenario model reports the type or the length
    events: list[_ScenarioEvent] = []
    problems: list[Problem] = []
    # The locations inside each event, grouped in one pass: scanning every location
    # for every event cost the square of the events.
    within: dict[int, dict] = {}
    for path, pos in where.items():
        if len(path) >= 2 and path[0] == "events" and isinstance(path[1], int):
            within.setdefault(path[1], {})[path[2:]] = pos
    for i, item in enumerate(items):
        at = ("events", i)
        line, column = where.get(at, (None, None))
        kind = _event_kind(item)
        if kind not in _EVENT_MODELS:
            problems.append(Problem(_refusal(item), line, column, path=f"events[{i}]"))
            continue
        inside = within.get(i, {})
        if "step" in item and kind not in STEP_EVENT_KINDS:
            line, column = inside.get(("step",), (line, column))
            problems.append(Problem(_STEPLESS.format(kind), line, column, path=f"events[{i}].step"))
            continue
        try:
            event = _EVENT_MODELS[kind].model_validate(item)
        except ValidationError as exc:
            for p in validation_problems(exc, item, inside):
                problems.append(replace(p, path=f"events[{i}]" + (f".{p.path}" if p.path else "")))
            continue
        event._line = line
        events.append(event)
    return events, problems


_STEPLESS = f"{{}} names no step: only {_STEP_KINDS_TEXT} answer a step"


def _refusal(item: Any) -> str:
    names = _names(item) if isinstance(item, dict) else []
    if len(names) == 1:
        return f"unknown event {names[0]!r}; expected {' | '.join(EVENT_KINDS)}"
    if isinstance(item, dict) and item:
        return f"{_ONE_KEY}; this one has {', '.join(map(str, item))}"
    return _ONE_KEY


def _canonical(verdict: str) -> str:
    """The canonical spelling of a verdict expression; raises ``ValueError`` if it is none."""
    return format_verdict(parse_verdict(verdict))


# --- running ---------------------------------------------------------------


@dataclass(frozen=True)
class ExpectationResult:
    """One ``expect`` check: what was expected, what the run did."""

    check: str
    expected: Any
    actual: Any
    held: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        if self.held:
            return f"{self.check}: {_show(self.expected)}"
        return f"{self.check}: expected {_show(self.expected)}, got {_show(self.actual)}"


@dataclass
class SimulationResult:
    """The run a scenario produced, and how its expectations fared."""

    run: Run
    expectations: list[ExpectationResult] = field(default_factory=list)
    proposals: list[tuple[int, bool]] = field(default_factory=list)  # (event number, accepted)
    # With a run store: whether this start made the run (False: the key's run was returned).
    created: bool | None = None

    @property
    def held(self) -> bool:
        """Whether every expectation held (true when there were none)."""
        return all(e.held for e in self.expectations)

    @property
    def failed(self) -> list[ExpectationResult]:
        return [e for e in self.expectations if not e.held]

    def as_dict(self) -> dict[str, Any]:
        snapshot = self.run.snapshot
        return {
            "state": snapshot.state,
            "cursor": snapshot.cursor,
            "dispatches": dict(snapshot.dispatches),
            "commits_landed": [c.step for c in snapshot.commits_landed],
            "trace": [e.model_dump(mode="json") for e in self.run.trace],
            "snapshot": snapshot.model_dump(mode="json"),
            "expectations": [e.as_dict() for e in self.expectations],
            "proposals": [{"event": n, "accepted": ok} for n, ok in self.proposals],
        } | ({} if self.created is None else {"created": self.created})


# Events that answer a wait of their own name; wait, crash, cancel and propose fit any
# live run.
_ANSWERING = frozenset({"observe", "select", "answer", "probe"})


def simulate(
    spec: ChainSpec,
    scenario: Scenario,
    *,
    run_id: str | None = None,
    runs: RunStore | None = None,
) -> SimulationResult:
    """Run ``scenario`` against ``chain``; raise :class:`ScenarioMismatch` on a divergence.

    Events are applied in order. ``observe``, ``select``, ``answer`` and
    ``probe`` must answer exactly what the run waits for, at the step (or
    gate) they name when they name one; no event may come
    after the run has finished; a ``crash`` resumes the run from a JSON copy
    of its snapshot and trace. Expectations are checked at the end and
    reported, not raised.

    With ``runs`` the scenario starts a kept run (SPEC §2.8, C4.5): it needs a
    ``run_key``; when the store already holds a run for it, that run is the
    result as it stands (``created`` false) and no event is applied, so
    nothing is dispatched again. A new run is kept after its events, also
    when one of them does not fit.
    """
    _check_fits(spec, scenario)
    given: dict[str, Any] = {"intent": dict(scenario.intent), "variant": scenario.variant}
    given |= {"seed": scenario.seed, "run_id": run_id}
    try:
        if runs is None:
            run, created = Run.start(spec, run_key=scenario.run_key, **given), None
        else:
            run, created = Run.start_once(spec, runs, run_key=scenario.run_key, **given)
    except SimulationError as exc:
        raise ScenarioMismatch(f"the run could not start: {exc}") from exc
    proposals: list[tuple[int, bool]] = []
    try:
        for index, event in enumerate(scenario.events if created is not False else [], 1):
            run, accepted = apply_event(spec, run, event, index)
            if accepted is not None:
                proposals.append((index, accepted))
    finally:
        if runs is not None and created:
            runs.save(run)
    result = SimulationResult(run, proposals=proposals, created=created)
    if scenario.expect is not None:
        result.expectations = check_expectations(run, scenario.expect)
    return result


def apply_event(
    spec: ChainSpec, run: Run, event: _ScenarioEvent, index: int
) -> tuple[Run, bool | None]:
    """Apply scenario event number ``index`` to ``run``; the run to go on with, and a
    proposal's verdict (``None`` for other events).

    A ``crash`` returns a new run resumed from JSON copies of the snapshot and
    trace. Raises :class:`ScenarioMismatch` when the event does not fit.
    """
    where = f"event {index}" + (f" (line {event.line})" if event.line else "")
    mismatch = _mismatch(run, event)
    if mismatch:
        raise ScenarioMismatch(
            f"{where} {event.describe()}, but {mismatch}", index=index, line=event.line, run=run
        )
    try:
        if isinstance(event, CrashEvent):
            return _crash_and_resume(spec, run), None
        return run, _apply(run, event)
    except SimulationError as exc:
        raise ScenarioMismatch(
            f"{where} {event.describe()}: {exc}", index=index, line=event.line, run=run
        ) from exc


def _check_fits(spec: ChainSpec, scenario: Scenario) -> None:
    if scenario.chain is not None and scenario.chain != spec.id:
        raise ScenarioMismatch(f"the scenario is for chain {scenario.chain}, not {spec.id}")
    if scenario.expect is not None:
        steps = {a.id for a in spec.actions}
        unknown = sorted(set(scenario.expect.dispatches) - steps)
        if unknown:
            raise ScenarioMismatch(
                f"expect.dispatches names steps that chain {spec.id} does not have: "
                + ", ".join(unknown)
            )


def _mismatch(run: Run, event: _ScenarioEvent) -> str | None:
    """Why ``event`` cannot be applied to ``run`` now, or ``None`` when it can."""
    if run.finished:
        return f"the run has finished (state {run.snapshot.state})"
    if event.kind not in _ANSWERING:
        return None
    waiting = run.waiting()
    if waiting.kind != event.kind:
        return f"the run waits for {_describe_waiting(waiting)}"
    if isinstance(event, AnswerEvent) and event.answer.gate not in (None, waiting.gate):
        return f"the run waits for {_describe_waiting(waiting)}"
    if isinstance(event, _StepEvent) and event.step not in (None, waiting.step):
        return f"the run waits for {_describe_waiting(waiting)}"
    return None


def _apply(run: Run, event: _ScenarioEvent) -> bool | None:
    """Apply one event; the proposal's verdict for ``propose``, else ``None``."""
    if isinstance(event, ObserveEvent):
        run.observe(event.observe)
    elif isinstance(event, SelectEvent):
        run.select(event.select)
    elif isinstance(event, AnswerEvent):
        run.answer(event.answer.outcome, event.answer.params)
    elif isinstance(event, ProbeEvent):
        run.probe(event.probe.result, event.probe.cause)
    elif isinstance(event, WaitEvent):
        run.wait(event.wait)
    elif isinstance(event, CancelEvent):
        run.cancel()
    elif isinstance(event, ProposeEvent):
        return run.propose(event.propose)
    return None


_TRACE = TypeAdapter(list[Event])


def _crash_and_resume(spec: ChainSpec, run: Run) -> Run:
    """A new run built from JSON copies of the snapshot and trace: nothing else survives."""
    snapshot = Snapshot.model_validate_json(run.snapshot.model_dump_json())
    trace = _TRACE.validate_json(_TRACE.dump_json(run.trace))
    return Run.resume(spec, snapshot, trace)


def _describe_waiting(waiting: Waiting) -> str:
    if waiting.kind == "observe":
        return f"an observation of {waiting.step}"
    if waiting.kind == "select":
        options = ", ".join(o.id for o in waiting.options)
        return f"a selection at {waiting.step}" + (f" (options {options})" if options else "")
    if waiting.kind == "answer":
        outcomes = " | ".join(waiting.outcomes)
        return f"an answer to gate {waiting.gate}" + (f" ({outcomes})" if outcomes else "")
    if waiting.kind == "probe":
        return f"a probe result for {waiting.step}"
    if waiting.kind == "repair":
        fields = ", ".join(waiting.fields)
        return f"a repair proposal for {waiting.step}" + (f" (fields {fields})" if fields else "")
    return "nothing"


def check_expectations(run: Run, expect: Expectations) -> list[ExpectationResult]:
    """Compare the finished (or parked) run with ``expect``, one result per check."""
    snapshot = run.snapshot
    out = []
    if expect.state is not None:
        out.append(
            ExpectationResult("state", expect.state, snapshot.state, expect.state == snapshot.state)
        )
    for step, count in expect.dispatches.items():
        actual = snapshot.dispatches.get(step, 0)
        out.append(ExpectationResult(f"dispatches.{step}", count, actual, count == actual))
    if expect.verdicts is not None:
        seen = [_spelling(e.verdict) for e in run.trace if e.verdict]
        held = len(seen) == len(expect.verdicts) and all(
            _verdict_matches(want, got) for want, got in zip(expect.verdicts, seen, strict=True)
        )
        out.append(ExpectationResult("verdicts", expect.verdicts, seen, held))
    if expect.commits_landed is not None:
        landed = [c.step for c in snapshot.commits_landed]
        out.append(
            ExpectationResult(
                "commits_landed", expect.commits_landed, landed, expect.commits_landed == landed
            )
        )
    return out


def _spelling(verdict: str) -> str:
    try:
        return _canonical(verdict)
    except ValueError:
        return verdict


def _verdict_matches(expected: str, actual: str) -> bool:
    if expected in VERDICT_TYPES:  # a bare name: any verdict of that type
        return actual == expected or actual.startswith(f"{expected}(")
    return expected == actual


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return "nothing" if value is None else str(value)
