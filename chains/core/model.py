"""The chain document: pydantic models of the SPEC v0.4 §2 grammar.

This module is the one source of truth for what a chain document holds; the
loaders, the JSON Schema, the API and the database all go through it.

Assumptions worth knowing before editing:

* Documents are validated strictly (wrong types and unknown enum values fail
  with a path), but keys the grammar does not know are *kept*: every element
  moves them into its ``extras`` map, and the import report lists them.
* Collections are lists of elements with an ``id`` (handles, actions, gates,
  verdict rows) so that duplicates survive loading and can be reported by the
  linter; the SPEC's mapping form (``handles: {search_id: {...}}``) is
  accepted on input.
* Verdicts are :class:`~chains.core.verdicts.Verdict` values and durations are
  :class:`Duration` values; both are written as their canonical text.
* Evidence (``source``) may sit on any element.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from .errors import VerdictSyntaxError
from .verdicts import Verdict, format_verdict, parse_verdict

__all__ = [
    "EVIDENCE_TAGS",
    "Action",
    "Chain",
    "Duration",
    "Element",
    "Gate",
    "Handle",
    "Independence",
    "Policy",
    "Source",
    "VerdictRow",
    "compensators",
    "in_variant",
    "is_commit_class",
    "is_external",
    "is_keyed",
    "is_unkeyed_commit",
    "main_steps",
    "parse_duration",
    "signal_terms",
]

EVIDENCE_TAGS = (
    "documented",
    "observed",
    "assumed",
    "spec-example",
    "documented-by-omission",
    "documented(search-snippet)",
)


# --- durations -------------------------------------------------------------

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(
    r"^(?P<mark>[~<>≥≤]|>=|<=)?\s*(?P<lo>\d+(?:\.\d+)?)\s*(?P<lounit>ms|s|min|m|h|d|w)?"
    r"(?:\s*[-–]\s*(?P<hi>\d+(?:\.\d+)?)\s*(?P<hiunit>ms|s|min|m|h|d|w)?)?$"
)


class Duration(BaseModel):
    """A duration as written (``30m``, ``~5m``, ``>25m``, ``10-15m``, ``unknown``).

    ``seconds`` is the (lower) value when the text states one; ``upper`` is
    the top of a range; ``bound`` tells whether the number is exact,
    approximate, a lower or an upper bound. Text that states no number
    (``unknown``, ``n/a``, ``per-payment``) keeps ``seconds`` empty.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    seconds: float | None = None
    upper: float | None = None
    bound: Literal["exact", "approx", "at_least", "at_most", "none"] = "none"

    def __str__(self) -> str:
        return self.text


def parse_duration(value: Any) -> Duration:
    """Read a duration from a document value.

    >>> parse_duration("~5m").seconds, parse_duration("~5m").bound
    (300.0, 'approx')
    >>> parse_duration("10-15m").upper
    900.0
    >>> parse_duration("unknown").seconds is None
    True
    """
    if isinstance(value, Duration):
        return value
    if isinstance(value, dict) and "text" in value:
        return parse_duration(value["text"])
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("expected a duration such as 30s, 15m, 24h, ~5m, unknown or n/a")
    text = str(value).strip()
    if not text:
        raise ValueError("expected a duration, got an empty string")
    m = _DURATION.match(text)
    if not m:
        return Duration(text=text)
    lounit = m["lounit"] or m["hiunit"] or "s"
    seconds = float(m["lo"]) * _UNITS[lounit]
    upper = float(m["hi"]) * _UNITS[m["hiunit"] or lounit] if m["hi"] else None
    mark = m["mark"]
    bound = {"~": "approx", ">": "at_least", ">=": "at_least", "≥": "at_least"}.get(
        mark or "", "at_most" if mark in ("<", "<=", "≤") else "exact"
    )
    return Duration(text=text, seconds=seconds, upper=upper, bound=bound)


