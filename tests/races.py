"""What the tests that race database transactions share.

Threads need a database whose connections wait for each other's locks, so
these tests run on PostgreSQL (always in CI) and are skipped on SQLite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

needs_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL (CI=true runs it); SQLite's in-memory test database is one connection",
)


def race(*calls: Callable[[], object]) -> list:
    """Run ``calls`` in threads released at the same instant; their results in order.

    A call that raises gives its exception as its result: the loser of a race
    is a result here, not a failure of the test.
    """
    start = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i: int, call: Callable[[], object]) -> None:
        try:
            start.wait()
            results[i] = call()
        except Exception as exc:
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results
