"""Lint rules: handles (SPEC §2.2, P2, I3, I4; SKILL Step 2 and Step 7).

A handle is safe to consume when code can tell it died: a staleness signal
observed on use, or the knowledge that it never dies. The rules here check
that, plus the two handle kinds with extra duties (selection pseudo-handles
need ``rematch``; ``single_use`` handles have exactly one consumer) and the
P2 ban on treating a TTL as a timer.

*Durable* means the handle never goes stale on its own:

* its ``staleness.ttl_hint`` says so (``n/a``, ``never``, ``unlimited``), or
* it declares no ``staleness`` block and a commit-class action mints it:
  landed commits are facts, not cache (I5), so a booking locator or a
  captured charge stays valid. A commit-made object that does expire (a card
  hold) must say so with a ``staleness`` block, and is then judged by it.

* its ``ttl_hint`` starts with one of those words and adds a remark
  (``n/a (dies with workbench)``): it has no expiry of its own, and dies only
  with what it derives from (I1), whose own signals cover it.

Selection pseudo-handles are exempt from the staleness rules: they hold no
provider state, and they die with the handles they derive from (I1), whose
own signals cover them. So are client-held results (SPEC §2.2): a
pseudo-handle a read declares for results that live only on our side has
"no provider staleness; any validity limit is business-level". A handle is
taken as client-held only when a read mints it and its own text says so
(client-held, code-held, pseudo-handle, no provider token, a payload we
cache); a provider token minted by a read (a ``search_id``) stays judged.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..model import COMMIT_CLASS_EFFECTS, Action, ChainSpec, Handle, in_variant, main_steps
from ..paths import ElementPath
from ..signals import atom_covers, normalize_atom, scope_applies_to
from .context import LintContext, is_commit_class
from .registry import Found, rule
from .structure import row_element
from .values import is_placeholder

__all__ = ["reads_as_signal"]


_NEVER_EXPIRES = {"n/a", "na", "none", "never", "unlimited", "durable", "permanent", "infinite"}


def _minter_effect(handle: Handle, ctx: LintContext) -> str | None:
    names = [handle.minted_by] if handle.minted_by else ctx.minters.get(handle.id, [])
    minter = next((ctx.actions[n] for n in names if n in ctx.actions), None)
    return minter.effect if minter is not None else None


def _is_selection(handle: Handle, ctx: LintContext) -> bool:
    return _minter_effect(handle, ctx) == "select"


def _is_durable(handle: Handle, ctx: LintContext) -> bool:
    stale = handle.staleness
    if stale is None:
        return _minter_effect(handle, ctx) in COMMIT_CLASS_EFFECTS
    if stale.ttl_hint is None:
        return False
    first = re.split(r"[\s(,;:—–-]+", stale.ttl_hint.text.strip().lower(), maxsplit=1)[0]
    return stale.ttl_hint.text.strip().lower() in _NEVER_EXPIRES or first in _NEVER_EXPIRES


_CLIENT_HELD = re.compile(
    r"\b(?:client|code)[- ](?:held|side)\b"
    r"|\bpseudo[- ]handle\b"
    r"|\bno (?:provider|server[- ]side) (?:token|handle|state)\b"
    r"|\bcached\b[^.;\n]{0,60}\bpayload\b",
    re.IGNORECASE,
)


def is_client_held(handle: Handle, ctx: LintContext) -> bool:
    """A read's results that live only on our side (SPEC §2.2 "Client-held results")."""
    if _minter_effect(handle, ctx) != "read":
        return False
    return any(_CLIENT_HELD.search(text) for text in [handle.description or "", *handle.notes])


def _exempt(handle: Handle, ctx: LintContext) -> bool:
    """No provider staleness to detect: a selection, a client-held result, or durable."""
    return _is_selection(handle, ctx) or is_client_held(handle, ctx) or _is_durable(handle, ctx)


def _detectable(handle: Handle) -> bool:
    return handle.staleness is not None and bool(handle.staleness.detect)