DurationText = Annotated[
    Duration,
    BeforeValidator(parse_duration),
    PlainSerializer(lambda d: d.text, return_type=str),
    WithJsonSchema({"type": "string", "examples": ["30s", "15m", "~5m", ">25m", "unknown"]}),
]


def _verdict(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return parse_verdict(value)
        except VerdictSyntaxError as exc:
            raise ValueError(str(exc)) from None
    return value


VerdictExpr = Annotated[
    Verdict,
    BeforeValidator(_verdict),
    PlainSerializer(format_verdict, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "description": "verdict expression, e.g. repair(to: search, fields: [dates])",
            "pattern": r"^(ok|retry|rewind|repair|reselect|gate|reconcile|dead_end|escalate)\b",
        }
    ),
]


def _str_list(value: Any) -> Any:
    """Accept a single string where a list of strings is meant."""
    if isinstance(value, str):
        return [value]
    return value


StrList = Annotated[list[str], BeforeValidator(_str_list)]


# --- row signals (§3) --------------------------------------------------------

SIGNAL_TERMS_LIMIT = 64  # a product of alternatives wider than this is a typo, not a signal


def signal_terms(value: Any) -> list[str]:
    """A row signal as the list of atoms any of which matches (its stored form).

    An atom may itself be a conjunction, ``a && b``: it matches only when
    all of its parts hold. Besides a list of atoms (or one atom as a string),
    a signal may be written ``{all: [...]}`` or ``{any: [...]}``, nested;
    ``all`` of alternatives is multiplied out, so the stored form is always
    "any of these conjunctions".

    >>> signal_terms({"all": ["http:402", "code:card_declined"]})
    ['http:402 && code:card_declined']
    >>> signal_terms({"all": ["http:422", {"any": ["code:A", "code:B"]}]})
    ['http:422 && code:A', 'http:422 && code:B']
    >>> signal_terms(["timeout", {"all": ["http:409", "code:X"]}])
    ['timeout', 'http:409 && code:X']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return _any_of(value)
    if isinstance(value, dict):
        if set(value) == {"any"}:
            return _any_of(_listed(value["any"], "any"))
        if set(value) == {"all"}:
            return _all_of(_listed(value["all"], "all"))
        raise ValueError(
            f"a signal mapping takes exactly one key, all or any; got {', '.join(map(str, value))}"
        )
    raise ValueError(f"a signal is an atom, a list of atoms, or {{all|any: [...]}}; got {value!r}")


def _listed(parts: Any, key: str) -> list:
    if isinstance(parts, str):
        parts = [parts]
    if not isinstance(parts, list) or not parts:
        raise ValueError(f"signal {{{key}: [...]}} needs a non-empty list of atoms")
    return parts


def _any_of(parts: list) -> list[str]:
    terms: list[str] = []
    for part in parts:
        terms += signal_terms(part)
    return terms


def _all_of(parts: list) -> list[str]:
    terms = [""]
    for part in parts:
        options = signal_terms(part)
        terms = [f"{t} && {o}" if t else o for t in terms for o in options]
        if len(terms) > SIGNAL_TERMS_LIMIT:
            raise ValueError(
                f"signal {{all: [...]}} multiplies out to more than {SIGNAL_TERMS_LIMIT} atoms"
            )
    return terms


_SIGNAL_ITEM = {"anyOf": [{"type": "string"}, {"type": "object"}]}
_SIGNAL_SCHEMA = {
    "description": (
        "signals any of which matches: http:410, code:X, timeout, webhook:x, or a payload "
        "predicate (status == requires_action). An atom joined with && matches only when all "
        "its parts hold. Also written {all: [...]} (every part holds) or {any: [...]} "
        "(one of them), nested; stored and written as a list of atoms"
    ),
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": _SIGNAL_ITEM},
        {
            "type": "object",
            "properties": {"all": {"type": "array", "items": _SIGNAL_ITEM, "minItems": 1}},
            "required": ["all"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"any": {"type": "array", "items": _SIGNAL_ITEM, "minItems": 1}},
            "required": ["any"],
            "additionalProperties": False,
        },
    ],
    "examples": [
        ["http:410", "code:SEARCH_EXPIRED"],
        {"all": ["http:402", "code:card_declined", "decline_code in {stolen_card, lost_card}"]},
    ],
}

SignalTerms = Annotated[list[str], BeforeValidator(signal_terms), WithJsonSchema(_SIGNAL_SCHEMA)]


# --- evidence --------------------------------------------------------------

_URL = re.compile(r"https?://[^\s)>\]`'\"]+")


class Source(BaseModel):
    """Evidence for a claim: a tag, the citations, and what was said."""

    model_config = ConfigDict(extra="forbid")

    tag: str | None = None
    urls: list[str] = Field(default_factory=list)
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return source_from_text(value)
        return value

    @field_validator("tag")
    @classmethod
    def _known_tag(cls, tag: str | None) -> str | None:
        if tag is not None and tag not in EVIDENCE_TAGS:
            raise ValueError(f"expected {' | '.join(EVIDENCE_TAGS)}")
        return tag


def source_from_text(text: str) -> dict[str, Any]:
    """Split free evidence text into its tag, URLs and the rest.

    >>> source_from_text("documented (https://example.com/a) TEST")["tag"]
    'documented'
    """
    text = text.strip()
    lowered = text.lower()
    tag = None
    for candidate in sorted(EVIDENCE_TAGS, key=len, reverse=True):
        if lowered.startswith(candidate):
            tag = candidate
            break
    urls = _URL.findall(text)
    note = text if tag is None or text.lower() != tag else None
    return {"tag": tag, "urls": [u.rstrip(".,;") for u in urls], "note": note}


# --- the element base ------------------------------------------------------


class Element(BaseModel):
    """Base of every document element: strict fields, unknown keys kept.

    Unknown keys are moved into ``extras`` instead of being rejected or
    dropped, so a document written against a newer or older grammar loses
    nothing; the import report lists them.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: Source | None = None
    extras: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _keep_unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = _known_keys(cls)
        if "extras" not in data and all(key in known for key in data):
            return data  # the common case: nothing to move
        given = data.get("extras")
        if given is not None and not isinstance(given, dict):
            return data  # let validation report ``extras`` as the wrong type
        extras = dict(given or {})
        kept = {}
        for key, value in data.items():
            if key in known:
                kept[key] = value
            else:
                extras[str(key)] = value
        if extras:
            kept["extras"] = extras
        return kept


