"""Small helpers for the words the domain reads and writes for people.

Messages name things we only know at run time (an effect, a kind, a role),
so the article in front of them cannot be written by hand; and rules read
the words of names people and providers wrote (``PaymentTimeLimit``).
"""

from __future__ import annotations

import re

__all__ = ["article", "name_words"]

# A word of an identifier: an acronym, a capitalised or lower-case run, or digits.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_words(name: str) -> list[str]:
    """The lower-case words of an identifier, split at case and punctuation.

    >>> name_words("PostQuotesQuoteCancel"), name_words("payment_required_by")
    (['post', 'quotes', 'quote', 'cancel'], ['payment', 'required', 'by'])
    >>> name_words("getHTTPStatus2")
    ['get', 'http', 'status', '2']
    """
    return [w.lower() for w in _WORD.findall(name)]


# Words that start with a vowel letter but a consonant sound ("a unique key"),
# and the reverse ("an hour"): by prefix, checked before the letter rule.
_CONSONANT_SOUND = ("uni", "use", "usa", "usu", "uti", "one", "eu")
_VOWEL_SOUND = ("hour", "honest", "honor")


def article(phrase: str) -> str:
    """``phrase`` with "a" or "an" in front, by the sound of its first word.

    >>> [article(w) for w in ("unkeyed commit", "answer", "commit", "unique key", "editor")]
    ['an unkeyed commit', 'an answer', 'a commit', 'a unique key', 'an editor']
    """
    word = phrase.lower()
    if word.startswith(_VOWEL_SOUND):
        return f"an {phrase}"
    if word.startswith(_CONSONANT_SOUND):
        return f"a {phrase}"
    return f"{'an' if word[:1] in 'aeiou' and word else 'a'} {phrase}"
