"""Shared fixtures.

``client`` is signed in as an administrator (a superuser may do everything),
so a test about something else need not arrange permissions. Tests about
permissions use the named people: ``owner``, ``editor``, ``reviewer`` and
``viewer`` of ``team`` (each with that role on every chain of the team), and
``outsider``, who belongs to another team; ``signed_in(user)`` gives a client.

Fast feedback (``make test-fast``): the fixture files are parsed once per test
process (``fixture_chains``; the parsed models are never mutated, documents are
handed out as fresh copies), ``flight`` is the one stored flight chain, and
``wait_until`` is the one way a test waits for something to happen.
Hypothesis runs the ``dev`` profile (few examples, no deadline) unless CI is
set, which selects ``ci`` (hypothesis's own defaults, as CI always ran);
``HYPOTHESIS_PROFILE`` names either explicitly. A test that wants more than the
profile's count asks for a multiple of it (``settings().max_examples * 2``), so
its count follows the profile too.
"""

from __future__ import annotations

import copy
import functools
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_prerun
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.db import connections
from django.template import Template
from django.test import Client
from django.test.utils import _TestState, instrumented_test_render
from hypothesis import settings as hypothesis_settings
from kombu import Exchange, Queue

from chains.core import dot, formats
from chains.models import Chain, Membership, Role, Team
from chains.tasks import explore_shard
from designer.celery import app

if TYPE_CHECKING:  # the parsed (pydantic) chain model, not the stored one
    from chains.core.model import ChainSpec

# Playwright's sync API runs an event loop in the test thread; Django would then
# refuse ORM calls from fixtures and tests as "async unsafe". They are not.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

hypothesis_settings.register_profile("ci", hypothesis_settings())
hypothesis_settings.register_profile("dev", max_examples=10, deadline=None)


def hypothesis_profile(environ: Mapping[str, str] = os.environ) -> str:
    """``HYPOTHESIS_PROFILE`` if set, else ``ci`` on CI (``.ci/run`` sets CI), else ``dev``."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    return "ci" if environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


hypothesis_settings.load_profile(hypothesis_profile())


def pytest_report_header(config) -> str:
    return f"hypothesis profile: {hypothesis_profile()}"


# Test processes share the broker, filesystem or Redis: with each other (pytest-xdist),
# with a suite running beside them, and with `make run`'s worker, which takes the queue
# "celery". Each sends to and consumes from a queue named by its process id, so no other
# worker takes its tasks (nor it theirs: a shard left over from a suite that was stopped
# once ran for minutes in the next one's worker), and empties it when it starts and ends
# (a process id comes round again). Each has its own test database too (pytest-django).
app.conf.task_default_queue = f"celery-tests-{os.getpid()}"


def _declared_queue(connection) -> Queue:
    """This process's queue, declared on ``connection`` so the channel knows its binding."""
    name = app.conf.task_default_queue
    queue = Queue(name, Exchange(name), routing_key=name)(connection.default_channel)
    queue.declare()
    return queue


@pytest.fixture(scope="session", autouse=True)
def own_queue():
    """This process's queue on the broker: emptied before the first test, gone after the last."""
    with app.connection_for_write() as connection:
        _declared_queue(connection).purge()
    yield
    with app.connection_for_write() as connection:
        queue = _declared_queue(connection)
        queue.delete()
        queue.exchange.delete()
        folder = getattr(connection.default_channel, "control_folder", None)
        if folder is not None:  # the filesystem broker keeps an exchange's empty table
            (folder / f"{queue.name}.exchange").unlink(missing_ok=True)


def wait_until(
    predicate: Callable[[], object],
    timeout: float = 60.0,
    interval: float = 0.1,
    message: str = "timed out",
) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{message} (after {timeout:g} s)"
        time.sleep(interval)


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., None]:
    """``wait_until(predicate, timeout=60, interval=0.1)``: the one way a test waits."""
    return wait_until


@pytest.fixture(scope="module")
def shared_connections(django_db_setup) -> dict:
    """The in-memory SQLite connections other threads borrow: this thread's, by alias."""
    return {c.alias: c for c in connections.all() if c.vendor == "sqlite" and c.is_in_memory_db()}


