"""Lint rules: what an action's own fields may say, and what a commit owes its source.

A precondition reads an ok response, so SPEC §2.1 lets it answer only ok,
gate, dead_end, repair or reselect. A commit whose response names a deadline
on the landed object (a held booking's ticketing time limit) declares
``output.business_expiry``; one whose source says the provider may reverse it
after ok (a refund failing weeks later, a property cancelling a booking)
declares ``revocation``. Those two rules read only what the chain itself
writes: the commit's payload field names and description, its notes and
evidence, and the payload of the reads that look at what it minted. They
fire on words that name a deadline or a later reversal, never on a guess
about the provider.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..model import Action, ChainSpec
from ..paths import ElementPath
from ..words import name_words
from .context import LintContext
from .registry import Found, rule

__all__ = ["PRECONDITION_VERDICTS", "deadline_names", "reversal_evidence"]


# SPEC §2.1: what a precondition on an ok response may answer.
PRECONDITION_VERDICTS = ("ok", "gate", "dead_end", "repair", "reselect")


@rule(
    "actions.precondition-verdict-not-allowed",
    "error",
    "SPEC §2.1 preconditions",
    hint="Answer with ok, gate(id), dead_end, repair(...) or reselect(...). A status that is "
    "still settling is the read's own verdict row (retry); a dead handle is its staleness "
    "signal, which rewinds to its refresh.",
)
def precondition_verdict_not_allowed(spec: ChainSpec, ctx: LintContext) -> Found:
    """A precondition answers with a verdict SPEC §2.1 does not allow (retry, rewind ...)."""
    for action in spec.actions:
        for n, pre in enumerate(action.preconditions, 1):
            verdict = pre.verdict
            if verdict.type not in PRECONDITION_VERDICTS:
                at = ElementPath.action(action.id).field("preconditions").item(n)
                yield (
                    at.field("verdict"),
                    f"{at} ({pre.when!r}) answers "
                    f"{verdict.type}, which a precondition may not: it runs on an ok response, "
                    "where only ok, gate, dead_end, repair or reselect are defined.",
                )


# --- business expiry ---------------------------------------------------------

# An identifier in prose: snake_case, camelCase or PascalCase of two words or more.
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|(?:[A-Z][a-z0-9]+){2,})\b"
)
_EXPIRY_WORDS = {"deadline", "expiry", "expires", "expiration", "expire"}


def _is_deadline(name: str) -> bool:
    """Does a field name say a deadline (``payment_required_by``, ``PaymentTimeLimit``)?

    >>> [_is_deadline(n) for n in ("price_guarantee_expires_at", "ExpiryDate", "capture_before")]
    [True, True, True]
    >>> [_is_deadline(n) for n in ("created_by", "booking_reference", "expired")]
    [False, False, False]
    """
    words = name_words(name)
    pairs = set(zip(words, words[1:], strict=False))
    return bool(
        _EXPIRY_WORDS & set(words)
        or ("time", "limit") in pairs
        or ("required", "by") in pairs
        or ("due", "by") in pairs
        or (len(words) > 1 and words[-1] in ("before", "until"))
    )


def _payload_names(payload: Any) -> Iterator[str]:
    """Field names of a payload as written, nested keys and identifier-shaped values."""
    if isinstance(payload, dict):
        for key, value in payload.items():
            yield str(key)
            yield from _payload_names(value)
    elif isinstance(payload, list):
        for item in payload:
            yield from _payload_names(item)
    elif isinstance(payload, str):
        yield from _IDENTIFIER.findall(payload)


def deadline_names(action: Action) -> list[str]:
    """The deadline field names an action's response or description mentions, in order."""
    names = list(_payload_names(action.output.payload))
    names += _IDENTIFIER.findall(action.description or "")
    return list(dict.fromkeys(n for n in names if _is_deadline(n)))


def _read_as_staleness(spec: ChainSpec, action: Action, name: str) -> bool:
    """True when a handle the commit mints already reads ``name`` as its staleness.

    SPEC §7 models a card authorization's capture deadline this way: the hold
    handle's ``ttl_hint`` names the field and its ``detect`` signals rewind.
    """
    for handle in spec.handles:
        if handle.id in action.output.handles and handle.staleness is not None:
            said = " ".join([str(handle.staleness.ttl_hint or ""), *handle.staleness.detect])
            if name.lower() in said.lower():
                return True
    return False