_KNOWN: dict[type, frozenset[str]] = {}


def _known_keys(cls: type[BaseModel]) -> frozenset[str]:
    """Field names and aliases of ``cls``, computed once per class (validation is hot)."""
    known = _KNOWN.get(cls)
    if known is None:
        names = set()
        for name, field in cls.model_fields.items():
            names.add(name)
            if field.alias:
                names.add(field.alias)
        known = _KNOWN[cls] = frozenset(names)
    return known


class Variant(Element):
    """A top-level element: variant scoping (SPEC §2.7, ``only: [NDC]``) and notes.

    ``notes`` keeps the authors' remarks about the element, such as the YAML
    comments of an imported compile, which often carry the reasoning and the
    evidence a reviewer needs.
    """

    only: StrList = Field(default_factory=list)
    notes: StrList = Field(default_factory=list, description="authors' remarks, kept as written")


# --- handles (§2.2) --------------------------------------------------------


class Staleness(Element):
    detect: StrList = Field(default_factory=list, description="signals observed on use")
    ttl_hint: DurationText | None = Field(None, description="planning hint, never enforced")
    contractual: bool = False
    refresh: str | None = Field(None, description="cheapest step that re-mints the handle")


class Rematch(Element):
    key: StrList = Field(default_factory=list, description="intent-level identity fields")
    on_ambiguous: Literal["model", "gate"] = "model"