@rule(
    "handles.selection-without-rematch",
    "error",
    "SPEC §2.2",
    hint="Add rematch.key: the intent-level fields (carrier, flight numbers, times, fare "
    "brand), never the provider's option id, and on_ambiguous: model or gate.",
)
def selection_without_rematch(spec: ChainSpec, ctx: LintContext) -> Found:
    """A selection pseudo-handle says how to re-find the pick after a rewind."""
    for h in spec.handles:
        if _is_selection(h, ctx) and h.rematch is None:
            yield (
                ElementPath.handle(h.id),
                f"{ElementPath.handle(h.id)} records a selection but has no rematch, so a rewind "
                "through the selection cannot re-establish it.",
            )


@rule(
    "handles.rematch-key-placeholder",
    "error",
    "SPEC §2.2",
    hint="Name the intent-level fields that identify the pick (carrier, flight numbers, "
    "times, fare brand), never a placeholder and never the provider's option id.",
)
def rematch_key_placeholder(spec: ChainSpec, ctx: LintContext) -> Found:
    """A rematch key is empty or only placeholders, so no re-selection can ever match."""
    for h in spec.handles:
        if h.rematch is None:
            continue
        keys = h.rematch.key
        if not keys or all(is_placeholder(k) for k in keys):
            shown = ", ".join(keys) if keys else "nothing"
            yield (
                ElementPath.handle(h.id).field("rematch"),
                f"{ElementPath.handle(h.id)}.rematch.key is {shown}: after a rewind the "
                "runtime has no "
                "intent-level field to re-find the pick by.",
            )


@rule(
    "handles.commit-input-undetectable",
    "error",
    "SKILL Step 7",
    hint="List the signals a call with an expired handle returns in staleness.detect, or "
    "mark the handle durable with ttl_hint: n/a if it never expires.",
)
def commit_input_undetectable(spec: ChainSpec, ctx: LintContext) -> Found:
    """A handle a commit consumes is durable or has staleness signals."""
    for h in spec.handles:
        commits = [
            a
            for a in ctx.consumers.get(h.id, [])
            if a in ctx.actions and is_commit_class(ctx.actions[a])
        ]
        if not commits or _exempt(h, ctx) or _detectable(h):
            continue
        yield (
            ElementPath.handle(h.id).field("staleness"),
            f"{ElementPath.handle(h.id)} is consumed by {', '.join(commits)} but is neither "
            "durable nor "
            "detectable when stale, so a commit may run on a dead handle unnoticed.",
        )


def _spenders(h: Handle, ctx: LintContext) -> list[str]:
    """The commit-class steps that consume (and so spend) ``h``; none unless it is single_use."""
    users = ctx.consumers.get(h.id, []) if h.single_use else []
    return [a for a in users if a in ctx.actions and is_commit_class(ctx.actions[a])]


@rule(
    "handles.single-use-spent-twice",
    "error",
    "SPEC §4 I4",
    hint="Let exactly one commit consume a single_use handle; a second commit must work from "
    "a freshly minted one.",
)
def single_use_spent_twice(spec: ChainSpec, ctx: LintContext) -> Found:
    """A single_use handle is spent by at most one commit."""
    for h in spec.handles:
        spenders = _spenders(h, ctx)
        if len(spenders) > 1:
            yield (
                ElementPath.handle(h.id),
                f"{ElementPath.handle(h.id)} is single_use but spent by several commits: "
                f"{', '.join(spenders)}.",
            )


@rule(
    "handles.single-use-never-spent",
    "warning",
    "SPEC §2.2",
    hint="single_use means a commit spends the handle; drop the flag or name the commit that "
    "consumes it.",
)
def single_use_never_spent(spec: ChainSpec, ctx: LintContext) -> Found:
    """A single_use handle is consumed by a commit; otherwise the flag means nothing."""
    for h in spec.handles:
        if h.single_use and not _spenders(h, ctx):
            yield (
                ElementPath.handle(h.id),
                f"{ElementPath.handle(h.id)} is single_use but no commit consumes it.",
            )


