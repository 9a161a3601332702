"""Actions (SPEC §2.1): one call against an external system, and its parts.

An :class:`Action` has an effect class (read, mint, commit, compensate,
select), its inputs and outputs, preconditions and auto-repairs, and, for
commits, idempotency, confirmation, compensation and revocation. The helpers
below answer the questions every later layer asks of an action: is it
commit-class, keyed, an unkeyed commit, and which actions may undo it
(:func:`compensators`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, Field, field_validator, model_validator

from .elements import Element, Variant
from .fields import DurationText, StrList, VerdictExpr


class IntentField(Variant):
    """An intent input: a field the model or user may repair."""

    type: str = "string"
    """The kind of value, in free text, e.g. `date`, `airport`, `money` or
    `enum[economy, business]`. Defaults to `string`."""
    required: bool = True
    """Whether the step needs a value. `seats: seat_selection?` is a short way to write an
    optional field."""

    @model_validator(mode="before")
    @classmethod
    def _from_type_name(cls, value: Any) -> Any:
        # Shorthand ``origin: airport`` and ``seats: seat_selection?``.
        if isinstance(value, str):
            optional = value.endswith("?")
            return {"type": value.rstrip("?").strip() or "string", "required": not optional}
        if value is None:
            return {}
        return value


class ActionInput(Element):
    intent: dict[str, IntentField] = Field(default_factory=dict)
    """Inputs a person or the model may change in a repair. Key: the field name; value: its
    type and whether it is required, e.g. `origin: airport`."""
    handles: StrList = Field(default_factory=list)
    """Handles this step sends back, by id, e.g. `[search_id]`. Code fills them in from the
    run's store; the model never sees or writes their values."""

    @field_validator("intent", mode="before")
    @classmethod
    def _intent_list(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, list):  # ``intent: [dates, cabin]``
            return {str(name): {} for name in value}
        return value


class Empty(Element):
    valid: bool = True
    """Whether an empty answer is a real result for this step (true by default): "nothing
    found" is an answer, not an error."""
    detect: str | None = Field(None)
    """A predicate over the whole response, status included, that means empty, e.g.
    `itineraries.length == 0` (a decline may come as an HTTP 402)."""
    route: VerdictExpr | None = None
    """Where an empty answer goes, e.g. `ok` (go on without it), `gate(no_fares)` or
    `repair(to: search, fields: [dates])`. Without a route the run dead-ends."""


class BusinessExpiry(Element):
    field: str
    """Response field holding the deadline after which the landed result stops being
    useful, e.g. `payment_time_limit` of an unpaid hold."""
    on_expiry: VerdictExpr
    """What happens once that deadline passes, checked before each later step and when a
    gate is answered, e.g. `dead_end(reason: hold_lapsed)`."""


def _payload_field(name: str) -> str:
    """A response field's name, or a dotted path to one inside another (``order.status``)."""
    if any(not part or part != part.strip() for part in name.split(".")):
        raise ValueError("expected a payload field name, or a dotted path (order.status)")
    return name