class Handle(Variant):
    """An opaque token minted by one action and consumed by later ones."""

    id: str
    description: str | None = None
    minted_by: str | None = None
    derived_from: StrList = Field(default_factory=list)
    single_use: bool = False
    staleness: Staleness | None = None
    rematch: Rematch | None = None


_EXTERNAL = re.compile(r"^external\s*(?:\(.*\))?$", re.IGNORECASE | re.DOTALL)


def is_external(handle: Handle) -> bool:
    """Minted outside this chain: ``minted_by: external``, with or without its origin.

    >>> is_external(Handle(id="order_id", minted_by="external(scope A create_order)"))
    True
    >>> is_external(Handle(id="order_id", minted_by="create_order"))
    False
    """
    return bool(handle.minted_by and _EXTERNAL.match(handle.minted_by.strip()))


# --- actions (§2.1) --------------------------------------------------------


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


class ActionOutput(Element):
    payload: Any = None
    handles: StrList = Field(default_factory=list)
    business_expiry: BusinessExpiry | None = None
    empty: Empty | None = None


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

    @model_validator(mode="before")
    @classmethod
    def _none_shorthand(cls, value: Any) -> Any:
        if value is None or value == "none":
            return {"action": "none"}
        if isinstance(value, str):
            return {"action": value}
        return value


class Revocation(Element):
    watch: StrList = Field(default_factory=list)
    window: DurationText | None = None
    route: VerdictExpr | None = None


class Action(Variant):
    """One call against an external system (or a selection pseudo-step)."""

    id: str
    description: str | None = None
    effect: Literal["read", "mint", "commit", "compensate", "select"]
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
    timeout: DurationText | None = None
    latency_hint: DurationText | None = None

    @field_validator("input", "output", mode="before")
    @classmethod
    def _empty_block(cls, value: Any) -> Any:
        return {} if value is None else value


def is_commit_class(action: Action) -> bool:
    """Commits and compensators: exactly-once, confirmation required (SPEC §2.1)."""
    return action.effect in ("commit", "compensate")


def is_keyed(action: Action) -> bool:
    return action.idempotency is not None and action.idempotency.mode == "keyed"


def is_unkeyed_commit(action: Action) -> bool:
    """A commit-class action without an idempotency key (mode none, or undeclared).

    A naturally idempotent commit (PUT-with-id) is not unkeyed: repeating it is safe.
    """
    return is_commit_class(action) and (
        action.idempotency is None or action.idempotency.mode == "none"
    )


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


# --- verdict table (§3) ----------------------------------------------------


class Scope(Element):
    """Which attempts a verdict row applies to."""

    steps: StrList = Field(default_factory=list, description="action ids")
    consumers_of: StrList = Field(default_factory=list, description="handles whose consumers")
    effects: StrList = Field(
        default_factory=list, description="effect classes, e.g. read, mint, keyed_commit"
    )
    any: bool = False
    text: str | None = Field(None, description="the scope as written, when it was prose")

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"steps": value}
        if isinstance(value, str):
            return scope_from_text(value)
        return value


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EFFECT_WORDS = {
    "read",
    "mint",
    "commit",
    "compensate",
    "select",
    "keyed_commit",
    "unkeyed_commit",
    "keyed commit",
    "unkeyed commit",
    "any keyed",
}