@rule(
    "handles.spent-handle-reused",
    "warning",
    "SPEC §4 I4",
    hint="After the commit that spends it, re-mint the handle (rewind) instead of presenting it "
    "again; only the commit's confirmation probe may still name it.",
)
def spent_handle_reused(spec: ChainSpec, ctx: LintContext) -> Found:
    """No step after the spending commit presents a spent single_use handle again."""
    for h in spec.handles:
        spenders = _spenders(h, ctx)
        if len(spenders) != 1:
            continue
        commit = ctx.actions[spenders[0]]
        probe = commit.confirmation.probe if commit.confirmation else None
        later = [
            a
            for a in ctx.consumers.get(h.id, [])
            if ctx.order[a] > ctx.order[commit.id] and a != probe
        ]
        if later:
            yield (
                ElementPath.handle(h.id),
                f"{ElementPath.handle(h.id)} is spent by {commit.id} and presented again by "
                f"{', '.join(later)}.",
            )


@rule(
    "handles.staleness-undetectable",
    "info",
    "SKILL Step 2",
    hint="Find the exact signal (status, error code, message) a call with the expired handle "
    "returns and list it in staleness.detect; if it never expires, set ttl_hint: n/a.",
    unknown=True,
)
def staleness_undetectable(spec: ChainSpec, ctx: LintContext) -> Found:
    """A handle that can expire has staleness signals (UNKNOWN otherwise)."""
    for h in spec.handles:
        if _exempt(h, ctx) or _detectable(h):
            continue
        yield (
            ElementPath.handle(h.id).field("staleness"),
            f"UNKNOWN: staleness undetectable: what does a call with an expired {h.id} "
            "return? Until answered, every consumer's stale case falls to the default rows.",
        )


# What makes a detect entry a signal (SPEC §0: status, error code, timeout,
# payload predicate): a kind prefix (http:, code:, webhook:, payload: ...), a
# transport fault, a comparison, a payload path, or a quoted message.
_TRANSPORT_FAULTS = ("timeout", "conn_reset", "conn_drop")
_PREDICATE = re.compile(
    r"==|!=|<|>|=~|[∈∉≤≥]|\b(?:in|not in|contains|includes|matches|exists|is)\b", re.IGNORECASE
)
_SIGNAL_SHAPE = re.compile(
    r"^(?:[A-Za-z_]+\s*:\s*\S.*|!?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|([\"'“]).+[\"'”])$", re.DOTALL
)


def reads_as_signal(atom: str) -> bool:
    """Can code match ``atom`` against what an attempt returns?

    >>> [reads_as_signal(a) for a in ("http:410", "code:E", "timeout", "expires_at < now")]
    [True, True, True, True]
    >>> reads_as_signal("create_error_naming_order_token"), reads_as_signal("the token expired")
    (False, False)
    """
    text = atom.strip().strip("`").strip()
    return bool(
        text.lower() in _TRANSPORT_FAULTS
        or re.fullmatch(r"(?i)(?:http[: ]?)?(?:\d{3}|[1-5]xx)", text)
        or _SIGNAL_SHAPE.match(text)
        or _PREDICATE.search(text)
    )


@rule(
    "handles.staleness-detect-not-signal",
    "warning",
    "SPEC §2.2",
    hint="Write the signal the expired handle returns (http:410, code:TOKEN_EXPIRED, or a "
    "payload predicate such as error.message contains 'token', marked fragile) and keep the "
    "words as the handle's description.",
)
def staleness_detect_not_signal(spec: ChainSpec, ctx: LintContext) -> Found:
    """A ``staleness.detect`` entry is a name or prose, not a signal code can match.

    A warning, not an error, like a verdict row without a signal: the stale
    handle's error then falls to the unmatched rows 11-12, which fail closed;
    but the rewind to the refresh this entry designs never runs.
    """
    for h in spec.handles:
        if h.staleness is None:
            continue
        for atom in h.staleness.detect:
            if atom.strip() and not reads_as_signal(atom):
                yield (
                    ElementPath.handle(h.id).field("staleness", "detect"),
                    f"{ElementPath.handle(h.id)}.staleness.detect lists {atom!r}, which is not "
                    "a signal "
                    "(a status, error code, transport fault or payload predicate): no response "
                    f"can match it, so a stale {h.id} is never recognised as stale.",
                )


