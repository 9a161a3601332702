"""A small bounded memory of values derived from content, by content hash.

Revisions are immutable and core functions never change a document in place,
so what is derived from one content (its parse, its lint status, its findings
with their fixes) stays true; the pages and the store reuse it instead of
computing it again. Thread-safe: one process serves many requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["Recent"]


class Recent:
    """The last few dozen values computed from a revision's content, by content hash.

    Revisions are immutable and core functions never change a document in
    place, so what is derived from one content stays true; the workspace
    reuses it across the clicks and edits of a session.
    """

    def __init__(self, size: int = 64):
        self.size = size
        self.values: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self.lock:
            return self.values.get(key)

    def put(self, key: str, value: Any) -> Any:
        with self.lock:
            self.values[key] = value
            self.values.move_to_end(key)
            while len(self.values) > self.size:
                self.values.popitem(last=False)
        return value
