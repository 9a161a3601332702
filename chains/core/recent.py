"""A small bounded memory of values derived from content, by content hash.

Revisions are immutable and a parsed spec is frozen (one cached parse is
shared by every request that reads its content), so what is derived from one
content (its parse, its lint status, its findings with their fixes) stays true;
the pages and the store reuse it instead of computing it again. Thread-safe:
one process serves many requests.

Bounded twice: by a count of entries, and by a budget of bytes that each
entry's caller estimates (``weight``), because one parsed document at the
upload limit weighs tens of megabytes and sixty-four of them would not fit a
worker. Estimates are what they say: the caller multiplies something cheap
to measure (a document's length) by a factor measured once.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

__all__ = ["PARSED_FACTOR", "Recent", "parsed_weight"]

# Bytes of memory a parsed chain takes per byte of its compact JSON, measured with
# tracemalloc on generated chains of 0.1 and 1.5 MB (24.8 and 23.9).
PARSED_FACTOR = 25


def parsed_weight(document: Any) -> int:
    """The estimated bytes of ``document`` (JSON-ready data) once parsed into a chain."""
    return len(json.dumps(document, separators=(",", ":"), default=str)) * PARSED_FACTOR


class Recent:
    """The last values computed from a revision's content, by content hash.

    At most ``size`` entries, and with ``budget`` at most that many bytes by
    the weights given to :meth:`put`; the least recently used go first.

    >>> recent = Recent(size=8, budget=100)
    >>> recent.put("a", "parsed a", weight=60)
    'parsed a'
    >>> _ = recent.put("b", "parsed b", weight=60)
    >>> recent.get("a"), recent.get("b")
    (None, 'parsed b')
    """

    def __init__(self, size: int = 64, budget: int | None = None):
        if size < 1:
            raise ValueError(f"size must be at least 1; got {size}")
        if budget is not None and budget < 0:
            raise ValueError(f"budget must be 0 or more bytes; got {budget}")
        self.size = size
        self.budget = budget
        self.values: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self.weight = 0
        self.lock = threading.Lock()

    def clear(self) -> None:
        """Forget every value."""
        with self.lock:
            self.values.clear()
            self.weight = 0

    def get(self, key: str) -> Any:
        """The value kept under ``key`` (now the most recently used), or None."""
        with self.lock:
            found = self.values.get(key)
            if found is not None:
                self.values.move_to_end(key)
        return None if found is None else found[0]

    def put(self, key: str, value: Any, weight: int = 0) -> Any:
        """Keep ``value`` under ``key`` (``weight`` bytes, estimated); returns ``value``.

        A value heavier than the whole budget is returned but not kept.
        """
        with self.lock:
            old = self.values.pop(key, None)
            if old is not None:
                self.weight -= old[1]
            if self.budget is not None and weight > self.budget:
                return value
            self.values[key] = (value, weight)
            self.weight += weight
            while len(self.values) > self.size or (
                self.budget is not None and self.weight > self.budget
            ):
                _, (_, dropped) = self.values.popitem(last=False)
                self.weight -= dropped
        return value
