"""Every saved revision explored at up to two faults: the workspace's answer beside lint.

A campaign is the deep search a person launches; this is the shallow one
every save gets without asking (SPEC's invariants over every failure
sequence of at most :data:`BOUNDS` ``max_faults`` faults). It runs when the
workspace asks for it (an htmx request of its own after the page or the
swap, so typing never waits for it), within a time and a state cap, and its
answer is kept by the revision's content hash: an undo, a redo or another
person opening the same head reads it back. The answer is the explorer's
JSON (``ExploreResult.as_dict``), the same shape a campaign stores.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from chains.core.errors import DocumentError
from chains.core.sim.explorer import Bounds, explore
from chains.core.sim.search import DIGEST_VERSION
from chains.models import Revision
from chains.services.access import spec_of

__all__ = ["BOUNDS", "save_check"]

# Two faults find most double bookings (design.md); the caps keep one request
# bounded on any chain: the real ones take 0.01-0.6 s, the flight chain 0.2 s.
BOUNDS = Bounds(max_faults=2, max_seconds=1.5, max_states=60_000)
_KEPT_FOR = 7 * 24 * 3600  # seconds; a revision's answer never changes, only the explorer


def _key(revision: Revision) -> str:
    return f"save-check:v{DIGEST_VERSION}:{BOUNDS.max_faults}:{revision.content_hash}"


def save_check(revision: Revision) -> dict[str, Any] | None:
    """The exploration of ``revision`` (cached by content); None when it does not load."""
    key = _key(revision)
    found: dict[str, Any] | None = cache.get(key)
    if found is not None:
        return found
    try:
        spec = spec_of(revision)
    except DocumentError:
        return None
    result = explore(spec, BOUNDS).as_dict()
    cache.set(key, result, _KEPT_FOR)
    return result
