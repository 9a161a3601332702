"""What a run is made of: observations in, snapshot and trace out (SPEC §2.5).

These models are the simulator's contract with everything around it: the
runtime reads and writes them, scenarios are lists of inputs that produce
:class:`Observation` and answers, the trace is a list of :class:`Event`, and
:class:`Snapshot` alone (with the chain document) resumes a run. They are
pydantic models so they serialise to JSON for the command line, the API and
the database; the records inside a snapshot that only the runtime makes
(handles, landed commits, correlation records, budgets, gate and unwind
contexts, a fan-out's store) are slotted dataclasses that pydantic validates
and writes as part of it, because the explorer reads them far more often.

Handle *values* never appear here: a minted handle is known by an alias
(``search_id#3``) and its lineage. Intent values entering from outside are
referenced from the trace and kept in the snapshot's ``sealed`` store
(:mod:`.sealed`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from copy import deepcopy
from types import UnionType
from typing import (
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "Budgets",
    "clone",
    "CorrelationRecord",
    "GateContext",
    "Event",
    "EVENT_FIELDS",
    "HandleState",
    "LandedCommit",
    "NOT_WAITING",
    "Observation",
    "Option",
    "Proposal",
    "RunState",
    "SharedStore",
    "Snapshot",
    "Unwind",
    "Waiting",
    "observing",
]

RunState = Literal[
    "running",
    "at_gate",
    "reconciling",
    "compensating",
    "done",
    "dead_end",
    "escalated",
    "restart_required",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Value(_Model):
    """A model the runtime never changes once made: copies of run state share it."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# The records of a snapshot only the runtime makes are slotted dataclasses, not models:
# a run reads them a few hundred times an input, and Python specialises attribute
# access on them where it cannot on a pydantic model (``BaseModel`` defines
# ``__getattr__``). Pydantic still validates them inside a Snapshot (extra fields
# refused, errors with their path) and writes them to JSON, and orjson writes them
# without calling back into Python. A frozen one is shared by copies, like a _Value.
_PLAIN_CONFIG = ConfigDict(extra="forbid")
T = TypeVar("T")


@dataclass_transform(kw_only_default=True)
def _record(cls: type[T]) -> type[T]:
    """A run-state record the runtime changes in place (a copy copies it)."""
    cls.__pydantic_config__ = _PLAIN_CONFIG  # type: ignore[attr-defined]
    return dataclasses.dataclass(slots=True, kw_only=True)(cls)


@dataclass_transform(kw_only_default=True, frozen_default=True)
def _value(cls: type[T]) -> type[T]:
    """A run-state record the runtime never changes once made (copies share it)."""
    cls.__pydantic_config__ = _PLAIN_CONFIG  # type: ignore[attr-defined]
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)


def _list() -> Any:
    return dataclasses.field(default_factory=list)


def _dict() -> Any:
    return dataclasses.field(default_factory=dict)


_ATOMS = (str, int, float, bool, type(None))

M = TypeVar("M", bound=BaseModel)