@pytest.fixture(scope="module")
def celery_worker(shared_connections):
    """A worker thread that sees the test database.

    The in-memory SQLite test database is shared between connections through
    SQLite's shared cache, which answers concurrent access with "table is
    locked" instead of waiting; so, as Django's LiveServerThread does, the
    worker thread borrows the test's connection (``shared_connections``; the
    browser tests give the live server's). PostgreSQL needs nothing.

    The worker is stopped before the test helper terminates it: the embedded
    broker is read in waits of up to two seconds, and a worker that is only
    told to terminate finishes its current wait and one more.
    """
    shared = shared_connections

    def borrow(**kwargs) -> None:
        for alias, conn in shared.items():
            connections[alias] = conn

    for conn in shared.values():
        conn.inc_thread_sharing()
    task_prerun.connect(borrow, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as w:
            yield w
            w.stop(in_sighandler=False)
    finally:
        task_prerun.disconnect(borrow)
        for conn in shared.values():
            conn.dec_thread_sharing()


@pytest.fixture
def sent(monkeypatch):
    """The shard tasks that would have gone to the broker, as (exploration id, index)."""
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: calls.append(args))
    return calls


@pytest.fixture(scope="session", autouse=True)
def unrecorded_templates(django_test_environment):
    """Templates render as they do in production, without Django's test recording.

    Django's test environment makes every template, down to each form widget's,
    send a signal with a copy of its context so a test may read
    ``response.context``: about a fifth of the time of a workspace page. The
    few tests that read it ask for :func:`template_context`.
    """
    Template._render = _TestState.saved_data.template_render


@pytest.fixture
def template_context(monkeypatch):
    """Responses carry ``context`` and ``templates`` again, as in Django's own test runner."""
    monkeypatch.setattr(Template, "_render", instrumented_test_render)


@pytest.fixture(autouse=True)
def fresh_layouts():
    """Layouts are kept by their DOT; a test that fakes Graphviz must not leave its fake behind."""
    dot.forget_layouts()


@pytest.fixture
def layout_timeouts(monkeypatch) -> list[float]:
    """The time limit each Graphviz layout is given, in order (the layouts still run)."""
    timeouts: list[float] = []
    real = dot.lay_out

    def timed(source: str, timeout: float, *memory: Any) -> dot.Picture:
        timeouts.append(timeout)
        return real(source, 10.0, *memory)

    monkeypatch.setattr(dot, "lay_out", timed)
    return timeouts


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
    """A team with one member per role (the owner founded it).

    The members are written in two statements rather than through ``Team.add``
    (tested on its own), which checks owners and invitations first: most of
    the suite starts here, and those checks cost more than the rest of the fixture.
    """
    founder = make_user("owner")
    team = Team.objects.found("Flight desk", owner=founder, slug="flight-desk")
    roles = (Role.EDITOR, Role.REVIEWER, Role.VIEWER)
    User = get_user_model()
    members = User.objects.bulk_create(
        User(username=role.value, password=make_password(None)) for role in roles
    )
    joined = zip(members, roles, strict=True)
    Membership.objects.bulk_create(Membership(team=team, user=u, role=r) for u, r in joined)
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


@functools.cache
def fixture_chains(name: str) -> tuple[ChainSpec, ...]:
    """The chains of ``fixtures/<name>``, parsed once per test process. Do not mutate them."""
    path = FIXTURES / name
    result = formats.load(path.read_bytes(), filename=path.name)
    assert result.chains, [str(p) for p in result.problems]
    return tuple(result.chains)


@functools.cache
def _fixture_document(name: str) -> dict:
    return formats.to_document(fixture_chains(name)[0])


def fixture_document(name: str) -> dict:
    """The first chain of ``fixtures/<name>`` as a document: a fresh copy, free to change."""
    return copy.deepcopy(_fixture_document(name))


@pytest.fixture(scope="session")
def flight_spec() -> ChainSpec:
    """The flight-booking fixture as a parsed chain model (shared: do not mutate)."""
    return fixture_chains("flight-roundtrip.yaml")[0]


@pytest.fixture
def flight_document() -> dict:
    """The flight-booking fixture as a document (a fresh copy per test)."""
    return fixture_document("flight-roundtrip.yaml")


@pytest.fixture
def flight(team, flight_document) -> Chain:
    """The flight-booking fixture, stored as a chain of ``team`` (revision 1)."""
    return Chain.objects.store(flight_document, "import", team=team).chain