# A TTL used as a timer: a handle's age, mint time or ttl compared to something.
# Deadlines the provider returns (expires_at, capture_before) are not matched:
# SPEC §2.1 allows evaluating those.
_COMPARE = re.compile(r"(?<![-=])[<>](?!-)|≤|≥|\bolder than\b", re.IGNORECASE)  # not arrows
_TTL = re.compile(r"\bttl(?:_hint)?\b", re.IGNORECASE)
_MINT_TIME = re.compile(
    r"\b(?:\w+[._])?(?:minted_at|minted_time|mint_time|mint_age|age_since_mint)\b",
    re.IGNORECASE,
)
_AGE = re.compile(r"\b(?:\w+[._])?age\b|\bage(?:_of)?\s*\(", re.IGNORECASE)
_DURATION = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b",
    re.IGNORECASE,
)


def is_ttl_timer(predicate: str) -> bool:
    """True when ``predicate`` enforces a TTL: compares a handle's age to a duration.

    >>> is_ttl_timer("price_lock.age > 14m"), is_ttl_timer("minted_at + 15m < now")
    (True, True)
    >>> is_ttl_timer("expires_at < now"), is_ttl_timer("traveller.age < 2")
    (False, False)
    """
    if not _COMPARE.search(predicate):
        return False
    if _TTL.search(predicate) or _MINT_TIME.search(predicate):
        return True
    timed = _DURATION.search(predicate) or re.search(r"\bnow\b", predicate, re.IGNORECASE)
    if re.search(r"\bolder than\b", predicate, re.IGNORECASE):
        return bool(timed)
    return bool(_AGE.search(predicate) and timed)


def _predicates(spec: ChainSpec) -> Iterator[tuple[ElementPath, str]]:
    """Every condition a runtime evaluates, with where it is written."""
    for h in spec.handles:
        for signal in h.staleness.detect if h.staleness else []:
            yield ElementPath.handle(h.id).field("staleness"), signal
    for a in spec.actions:
        where = ElementPath.action(a.id)
        for n, pre in enumerate(a.preconditions, 1):
            yield where.field("preconditions").item(n), pre.when
        for n, fix in enumerate(a.auto_repairs, 1):
            yield where.field("auto_repairs").item(n), fix.trigger
        if a.output.empty and a.output.empty.detect:
            yield where.field("output", "empty"), a.output.empty.detect
        for n, rung in enumerate(a.compensation.ladder if a.compensation else [], 1):
            if rung.when:
                yield where.field("compensation", "ladder").item(n), rung.when
        for signal in a.revocation.watch if a.revocation else []:
            yield where.field("revocation"), signal
    for n, row in enumerate(spec.verdict_table, 1):
        name = row_element(row, n)
        for text in [*row.signal, row.description or ""]:
            yield name, text


@rule(
    "handles.ttl-enforced",
    "error",
    "SPEC P2",
    hint="Detect expiry from the signal a call with the dead handle returns (staleness.detect "
    "and a rewind row); keep ttl_hint for planning only. Deadlines the provider returns in a "
    "response (expires_at) may be compared.",
)
def ttl_enforced(spec: ChainSpec, ctx: LintContext) -> Found:
    """No TTL is used as an enforcement timer: expiry is discovered, not scheduled."""
    for where, text in _predicates(spec):
        if is_ttl_timer(text):
            yield where, f"{where} treats a handle's age as expiry ({text!r}); TTLs are hints."