def scope_from_text(text: str) -> dict[str, Any]:
    """Read a scope written as a table cell.

    >>> scope_from_text("checkout, revalidate")["steps"]
    ['checkout', 'revalidate']
    >>> scope_from_text("any consumer of `search_id`")["consumers_of"]
    ['search_id']
    >>> scope_from_text("any")["any"]
    True
    """
    raw = text.strip()
    clean = raw.replace("`", "").strip()
    if clean.lower() in ("any", "all", "any step", "all steps", "*"):
        return {"any": True}
    consumer = re.match(r"^(?:any )?consumers? of\s+(.+)$", clean, re.IGNORECASE)
    if consumer:
        names = [n.strip() for n in re.split(r"[,/]|\band\b", consumer[1]) if n.strip()]
        if all(_IDENT.match(n) for n in names):
            return {"consumers_of": names}
    parts = [p.strip() for p in re.split(r"\s*[,/;]\s*|\s+and\s+", clean) if p.strip()]
    lowered = [p.lower().replace(" ", "_") for p in parts]
    if parts and all(p.lower() in _EFFECT_WORDS or p in _EFFECT_WORDS for p in parts):
        return {"effects": lowered}
    if parts and all(_IDENT.match(p) for p in parts):
        return {"steps": parts}
    return {"text": raw}


class VerdictRow(Variant):
    """One matcher of the verdict table: signal, scope, verdict."""

    id: str | None = None
    signal: SignalTerms = Field(default_factory=list)
    description: str | None = Field(None, description="the signal as written, when prose")
    scope: Scope = Field(default_factory=Scope)
    verdict: VerdictExpr
    no_side_effect: bool = False
    fragile: str | None = Field(None, description="e.g. prose-match")
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "rejected_before_execution" in data:  # v0.3 name
                legacy = data.pop("rejected_before_execution")
                data.setdefault("no_side_effect", legacy)
            if data.get("fragile") is True:
                data["fragile"] = "prose-match"
            elif data.get("fragile") is False:
                data["fragile"] = None
            for key in ("applies_to", "step_scope"):
                if key in data:
                    data.setdefault("scope", data.pop(key))
        return data


class KnownUnmatched(Element):
    signal: str
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"signal": value}
        return value


# --- gates (§2.6) ----------------------------------------------------------


class Outcome(Element):
    params: dict[str, Any] = Field(default_factory=dict)
    bind: StrList = Field(default_factory=list)
    set: dict[str, Any] = Field(default_factory=dict)
    verdict: VerdictExpr

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, (str, Verdict)):  # ``accept: ok``
            return {"verdict": value}
        return value


class GateTimeout(Element):
    after: DurationText
    outcome: str | None = None
    verdict: VerdictExpr | None = None


class PayloadExpiry(Element):
    field: str
    verdict: VerdictExpr


class Gate(Variant):
    """A pause for an external decision; resumes with a declared outcome."""

    id: str
    description: str | None = None
    audience: Literal["user", "operator", "model"]
    payload: Any = None
    outcomes: dict[str, Outcome] = Field(default_factory=dict)
    timeout: GateTimeout | None = None
    payload_expiry: PayloadExpiry | None = None


# --- policy (§2.4) ---------------------------------------------------------


class Backoff(Element):
    base: DurationText | None = None
    factor: float | None = None
    jitter: str | None = None
    max: DurationText | None = None


class StepPolicy(Element):
    """Attempts and backoff for an effect class or one action.

    ``commit`` and ``compensate`` split into ``keyed`` and ``unkeyed``.
    """

    attempts: int | None = None
    backoff: Backoff | None = None
    timeout: DurationText | None = None
    safe_reject_redispatch: int | None = None
    keyed: StepPolicy | None = None
    unkeyed: StepPolicy | None = None


class PerChain(Element):
    max_rewinds: int | None = None
    max_repairs: int | None = None
    compensation_order: Literal["reverse"] | list[str] | None = None
    wall_clock: DurationText | None = None
    gate_timeout: DurationText | None = None


class EscalationStep(Element):
    audience: Literal["user", "operator", "model"]
    may: StrList = Field(default_factory=list)


class Policy(Element):
    per_step: dict[str, StepPolicy] = Field(
        default_factory=dict, description="keys: read, mint, commit, compensate or an action id"
    )
    per_chain: PerChain = Field(default_factory=PerChain)
    escalation: list[EscalationStep] = Field(default_factory=list)


# --- the chain -------------------------------------------------------------


class Variants(Element):
    axis: str
    values: StrList = Field(default_factory=list)