class ActionOutput(Element):
    payload: Any = None
    """What the step returns that later decisions need, written freely, e.g.
    `itineraries[]` or `{status, total_amount}`."""
    handles: StrList = Field(default_factory=list)
    """Handles this step mints, by id, e.g. `[booking_id]`; each one names this step in
    its `minted_by`."""
    business_expiry: BusinessExpiry | None = None
    """For a commit whose result lapses at a deadline the response gives (an unpaid hold):
    the field holding it and what to do when it passes."""
    empty: Empty | None = None
    """How to recognise a valid "nothing found" answer and where it goes. Leave it out when
    an empty answer cannot happen."""
    safe_to_show: list[Annotated[str, AfterValidator(_payload_field)]] = Field(default_factory=list)
    """Response fields the trace may show in clear, e.g. `[status, card.brand]` (dotted paths
    work). Every other value is sealed: never list secrets or personal data."""

    @field_validator("safe_to_show", mode="before")
    @classmethod
    def _one_name(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Precondition(Element):
    when: str
    """A predicate over a successful response that blocks the business step, e.g.
    `no ticket is EXCHANGEABLE_BY_OBT`. Checked on every run of the step, replays too."""
    verdict: VerdictExpr
    """What a match leads to: `ok` (go on degraded), `gate(...)`, `dead_end`,
    `repair(...)` or `reselect(...)`, e.g. `gate(exchange_offline)`."""
    reason: str | None = None
    """Why a match blocks the step, in a few words for reviewers and the trace, e.g.
    `fare cannot be exchanged online`."""


class AutoRepair(Element):
    trigger: str
    """The signal or response predicate that fires this repair, e.g.
    `code:NO_AVAILABILITY_WITH_FILTERS`."""
    fields: Any
    """How code changes the intent, as written: a mapping, fields to clear,
    `drop fare_filters` or `ref := new uuid`. No model is asked."""
    once: bool = True
    """Fire at most once per run (the default). Every firing counts against the chain's
    `max_repairs`."""


class Idempotency(Element):
    mode: Literal["keyed", "natural", "none"]
    """How repeats are de-duplicated: `keyed` (the provider honours a key), `natural` (a
    repeat is harmless, PUT by id) or `none` (an unkeyed commit: never retried)."""
    key_scope: Literal["run", "intent"] | None = None
    """Keyed only: what the key is built from: `run` (this run and step) or `intent` (the
    task itself, which also de-duplicates across runs)."""
    key_retention: DurationText | None = None
    """Keyed only: how long the provider remembers a key, e.g. `24h`. Past it the call is
    as good as unkeyed: probe, never resend the old key."""
    replay_semantics: Literal["reexecutes", "returns_cached"] | None = None
    """Keyed only: what resending a key does: `returns_cached` (the first answer comes back,
    errors too) or `reexecutes` (the call runs again)."""


class ByKeyReplay(Element):
    note: str | None = None
    """Why resending the same key is enough to learn the outcome, e.g.
    `a replay returns the stored result for 24h`."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"note": value}
        if value is True:
            return {}
        return value


class AsyncFinality(Element):
    channel: Literal["webhook", "poll"] | None = None
    """How the final outcome arrives later: `webhook` (the provider calls us) or `poll` (we
    keep asking)."""
    deadline: DurationText | None = None
    """How long to wait for that outcome before an operator takes over, e.g. `24h`."""


class Sweep(Element):
    interval: DurationText | None = None
    """How often a commit whose outcome is still unknown is probed again, e.g. `5m`. A
    sweep only probes: it never sends the commit again."""
    escalate_after: DurationText | None = None
    """How long the sweep keeps probing before handing the commit to an operator, e.g.
    `2h`."""


class Confirmation(Element):
    probe: str | None = None
    """Id of the read that tells whether a lost commit landed, e.g. `find_booking_by_ref`.
    It must work without the commit's own (lost) response."""
    signal: str | None = None
    """What the probe's answer shows when the commit landed, e.g. `booking found for trip`.
    For a commit that `mutates`, check the content, not mere existence."""
    by_key_replay: ByKeyReplay | None = None
    """Keyed synchronous commits only: resending the same key returns the first outcome,
    which can stand in for a probe. Say why in its note."""
    async_: AsyncFinality | None = Field(None, alias="async")
    """Written `async:`. Set when the final outcome comes later, by webhook or polling, with
    a deadline before an operator takes over."""
    sweep: Sweep | None = None
    """A background re-probe of commits whose outcome is still unknown: how often, and when
    to hand them to an operator."""


class LadderRung(Element):
    when: str | None = None
    """A condition on what the landing showed that picks this rung, e.g.
    `within void window`. Rungs are tried in order; the first match runs."""
    else_: VerdictExpr | None = Field(None, alias="else")
    """Written `else:`. The last rung, taken when no other matched: a verdict, e.g.
    `escalate(operator)`."""
    chain: StrList = Field(default_factory=list)
    """Compensating actions this rung runs in order, by id, e.g.
    `[get_refund_quote, refund]`."""
    action: str | None = None
    """The one compensating action this rung runs, by id, e.g. `void_ticket`."""


class Compensation(Element):
    action: str | None = Field(None)
    """Id of the action that undoes this commit, e.g. `cancel_booking`, or `none` when
    nothing can: then say why, and guard the commit with a consent gate."""
    chain: StrList = Field(default_factory=list)
    """Instead of one action: a sub-chain that undoes the commit, action ids in order, e.g.
    `[list_refund_options, refund]`. Its gates may pause the run."""
    ladder: list[LadderRung] = Field(default_factory=list)
    """Instead of one action: tiers tried in order, each a condition and what to run, ending
    with `else`, e.g. void within 24h, then refund, else an operator."""
    window: str | None = None
    """When and how the undo is possible, in words, e.g.
    `void free within 24h of ticketing, then refund with a fee`."""
    ordering_note: str | None = None
    """Ordering constraints on the undo, in words, e.g.
    `book the replacement before cancelling the original`. For people, not the runtime."""
    replaced_by: str | None = Field(None)
    """Id of a later commit that replaces this one (a rebook). On a dead end this commit is
    undone only while that replacement has landed and stands."""

    @model_validator(mode="before")
    @classmethod
    def _none_shorthand(cls, value: Any) -> Any:
        if value is None or value == "none":
            return {"action": "none"}
        if isinstance(value, str):
            return {"action": value}
        return value


# The effect classes of SPEC §2.1, decided by the double-call test. Every other
# list of them (lint, edits, the workspace's menus and legend) is this one.
Effect = Literal["read", "mint", "commit", "compensate", "select"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)
# The exactly-once classes: a confirmation is required and attempts are bounded.
COMMIT_CLASS_EFFECTS: tuple[Effect, ...] = ("commit", "compensate")
# What running a call of each class twice leaves behind: the double-call test (SPEC §2.1).
EFFECT_MEANINGS: dict[Effect, str] = {
    "read": "Twice leaves nothing behind: safe to repeat.",
    "mint": "Twice leaves a second expiring artifact (a quote, a hold) that nobody pays for.",
    "commit": "Twice leaves a second durable change (a booking, a charge): it must happen once.",
    "compensate": "Undoes a landed commit (cancel, refund); itself a commit, it must happen once.",
    "select": "No call: a person or the model picks one of the options a read returned.",
}


class Revocation(Element):
    watch: StrList = Field(default_factory=list)
    """Signals that reverse this commit after it succeeded, e.g.
    `[webhook:refund.failed]`. Such an event is never dropped."""
    window: DurationText | None = None
    """How long after landing a reversal may still arrive, e.g. `30d`."""
    route: VerdictExpr | None = None
    """Where a reversal goes, e.g. `gate(refund_failed)` or `escalate(operator)`."""


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# Where a value goes in a request, or comes from in an answer.
REQUEST_PLACES = ("path", "query", "header", "body")
RESPONSE_PLACES = ("header", "body")
_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*")


def _place(value: str, kinds: tuple[str, ...]) -> str:
    kind, colon, where = value.partition(":")
    spelled = ", ".join(f"{k}:<JSON pointer>" if k == "body" else f"{k}:<name>" for k in kinds)
    if not colon or kind not in kinds:
        raise ValueError(f"{value!r} is no place: write {spelled}")
    if kind == "body" and not _JSON_POINTER.fullmatch(where):
        raise ValueError(f"{value!r}: a body place is a JSON pointer, e.g. body:/data/id")
    if kind != "body" and not where.strip():
        raise ValueError(f"{value!r}: name the {kind} parameter, e.g. {kind}:order_id")
    return value


RequestPlace = Annotated[str, AfterValidator(lambda v: _place(v, REQUEST_PLACES))]
ResponsePlace = Annotated[str, AfterValidator(lambda v: _place(v, RESPONSE_PLACES))]


class HttpBinding(Element):
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    """The HTTP method, e.g. `POST`."""
    path: str
    """The path template, with `{name}` for each path parameter, e.g.
    `/air/orders/{order_id}`."""
    operation_id: str | None = None
    """The provider's name for this call, as its OpenAPI document gives it, e.g.
    `createOrder`."""
    idempotency_header: str | None = None
    """Keyed only: the request header that carries the key, e.g. `Idempotency-Key`."""
    sends: dict[str, RequestPlace] = Field(default_factory=dict)
    """Where each handle and intent field goes in the request. Key: its name; value:
    `path:<name>`, `query:<name>`, `header:<name>` or `body:<JSON pointer>`, e.g.
    `offer_id: body:/data/selected_offers/0`."""
    reads: dict[str, ResponsePlace] = Field(default_factory=dict)
    """Where each handle this step mints comes from in the answer. Key: the handle; value:
    `body:<JSON pointer>` or `header:<name>`, e.g. `order_id: body:/data/id`."""

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("path")
    @classmethod
    def _template(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"{value!r}: a path starts with '/', e.g. /air/orders")
        if value.count("{") != value.count("}") or re.search(r"\{[^}]*[{/]|\{\}", value):
            raise ValueError(f"{value!r}: write each path parameter as {{name}}")
        return value

    def parameters(self) -> list[str]:
        """The names of the path template's parameters, in order."""
        return re.findall(r"\{([^}]+)\}", self.path)


class Action(Variant):
    """One call against an external system (or a selection pseudo-step)."""

    id: str
    """The step's name, unique in this chain, e.g. `create_booking`. Rows, gates and
    handles refer to it."""
    description: str | None = None
    """What this call does, in plain words, for people and for the model's context."""
    effect: Effect
    """What calling twice would leave: `read` nothing, `mint` a spare expiring token,
    `commit` a second real change. `compensate` undoes a commit; `select` is a pick."""
    mutates: str | None = None
    """Commit only: the handle of an existing object this call changes in place, e.g.
    `pnr_id`. Its confirmation must then check content, not existence."""
    input: ActionInput = Field(default_factory=ActionInput)
    """What the step sends: intent fields a repair may change, and the handles code fills
    in."""
    output: ActionOutput = Field(default_factory=ActionOutput)
    """What the step returns: its payload, the handles it mints, a valid empty answer, a
    business deadline and the fields safe to show."""
    preconditions: list[Precondition] = Field(default_factory=list)
    """Business blockers checked on every successful answer, each a predicate and its
    verdict, e.g. `when: fare not refundable`, `verdict: gate(no_refund_consent)`."""
    auto_repairs: list[AutoRepair] = Field(default_factory=list)
    """Fixed fallbacks code applies by itself when a trigger matches, e.g. drop optional
    filters and search again. Each one counts as a repair."""
    probe_only: bool = False
    """True for a read that exists only to find out whether a commit landed. It is not a
    main step and takes no `empty` or preconditions."""
    idempotency: Idempotency | None = None
    """How repeats of this call are de-duplicated. A commit without it, or with
    `mode: none`, is unkeyed: it is never retried, only probed."""
    confirmation: Confirmation | None = None
    """How to find out whether this commit landed when its answer was lost. Required on
    every commit and compensate step."""
    compensation: Compensation | None = None
    """How a landed commit is undone if the run later dead-ends: an action, a sub-chain, a
    ladder, or `none` with a reason."""
    revocation: Revocation | None = None
    """For a commit the provider may still reverse after success (a refund failing days
    later): what to watch and where it goes."""
    entry_gate: str | None = None
    """Id of a gate the run stops at every time it reaches this step, replays included,
    before any call, e.g. `price_consent`. The place for consent before a commit."""
    request_invariants: dict[str, Any] = Field(default_factory=dict)
    """Fixed request parameters sent on every call of this step. Key: the parameter name;
    value: what it must always be, e.g. `currency: EUR`."""
    documented_errors: StrList = Field(default_factory=list)
    """Errors the provider documents for this call, e.g. `http:409 && code:OFFER_EXPIRED`.
    Each needs a verdict row in scope or a known_unmatched entry."""
    timeout: DurationText | None = None
    """How long one attempt may take before it counts as a timeout, e.g. `30s`. A timed-out
    unkeyed commit is probed, never resent."""
    latency_hint: DurationText | None = None
    """How slow the call usually is at worst (p95), e.g. `2s`. For planning only; it is
    never used as a timeout."""
    http: HttpBinding | None = None
    """The HTTP call this step stands for: method, path, operationId, the key's header,
    and where each handle and intent field goes in the request and comes from in the
    answer. Optional; imports, traces and exports use it."""

    @field_validator("input", "output", mode="before")
    @classmethod
    def _empty_block(cls, value: Any) -> Any:
        return {} if value is None else value


def is_commit_class(action: Action) -> bool:
    """Commits and compensators: exactly-once, confirmation required (SPEC §2.1)."""
    return action.effect in COMMIT_CLASS_EFFECTS


def is_keyed(action: Action) -> bool:
    return action.idempotency is not None and action.idempotency.mode == "keyed"


def is_unkeyed_commit(action: Action) -> bool:
    """A commit-class action without an idempotency key (mode none, or undeclared).

    A naturally idempotent commit (PUT-with-id) is not unkeyed: repeating it is safe.
    """
    return is_commit_class(action) and (
        action.idempotency is None or action.idempotency.mode == "none"
    )


def auto_repair_transform(ar: AutoRepair, n: int) -> dict[str, Any]:
    """The intent assignments an auto-repair declares, as field → value.

    Written as a mapping, a list of fields to clear, ``drop <field>`` or
    ``<field> := <how>``; a value described in prose is generated
    deterministically (``auto:<field>:<n>``), since the simulator has no
    provider to ask.

    >>> from chains.core.model import AutoRepair
    >>> auto_repair_transform(AutoRepair(trigger="x", fields="drop fare_filters"), 1)
    {'fare_filters': None}
    >>> auto_repair_transform(AutoRepair(trigger="x", fields="ref := new uuid"), 2)
    {'ref': 'auto:ref:2'}
    """
    spec = ar.fields
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, list):
        return {str(f): None for f in spec}
    text = str(spec or "").strip()
    drop = re.fullmatch(r"(?:drop|clear|remove)\s+([\w.]+(?:\s*,\s*[\w.]+)*)", text, re.I)
    if drop:
        return {f.strip(): None for f in drop[1].split(",")}
    assign = re.fullmatch(r"([\w.]+)\s*(?::=|=)\s*(.+)", text)
    if assign:
        return {assign[1]: f"auto:{assign[1]}:{n}"}
    return {}


def compensators(action: Action) -> list[str]:
    """Every action that may undo ``action``: its compensation action, chain and ladder rungs."""
    comp = action.compensation
    if comp is None:
        return []
    names = [comp.action] if comp.action and comp.action != "none" else []
    names += comp.chain
    for rung in comp.ladder:
        names += [rung.action] if rung.action else []
        names += rung.chain
    return list(dict.fromkeys(names))
