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
    required: bool = True

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
    handles: StrList = Field(default_factory=list)

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
    detect: str | None = Field(None, description="predicate over the full response")
    route: VerdictExpr | None = None


class BusinessExpiry(Element):
    field: str
    on_expiry: VerdictExpr


def _payload_field(name: str) -> str:
    """A response field's name, or a dotted path to one inside another (``order.status``)."""
    if any(not part or part != part.strip() for part in name.split(".")):
        raise ValueError("expected a payload field name, or a dotted path (order.status)")
    return name


class ActionOutput(Element):
    payload: Any = None
    handles: StrList = Field(default_factory=list)
    business_expiry: BusinessExpiry | None = None
    empty: Empty | None = None
    safe_to_show: list[Annotated[str, AfterValidator(_payload_field)]] = Field(
        default_factory=list,
        description="response fields the trace shows as they are (payload fields, or dotted "
        "paths into them, and the key fields of the options it returns); every other value "
        "is sealed (C7.3)",
    )

    @field_validator("safe_to_show", mode="before")
    @classmethod
    def _one_name(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Precondition(Element):
    when: str
    verdict: VerdictExpr
    reason: str | None = None


class AutoRepair(Element):
    trigger: str
    fields: Any = Field(description="the intent transform, as written")
    once: bool = True


class Idempotency(Element):
    mode: Literal["keyed", "natural", "none"]
    key_scope: Literal["run", "intent"] | None = None
    key_retention: DurationText | None = None
    replay_semantics: Literal["reexecutes", "returns_cached"] | None = None


class ByKeyReplay(Element):
    note: str | None = None

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
    deadline: DurationText | None = None


class Sweep(Element):
    interval: DurationText | None = None
    escalate_after: DurationText | None = None


class Confirmation(Element):
    probe: str | None = None
    signal: str | None = None
    by_key_replay: ByKeyReplay | None = None
    async_: AsyncFinality | None = Field(None, alias="async")
    sweep: Sweep | None = None


class LadderRung(Element):
    when: str | None = None
    else_: VerdictExpr | None = Field(None, alias="else")
    chain: StrList = Field(default_factory=list)
    action: str | None = None


class Compensation(Element):
    action: str | None = Field(None, description="compensating action id, or 'none'")
    chain: StrList = Field(default_factory=list, description="a compensation sub-chain")
    ladder: list[LadderRung] = Field(default_factory=list)
    window: str | None = None
    ordering_note: str | None = None
    replaced_by: str | None = Field(
        None,
        description="a later commit of this chain that replaces this one (a rebook): a dead "
        "end compensates this commit only while a landing of that commit stands (C8.2)",
    )

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


class Revocation(Element):
    watch: StrList = Field(default_factory=list)
    window: DurationText | None = None
    route: VerdictExpr | None = None


class Action(Variant):
    """One call against an external system (or a selection pseudo-step)."""

    id: str
    description: str | None = None
    effect: Effect
    mutates: str | None = None
    input: ActionInput = Field(default_factory=ActionInput)
    output: ActionOutput = Field(default_factory=ActionOutput)
    preconditions: list[Precondition] = Field(default_factory=list)
    auto_repairs: list[AutoRepair] = Field(default_factory=list)
    probe_only: bool = False
    idempotency: Idempotency | None = None
    confirmation: Confirmation | None = None
    compensation: Compensation | None = None
    revocation: Revocation | None = None
    entry_gate: str | None = None
    request_invariants: dict[str, Any] = Field(default_factory=dict)
    documented_errors: StrList = Field(
        default_factory=list,
        description="the error signals the provider documents for this call (http:409, "
        "code:OFFER_EXPIRED): each needs a verdict row in scope or a known_unmatched entry "
        "(SPEC §3); an OpenAPI import fills it in",
    )
    timeout: DurationText | None = None
    latency_hint: DurationText | None = None

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
