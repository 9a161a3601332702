"""Hypothesis strategies that build valid chain documents.

Every construct of :mod:`chains.core.model` appears somewhere: handles with
staleness and rematch, actions of every effect with every block, gates with
every outcome form, verdict rows, policy, variants, evidence and extras.
Text is deliberately awkward (YAML look-alikes, quotes, colons, ``#``,
newlines, unicode, surrounding spaces), because the formats must carry any
text a user types.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from chains.core.model import (
    EVIDENCE_TAGS,
    Action,
    ActionInput,
    ActionOutput,
    AsyncFinality,
    AutoRepair,
    Backoff,
    BusinessExpiry,
    ByKeyReplay,
    ChainSpec,
    Compensation,
    Confirmation,
    Empty,
    EscalationStep,
    Gate,
    GateTimeout,
    Handle,
    Idempotency,
    Independence,
    IntentField,
    KnownUnmatched,
    LadderRung,
    Outcome,
    PayloadExpiry,
    PerChain,
    Policy,
    Precondition,
    Rematch,
    Revocation,
    Scope,
    Source,
    Staleness,
    StepPolicy,
    Sweep,
    Variants,
    VerdictRow,
    parse_duration,
)
from chains.core.verdicts import Verdict

__all__ = ["AWKWARD", "chains", "durations", "json_values", "texts", "verdicts"]

# Strings a careless writer would corrupt: YAML 1.1 scalars of other types,
# indicators, quotes, comment marks, line breaks and non-ASCII text.
AWKWARD = [
    "yes",
    "No",
    "on",
    "off",
    "y",
    "null",
    "Null",
    "~",
    "true",
    "False",
    "none",
    "12:30",
    "1:2:3",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "1e3",
    "0x1F",
    "0o17",
    "017",
    "+1",
    "-1",
    ".5",
    "1_000",
    ".inf",
    "-.Inf",
    ".nan",
    "30m",
    ">25m",
    "~5m",
    "10-15m",
    "*star",
    "&anchor",
    "!tag",
    "%percent",
    "@at",
    "`tick`",
    "|pipe",
    ">fold",
    "- dash",
    "-",
    "?",
    ":",
    "? q",
    "a: b",
    "a:b",
    "http:410",
    "code:X",
    "# hash",
    "a #b",
    "a# b",
    "[bracket",
    "{brace",
    "a, b",
    "'single'",
    '"double"',
    "it's",
    'say "hi"',
    "\\back",
    "",
    " ",
    " lead",
    "trail ",
    "  both  ",
    "tab\there",
    "line1\nline2",
    "multi\n\nline\n",
    "\n",
    "trailing newline\n",
    " \n lead",
    "cr\r\nlf",
    "é ü 漢字 🚀",
    "\u2028sep",
    "next\x85line",
    "nbsp\xa0",
    "\ufeffbom",
    "<<",
    "=",
    "repair(to: x, fields: [a])",
    "--- doc",
    "...",
]

# No NUL: the readers refuse it (no database can store one), so no document holds one.
_ALPHABET = st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00")
texts = st.one_of(st.sampled_from(AWKWARD), st.text(_ALPHABET, max_size=24))
nonblank = texts.filter(lambda s: s.strip() != "")
idents = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
# Element ids are usually identifiers but may be any non-empty text.
names = st.one_of(idents, idents, idents, nonblank)
name_lists = st.lists(names, max_size=3)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=5,
)
extras = st.dictionaries(texts, json_values, max_size=2)

_DURATION_TEXTS = [
    "30m",
    "24h",
    "~5m",
    ">25m",
    "<2s",
    ">=1h",
    "≤3d",
    "10-15m",
    "10 - 15 min",
    "500ms",
    "1.5h",
    "2w",
    "unknown",
    "n/a",
    "per-payment",
    "unlimited",
    "about a day",
]
durations = st.one_of(
    st.sampled_from(_DURATION_TEXTS),
    st.integers(0, 10**7),
    st.floats(0, 1e6, allow_nan=False),
    nonblank,
).map(parse_duration)
maybe_durations = st.none() | durations

sources = st.builds(
    Source,
    tag=st.none() | st.sampled_from(EVIDENCE_TAGS),
    urls=st.lists(st.sampled_from(["https://example.com/a", "https://x.test/p?q=1#f"]), max_size=2),
    note=st.none() | texts,
)


def element(cls: type, **fields: Any) -> st.SearchStrategy[Any]:
    """``cls`` built from ``fields`` plus the inherited source and extras."""
    return st.builds(cls, **fields, source=st.none() | sources, extras=st.just({}) | extras)


def variant(cls: type, **fields: Any) -> st.SearchStrategy[Any]:
    return element(
        cls, **fields, only=st.lists(idents, max_size=2), notes=st.lists(texts, max_size=2)
    )


# --- verdicts ----------------------------------------------------------------

_RESERVED_ARGS = {
    "to",
    "fields",
    "gate",
    "reason",
    "permanent",
    "retry_after_hint",
    "audience",
    "empty",
    "id",
    "target",
    "step",
    "operator",
}
_arg_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), texts),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=4,
)


@st.composite
def verdicts(draw: st.DrawFn) -> Verdict:
    """Any verdict, with any optional argument set, including unknown ones."""
    kind = draw(
        st.sampled_from(
            [
                "ok",
                "retry",
                "rewind",
                "repair",
                "reselect",
                "gate",
                "reconcile",
                "dead_end",
                "escalate",
            ]
        )
    )
    data: dict[str, Any] = {"type": kind}
    if kind == "ok":
        data["empty"] = draw(st.booleans())
    if kind in ("rewind", "repair", "reselect") or draw(st.integers(0, 9)) == 0:
        data["to"] = draw(nonblank)
    if kind == "gate":
        data["gate"] = draw(nonblank)
    if kind == "repair":
        data["fields"] = draw(st.lists(texts, min_size=1, max_size=3))
    if kind in ("dead_end", "escalate") or draw(st.integers(0, 9)) == 0:
        data["reason"] = draw(st.none() | texts)
        data["permanent"] = draw(st.none() | st.booleans())
        data["retry_after_hint"] = draw(st.none() | texts)
        data["audience"] = draw(st.none() | st.sampled_from(["operator", "user"]) | texts)
    data["extras"] = draw(
        st.dictionaries(idents.filter(lambda k: k not in _RESERVED_ARGS), _arg_values, max_size=2)
    )
    return Verdict(**data)


maybe_verdicts = st.none() | verdicts()

# --- handles -----------------------------------------------------------------

handles = variant(
    Handle,
    id=names,
    description=st.none() | texts,
    minted_by=st.none() | names,
    derived_from=name_lists,
    single_use=st.booleans(),
    staleness=st.none()
    | element(
        Staleness,
        detect=st.lists(
            st.sampled_from(["http:410", "code:SEARCH_EXPIRED", "webhook:x.y"]) | texts, max_size=3
        ),
        ttl_hint=maybe_durations,
        contractual=st.booleans(),
        refresh=st.none() | names,
    ),
    rematch=st.none()
    | element(Rematch, key=name_lists, on_ambiguous=st.sampled_from(["model", "gate"])),
)

# --- actions -----------------------------------------------------------------

intent_fields = variant(IntentField, type=texts, required=st.booleans())
action_inputs = element(
    ActionInput,
    intent=st.dictionaries(names, intent_fields, max_size=3),
    handles=name_lists,
)
action_outputs = element(
    ActionOutput,
    payload=json_values,
    handles=name_lists,
    business_expiry=st.none() | element(BusinessExpiry, field=texts, on_expiry=verdicts()),
    empty=st.none()
    | element(Empty, valid=st.booleans(), detect=st.none() | texts, route=maybe_verdicts),
)
idempotencies = element(
    Idempotency,
    mode=st.sampled_from(["keyed", "natural", "none"]),
    key_scope=st.none() | st.sampled_from(["run", "intent"]),
    key_retention=maybe_durations,
    replay_semantics=st.none() | st.sampled_from(["reexecutes", "returns_cached"]),
)
confirmations = element(
    Confirmation,
    probe=st.none() | names,
    signal=st.none() | texts,
    by_key_replay=st.none() | element(ByKeyReplay, note=st.none() | texts),
    async_=st.none()
    | element(
        AsyncFinality,
        channel=st.none() | st.sampled_from(["webhook", "poll"]),
        deadline=maybe_durations,
    ),
    sweep=st.none() | element(Sweep, interval=maybe_durations, escalate_after=maybe_durations),
)
compensations = element(
    Compensation,
    action=st.none() | st.just("none") | names,
    chain=name_lists,
    ladder=st.lists(
        element(
            LadderRung,
            when=st.none() | texts,
            else_=maybe_verdicts,
            chain=name_lists,
            action=st.none() | names,
        ),
        max_size=3,
    ),
    window=st.none() | texts,
    ordering_note=st.none() | texts,
)
actions = variant(
    Action,
    id=names,
    description=st.none() | texts,
    effect=st.sampled_from(["read", "mint", "commit", "compensate", "select"]),
    mutates=st.none() | names,
    input=action_inputs,
    output=action_outputs,
    preconditions=st.lists(
        element(Precondition, when=texts, verdict=verdicts(), reason=st.none() | texts),
        max_size=2,
    ),
    auto_repairs=st.lists(
        element(AutoRepair, trigger=texts, fields=json_values, once=st.booleans()), max_size=2
    ),
    probe_only=st.booleans(),
    idempotency=st.none() | idempotencies,
    confirmation=st.none() | confirmations,
    compensation=st.none() | compensations,
    revocation=st.none()
    | element(Revocation, watch=name_lists, window=maybe_durations, route=maybe_verdicts),
    entry_gate=st.none() | names,
    request_invariants=st.dictionaries(texts, json_values, max_size=2),
    timeout=maybe_durations,
    latency_hint=maybe_durations,
)

# --- verdict table, gates, policy -----------------------------------------------

scopes = element(
    Scope,
    steps=name_lists,
    consumers_of=name_lists,
    effects=st.lists(
        st.sampled_from(["read", "mint", "keyed_commit", "unkeyed_commit"]), max_size=2
    ),
    any=st.booleans(),
    text=st.none() | texts,
)
verdict_rows = variant(
    VerdictRow,
    id=st.none() | names,
    signal=st.lists(
        st.sampled_from(
            [
                "http:410",
                "http:429",
                "timeout",
                "code:X",
                "http:402 && type:card_error && code:card_declined",
                "status == 'requires_action'",
                "reason ∈ {lost_card, stolen_card} && http:402",
            ]
        )
        | texts,
        max_size=3,
    ),
    description=st.none() | texts,
    scope=scopes,
    verdict=verdicts(),
    no_side_effect=st.booleans(),
    fragile=st.none() | st.just("prose-match") | texts,
    note=st.none() | texts,
)
outcomes = element(
    Outcome,
    params=st.dictionaries(texts, json_values, max_size=2),
    bind=name_lists,
    set=st.dictionaries(texts, json_values, max_size=2),
    verdict=verdicts(),
)
gates = variant(
    Gate,
    id=names,
    description=st.none() | texts,
    audience=st.sampled_from(["user", "operator", "model"]),
    payload=json_values,
    outcomes=st.dictionaries(names, outcomes, max_size=3),
    timeout=st.none()
    | element(GateTimeout, after=durations, outcome=st.none() | names, verdict=maybe_verdicts),
    payload_expiry=st.none() | element(PayloadExpiry, field=texts, verdict=verdicts()),
)
backoffs = element(
    Backoff,
    base=maybe_durations,
    factor=st.none() | st.floats(0, 10, allow_nan=False),
    jitter=st.none() | st.sampled_from(["full", "none"]) | texts,
    max=maybe_durations,
)
_step_fields: dict[str, Any] = {
    "attempts": st.none() | st.integers(0, 10),
    "backoff": st.none() | backoffs,
    "timeout": maybe_durations,
    "safe_reject_redispatch": st.none() | st.integers(0, 5),
}
step_policies = element(
    StepPolicy,
    **_step_fields,
    keyed=st.none() | element(StepPolicy, **_step_fields),
    unkeyed=st.none() | element(StepPolicy, **_step_fields),
)
policies = element(
    Policy,
    per_step=st.dictionaries(
        st.sampled_from(["read", "mint", "commit", "compensate"]) | names,
        step_policies,
        max_size=3,
    ),
    per_chain=element(
        PerChain,
        max_rewinds=st.none() | st.integers(0, 10),
        max_repairs=st.none() | st.integers(0, 10),
        compensation_order=st.none() | st.just("reverse") | name_lists,
        wall_clock=maybe_durations,
        gate_timeout=maybe_durations,
    ),
    escalation=st.lists(
        element(
            EscalationStep,
            audience=st.sampled_from(["user", "operator", "model"]),
            may=st.lists(texts, max_size=2),
        ),
        max_size=3,
    ),
)

# --- the chain ------------------------------------------------------------------

chains: st.SearchStrategy[ChainSpec] = element(
    ChainSpec,
    id=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,20}", fullmatch=True),
    title=st.none() | texts,
    description=st.none() | texts,
    spec_version=st.sampled_from(["0.4", "0.3", "1.0", "0.4.1"]),
    variants=st.none()
    | element(
        Variants, axis=names, values=st.lists(st.sampled_from(["GDS", "NDC"]) | names, max_size=3)
    ),
    run_key=st.none() | texts,
    handles=st.lists(handles, max_size=2),
    actions=st.lists(actions, max_size=2),
    gates=st.lists(gates, max_size=2),
    verdict_table=st.lists(verdict_rows, max_size=2),
    known_unmatched=st.lists(
        element(KnownUnmatched, signal=texts, note=st.none() | texts), max_size=2
    ),
    policy=policies,
    independence=st.lists(
        element(
            Independence,
            handles=st.lists(idents, min_size=2, max_size=2),
            note=st.none() | texts,
        ),
        max_size=2,
    ),
)
