"""The live server the browser tests talk to shares the test database with the test."""

from __future__ import annotations

import pytest
from django.db import connections

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_live_server_and_the_test_share_one_database_connection(live_server):
    """Run alone, this asks for the live server before any test made the database.

    An in-memory SQLite database is shared by handing the server the test's
    connection (and the test the server's, tests/browser/conftest.py); a
    server that made its own met a worker's writes with "table is locked". A
    server database is reached by every thread alike.
    """
    default = connections["default"]
    if default.vendor == "sqlite" and default.is_in_memory_db():
        assert live_server.thread.connections_override["default"] is default
    else:
        assert live_server.thread.connections_override == {}
