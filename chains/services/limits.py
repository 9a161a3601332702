"""Rate limits: how often one person may ask for expensive work (import, lint, simulate, ...).

``settings.RATE_LIMITS`` maps each action to ``(count, seconds)``: at most
``count`` requests in a window of ``seconds``. Windows are fixed (they start
at multiples of their length since the epoch), so a burst at the turn of a
window may reach twice the count; that is the price of one cache key and one
increment per request. A signed-in person is counted by account, so the pages
and the API share a count; anyone else by client address. The counts live in
Django's cache: per process with the default local-memory cache, shared by
every process with Redis (``CACHE_URL``). The doors call :func:`spend` before
they start the work (``views/limits.py`` for the pages); the command line is
not limited, as it runs with the server's own rights.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache

__all__ = ["RateLimited", "spend", "span"]


class RateLimited(Exception):
    """One request too many: says which limit, and ``retry_after`` seconds until it lifts."""

    def __init__(self, action: str, count: int, window: int, retry_after: int):
        self.action, self.count, self.window, self.retry_after = action, count, window, retry_after
        requests = "request" if count == 1 else "requests"
        super().__init__(
            f"too many {action} requests: at most {count} {action} {requests} per "
            f"{self.window_text}; try again in {self.retry_text}"
        )

    @property
    def window_text(self) -> str:
        return span(self.window, singular=True)

    @property
    def retry_text(self) -> str:
        return span(self.retry_after)


def spend(action: str, *, user: Any = None, address: str = "") -> None:
    """Count one ``action`` for ``user`` (or, not signed in, ``address``); raise past the limit."""
    count, window = settings.RATE_LIMITS[action]
    if user is not None and user.is_authenticated:
        who = f"user:{user.pk}"
    else:
        who = f"address:{hashlib.sha256(address.encode()).hexdigest()[:32]}"
    now = time.time()
    start = int(now // window) * window
    key = f"limits:{action}:{who}:{start}"
    cache.add(key, 0, timeout=window + 1)
    try:
        spent = cache.incr(key)
    except ValueError:  # the key expired between add and incr
        cache.set(key, 1, timeout=window + 1)
        spent = 1
    if spent > count:
        raise RateLimited(action, count, window, max(1, math.ceil(start + window - now)))


def span(seconds: int, *, singular: bool = False) -> str:
    """``600`` as ``10 minutes``; with ``singular``, ``60`` as ``minute`` (as in "per minute").

    >>> span(600), span(60, singular=True), span(7200), span(90)
    ('10 minutes', 'minute', '2 hours', '90 seconds')
    """
    unit, length = next(
        (unit, length)
        for unit, length in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))
        if seconds % length == 0
    )
    n = seconds // length
    if n == 1:
        return unit if singular else f"1 {unit}"
    return f"{n} {unit}s"