@rule(
    "actions.business-expiry-undeclared",
    "warning",
    "SPEC §2.1 output.business_expiry",
    hint="Declare output.business_expiry: {field: <the deadline's payload path>, on_expiry: "
    "<verdict>} (usually dead_end(permanent: false) or a gate), so every later step and every "
    "gate resume checks the deadline before acting on the landed commit.",
)
def business_expiry_undeclared(spec: ChainSpec, ctx: LintContext) -> Found:
    """A commit's response names a deadline on what it landed, but declares no business_expiry.

    A held booking the airline releases at its payment time limit is still a
    landed commit (I5: not a stale handle), so nothing rewinds when the
    deadline passes; only ``business_expiry`` makes later steps and gate
    resumes check it. A deadline a handle the commit mints already reads as
    its staleness (SPEC §7's card hold) is left alone.
    """
    for action in spec.actions:
        if action.effect != "commit" or action.output.business_expiry is not None:
            continue
        names = [n for n in deadline_names(action) if not _read_as_staleness(spec, action, n)]
        if names:
            yield (
                ElementPath.action(action.id).field("output"),
                f"{ElementPath.action(action.id)} names the deadline {', '.join(names)} on "
                "what it lands, "
                "but declares no output.business_expiry: once it has landed, no later step or "
                "gate resume checks that deadline.",
            )


# --- revocation --------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")
_LATER = re.compile(
    r"\basynchronous(?:ly)?\b|\blater\b|\bafter\s+(?:ok|success|it\s+(?:landed|succeeded))"
    r"|\bpost[- ]?(?:ok|success)\b|\bup\s+to\s*~?\s*\d+\s*(?:d|days?|h|hours?|w|weeks?)\b"
    r"|\bwithin\s*~?\s*\d+\s*(?:d|days?|w|weeks?)\b",
    re.IGNORECASE,
)
_REVERSAL = re.compile(
    r"\bfail(?:s|ed|ure)?\b|\brevers(?:e|ed|al)\b|\brevok(?:e|ed)\b|\bcancell?(?:ed|ation)\b"
    r"|\bdisput(?:e|ed)\b",
    re.IGNORECASE,
)
# Said without a time: the reversal is by someone else, after the fact.
_REVERSAL_ALONE = re.compile(
    r"\blanded[- ]but[- ]revocable\b|\brevocable\b|\bcharge[- ]?backs?\b"
    r"|\b(?:airline|carrier|property|provider|supplier)[- ]initiated\b"
    r"|\bcancell?ed[ _]by[ _](?:the[ _])?(?:provider|property|accommodation|hotel|airline|carrier"
    r"|supplier|merchant|issuer|partner)\b",
    re.IGNORECASE,
)


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif value is not None:
        yield str(value)


def _said_reversal(text: str) -> str | None:
    """The sentence of ``text`` that says a landed result may be reversed later, if any."""
    for sentence in _SENTENCE.split(text):
        if _REVERSAL_ALONE.search(sentence) or (
            _REVERSAL.search(sentence) and _LATER.search(sentence)
        ):
            return sentence.strip()
    return None


def reversal_evidence(spec: ChainSpec, action: Action) -> str | None:
    """What the chain says about ``action`` being reversed after ok, quoted; else None.

    Read: the commit's description, notes and evidence (not its compensation,
    which speaks of the undo, not of the commit), and the payload and
    preconditions of the reads that take a handle it mints, where a status
    such as ``cancelled_by_accommodation`` shows the provider's side undoing it.
    """
    own = [action.description or "", *action.notes]
    if action.source is not None:
        own.append(action.source.note or "")
    for text in own:
        said = _said_reversal(text)
        if said:
            return said
    minted = set(action.output.handles)
    for read in spec.actions:
        if read.effect != "read" or not minted & set(read.input.handles):
            continue
        seen = [*_texts(read.output.payload), *(p.when for p in read.preconditions)]
        for text in seen:
            m = _REVERSAL_ALONE.search(text)
            if m:
                return f"{read.id} can observe {m[0]}"
    return None


@rule(
    "actions.revocation-undeclared",
    "warning",
    "SPEC §2.1 revocation",
    hint="Declare revocation: {watch: [the webhook or probe signal that reports it], window: "
    "<how long after ok it can come>, route: gate(<id>) or escalate(operator)}.",
)
def revocation_undeclared(spec: ChainSpec, ctx: LintContext) -> Found:
    """A commit its source says can be reversed after ok declares no revocation watch.

    A warning, not an error: the run itself is still safe up to ok, and
    ``revocation`` is optional in the grammar; but without a declared watch
    the reversal reaches nobody, and SPEC §2.1 calls silently dropping a
    revocation event non-conforming.
    """
    for action in spec.actions:
        if action.effect != "commit" or action.revocation is not None:
            continue
        said = reversal_evidence(spec, action)
        if said:
            yield (
                ElementPath.action(action.id),
                f"{ElementPath.action(action.id)} can be reversed after ok ({said[:160]!r}), "
                "but declares "
                "no revocation: nothing watches for the reversal or routes it to a person.",
            )
