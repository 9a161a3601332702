"""The chain document: the unit that is stored, linted, simulated and exported.

:class:`ChainSpec` gathers the handles, actions, gates, verdict table, policy and
variants of one document, accepts the SPEC's mapping form for id'd
collections, and offers the lookups every later layer uses. :func:`in_variant`
and :func:`main_steps` tell which elements and steps a run bound to a variant
(SPEC §2.7) walks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal, TypeVar

from pydantic import Field, field_validator

from ..memo import per_chain, remember
from .actions import Action, compensators, is_commit_class
from .elements import Element
from .fields import StrList
from .gates import Gate
from .handles import Handle
from .policy import Policy
from .table import KnownUnmatched, VerdictRow


class Variants(Element):
    axis: str
    """What differs between the provider's parallel rails, e.g. `rail`."""
    values: StrList = Field(default_factory=list)
    """The possible values, e.g. `[GDS, NDC]`. A run binds one at start and never switches;
    elements choose theirs with `only`."""


class Independence(Element):
    """A reviewer's answer to an "unverified independence" question.

    Two handles that some action consumes together, with no derivation path
    between them, may hide a missing ``derived_from`` edge (SKILL Step 2,
    "verify by contradiction"). Confirming they are independent records who
    checked and why, so the question stops being a finding.
    """

    handles: StrList = Field(min_length=2, max_length=2)
    """The two handle ids reviewed, e.g. `[search_id, loyalty_token]`."""
    independent: Literal["confirmed"] = "confirmed"
    """The reviewer's answer; only `confirmed` exists: minting either handle again leaves the
    other valid."""
    note: str | None = Field(None)
    """Why minting one again leaves the other valid, and who checked, e.g.
    `separate sessions; checked in the sandbox`."""


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


class ChainSpec(Element):
    """One validated chain document: the unit that is stored, linted, simulated and exported."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=200)
    """The chain's identity: letters, digits, `_`, `.` and `-`, starting with a letter or
    digit, e.g. `flight-booking`."""
    title: str | None = None
    """A short title for people, e.g. `Search and book a flight`."""
    description: str | None = None
    """What the chain achieves, in plain words, for readers."""
    spec_version: str = "0.4"
    """The version of the chain-re-action SPEC the document follows; `0.4` by default."""
    variants: Variants | None = None
    """The provider's parallel rails, if any: an axis and its values, e.g.
    `{axis: rail, values: [GDS, NDC]}`."""
    run_key: str | None = Field(None)
    """How callers derive the run key from the user's task (trip and intent, never time), so
    a repeated start returns the same run instead of booking twice."""
    handles: list[Handle] = Field(default_factory=list)
    """The opaque tokens the steps pass along: who mints each, what it derives from, and how
    it goes stale."""
    actions: list[Action] = Field(default_factory=list)
    """The steps, in run order: each one call to an outside system, or a pick among
    results."""
    gates: list[Gate] = Field(default_factory=list)
    """Planned pauses where someone outside the run chooses one of the declared answers."""
    verdict_table: list[VerdictRow] = Field(default_factory=list)
    """The chain's own rows, signal to verdict, tried in order before the generic rows; the
    first match wins."""
    known_unmatched: list[KnownUnmatched] = Field(default_factory=list)
    """Documented signals deliberately left to the default rows (reconcile while a commit is
    out, else dead end), each with why."""
    policy: Policy = Field(default_factory=Policy)
    """Attempts, backoff and budgets. All fixed in the document: the model can never change
    them."""
    independence: list[Independence] = Field(default_factory=list)
    """Pairs of handles a reviewer confirmed as independent though no derivation links them,
    so lint stops asking about them."""

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

    # Lookups used by every later layer, the simulator's hot path among them: an
    # index per list, built once (chains.core.memo; a spec is frozen, so they hold). The
    # last chain's indexes are also kept at hand: a search asks one chain thousands of
    # times an input, and the memo's table costs two calls more than this check.
    def handle(self, handle_id: str) -> Handle | None:
        last = _last_indexed
        return (last[1] if last[0] is self else _indexes(self))[0].get(handle_id)

    def action(self, action_id: str) -> Action | None:
        last = _last_indexed
        return (last[1] if last[0] is self else _indexes(self))[1].get(action_id)

    def gate(self, gate_id: str) -> Gate | None:
        last = _last_indexed
        return (last[1] if last[0] is self else _indexes(self))[2].get(gate_id)


_Indexes = tuple[dict[str, Handle], dict[str, Action], dict[str, Gate]]
_last_indexed: tuple[ChainSpec | None, _Indexes] = (None, ({}, {}, {}))


def _indexes(spec: ChainSpec) -> _Indexes:
    """``chain``'s handles, actions and gates by id, built once; kept at hand as the last."""
    global _last_indexed
    kept = per_chain(spec)
    indexes = kept.get("by id")
    if indexes is None:
        indexes = kept["by id"] = (
            first_by_id(spec.handles),
            first_by_id(spec.actions),
            first_by_id(spec.gates),
        )
    _last_indexed = (spec, indexes)
    return indexes


