"""Answers computed once per chain document and kept beside it.

The simulator and the explorer ask the same questions of one chain
thousands of times (which rows apply to a step, its policy limits, its main
steps), and the answers depend on the document alone. :func:`per_chain`
gives each chain object a dictionary for them. That is sound because a
:class:`~chains.core.model.ChainSpec` and every element in it are frozen
(assigning an attribute raises; an edit builds a new spec). The table
holds a weak reference to each chain, checked on every look-up, so an id in
it can never belong to another chain, and the answers go when their chain
does: they never keep a parsed document (tens of megabytes at the upload
limit) alive past the caches that bound those by bytes. The oldest of a few
chains gives way too.

The answers a search asks for at every input (a chain's indexes by id,
its keyed commits, its step limits) also keep the last chain's answer at
hand, written out where they are asked (``last[1] if last[0] is chain``):
that check is what saves the two calls of this table, so a helper would
give the saving back.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["SHORT_CHARS", "by_identity", "lru_short", "per_chain", "remember"]

_CHAINS = 8
# The most characters a question kept by :func:`lru_short` may have, all arguments together.
SHORT_CHARS = 500
_tables: OrderedDict[int, tuple[weakref.ref[Any], dict[Any, Any]]] = OrderedDict()
_lock = threading.Lock()

T = TypeVar("T")
A = TypeVar("A")


def per_chain(chain: object) -> dict[Any, Any]:
    """The dictionary of answers kept for ``chain`` (a new, empty one the first time).

    >>> class Chain: ...
    >>> a, b = Chain(), Chain()
    >>> per_chain(a)["x"] = 1
    >>> per_chain(a), per_chain(b)
    ({'x': 1}, {})
    """
    entry = _tables.get(id(chain))
    if entry is not None and entry[0]() is chain:
        return entry[1]
    with _lock:
        entry = _tables.get(id(chain))
        if entry is None or entry[0]() is not chain:
            entry = _tables[id(chain)] = (weakref.ref(chain, _forget(id(chain))), {})
            while len(_tables) > _CHAINS:
                _tables.popitem(last=False)
        return entry[1]


def _forget(key: int) -> Callable[[weakref.ref[Any]], None]:
    """Drop the answers of a chain that is gone (unless its id already serves another)."""

    def forget(gone: weakref.ref[Any]) -> None:
        # No lock: this runs wherever the chain's last reference goes, maybe under it.
        entry = _tables.get(key)
        if entry is not None and entry[0] is gone:
            _tables.pop(key, None)

    return forget


def remember(chain: object, key: Any, compute: Callable[[], T]) -> T:
    """``compute()`` the first time ``key`` is asked of ``chain``; the kept answer after.

    The answer is shared by every caller: it must not be changed.
    """
    table = per_chain(chain)
    try:
        return table[key]
    except KeyError:
        answer = table[key] = compute()
        return answer


def by_identity(limit: int) -> Callable[[Callable[[A], T]], Callable[[A], T]]:
    """Keep a one-argument function's answers by the identity of its argument.

    For arguments that are never changed once made (frozen models): equal
    questions asked with the same object get the first answer without the
    work. The table holds each argument, so an identity can never belong to
    another object; it is emptied when it reaches ``limit`` entries. As with
    :func:`remember`, callers share the answer and must not change it.

    >>> calls = []
    >>> @by_identity(limit=2)
    ... def size(items):
    ...     calls.append(items)
    ...     return len(items)
    >>> t = (1, 2)
    >>> size(t), size(t), len(calls)
    (2, 2, 1)
    """

    def decorate(compute: Callable[[A], T]) -> Callable[[A], T]:
        table: dict[int, tuple[A, T]] = {}

        @functools.wraps(compute)
        def kept(arg: A) -> T:
            entry = table.get(id(arg))
            if entry is not None and entry[0] is arg:
                return entry[1]
            if len(table) >= limit:
                table.clear()
            answer = compute(arg)
            table[id(arg)] = (arg, answer)
            return answer

        return kept

    return decorate


def lru_short(
    maxsize: int, chars: int = SHORT_CHARS
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``functools.lru_cache(maxsize)`` for a function of strings, keeping only short questions.

    An lru_cache bounds its entries by count. The strings asked about here
    come from documents (verdicts, signal atoms), where one may be as long as
    the upload limit; keeping only questions of at most ``chars`` characters
    makes the count a bound in bytes too. A longer one is answered every time.

    >>> @lru_short(maxsize=8, chars=3)
    ... def shout(text):
    ...     return text.upper()
    >>> shout("abc"), shout("abcd"), shout.cache_info().currsize
    ('ABC', 'ABCD', 1)
    """

    def decorate(compute: Callable[..., T]) -> Callable[..., T]:
        kept = functools.lru_cache(maxsize=maxsize)(compute)

        @functools.wraps(compute)
        def answer(*texts: str) -> T:
            if sum(map(len, texts)) <= chars:
                return kept(*texts)
            return compute(*texts)

        answer.cache_info = kept.cache_info  # type: ignore[attr-defined]
        return answer

    return decorate
