"""The effect an operation's method and words suggest, with the reason shown to the person
importing it (who confirms or changes it).

The SPEC decides an effect by the double-call test, never by name; a
provider document says only what a call is named and how it is sent, so
this is a proposal, and each reason says what it rests on.
"""

from __future__ import annotations

from ..model import Effect
from ..words import name_words

__all__ = ["guess_effect"]


def guess_effect(
    method: str, path: str, operation_id: str, override: str = "", summary: str = ""
) -> tuple[Effect, str]:
    """The effect an operation's method and words suggest, and why.

    Its words are those of the path and the operationId, split at case and
    punctuation (``PostQuotesQuoteCancel`` is post, quotes, quote, cancel).
    A word that undoes (cancel, void, refund, reverse ...) makes a compensator;
    an operationId that starts by creating or changing (create, post, update,
    accept ...) a commit, whatever else it names (``PostPrices`` creates a
    price, it does not price); else a word that reads (search, quote,
    validate ...), or an id that starts with one, a read. An operationId that
    is only the method and the path (``post-paymentMethods``) says nothing:
    the summary's first word stands for its verb then ("Get a list of ...").

    >>> guess_effect("post", "/v1/refunds", "PostRefunds")
    ('compensate', 'its name says it refunds: a compensator, if it undoes a commit')
    >>> guess_effect("post", "/v1/prices", "PostPrices")[0]
    'commit'
    >>> guess_effect("post", "/offers/search", "")[0]
    'read'
    >>> guess_effect("post", "/shopping/seatmaps", "getSeatmapFromFlightOffer", "GET")[1]
    'POST with X-HTTP-Method-Override: GET reads'
    """
    if method in ("get", "head", "options"):
        return "read", f"{method.upper()} reads"
    if override.lower() in ("get", "head"):
        return "read", f"{method.upper()} with X-HTTP-Method-Override: {override.upper()} reads"
    if method == "delete":
        return "compensate", "DELETE undoes something: a compensator, if it undoes a commit"
    words = name_words(f"{path} {operation_id}")
    verb = next(iter(name_words(operation_id)), "")
    if verb in ("", method) and summary:
        verb = next(iter(name_words(summary)), "")
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if last.startswith("{") and verb not in _UNDOING:
        thing = path.rstrip("/").rsplit("/", 2)[-2] if path.count("/") > 1 else "it"
        return "commit", f"a {method.upper()} on one {thing} item changes it"
    # An undoing word names what the call does only as its verb or its last path segment:
    # ``/refunds/{refund}/expire`` expires a refund, it refunds nothing.
    named = {*name_words(last), verb}
    undoing = [w for w in words if w in _UNDOING and w in named]
    if undoing:
        return (
            "compensate",
            f"its name says it {_UNDOING[undoing[-1]]}: a compensator, if it undoes a commit",
        )
    if verb in _CHANGING:
        return "commit", f"its operationId starts with {verb!r}: it changes something"
    if verb in _READING_VERBS or any(w in _READING_WORDS for w in words):
        return "read", f"a {method.upper()} whose name says it searches, prices or validates"
    return "commit", f"{method.upper()} changes something at the provider"


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words that undo what a commit did, each with how a reason says it.
_UNDOING = {
    **dict.fromkeys(("cancel", "cancels", "cancellation", "cancellations"), "cancels"),
    **dict.fromkeys(("void", "voids"), "voids"),
    **dict.fromkeys(("refund", "refunds"), "refunds"),
    **dict.fromkeys(("reverse", "reversal", "reversals"), "reverses"),
    **dict.fromkeys(("revoke", "revocation"), "revokes"),
    **dict.fromkeys(("release", "unhold", "rollback", "undo"), "releases"),
}
# The first word of an operationId that creates or changes.
_CHANGING = _word_set(
    "create post put patch update add set modify accept confirm capture book issue pay "
    "finalize submit send charge"
)
_READING_VERBS = _word_set(
    "get search find list lookup retrieve fetch query check validate estimate preview price quote"
)
_READING_WORDS = _word_set(
    "search query find lookup list quote quotes price pricing availability validate "
    "validation revalidate revalidation estimate preview"
)