class Independence(Element):
    """A reviewer's answer to an "unverified independence" question.

    Two handles that some action consumes together, with no derivation path
    between them, may hide a missing ``derived_from`` edge (SKILL Step 2,
    "verify by contradiction"). Confirming they are independent records who
    checked and why, so the question stops being a finding.
    """

    handles: StrList = Field(min_length=2, max_length=2, description="the two handles")
    independent: Literal["confirmed"] = "confirmed"
    note: str | None = Field(None, description="why re-minting one leaves the other valid")


def _keyed_list(value: Any) -> Any:
    """Accept the SPEC's mapping form ``{id: {...}}`` for an id'd collection."""
    if isinstance(value, dict):
        out = []
        for key, body in value.items():
            if body is None:  # ``search_id:`` with nothing under it
                out.append({"id": key})
            elif isinstance(body, dict):
                out.append({"id": key, **body})
            else:
                out.append({"id": key, "value": body})
        return out
    return [] if value is None else value


class Chain(Element):
    """One chain document: the unit that is stored, linted, simulated and exported."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=200)
    title: str | None = None
    description: str | None = None
    spec_version: str = "0.4"
    variants: Variants | None = None
    run_key: str | None = Field(None, description="how callers derive run_key (SPEC §2.8)")
    handles: list[Handle] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    gates: list[Gate] = Field(default_factory=list)
    verdict_table: list[VerdictRow] = Field(default_factory=list)
    known_unmatched: list[KnownUnmatched] = Field(default_factory=list)
    policy: Policy = Field(default_factory=Policy)
    independence: list[Independence] = Field(
        default_factory=list, description="reviewed pairs of handles without a derivation path"
    )

    @field_validator("handles", "gates", mode="before")
    @classmethod
    def _mapping_form(cls, value: Any) -> Any:
        return _keyed_list(value)

    @field_validator("actions", "verdict_table", "known_unmatched", "independence", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("policy", mode="before")
    @classmethod
    def _none_policy(cls, value: Any) -> Any:
        return {} if value is None else value

    # Lookups used by every later layer; plain loops keep them obvious.
    def handle(self, handle_id: str) -> Handle | None:
        return next((h for h in self.handles if h.id == handle_id), None)

    def action(self, action_id: str) -> Action | None:
        return next((a for a in self.actions if a.id == action_id), None)

    def gate(self, gate_id: str) -> Gate | None:
        return next((g for g in self.gates if g.id == gate_id), None)


def in_variant(only: list[str], variant: str | None) -> bool:
    """Does an element scoped ``only: [...]`` belong to a run bound to ``variant``? (SPEC §2.7)

    >>> in_variant([], None), in_variant(["NDC"], "NDC"), in_variant(["NDC"], None)
    (True, True, False)
    """
    return not only or (variant is not None and variant in only)


def main_steps(chain: Chain, variant: str | None = None) -> list[str]:
    """The steps a run of ``chain`` bound to ``variant`` walks, in chain order.

    Left out: ``probe_only`` reads (SPEC §2.1: they "exist only as
    confirmation probes") and compensators, which run only when a dead end
    unwinds a landed commit. A read that is also some commit's probe but not
    ``probe_only`` stays: a reservation read carrying a precondition is a
    real step.

    >>> doc = Chain.model_validate({"id": "c", "actions": [
    ...     {"id": "search", "effect": "read"},
    ...     {"id": "find", "effect": "read", "probe_only": True},
    ...     {"id": "book", "effect": "commit", "compensation": {"action": "cancel"}},
    ...     {"id": "cancel", "effect": "compensate"}]})
    >>> main_steps(doc)
    ['search', 'book']
    """
    undo = {name for a in chain.actions for name in compensators(a)}
    steps = (
        a.id
        for a in chain.actions
        if not a.probe_only and a.id not in undo and in_variant(a.only, variant)
    )
    return list(dict.fromkeys(steps))


StepPolicy.model_rebuild()
