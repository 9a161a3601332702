"""Shared fixtures.

``client`` is signed in as an administrator (a superuser may do everything),
so a test about something else need not arrange permissions. Tests about
permissions use the named people: ``owner``, ``editor``, ``reviewer`` and
``viewer`` of ``team`` (each with that role on every chain of the team), and
``outsider``, who belongs to another team; ``signed_in(user)`` gives a client.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_prerun
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connections
from django.test import Client

from chains.core import formats
from chains.models import Chain, Role, Team
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


@pytest.fixture(autouse=True)
def fresh_cache():
    """Failed sign-ins are counted in the cache; one test's must not lock out the next."""
    cache.clear()


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Tests sign people in by the hundred; a deliberately slow hash would dominate them."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def client(db, admin_user) -> Client:
    signed = Client()
    signed.force_login(admin_user)
    return signed


@pytest.fixture
def anonymous(db) -> Client:
    return Client()


def make_user(username: str):
    return get_user_model().objects.create_user(username)  # no password: none to hash


@pytest.fixture
def team(db) -> Team:
    """A team with one member per role (the owner founded it)."""
    founder = make_user("owner")
    team = Team.objects.found("Flight desk", owner=founder, slug="flight-desk")
    for role in (Role.EDITOR, Role.REVIEWER, Role.VIEWER):
        team.add(make_user(role.value), role)
    return team


@pytest.fixture
def people(team) -> dict:
    """The named people by name: owner, editor, reviewer, viewer, outsider."""
    named = {m.user.username: m.user for m in team.memberships.select_related("user")}
    outsider = make_user("outsider")
    Team.objects.found("Elsewhere", owner=outsider, slug="elsewhere")
    return {**named, "outsider": outsider}


@pytest.fixture
def signed_in():
    def sign_in(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return sign_in


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def flight(team) -> Chain:
    """The flight-booking fixture, stored as a chain of ``team`` (revision 1)."""
    path = FIXTURES / "flight-roundtrip.yaml"
    document = formats.to_document(formats.load(path.read_bytes(), filename=path.name).chains[0])
    return Chain.objects.store(document, "import", team=team).chain
