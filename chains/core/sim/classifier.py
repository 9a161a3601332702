"""Signal → verdict: the deterministic classifier of SPEC §3.

One observation of one step is classified by an ordered list of matchers,
first match wins: the chain's auto-repairs not yet spent, its domain rows
(in document order, scoped with :func:`~chains.core.signals.scope_applies_to`
and by the run's variant), then the generic rows of SPEC §3. Rows 1–2
(staleness of a consumed handle, ``empty.detect``) outrank transport success;
rows 11–12 are fixed: an unmatched signal reconciles while a commit is in
flight and dead-ends otherwise. Generic rows 8–10 ("terms changed",
"deterministic reject", "degrade") only exist as domain rows: nothing in a
bare observation identifies them, and guessing would break rows 11–12.

Nothing here evaluates an expression or consults a model. An observation
carries *atoms* (``http:410``, ``timeout``, ``code:X``, ``webhook:x``) and
the names of the payload predicates that hold; a row atom matches when each
of its ``&&`` parts is one of those atoms (a status class ``http:5xx`` covers
``http:503``), or when the whole atom is the name of a predicate that holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, NamedTuple

from ..memo import by_identity, per_chain, remember
from ..model import (
    Action,
    ChainSpec,
    Handle,
    VerdictRow,
    auto_repair_transform,
    in_variant,
    is_commit_class,
    trace_row_ref,
)
from ..model import is_unkeyed_commit as _unkeyed
from ..signals import atom_covers, conjuncts, normalize_atom, scope_applies_to
from ..verdicts import Verdict
from .handles import refresh_step
from .state import Observation

__all__ = [
    "ClassifyContext",
    "Classification",
    "auto_repair_transform",
    "classify",
    "matches",
    "observed_atoms",
    "repeats_read",
    "row_label",
    "rows_for",
]

_FAULTS = ("timeout", "conn_reset", "conn_drop")


_NOTHING: Mapping[str, int] = MappingProxyType({})


class ClassifyContext(NamedTuple):
    """What the classifier needs to know about the run, beyond the observation.

    ``live`` maps each live handle id to the trace seq that minted it (mint
    order decides "shallowest" and "deepest"; only the step's inputs are
    read, so a caller may leave the others out); ``stale_recurrences`` counts,
    per (step, signal) key, how often an unattributable staleness signal has
    already been answered by a rewind in this run. Immutable, and a named
    tuple rather than a frozen dataclass: the runtime makes one for every
    response it classifies, and a frozen dataclass is slow to make.
    """

    variant: str | None = None
    commit_in_flight: bool = False
    key_expired: bool = False
    live: Mapping[str, int] = _NOTHING
    stale_recurrences: Mapping[str, int] = _NOTHING
    auto_repairs_fired: Iterable[str] = ()


@dataclass(frozen=True)
class Classification:
    verdict: Verdict
    source: Literal["table", "default"]
    row: str
    reason: str
    no_side_effect: bool = False
    auto_repair: str | None = None
    stale_key: str | None = None


def observed_atoms(obs: Observation) -> set[str]:
    """The normalised atoms an observation shows, predicates split into their parts."""
    atoms = {normalize_atom(obs.transport)}
    if obs.code:
        atoms.add(normalize_atom(obs.code if obs.code.startswith("code:") else f"code:{obs.code}"))
    for event in obs.events:
        atoms.add(normalize_atom(event if ":" in event else f"webhook:{event}"))
    for predicate in obs.predicates:
        atoms.update(conjuncts(predicate))
    return atoms


def _predicate_names(obs: Observation) -> set[str]:
    return {normalize_atom(p) for p in obs.predicates}


def matches(atom: str, obs: Observation, atoms: set[str] | None = None) -> bool:
    """Does the row/detect/trigger ``atom`` match ``obs``?

    >>> matches("http:5xx", Observation(transport="http:503"))
    True
    >>> matches("code:X && http:409", Observation(transport="http:409", code="X"))
    True
    >>> matches("itineraries.length == 0", Observation(predicates=["itineraries.length == 0"]))
    True
    """
    if normalize_atom(atom) in _predicate_names(obs):
        return True
    seen = observed_atoms(obs) if atoms is None else atoms
    return all(any(atom_covers(part, o) for o in seen) for part in conjuncts(atom))


def row_label(spec: ChainSpec, row: VerdictRow) -> str:
    """``row`` as the trace names it (:func:`~chains.core.model.trace_row_ref`).

    An unnamed row is numbered by its place in the table, found by identity:
    two rows written alike are still two rows, and comparing models field by
    field, as ``list.index`` does, is slow.
    """
    table = spec.verdict_table
    places = remember(spec, "row places", lambda: {id(r): n for n, r in enumerate(table, 1)})
    return trace_row_ref(row, places.get(id(row)) or table.index(row) + 1)


def rows_for(spec: ChainSpec, step: Action, variant: str | None) -> tuple[VerdictRow, ...]:
    """The domain rows in scope for ``step`` in a run bound to ``variant``, in table order.

    A row is in scope when its ``only`` admits the variant and its scope
    surely covers the step (a prose scope does not). Depends on the chain
    alone, so it is kept per chain for the chain's own actions.
    """

    def scoped() -> tuple[VerdictRow, ...]:
        return tuple(
            row
            for row in spec.verdict_table
            if in_variant(row.only, variant) and scope_applies_to(row.scope, step) is True
        )

    if spec.action(step.id) is not step:
        return scoped()
    return remember(spec, ("rows for", step.id, variant), scoped)


def _transport(obs: Observation) -> str:
    return normalize_atom(obs.transport)


def _is_success(obs: Observation) -> bool:
    return bool(re.fullmatch(r"http:2\d\d", _transport(obs)))


def _is_fault(obs: Observation) -> bool:
    t = _transport(obs)
    return t in _FAULTS or bool(re.fullmatch(r"http:5\d\d", t))


def classify(
    spec: ChainSpec,
    ctx: ClassifyContext,
    step: Action,
    obs: Observation,
    rows: Iterable[VerdictRow] | None = None,
) -> Classification:
    """Classify one observation of ``step``: SPEC §3, first match wins.

    ``rows``, when given, are the domain rows in scope for ``step`` in table
    order (a caller classifying many observations of one step reads the
    table once); by default every row of ``chain`` is checked.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    >>> c = classify(doc, ClassifyContext(), doc.actions[0], Observation(transport="timeout"))
    >>> str(c.verdict), c.source, c.row
    ('retry', 'table', '#6')
    >>> c = classify(doc, ClassifyContext(), doc.actions[0], Observation(code="WHAT"))
    >>> str(c.verdict), c.source, c.row
    ('dead_end(reason: unmatched_signal)', 'default', '#12')
    """
    if rows is not None:
        return _classify(spec, ctx, step, obs, rows)
    memo = _memo(spec)
    key = _memo_key(ctx, step, obs)
    found = memo.get(key)
    if found is None:
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        found = memo[key] = _classify(spec, ctx, step, obs, None)
    return found


# Classification is a pure function of the chain and of the few facts _memo_key
# names, and an exploration classifies the same few signals of each step
# thousands of times: each chain keeps its answers (:mod:`chains.core.memo`).
_MEMO_SIZE = 10_000  # a 3-fault search of the flight chain asks 152 questions


def _memo(spec: ChainSpec) -> dict[tuple, Classification]:
    return per_chain(spec).setdefault("classify", {})


def _memo_key(ctx: ClassifyContext, step: Action, obs: Observation) -> tuple:
    """Everything of ``ctx`` and ``obs`` that :func:`_classify` reads for ``step``.

    Of the live handles only the step's own inputs count, in mint order (row
    1 picks the shallowest); of the stale-signal counts and fired
    auto-repairs only the step's own. An observation's options and payload
    never decide a verdict.
    """
    live = sorted(filter(ctx.live.__contains__, step.input.handles), key=ctx.live.__getitem__)
    prefix = f"{step.id}|"
    return (
        step.id,
        ctx.variant,
        ctx.commit_in_flight,
        ctx.key_expired,
        tuple(live),
        tuple(sorted((k, v) for k, v in ctx.stale_recurrences.items() if k.startswith(prefix)))
        if ctx.stale_recurrences
        else (),
        tuple(sorted(f for f in ctx.auto_repairs_fired if f.startswith(f"{step.id}#")))
        if ctx.auto_repairs_fired
        else (),
        _signal_key(obs),
    )


@by_identity(limit=4096)  # observations are frozen; the explorer reuses one per choice
def _signal_key(obs: Observation) -> tuple:
    """What of an observation decides a verdict: its transport, code, predicates and events."""
    return (obs.transport, obs.code, tuple(obs.predicates), tuple(obs.events))


def _classify(
    spec: ChainSpec,
    ctx: ClassifyContext,
    step: Action,
    obs: Observation,
    rows: Iterable[VerdictRow] | None,
) -> Classification:
    atoms = observed_atoms(obs)
    auto = _auto_repair(step, ctx, obs, atoms)
    if auto is not None:
        return auto
    for row in rows_for(spec, step, ctx.variant) if rows is None else rows:
        hit = next((a for a in row.signal if matches(a, obs, atoms)), None)
        unsafe = row.verdict.type == "retry" and not row.no_side_effect
        if hit is not None and unsafe and _unkeyed_now(step, ctx):
            # SPEC §3 rule: only a no_side_effect signal ever re-dispatches an unkeyed commit.
            return Classification(
                Verdict(type="reconcile"),
                "table",
                row_label(spec, row),
                f"row says retry on {hit!r}, but an unkeyed commit is never retried",
            )
        if hit is not None:
            return Classification(
                row.verdict,
                "table",
                row_label(spec, row),
                f"domain row matched {hit!r}",
                no_side_effect=row.no_side_effect,
            )
    return _generic(spec, ctx, step, obs, atoms)


def _auto_repair(
    step: Action, ctx: ClassifyContext, obs: Observation, atoms: set[str]
) -> Classification | None:
    fired = set(ctx.auto_repairs_fired)
    for n, ar in enumerate(step.auto_repairs, 1):
        key = f"{step.id}#{n}"
        if ar.once and key in fired:
            continue
        if matches(ar.trigger, obs, atoms):
            fields = sorted(auto_repair_transform(ar, 0))
            if not fields:
                continue
            verdict = Verdict(type="repair", to=step.id, fields=fields)
            return Classification(
                verdict,
                "table",
                f"auto_repair:{key}",
                f"auto_repair trigger {ar.trigger!r}",
                auto_repair=key,
            )
    return None


def _generic(
    spec: ChainSpec, ctx: ClassifyContext, step: Action, obs: Observation, atoms: set[str]
) -> Classification:
    stale = _staleness(spec, ctx, step, obs, atoms)
    if stale is not None:
        return stale
    empty = step.output.empty
    if (
        empty is not None
        and empty.valid
        and empty.detect
        and normalize_atom(empty.detect) in _predicate_names(obs)
    ):
        return Classification(
            Verdict(type="ok", empty=True), "table", "#2", f"empty.detect {empty.detect!r}"
        )
    if _is_success(obs) and not obs.code:
        return Classification(Verdict(type="ok"), "table", "#3", "transport success")
    unkeyed = _unkeyed_now(step, ctx)
    if _transport(obs) == "http:429":
        if not unkeyed:
            return Classification(Verdict(type="retry"), "table", "#4", "rate limit")
        if _declared_no_side_effect(spec, ctx, step, obs, atoms):
            return Classification(
                Verdict(type="retry"), "table", "#5", "declared no_side_effect", True
            )
        return Classification(
            Verdict(type="reconcile"), "table", "#5", "rate limit on an unkeyed commit"
        )
    if _is_fault(obs) and not obs.code:
        if unkeyed:
            return Classification(
                Verdict(type="reconcile"), "table", "#7", "transport fault on an unkeyed commit"
            )
        return Classification(Verdict(type="retry"), "table", "#6", "transport fault")
    if ctx.commit_in_flight:
        return Classification(
            Verdict(type="reconcile"), "default", "#11", "unmatched while a commit is in flight"
        )
    return Classification(
        Verdict(type="dead_end", reason="unmatched_signal"), "default", "#12", "unmatched"
    )


def _unkeyed_now(step: Action, ctx: ClassifyContext) -> bool:
    """Unkeyed, or keyed with its key past retention (effectively unkeyed, SPEC §2.1)."""
    return _unkeyed(step) or (is_commit_class(step) and ctx.key_expired)


def _declared_no_side_effect(
    spec: ChainSpec, ctx: ClassifyContext, step: Action, obs: Observation, atoms: set[str]
) -> bool:
    return any(
        row.no_side_effect and any(matches(a, obs, atoms) for a in row.signal)
        for row in rows_for(spec, step, ctx.variant)
    )


def _staleness(
    spec: ChainSpec, ctx: ClassifyContext, step: Action, obs: Observation, atoms: set[str]
) -> Classification | None:
    """Row 1: a consumed live handle's ``staleness.detect`` matched.

    A handle *reports* stale when one of its matching atoms is its own; an
    atom every candidate lists (a bare ``http:410``) attributes nothing.
    """
    handles: list[Handle] = []
    for hid in step.input.handles:
        h = spec.handle(hid)
        if h is not None and hid in ctx.live and h.staleness and h.staleness.detect:
            handles.append(h)
    hits = {
        h.id: [normalize_atom(a) for a in h.staleness.detect if matches(a, obs, atoms)]  # type: ignore[union-attr]
        for h in handles
    }
    hits = {k: v for k, v in hits.items() if v}
    if not hits:
        return None
    listed: dict[str, int] = {}
    for h in handles:
        for a in {normalize_atom(x) for x in h.staleness.detect}:  # type: ignore[union-attr]
            listed[a] = listed.get(a, 0) + 1
    reporting = [h for h, found in hits.items() if any(listed[a] == 1 for a in found)]
    by_age = sorted(hits, key=lambda h: ctx.live[h])  # shallowest (earliest minted) first
    if reporting or len(hits) == 1:
        dead = min(reporting or list(hits), key=lambda h: ctx.live[h])
        return _rewind_for(spec, dead, "#1", f"{dead} reported stale")
    key = f"{step.id}|{'+'.join(sorted({a for found in hits.values() for a in found}))}"
    tried = ctx.stale_recurrences.get(key, 0)
    deepest_first = list(reversed(by_age))
    dead = deepest_first[min(tried, len(deepest_first) - 1)]
    found = _rewind_for(spec, dead, "#1", f"unattributable staleness; candidate {dead}")
    return Classification(found.verdict, found.source, found.row, found.reason, stale_key=key)


def repeats_read(spec: ChainSpec) -> tuple[frozenset[str], Mapping[str, int]]:
    """What a decision reads of a run's fired auto-repairs and stale recurrences.

    Of ``auto_repairs_fired``, whether each ``once`` repair (``step#n``) has
    fired (:func:`_auto_repair`); their order, repeats and count only number
    the values an auto-repair writes into the intent, which no decision
    reads. Of ``stale_recurrences`` (``step|atoms``), the count up to the
    step's live inputs that detect staleness, less one: :func:`_staleness`
    rewinds for the candidate at that place, deepest first, and a count past
    the last candidate picks the last. The second part maps each step to
    that cap.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read",
    ...     "auto_repairs": [{"trigger": "x", "fields": ["a"]}, {"trigger": "y", "fields": ["b"],
    ...     "once": False}]}]})
    >>> repeats_read(doc)
    (frozenset({'s#1'}), {'s': 0})
    """

    def find() -> tuple[frozenset[str], Mapping[str, int]]:
        repairs = ((a.id, n, ar) for a in spec.actions for n, ar in enumerate(a.auto_repairs, 1))
        once = frozenset(f"{step}#{n}" for step, n, ar in repairs if ar.once)
        caps = {}
        for a in spec.actions:
            handles = (spec.handle(hid) for hid in a.input.handles)
            detecting = sum(1 for h in handles if h and h.staleness and h.staleness.detect)
            caps[a.id] = max(detecting - 1, 0)
        return once, caps

    return remember(spec, "repeats read", find)


def _rewind_for(spec: ChainSpec, handle_id: str, row: str, reason: str) -> Classification:
    target = refresh_step(spec, handle_id)
    if not target:
        return Classification(
            Verdict(type="dead_end", reason=f"stale_{handle_id}_without_refresh"),
            "table",
            row,
            reason,
        )
    return Classification(Verdict(type="rewind", to=target), "table", row, reason)
