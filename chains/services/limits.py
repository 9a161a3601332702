"""Rate limits: how often one person may ask for expensive work (import, lint, simulate, ...).

``settings.RATE_LIMITS`` maps each action to ``(count, seconds)``: at most
``count`` requests in any ``seconds``. The window slides: it is cut into
:data:`SLOTS` slots, each counted by one atomic increment, and a request is
weighed against the slots of the last ``seconds``, the oldest one in part (a
sliding-window counter). So a burst at the turn of a window cannot double
the rate, and the count comes back as requests leave the window (the
requests of a slot are taken as spread evenly over it, so the window's edge
is exact to within a slot: a tenth of the window). A refused request is not
counted: a client that keeps asking gets in as soon as ``retry_after`` says.
A signed-in person is counted by account, so the pages and the API share a
count; anyone else by client address. The doors call :func:`spend` before
they start the work (``views/limits.py`` for the pages); the command line is
not limited, as it runs with the server's own rights.

The counts live in Django's cache: per process with the default local-memory
cache, shared by every process with Redis (``CACHE_URL``). When the cache
does not answer (Redis down), :func:`counted` keeps the counts, and the
sign-in limits', in this process's own bounded memory for a while and logs a
warning, so the limits still hold per process and nobody gets a 500.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest
from redis.exceptions import RedisError

__all__ = ["LOCAL", "RateLimited", "client_address", "counted", "spend", "span"]

T = TypeVar("T")

# Counts kept while the shared cache does not answer: this process's memory, bounded
# (past this many keys Django's local-memory cache drops a third of them).
LOCAL = LocMemCache("chains-limits-local", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
# After the shared cache failed, how long to count locally before asking it again:
# a cache that is down costs one failed connection (and one warning) per process
# this often, not one per request.
RETRY_SECONDS = 30.0
# Slots a window is cut into: the window's edge is exact to within one of them.
SLOTS = 10
_local_until = 0.0  # time.monotonic() until which the counts are local

logger = logging.getLogger(__name__)


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
    key = f"limits:{action}:{who}:{window}"
    now = time.time()
    wait = counted(lambda store: _spend(store, key, count, window, now))
    if wait:
        raise RateLimited(action, count, window, wait)


def client_address(request: HttpRequest) -> str:
    """Who asks, when nobody is signed in: ``REMOTE_ADDR``, or the proxy's last entry."""
    if settings.SIGNIN_USE_X_FORWARDED_FOR:
        # The proxy appends the address it saw; anything before it came from the client.
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")


def counted(work: Callable[[BaseCache], T]) -> T:
    """``work(cache)``; while the shared cache does not answer, ``work(LOCAL)``.

    ``work`` must be safe to run twice: when the cache fails halfway, it runs
    again on the local counts.
    """
    global _local_until
    if time.monotonic() >= _local_until:
        try:
            return work(cache)
        except (RedisError, OSError) as exc:
            _local_until = time.monotonic() + RETRY_SECONDS
            logger.warning(
                "the cache does not answer (%s: %s); rate and sign-in limits count in "
                "this process alone for %d s",
                type(exc).__name__,
                exc,
                RETRY_SECONDS,
            )
    return work(LOCAL)


def _spend(store: BaseCache, key: str, count: int, window: int, now: float) -> int:
    """Count one request under ``key``: 0 when it is allowed, else the seconds to wait."""
    slot = window / SLOTS
    position = now / slot
    current = math.floor(position)
    elapsed = position - current  # of the current slot
    keys = [f"{key}:{n}" for n in range(current - SLOTS, current + 1)]
    store.add(keys[-1], 0, timeout=2 * window + 1)
    try:
        spent = store.incr(keys[-1])
    except ValueError:  # the key expired between add and incr
        store.set(keys[-1], 1, timeout=2 * window + 1)
        spent = 1
    found = store.get_many(keys[:-1])
    counts = [found.get(k, 0) for k in keys[:-1]] + [spent]
    # counts[0] is the slot the window's start falls in: only its later part is inside.
    if counts[0] * (1 - elapsed) + sum(counts[1:]) <= count:
        return 0
    with contextlib.suppress(ValueError):  # expired meanwhile: nothing to take back
        store.decr(keys[-1])
    counts[-1] -= 1
    return max(1, math.ceil((_fits(counts, count, elapsed) - elapsed) * slot))


def _fits(counts: list[int], count: int, elapsed: float) -> float:
    """When one more request fits, in slots from the start of the current one.

    ``counts`` are the window's slots, oldest first, the current one last;
    later slots are taken as empty.

    >>> _fits([4, 0, 0, 0], 4, 0.1)  # the oldest slot's share is down to 3 at 0.25
    0.25
    >>> _fits([0, 0, 1, 3], 4, 0.5)  # the slot holding 1 must leave the window whole
    3.0
    """
    for ahead in range(len(counts)):
        oldest, inside = counts[ahead], sum(counts[ahead + 1 :])
        room = count - 1 - inside
        if room >= 0:
            needed = 0.0 if oldest <= room else 1 - room / oldest
            return ahead + (max(needed, elapsed) if ahead == 0 else needed)
    raise AssertionError("unreachable: the current slot alone always leaves room")


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
