"""Usernames that look alike: one person must not pass for another by a lookalike letter.

A username's *skeleton* follows Unicode's confusable detection (UTS #39) in
small: NFKC (fullwidth and styled letters become plain ones), the capital I
read as a small L, case folded, then letters of other alphabets and digits
that look like Latin letters replaced by those letters, and ``rn``, ``cl``,
``vv`` read as ``m``, ``d``, ``w``. Two names with one skeleton look the same
on a page: ``oа`` (with a Cyrillic ``а``) and ``oa``, ``l0la`` and ``lola``.
The table holds the lookalikes of the Cyrillic and Greek alphabets and the
digits, which is where lookalike names come from in practice; it is not the
whole Unicode table. Accents are kept: ``é`` is not ``e``.
"""

from __future__ import annotations

import unicodedata

from django.contrib.auth import get_user_model

__all__ = ["lookalike_taken", "skeleton"]

# Capitals that look like Latin capitals, read before case folding loses the difference.
_CAPITALS = str.maketrans(
    {
        "I": "l",
        "Ӏ": "l",  # Cyrillic palochka
        **dict(zip("АВЕКМНОРСТХЅІЈҮ", "ABEKMHOPCTXSlJY", strict=True)),  # Cyrillic
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHlKMNOPTYX", strict=True)),  # Greek
    }
)
# Small letters and digits that look like small Latin letters.
_SMALL = str.maketrans(
    {
        # Cyrillic, and the Latin script g and dotless i
        **dict(zip("аеорсухѕіјһԁԛԝӏѵүɡıё", "aeopcyxsijhdqwlvygië", strict=True)),
        **dict(zip("αοριυνκχγ", "aopiuvkxy", strict=True)),  # Greek
        "0": "o",
        "1": "l",
    }
)
_PAIRS = (("rn", "m"), ("cl", "d"), ("vv", "w"))


def skeleton(username: str) -> str:
    """The form two lookalike usernames share.

    >>> skeleton("o\\u0430") == skeleton("oa"), skeleton("ＡＤＡ"), skeleton("rnary")
    (True, 'ada', 'mary')
    """
    text = unicodedata.normalize("NFKC", username).translate(_CAPITALS).casefold()
    text = unicodedata.normalize("NFC", text).translate(_SMALL)
    for pair, letter in _PAIRS:
        text = text.replace(pair, letter)
    return text


def lookalike_taken(username: str) -> str | None:
    """The existing username that looks like ``username`` (or is it), or None.

    Reads every username once: sign-up is rare and rate-limited, and a skeleton
    column would have to be kept on Django's own user table.
    """
    wanted = skeleton(username)
    names = get_user_model().objects.values_list("username", flat=True).iterator()
    return next((name for name in names if skeleton(name) == wanted), None)
