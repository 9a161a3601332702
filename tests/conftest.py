"""Shared fixtures. Named users (owner, editor, reviewer, outsider) arrive with permissions."""

from __future__ import annotations

import os

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_prerun
from django.db import connections

from designer.celery import app

# Playwright's sync API runs an event loop in the test thread; Django would then
# refuse ORM calls from fixtures and tests as "async unsafe". They are not.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def celery_worker(django_db_setup):
    """A worker thread that sees the test database.

    The in-memory SQLite test database is shared between connections through
    SQLite's shared cache, which answers concurrent access with "table is
    locked" instead of waiting; so, as Django's LiveServerThread does, the
    worker thread borrows this thread's connection. PostgreSQL needs nothing.
    """
    shared = {c.alias: c for c in connections.all() if c.vendor == "sqlite" and c.is_in_memory_db()}

    def borrow(**kwargs) -> None:
        for alias, conn in shared.items():
            connections[alias] = conn

    for conn in shared.values():
        conn.inc_thread_sharing()
    task_prerun.connect(borrow, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as w:
            yield w
    finally:
        task_prerun.disconnect(borrow)
        for conn in shared.values():
            conn.dec_thread_sharing()