def clone(value: Any) -> Any:
    """A deep copy of run state: models, lists, dicts and scalars, nothing else.

    What ``model_copy(deep=True)`` gives, at a fraction of its cost (the
    explorer branches every state it expands): no memo, so an object reached
    twice is copied twice, which is safe because the runtime never relies on
    two fields holding the same object; and no validation, since the copy's
    fields are copies of valid fields.

    Options, observations, waits and live handles are frozen (the runtime
    replaces them, never changes them in place), so a copy shares them; so
    are the values of a snapshot's intent and sealed store, whose mappings
    are copied.

    >>> g = GateContext(gate="g", options=[Option(id="a")], payload={"price": 1})
    >>> c = clone(g)
    >>> c == g and c.payload is not g.payload and c.options[0] is g.options[0]
    True
    """
    kind: Any = type(value)
    if kind in _ATOMS or isinstance(value, _Value) or kind in _FROZEN:
        return value
    if kind in _RECORDS:
        return _record_copier(kind)(value)
    if kind is list:
        return [v if type(v) in _ATOMS else clone(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _ATOMS else clone(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        return _model_copier(kind)(value)
    return deepcopy(value)


def _assembled(kind: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """A ``kind`` holding ``fields`` as they are: every field present, already valid."""
    model = object.__new__(kind)
    set_ = object.__setattr__
    set_(model, "__dict__", fields)
    set_(model, "__pydantic_fields_set__", fields_set)
    set_(model, "__pydantic_extra__", None)
    set_(model, "__pydantic_private__", None)
    return model


@functools.cache
def _record_copier(kind: Any) -> Callable[[Any], Any]:
    """How :func:`clone` copies a plain record: its fields, each as :func:`_copiers` says.

    Written out as code for ``kind``, as :mod:`dataclasses` writes ``__init__``: a
    loop over the fields, or a call to ``__init__``, costs twice as much per copy.
    """
    copiers = dict(_copiers(kind))
    env: dict[str, Any] = {"kind": kind, "new": object.__new__}
    lines = ["def copy(old):", "    r = new(kind)"]
    for f in dataclasses.fields(kind):
        if f.name not in copiers:
            lines.append(f"    r.{f.name} = old.{f.name}")
        else:
            env[f"copy_{f.name}"] = copiers[f.name]
            lines.append(f"    v = old.{f.name}")
            lines.append(f"    r.{f.name} = v if v is None else copy_{f.name}(v)")
    lines.append("    return r")
    exec("\n".join(lines), env)
    return env["copy"]


@functools.cache
def _model_copier(kind: Any) -> Callable[[Any], Any]:
    """How :func:`clone` copies a model: its fields dict, each field as :func:`_copiers` says.

    Written out as code for ``kind``, as :func:`_record_copier` is: the
    snapshot is copied at every branch, and a loop over its fields cost more.
    """
    env: dict[str, Any] = {"kind": kind, "assembled": _assembled}
    lines = ["def copy(old):", "    fields = dict(old.__dict__)"]
    for name, copier in _copiers(kind):
        env[f"copy_{name}"] = copier
        lines.append(f"    v = fields[{name!r}]")
        lines.append(f"    if v is not None: fields[{name!r}] = copy_{name}(v)")
    lines.append("    return assembled(kind, fields, set(old.__pydantic_fields_set__))")
    exec("\n".join(lines), env)
    return env["copy"]


@functools.cache
def _copiers(model: Any) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """How :func:`clone` copies each field of ``model`` that needs copying, by its type.

    A list or dict of shared values (scalars, frozen models) is copied
    shallowly, a dict of such lists list by list; anything else nested goes
    through :func:`clone`. Fields that
    only hold shared values are left out: the copy shares them.
    """
    out: list[tuple[str, Callable[[Any], Any]]] = []
    replaced = _ENTRIES_REPLACED.get(model, frozenset())
    for name, annotation in _annotations(model).items():
        if _shared(annotation):
            continue
        if name in replaced:
            out.append((name, dict.copy))
            continue
        origin, args = get_origin(annotation), get_args(annotation)
        if origin is list and _shared(args[0]):
            out.append((name, list.copy))
        elif origin is dict and _shared(args[1]):
            out.append((name, dict.copy))
        elif origin is dict and get_origin(args[1]) is list and _shared(get_args(args[1])[0]):
            out.append((name, _lists_copy))
        else:
            out.append((name, clone))
    return tuple(out)


def _annotations(model: type) -> dict[str, Any]:
    """Each field's type: a model's as pydantic resolved it, a plain record's resolved here."""
    if issubclass(model, BaseModel):
        return {name: info.annotation for name, info in model.model_fields.items()}
    return get_type_hints(model)  # Annotated[...] comes back as its type alone


def _lists_copy(value: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A dict of lists of shared values, each list copied (results by alias, exclusions)."""
    return {k: v.copy() for k, v in value.items()}


def _shared(annotation: Any) -> bool:
    """Can a value of this type be shared by copies: a scalar, or a frozen model?"""
    if annotation in _ATOMS:
        return True
    if isinstance(annotation, type) and (issubclass(annotation, _Value) or annotation in _FROZEN):
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return all(type(a) in _ATOMS for a in get_args(annotation))
    if origin in (Union, UnionType):
        return all(_shared(a) for a in get_args(annotation))
    return False


class Option(_Value):
    """One option a read returned, as a selection step sees it."""

    id: str = Field(description="the provider's option id (not stable across re-search)")
    key: dict[str, Any] = Field(
        default_factory=dict, description="intent-level identity, matched by rematch.key"
    )


class Observation(_Value):
    """What one dispatch returned, as data: the simulator never evaluates expressions.

    ``predicates`` are matched by name against ``empty.detect``, precondition
    ``when``, auto-repair triggers and verdict-row signals of the chain.
    """

    transport: str = Field("http:200", description="http:NNN, timeout, conn_reset, conn_drop")
    code: str | None = Field(None, description="the provider's error code, if any")
    predicates: list[str] = Field(default_factory=list)
    options: list[Option] = Field(
        default_factory=list, description="results a selection picks from"
    )
    payload: dict[str, Any] = Field(
        default_factory=dict, description="fields the run may read: gate payloads, deadlines"
    )
    events: list[str] = Field(default_factory=list, description="webhook:x observed with it")


class Proposal(_Model):
    """Something a model offers the run; validated before it can change anything (C4.2)."""

    kind: Literal["repair", "retry", "classify", "handle", "select", "answer"]
    fields: dict[str, Any] = Field(default_factory=dict, description="repair: intent values")
    verdict: str | None = Field(None, description="classify: the verdict the model wants")
    handle: str | None = None
    value: Any = None


@_value
class HandleState:
    alias: Annotated[str, Field(description="opaque alias, e.g. search_id#2; never the raw value")]
    lineage: Annotated[
        list[str], Field(description="aliases of the live parents it was minted from")
    ] = _list()
    minted_by: str
    minted_seq: Annotated[int, Field(description="trace seq of the attempt that minted it")]
    minted_at: Annotated[float, Field(description="virtual clock, seconds")] = 0.0
    spent: bool = False
    option: Annotated[Option | None, Field(description="selection pseudo-handles: the pick")] = None


@_record
class LandedCommit:
    step: str
    attempt_seq: int
    handles: Annotated[list[str], Field(description="aliases it minted")] = _list()
    consumed: Annotated[
        list[str], Field(description="aliases it presented; its compensators act on them")
    ] = _list()
    at: float = 0.0
    business_deadline: Annotated[
        float | None, Field(description="virtual time of business_expiry")
    ] = None
    compensated: bool = False
    predicates: Annotated[
        list[str], Field(description="what the landing observation showed (ladder rungs)")
    ] = _list()
    business_expired: bool = False
    revoked: Annotated[str | None, Field(description="the revocation signal, once one arrived")] = (
        None
    )


@_record
class CorrelationRecord:
    """Persisted before an unkeyed commit is dispatched (SPEC P3).

    P3 names what it holds: the run id, the intent snapshot (a reference
    into the sealed store) and the status; ``lookup`` holds the keys the
    probe, a webhook or the sweep match the provider's result with, none of
    them the commit's own output (SPEC §2.1 probe-input rule).
    """

    step: str
    attempt_seq: int
    run_id: str = ""
    intent_ref: Annotated[str | None, Field(description="the intent snapshot, sealed (§2.5)")] = (
        None
    )
    lookup: Annotated[
        dict[str, Any],
        Field(
            description="correlation label, and the probe's inputs as aliases or sealed references"
        ),
    ] = _dict()
    status: Literal["PENDING", "RECONCILING", "LANDED", "NOT_LANDED", "ESCALATED"] = "PENDING"
    created_at: float = 0.0
    refed: Annotated[bool, Field(description="a probe-observed cause was re-fed once (C1.7)")] = (
        False
    )
    before_redispatch: Annotated[
        bool, Field(description="probed on re-arrival: not landed means dispatch afresh")
    ] = False
    probes: int = 0
    sweeps: Annotated[int, Field(description="re-probes the sweep made, one per interval")] = 0
    shielded_by: Annotated[
        str | None,
        Field(description="cancel or revocation:<step> that arrived while it was out (P3 shield)"),
    ] = None


@_record
class Budgets:
    step_attempts_left: int = 0
    safe_rejects_left: int = 0
    rewinds_left: int = 0
    repairs_left: int = 0
    wall_used: Annotated[
        float, Field(description="active seconds; parked and reconciling excluded")
    ] = 0.0
    wall_limit: float | None = None


class Waiting(_Value):
    """What the run needs next; scenario events must answer exactly this."""

    kind: Literal["observe", "select", "answer", "probe", "repair", "shared", "nothing"]
    step: str | None = None
    gate: str | None = None
    outcomes: list[str] = Field(default_factory=list)
    options: list[Option] = Field(default_factory=list)
    fields: list[str] = Field(
        default_factory=list, description="repair: the intent fields a proposal may change"
    )
    payload: dict[str, Any] = Field(default_factory=dict, description="answer: what is shown")
    audience: str | None = Field(None, description="answer/select/repair: who is asked")


@dataclasses.dataclass(kw_only=True)
class Event:
    """One trace record (SPEC §2.5 field semantics).

    A plain dataclass with a dict of fields, not a model: the explorer writes
    one for every input and the invariants and coverage read each a dozen
    times. Pydantic validates and writes it (``model_validate``,
    ``model_dump`` and the rest below, as on the models, through one
    TypeAdapter), strictly as before: a stray field is refused by name.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    seq: int
    event_type: Literal["attempt", "transition", "reconcile"]
    step_id: str | None = None
    attempt: int | None = None
    t: float = 0.0
    signal: dict[str, Any] | None = None
    verdict: str | None = None
    verdict_source: Literal["table", "default", "config"] | None = None
    row: Annotated[str | None, Field(description="id of the matched row, or generic row #n")] = None
    handles_consumed: Annotated[
        list[str], Field(description="attempt: aliases of the handles the dispatch presented")
    ] = _list()
    handles_minted: list[str] = _list()
    handles_invalidated: list[str] = _list()
    budget_after: dict[str, Any] = _dict()
    note: str | None = None
    input: Annotated[
        dict[str, Any] | None,
        Field(description="the outside input this event applied (answer, pick, probe, proposal)"),
    ] = None
    proposal_source: Literal["model", "user", "code"] | None = None
    idempotency_key: str | None = None
    state: Annotated[RunState | None, Field(description="run state after the event")] = None

    @classmethod
    def from_draft(cls, draft: dict[str, Any]) -> Event:
        """The event the runtime's event log wrote, every field filled in.

        A run writes an event for every input it applies, and validating
        values the runtime itself put there costs more than writing them
        (the explorer writes one an input), so only a draft whose keys are
        not exactly the fields goes through validation, which names the
        stray key.
        """
        if draft.keys() != EVENT_FIELDS:
            return cls.model_validate(draft)
        return cls.written(draft)

    @classmethod
    def written(cls, draft: dict[str, Any]) -> Event:
        """The event over ``draft`` as it is, for a draft whose keys are known to be the fields.

        The event log's drafts are: it writes every field and refuses any
        other when it is set. A search writes two events an input, and
        checking their keys again cost about 1% of it.
        """
        event = object.__new__(cls)
        event.__dict__ = draft
        return event

    @classmethod
    def model_validate(cls, data: Any) -> Event:
        return _EVENT.validate_python(data)

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Event:
        return _EVENT.validate_json(data)

    def model_dump(self, **options: Any) -> dict[str, Any]:
        return _EVENT.dump_python(self, **options)

    def model_dump_json(self, **options: Any) -> str:
        return _EVENT.dump_json(self, **options).decode()

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Event:
        """A shallow copy, as a model's: ``update`` is taken as it is, not validated."""
        copy = object.__new__(Event)
        copy.__dict__ = {**self.__dict__, **(update or {})}
        return copy


EVENT_FIELDS = frozenset(f.name for f in dataclasses.fields(Event))  # what every event holds
_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


# What a finished run waits for: nothing. One object, shared (waits are frozen).
NOT_WAITING = Waiting(kind="nothing")


@functools.lru_cache(maxsize=4096)
def observing(step: str) -> Waiting:
    """The wait for an observation of ``step``: one object per step, shared (waits are frozen)."""
    return Waiting(kind="observe", step=step)


@_record
class GateContext:
    """Why the run is parked at a gate, and what the audience was shown."""

    gate: str
    step: Annotated[str | None, Field(description="the step that raised it, or that it guards")] = (
        None
    )
    kind: Literal["raised", "entry", "revocation"] = "raised"
    from_ok: Annotated[bool, Field(description="raised after the step's ok: its output exists")] = (
        False
    )
    prior_state: Annotated[str | None, Field(description="revocation: the state to return to")] = (
        None
    )
    raised_at: float = 0.0
    options: list[Option] = _list()
    payload: dict[str, Any] = _dict()


@_record
class Unwind:
    """An unwind in progress: which landed commit, which compensator step."""

    reason: Annotated[dict[str, Any], Field(description="the dead_end being unwound")] = _dict()
    queue: Annotated[list[int], Field(description="commits_landed indices to unwind")] = _list()
    steps: Annotated[list[str], Field(description="compensator steps of the head")] = _list()
    pos: int = 0


@_record
class SharedStore:
    """A fan-out group's shared read prefix (SPEC §4 I7), kept in the parent's snapshot.

    Shared handles are stored once and referred to by alias from every
    branch; an alias a branch found stale is ``dead`` for all of them, and
    ``reminting`` names the branch that re-mints it, so the re-mint happens
    once and is re-shared.
    """

    shared: Annotated[list[str], Field(description="shared handle ids")] = _list()
    handles: dict[str, HandleState] = _dict()
    results: dict[str, list[Option]] = _dict()
    dead: Annotated[list[str], Field(description="aliases dead for every branch")] = _list()
    counts: Annotated[dict[str, int], Field(description="mint numbers, group-wide")] = _dict()
    reminting: Annotated[
        dict[str, str], Field(description="handle id → run_id of the branch re-minting it")
    ] = _dict()
    branches: Annotated[list[str], Field(description="run_ids of the branches")] = _list()


class Snapshot(_Model):
    """The run snapshot: with the chain document, everything needed to resume."""

    run_id: str
    chain_id: str
    run_key: str | None = None
    variant: str | None = None
    mode: Literal["internal", "external"] = Field(
        "internal", description="external: rewinds and repairs end the run (SPEC §2.3)"
    )
    continuation_of: str | None = Field(None, description="run_id this run continues")
    state: RunState = "running"
    cursor: str | None = None
    intent: dict[str, Any] = Field(default_factory=dict)
    handles: dict[str, HandleState] = Field(default_factory=dict, description="live, by handle id")
    commits_landed: list[LandedCommit] = Field(default_factory=list)
    waiting: Waiting = Field(default_factory=lambda: NOT_WAITING)
    pending_gate: str | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    excluded: dict[str, list[str]] = Field(
        default_factory=dict, description="selection step → excluded option ids"
    )
    correlation: list[CorrelationRecord] = Field(default_factory=list)
    dispatches: dict[str, int] = Field(default_factory=dict)
    auto_repairs_fired: list[str] = Field(default_factory=list)
    clock: float = 0.0
    seq: int = 0
    seed: int = 0
    arrivals: dict[str, int] = Field(default_factory=dict, description="step → arrivals")
    attempt: int = Field(0, description="dispatches of the cursor step since it was reached")
    arrived_seq: int = Field(0, description="seq at which the cursor reached its step")
    key_since: dict[str, float] = Field(
        default_factory=dict, description="idempotency key → clock of its first dispatch"
    )
    mint_counts: dict[str, int] = Field(default_factory=dict)
    results: dict[str, list[Option]] = Field(
        default_factory=dict, description="options keyed by the alias that produced them (I2)"
    )
    selections: dict[str, Option] = Field(
        default_factory=dict, description="selection step → last pick, for rematch (I3)"
    )
    fresh: list[str] = Field(default_factory=list, description="selection steps forced fresh")
    gate_context: GateContext | None = None
    compensation: Unwind | None = None
    stale_recurrences: dict[str, int] = Field(default_factory=dict)
    compensators_landed: list[LandedCommit] = Field(default_factory=list)
    probes: dict[str, int] = Field(default_factory=dict, description="probe action → calls")
    in_flight: str | None = Field(None, description="step whose dispatch is out, unanswered")
    last_observation: Observation | None = None
    outcome: dict[str, Any] = Field(
        default_factory=dict, description="terminal: reason, permanent, retry_after_hint, ..."
    )
    fanout: SharedStore | None = Field(
        None, description="the parent of a fan-out: the group's shared store (C3.6)"
    )
    branch_of: str | None = Field(None, description="a fan-out branch: the parent's run_id")
    sealed: dict[str, Any] = Field(
        default_factory=dict,
        description="the sealed store: intent values by the reference the trace holds (C7.3)",
    )


# clone() shares the frozen records and copies the others field by field.
_FROZEN: frozenset[type] = frozenset({HandleState})
_RECORDS: frozenset[type] = frozenset(
    {LandedCommit, CorrelationRecord, Budgets, GateContext, Unwind, SharedStore}
)
# Mappings of outside values the runtime only ever adds to or replaces an entry of
# (``intent.update``, ``sealed[ref] = value``), never changing a value in place: a copy
# of the mapping serves, its values shared (deep copies were a fifth of a branch's copy).
_ENTRIES_REPLACED: dict[type, frozenset[str]] = {Snapshot: frozenset({"intent", "sealed"})}