@rule(
    "handles.rewind-presents-dead-handle",
    "error",
    "SPEC §2.2",
    hint="Rewind to the dead handle's staleness.refresh, or to any step before it (coarser "
    "is allowed); never to a step whose replay presents the handle before re-minting it.",
)
def rewind_presents_dead_handle(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row answers a handle's own staleness signal with a rewind that skips its re-mint.

    The row's signal reports a handle the step presents stale (one of its
    ``staleness.detect`` atoms, listed by no other input of the step), yet
    the replay from the row's target reaches a step presenting the handle
    before any step re-mints it: the provider is shown the dead handle
    again. SPEC §2.2 names ``refresh`` "the rewind target when it dies", and
    CONFORMANCE C2.3 allows a coarser rewind, never one "that skips
    re-minting the dead handle". The runtime refuses such a rewind and goes
    to the refresh instead (``sim/backtrack.py``). A signal every input
    lists (a bare ``http:410``) attributes nothing and is left alone, as
    is a row in prose scope or a handle nothing in this chain re-mints.
    """
    variants: list[str | None] = [*spec.variants.values] if spec.variants else [None]
    mains = {v: main_steps(spec, v) for v in variants}
    for i, row in enumerate(spec.verdict_table, 1):
        v = row.verdict
        if v.type != "rewind" or not v.to:
            continue
        flagged: set[str] = set()
        for step in spec.actions:
            if scope_applies_to(row.scope, step) is not True:
                continue
            for atom in row.signal:
                for hid in _reported_stale(step, atom, ctx):
                    refresh = _refresh_of(ctx.handles[hid], ctx)
                    if hid in flagged or refresh is None or refresh == v.to:
                        continue
                    for variant, main in mains.items():
                        if not in_variant(row.only, variant) or not {step.id, v.to} <= set(main):
                            continue
                        at = _presented_before_re_mint(main[main.index(v.to) :], hid, ctx)
                        if at is None:
                            continue
                        flagged.add(hid)
                        yield (
                            row_element(row, i),
                            f"{row_element(row, i)} answers {atom} at {step.id} with {v}, but "
                            f"{atom} reports {hid} stale, and the replay from {v.to} reaches "
                            f"{at}, which presents {hid} again before anything re-mints it; "
                            f"its refresh is {refresh}.",
                        )
                        break


def _reported_stale(step: Action, atom: str, ctx: LintContext) -> list[str]:
    """The inputs of ``step`` that every signal matching ``atom`` reports stale."""
    detects = {}
    for hid in dict.fromkeys(step.input.handles):
        h = ctx.handles.get(hid)
        if h is not None and h.staleness is not None and h.staleness.detect:
            detects[hid] = [normalize_atom(a) for a in h.staleness.detect]
    hits = {h: [d for d in found if atom_covers(d, atom)] for h, found in detects.items()}
    hits = {h: found for h, found in hits.items() if found}
    listed = Counter(d for found in detects.values() for d in set(found))
    reporting = [h for h, found in hits.items() if any(listed[d] == 1 for d in found)]
    return reporting or (list(hits) if len(hits) == 1 else [])


def _refresh_of(handle: Handle, ctx: LintContext) -> str | None:
    """The step that re-mints ``handle``: its refresh, else a minter that is no commit (I5)."""
    declared = handle.staleness.refresh if handle.staleness else None
    if declared and declared != "n/a":
        return declared if declared in ctx.actions else None
    minter = ctx.actions.get(handle.minted_by or "")
    return minter.id if minter is not None and not is_commit_class(minter) else None


def _presented_before_re_mint(replay: list[str], hid: str, ctx: LintContext) -> str | None:
    """The first step of ``replay`` presenting ``hid`` before a step mints it, if any."""
    for step_id in replay:
        action = ctx.actions[step_id]
        if hid in action.input.handles:
            return step_id
        if hid in action.output.handles:
            return None
    return None
