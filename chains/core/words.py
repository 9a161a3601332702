"""Small helpers for the sentences the domain writes for people.

Messages name things we only know at run time (an effect, a kind, a role),
so the article in front of them cannot be written by hand.
"""

from __future__ import annotations

__all__ = ["article"]

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
