"""Signal atoms and row scopes: normalise them, and compare what they match.

A verdict row's ``signal`` is a list of *atoms*, any of which matches:
``http:410``, ``http:5xx``, ``code:X``, ``webhook:x``, ``header:...``, the
transport faults ``timeout`` / ``conn_reset`` / ``conn_drop``, or a payload
predicate such as ``status == requires_action`` or ``decline_code ∈ {a, b}``.
An atom joined with ``&&`` is a conjunction: it matches a signal only when
all of its parts do, so it is narrower than each part. This is the stored
form of "all of these hold": a document may write ``{all: [...]}`` and
``{any: [...]}`` (see :func:`~chains.core.model.signal_terms`), which the
model multiplies out into this list of conjunctions.

The comparisons here judge only what the text shows. Two atoms with
different wording are treated as different signals unless one is a status
class (``http:5xx``) and the other a status in it, or one is a conjunction
that contains the other; nothing tries to reason about predicate semantics.
Callers therefore get "provably covers" answers, never guesses, which is what
a linter warning and the simulator's classifier both need.

Scopes resolve to the set of action ids a row applies to; a scope written as
prose resolves to ``None`` (cannot tell), and an empty scope means any step.

>>> atom_covers("http:5xx", "http:503")
True
>>> atom_covers("code:FARE_UNAVAILABLE", "code:FARE_UNAVAILABLE && error.leg == 'return'")
True
>>> atoms_overlap("http:410 && code:A", "http:410 && code:B")
False
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .memo import lru_short
from .model import Action, ChainSpec, Scope, is_commit_class, is_keyed, is_unkeyed_commit

__all__ = [
    "atom_covers",
    "atoms_overlap",
    "conjuncts",
    "covering_parts",
    "is_catch_all",
    "is_payload_atom",
    "is_prose_match",
    "is_transport_success",
    "normalize_atom",
    "reads_a_response",
    "scope_actions",
    "scope_applies_to",
    "scope_covers",
    "scopes_overlap",
    "variants_cover",
]

_OPERATORS = re.compile(r"\s*(==|!=|<=|>=|&&|\|\||=~|<|>)\s*")
_STATUS_PREDICATE = re.compile(r"^(?:http\.)?status(?:_code)? == (\d{3})$")
_PREFIXED = re.compile(r"^([A-Za-z_]+)\s*:\s*(.+)$")
# A response carries one status, one error code, and a signal is one webhook
# event: two different values of these kinds can never match the same signal.
_EXCLUSIVE_KINDS = ("http", "code", "webhook")


@lru_short(maxsize=8192)
def normalize_atom(atom: str) -> str:
    """One spelling per atom: trimmed, backticks gone, statuses as ``http:NNN``.

    >>> normalize_atom(" `HTTP:5XX` ")
    'http:5xx'
    >>> normalize_atom("status==402 &&  error.type == 'card_error'")
    "http:402 && error.type == 'card_error'"
    """
    text = atom.strip().strip("`").strip()
    text = _OPERATORS.sub(lambda m: f" {m[1]} ", text)
    text = re.sub(r"\s+", " ", text).strip()
    if "||" in text:  # a disjunction stays one opaque atom
        return text
    return " && ".join(_normalize_part(p) for p in text.split(" && "))


def _normalize_part(part: str) -> str:
    part = part.strip()
    if re.fullmatch(r"(?i)(?:http[: ]?)?(\d{3}|[1-5]xx)", part):
        return "http:" + re.sub(r"(?i)^http[: ]?", "", part).lower()
    status = _STATUS_PREDICATE.match(part)
    if status:
        return f"http:{status[1]}"
    prefixed = _PREFIXED.match(part)
    if prefixed:
        kind, value = prefixed[1].lower(), prefixed[2].strip()
        return f"{kind}:{value.lower() if kind == 'http' else value}"
    lowered = part.lower()
    return lowered if lowered in ("timeout", "conn_reset", "conn_drop") else part


@lru_short(maxsize=4096)
def conjuncts(atom: str) -> tuple[str, ...]:
    """The parts an atom requires all at once.

    >>> conjuncts("code:X && error.leg == 'return'")
    ('code:X', "error.leg == 'return'")
    """
    text = normalize_atom(atom)
    if "||" in text:
        return (text,)
    return tuple(p for p in text.split(" && ") if p)


def _kind(part: str) -> str | None:
    m = re.match(r"^([a-z_]+):", part)
    return m[1] if m else None


@lru_short(maxsize=8192)
def _part_covers(wider: str, narrower: str) -> bool:
    if wider == narrower:
        return True
    w = re.fullmatch(r"http:([1-5])xx", wider)
    n = re.fullmatch(r"http:(\d)\d\d", narrower)
    return bool(w and n and w[1] == n[1])


def covering_parts(part: str) -> tuple[str, ...]:
    """The parts that cover one normalised part: itself, and its status class.

    Lets a caller index atoms by a part and find every candidate that may
    cover another atom without comparing all pairs.

    >>> covering_parts("http:503")
    ('http:503', 'http:5xx')
    """
    status = re.fullmatch(r"http:(\d)\d\d", part)
    return (part, f"http:{status[1]}xx") if status else (part,)


@lru_short(maxsize=8192)
def atom_covers(wider: str, narrower: str) -> bool:
    """Does every signal that ``narrower`` matches also match ``wider``?

    True when each part of ``wider`` is implied by some part of ``narrower``
    (equal text, or a status inside a status class).

    >>> atom_covers("http:503", "http:5xx")
    False
    """
    narrow = conjuncts(narrower)
    return all(any(_part_covers(w, n) for n in narrow) for w in conjuncts(wider))


def atoms_overlap(a: str, b: str) -> bool:
    """Can one signal match both atoms, as far as their text shows?

    They overlap when they share a discriminator (a part of one covers a part
    of the other) and no two parts of an exclusive kind (status, code,
    webhook event) disagree.

    >>> atoms_overlap("code:E", "code:E && error.message contains 'x'")
    True
    >>> atoms_overlap("timeout", "conn_reset")
    False
    """
    pa, pb = conjuncts(a), conjuncts(b)
    shared = any(_part_covers(x, y) or _part_covers(y, x) for x in pa for y in pb)
    if not shared:
        return False
    for x in pa:
        for y in pb:
            kind = _kind(x)
            exclusive = kind in _EXCLUSIVE_KINDS and kind == _kind(y)
            if exclusive and not (_part_covers(x, y) or _part_covers(y, x)):
                return False
    return True


_CATCH_ALL = re.compile(
    r"^(?:\*|any|all|else|other|others|otherwise|default|fallback|unmatched|unknown"
    r"|anything(?: else)?|everything(?: else)?|catch[- ]?all"
    r"|(?:any|all) other(?: \w+)?"
    r"|(?:any|other|unknown|unmatched|unmapped|undocumented|unrecogni[sz]ed|unlisted)"
    r" (?:error|code|signal|failure|status|response)s?"
    r"|(?:code|http|error|status|signal|webhook):(?:\*|any|other|unknown|else|unmatched))$"
)


def is_catch_all(atom: str) -> bool:
    """Does the atom stand for "every signal no other row matched"?

    >>> is_catch_all("any other error"), is_catch_all("code:*"), is_catch_all("http:5xx")
    (True, True, False)
    """
    return bool(_CATCH_ALL.match(normalize_atom(atom).lower()))


_SUCCESS = re.compile(r"^(?:http:2(?:\d\d|xx)|success|ok|transport[_ ]success)$")


def is_transport_success(atom: str) -> bool:
    """A bare transport-success atom (``http:200``, ``http:2xx``, ``success``), no predicate."""
    return bool(_SUCCESS.match(normalize_atom(atom).lower()))


def is_payload_atom(atom: str) -> bool:
    """Can this atom ride a successful response (an error code or payload predicate)?

    Status codes, transport faults and webhook events cannot; everything else
    (``code:X``, ``header:...``, predicates over the body) can.

    >>> is_payload_atom("code:QUOTE_EXPIRED"), is_payload_atom("http:410")
    (True, False)
    """
    parts = conjuncts(atom)
    return any(
        not (_kind(p) in ("http", "webhook") or p in ("timeout", "conn_reset", "conn_drop"))
        for p in parts
    )


_SIGNAL_KINDS = ("code", "http", "type", "header", "webhook", "event", "empty", "error")
_FIELD_TEST = re.compile(r"^!?[A-Za-z_][\w.\[\]'\"-]*\s*(?:==|!=|<=|>=|<|>|=~|∈|∉)\s*\S")
# "x in y" reads as code only when a side looks like code: a path, a quote, a list
_WORD_TEST = re.compile(
    r"^(?P<left>\S+)\s+(?:not in|in|contains|matches|includes|starts_?with)\s+(?P<right>.+)$", re.I
)
_CODE_LIKE = re.compile(r"[.'\"\[\]_]")
_FIELD = re.compile(r"^!?[A-Za-z_][\w]*(?:\.[\w\[\]]+)+$|^!?[a-z]+_[a-z_]+$")
_JOINS = re.compile(r"\s+(?:&&|\|\||and|or)\s+", re.I)


def reads_a_response(atom: str) -> bool:
    """Whether a runtime can tell ``atom`` from a response: each part of it a signal, a
    field compared with a value, or a field taken as true.

    Words that say what the author expects ("quote returned") or what the run is
    doing ("unwind in progress") are not read off any response: a condition
    holding them never matches, or matches only when a test says so.

    >>> [reads_a_response(a) for a in ("code:X", "tickets.length > 0", "fare.refundable")]
    [True, True, True]
    >>> [reads_a_response(a) for a in ("quote returned", "tickets.length > 0 and unwind on")]
    [False, False]
    """
    for part in _JOINS.split(normalize_atom(atom).strip("()")):
        part = part.strip().strip("()").strip()
        if _kind(part) in _SIGNAL_KINDS or part in ("timeout", "conn_reset", "conn_drop"):
            continue
        words = _WORD_TEST.match(part)
        coded = words is not None and bool(
            _CODE_LIKE.search(words["left"]) or _CODE_LIKE.search(words["right"])
        )
        if not (coded or _FIELD_TEST.match(part) or _FIELD.match(part)):
            return False
    return True


_MESSAGE_FIELD = re.compile(
    r"\b(?:message|messages|msg|detail|details|title|text|description)\b"
    r"[^&|]*?(?:\bcontains\b|\bincludes\b|\bmatches\b|\bstarts_?with\b|\blike\b|=~|==|!=|\bin\b)",
    re.I,
)
_MESSAGE_PROSE = re.compile(
    r"\b(?:message|text|wording|prose)\s+(?:contains|includes|matches|says|mentions|reads"
    r"|starts with)\b|\bin (?:the )?(?:error )?(?:message|text)\b|\bprose[- ]match",
    re.I,
)
_QUOTED_PROSE = re.compile(r"\"[^\"]{3,}\"|“[^”]{3,}”")


def is_prose_match(atom: str | None = None, description: str | None = None) -> bool:
    """Does a matcher depend on human-readable message text (SPEC §3, ``fragile``)?

    An atom does when it compares a message-like field (``message``,
    ``detail``, ``text`` ...) or is nothing but a quoted string; a description
    (the signal as written) does when it quotes a message in double quotes or
    says "message contains" and the like.

    >>> is_prose_match("code:E && error.message contains 'return date'")
    True
    >>> is_prose_match("code:E && error.leg == 'return'")
    False
    >>> is_prose_match(description='`CONFLICT` "seat already taken"')
    True
    """
    if atom is not None:
        text = normalize_atom(atom)
        if _MESSAGE_FIELD.search(text) or re.fullmatch(r"([\"'“]).*[\"'”]", text):
            return True
    if description:
        return bool(_MESSAGE_PROSE.search(description) or _QUOTED_PROSE.search(description))
    return False


# --- scopes ----------------------------------------------------------------


def _in_effect_class(action: Action, effect: str) -> bool:
    effect = effect.strip().lower().replace(" ", "_")
    if effect == "keyed_commit":
        return is_commit_class(action) and is_keyed(action)
    if effect == "unkeyed_commit":
        return is_unkeyed_commit(action)
    if effect == "any_keyed":
        return is_keyed(action)
    return action.effect == effect


def scope_applies_to(scope: Scope, action: Action) -> bool | None:
    """Whether ``scope`` covers ``action``; ``None`` when the scope is prose only.

    ``any`` (or an empty scope) covers every action; ``steps``,
    ``consumers_of`` and ``effects`` add up.
    """
    if _applies_to_any(scope):
        return True
    if _is_prose(scope):
        return None
    return (
        action.id in scope.steps
        or any(h in action.input.handles for h in scope.consumers_of)
        or any(_in_effect_class(action, e) for e in scope.effects)
    )


def scope_actions(scope: Scope, spec: ChainSpec) -> frozenset[str] | None:
    """The ids of the actions a scope applies to; ``None`` when it is prose.

    Ids in ``steps`` that name no action are kept, so a scope naming a
    missing step still differs from one that does not.
    """
    if _is_prose(scope):
        return None
    return frozenset({a.id for a in spec.actions if scope_applies_to(scope, a)} | set(scope.steps))


def _is_prose(scope: Scope) -> bool:
    return bool(scope.text) and not (
        scope.any or scope.steps or scope.consumers_of or scope.effects
    )


def _applies_to_any(scope: Scope) -> bool:
    return scope.any or not (scope.steps or scope.consumers_of or scope.effects or scope.text)


def scope_covers(wider: Scope, narrower: Scope, spec: ChainSpec) -> bool:
    """Does ``wider`` apply to every step ``narrower`` applies to?

    Prose scopes and scopes that resolve to no step cannot be judged (False),
    unless both are written identically.
    """
    if _applies_to_any(wider) or wider.model_dump() == narrower.model_dump():
        return True
    w, n = scope_actions(wider, spec), scope_actions(narrower, spec)
    if w is None or not n:
        return False
    return n <= w


def scopes_overlap(a: Scope, b: Scope, spec: ChainSpec) -> bool:
    """Is there a step both scopes apply to? False when either cannot be judged."""
    sa, sb = scope_actions(a, spec), scope_actions(b, spec)
    return bool(sa and sb and sa & sb)


def variants_cover(wider: Iterable[str], narrower: Iterable[str]) -> bool:
    """Does a row scoped ``only: wider`` run in every variant ``only: narrower`` runs in?

    An empty list means every variant.
    """
    w, n = set(wider), set(narrower)
    return not w or (bool(n) and n <= w)
