"""The sealed store: intent values the trace refers to but never holds (SPEC §2.5, C7.3).

SPEC §2.5: "raw handle values and payment data live in a sealed store keyed
by alias; the trace itself is safe to feed to evals and to the model". An
intent value that enters a run from outside — the start intent, the fields
of a repair proposal, a continuation's carried intent — is written to the
trace as a reference ``sealed:<field>:<digest>``, and the value is kept under
that reference in the snapshot's ``sealed`` part. The digest is keyed by the
run, so equal values in one run share a reference (a replay re-derives the
same one) and a bare hash of a common value cannot be looked up elsewhere.

Handle-shaped values (``name#3``) are aliases, not data: they stay as they
are, so a proposal that smuggles a handle is still seen and refused (C4.2).
A value that is already a reference stays as it is, which lets a trace be
replayed without the store.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Any

__all__ = ["is_ref", "seal", "unseal"]

_PREFIX = "sealed:"
_ALIAS = re.compile(r"^([A-Za-z_][\w.\-]*)#\d+$")


def is_ref(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_PREFIX)


def seal(store: dict[str, Any], key: str, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every value replaced by its reference; the values go to ``store``.

    >>> store = {}
    >>> refs = seal(store, "run-1", {"email": "ada@example.org", "offer": "offer#2"})
    >>> refs["email"].startswith("sealed:email:"), refs["offer"]
    (True, 'offer#2')
    >>> unseal(store, refs) == {"email": "ada@example.org", "offer": "offer#2"}
    True
    """
    out: dict[str, Any] = {}
    for name, value in values.items():
        if is_ref(value) or (isinstance(value, str) and _ALIAS.match(value)):
            out[name] = value
            continue
        if _cacheable(value):
            ref = _kept(key, name, _frozen(value))
        else:
            ref = _reference(key, name, value)
        store[ref] = value
        out[name] = ref
    return out


def _reference(key: str, name: str, value: Any) -> str:
    text = json.dumps([key, name, value], sort_keys=True, default=str)
    return f"{_PREFIX}{name}:{hashlib.blake2b(text.encode(), digest_size=8).hexdigest()}"


# A run seals its intent at every dispatch of an unkeyed commit, and the explorer makes
# thousands: the reference of a short scalar, or of a short flat dict of them by name,
# is kept.
_SCALARS = (str, int, float, bool, type(None))
_KEPT_CHARS = 500


def _cacheable(value: Any) -> bool:
    # The cache counts entries: only short values keep it small in bytes too.
    if type(value) in _SCALARS:
        return type(value) is not str or len(value) <= _KEPT_CHARS
    if type(value) is not dict:
        return False
    chars = 0
    for k, v in value.items():
        if type(k) is not str or type(v) not in _SCALARS:
            return False
        chars += len(k) + (len(v) if type(v) is str else 0)
    return chars <= _KEPT_CHARS


def _frozen(value: Any) -> tuple:
    """A hashable stand-in for a cacheable value; types kept, so ``1`` is not ``True``."""
    if type(value) is dict:
        return ("dict", tuple(sorted((k, type(v), v) for k, v in value.items())))
    return ("scalar", type(value), value)


@functools.lru_cache(maxsize=4096)
def _kept(key: str, name: str, frozen: tuple) -> str:
    """:func:`_reference` of the value ``frozen`` stands for."""
    if frozen[0] == "dict":
        return _reference(key, name, {k: v for k, _, v in frozen[1]})
    return _reference(key, name, frozen[2])


def unseal(store: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every reference found in ``store`` replaced by its value."""
    return {k: store.get(v, v) if is_ref(v) else v for k, v in values.items()}