_Identified = TypeVar("_Identified", Action, Handle, Gate)


def first_by_id(items: Iterable[_Identified]) -> dict[str, _Identified]:
    """Id → element in document order; of duplicate ids the first wins.

    The linter reports duplicates; every other layer reads the first definition,
    as :meth:`ChainSpec.action` does.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "a", "effect": "read"}, {"id": "a", "effect": "mint"}]})
    >>> first_by_id(doc.actions)["a"].effect
    'read'
    """
    out: dict[str, _Identified] = {}
    for item in items:
        out.setdefault(item.id, item)
    return out


def in_variant(only: list[str], variant: str | None) -> bool:
    """Does an element scoped ``only: [...]`` belong to a run bound to ``variant``? (SPEC §2.7)

    >>> in_variant([], None), in_variant(["NDC"], "NDC"), in_variant(["NDC"], None)
    (True, True, False)
    """
    return not only or (variant is not None and variant in only)


_MONEY_OR_CONSENT = re.compile(
    r"\b(?:consent\w*|pric\w*|amount\w*|money|payments?|refund\w*|charg\w*|fees?|approv\w*"
    r"|costs?|spend\w*|billing|purchase\w*)\b",
    re.I,
)


def money_or_consent(spec: ChainSpec, gate: Gate) -> str | None:
    """Why ``gate`` decides money or consent (SPEC §2.6, §5: never the model's), or None.

    It does when it is some action's ``entry_gate`` (consent before the
    step, by construction) or when its id, description, payload or outcome
    names speak of consent, price, amount, money, payment, refund, charge,
    fee, approval, cost, spend, billing or purchase.

    >>> doc = ChainSpec.model_validate({"id": "c", "gates": [
    ...     {"id": "seat_pick", "audience": "model", "outcomes": {"ok": "ok"}},
    ...     {"id": "price_ok", "audience": "user", "outcomes": {"ok": "ok"}}]})
    >>> [money_or_consent(doc, g) for g in doc.gates]
    [None, 'about price']
    """
    entry_of = [a.id for a in spec.actions if a.entry_gate == gate.id]
    if entry_of:
        return f"the entry gate of {entry_of[0]}"
    text = " ".join([gate.id, gate.description or "", str(gate.payload or ""), *gate.outcomes])
    word = _MONEY_OR_CONSENT.search(text.replace("_", " "))
    return f"about {word[0].lower()}" if word else None


def commit_steps(spec: ChainSpec) -> frozenset[str]:
    """Ids of the commit-class actions (commits and compensators): what they land is a fact (I5).

    Kept per chain (:mod:`chains.core.memo`): a run asks it of every live handle.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "search", "effect": "read"}, {"id": "book", "effect": "commit"}]})
    >>> sorted(commit_steps(doc))
    ['book']
    """
    return remember(
        spec,
        "commit steps",
        lambda: frozenset(i for i, a in first_by_id(spec.actions).items() if is_commit_class(a)),
    )


def main_steps(spec: ChainSpec, variant: str | None = None) -> list[str]:
    """The steps a run of ``chain`` bound to ``variant`` walks, in chain order.

    Left out: ``probe_only`` reads (SPEC §2.1: they "exist only as
    confirmation probes") and compensators, which run only when a dead end
    unwinds a landed commit. A read that is also some commit's probe but not
    ``probe_only`` stays: a reservation read carrying a precondition is a
    real step.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "search", "effect": "read"},
    ...     {"id": "find", "effect": "read", "probe_only": True},
    ...     {"id": "book", "effect": "commit", "compensation": {"action": "cancel"}},
    ...     {"id": "cancel", "effect": "compensate"}]})
    >>> main_steps(doc)
    ['search', 'book']
    """
    undo = {name for a in spec.actions for name in compensators(a)}
    steps = (
        a.id
        for a in spec.actions
        if not a.probe_only and a.id not in undo and in_variant(a.only, variant)
    )
    return list(dict.fromkeys(steps))
