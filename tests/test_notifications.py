"""Notifications: review requests, mentions and decisions reach the inbox, and e-mail.

E-mail leaves through the outbox: the request that notifies only queues a
task (``queued`` counts them here), and the task sends what waits, in a worker.
"""

from __future__ import annotations

import socket

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from kombu.exceptions import OperationalError

from chains.models import Chain, Notification, Role, Team
from chains.models.notifications import MAIL_ATTEMPTS
from chains.services import review as reviewing
from chains.tasks import recover_on_start, send_mail
from tests.core.sim.builders import fixture

pytestmark = pytest.mark.django_db

FLIGHT = "flight-roundtrip.yaml"


@pytest.fixture
def people():
    users = get_user_model().objects
    made = {n: users.create_user(n, email=f"{n}@example.com") for n in ("owner", "ann", "bob")}
    team = Team.objects.found("Air", owner=made["owner"], slug="air")
    for name in ("ann", "bob"):
        team.add(made[name], Role.REVIEWER)
    return made


@pytest.fixture
def chain(people) -> Chain:
    from chains.core import formats

    Chain.objects.store(
        formats.to_document(fixture(FLIGHT)), message="r1", author=people["owner"],
        team=Team.objects.get(slug="air"),
    )  # fmt: skip
    return Chain.objects.get(key="flight_roundtrip")


@pytest.fixture
def queued(monkeypatch) -> list[tuple]:
    """The send_mail tasks that would have gone to the broker."""
    calls: list[tuple] = []
    monkeypatch.setattr(send_mail, "delay", lambda *args: calls.append(args))
    return calls


@pytest.fixture
def silent_server(settings):
    """An SMTP address on loopback that takes connections and never answers them."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = listener.getsockname()
        settings.EMAIL_TIMEOUT = 0.5
        yield listener


def connections_made(listener: socket.socket) -> int:
    """How many connections wait on ``listener`` (the kernel completes them unasked)."""
    listener.setblocking(False)
    made = 0
    while True:
        try:
            listener.accept()[0].close()
        except BlockingIOError:
            return made
        made += 1


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_review_request_reaches_the_reviewers_inbox_and_is_mailed(
    chain, people, settings, queued, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True
    with django_capture_on_commit_callbacks(execute=True):  # queued once the request commits
        reviewing.request_review(chain, people["owner"], ["ann"], note="before Friday")
    (told,) = Notification.objects.filter(recipient=people["ann"])
    assert told.kind == "review_requested" and "owner asks you to review r1" in told.text
    page = signed_in(people["ann"]).get("/inbox/")
    assert "owner asks you to review r1" in page.content.decode()
    assert queued == [()] and mail.outbox == []
    assert send_mail.apply().get() == 1  # the worker
    assert [m.to for m in mail.outbox] == [["ann@example.com"]]
    assert "before Friday" in mail.outbox[0].body and told.url in mail.outbox[0].body


def test_nobody_is_mailed_while_e_mail_is_off(
    chain, people, settings, queued, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = False
    with django_capture_on_commit_callbacks(execute=True):
        reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.filter(recipient=people["ann"]).count() == 1
    assert queued == []
    send_mail.apply()
    assert mail.outbox == []


def test_a_notifying_request_never_talks_to_the_mail_server(
    chain, people, settings, queued, silent_server, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True
    owner = signed_in(people["owner"])
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post(f"{chain.url()}reviews/", {"reviewers": "ann", "note": "now"})
    assert response.status_code == 303
    assert connections_made(silent_server) == 0
    assert queued == [()]
    assert Notification.objects.unmailed().count() == 1


def test_a_mail_server_that_never_answers_costs_the_worker_a_timeout_and_keeps_the_mail(
    chain, people, settings, queued, silent_server
):
    settings.NOTIFY_BY_EMAIL = True
    reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.mail() == (0, 1)
    assert connections_made(silent_server) == 1
    (waiting,) = Notification.objects.unmailed()
    assert waiting.mail_attempts == 1 and "timed out" in waiting.mail_error


def test_a_mail_that_fails_is_tried_again_until_its_attempts_are_spent(
    chain, people, settings, queued
):
    settings.NOTIFY_BY_EMAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1  # nothing listens there
    reviewing.request_review(chain, people["owner"], ["ann"], note="")
    send_mail.apply()  # run eagerly, its retries follow at once
    (told,) = Notification.objects.filter(recipient=people["ann"])
    assert told.mail_attempts == MAIL_ATTEMPTS and told.mailed_at is None
    assert "ConnectionRefusedError" in told.mail_error


def test_a_mail_the_queue_refused_waits_for_the_next_worker_to_start(
    chain, people, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True

    def refuse(*args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(send_mail, "delay", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.unmailed().count() == 1
    monkeypatch.setattr(send_mail, "delay", lambda: send_mail.apply())
    recover_on_start()
    assert [m.to for m in mail.outbox] == [["ann@example.com"]]
    assert not Notification.objects.unmailed().exists()


def test_a_mention_in_a_comment_tells_the_person_named(chain, people):
    reviewing.post_comment(chain, people["ann"], "@bob is the fare right?", anchor="chain")
    (told,) = Notification.objects.filter(recipient=people["bob"])
    assert told.kind == "mention" and told.url.startswith(chain.url("comments"))
    assert not Notification.objects.filter(recipient=people["ann"]).exists()


def test_a_decision_tells_the_person_who_asked(chain, people):
    asked = reviewing.request_review(chain, people["owner"], ["ann"], note="")
    reviewing.vote(chain, asked.pk, people["ann"], "request_changes", "the fare rule")
    (told,) = Notification.objects.filter(recipient=people["owner"], kind="review_decided")
    assert "ann requested changes to r1" in told.text and "the fare rule" in told.text


def test_the_header_counts_unread_and_opening_one_marks_it_read(chain, people):
    reviewing.request_review(chain, people["owner"], ["ann", "bob"], note="")
    ann = signed_in(people["ann"])
    assert 'aria-label="1 unread"' in ann.get("/").content.decode()
    (told,) = Notification.objects.filter(recipient=people["ann"])
    opened = ann.post(f"/inbox/{told.pk}/open")
    assert opened.status_code == 302 and opened["Location"] == told.url
    assert 'aria-label="1 unread"' not in ann.get("/").content.decode()


def test_one_cannot_open_anothers_notification(chain, people):
    reviewing.request_review(chain, people["owner"], ["ann"], note="")
    (told,) = Notification.objects.filter(recipient=people["ann"])
    assert signed_in(people["bob"]).post(f"/inbox/{told.pk}/open").status_code == 404
    told.refresh_from_db()
    assert told.read_at is None


def test_mark_all_read_empties_the_count(chain, people):
    reviewing.request_review(chain, people["owner"], ["ann"], note="")
    ann = signed_in(people["ann"])
    assert ann.post("/inbox/read-all").status_code == 302
    assert not Notification.objects.filter(recipient=people["ann"]).unread().exists()


def test_a_mail_server_that_is_down_loses_nothing_in_the_inbox(
    chain, people, settings, queued, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1  # nothing listens there
    with django_capture_on_commit_callbacks(execute=True):
        reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.filter(recipient=people["ann"]).count() == 1


def test_the_inbox_needs_sign_in(client):
    assert Client().get("/inbox/").status_code == 302
