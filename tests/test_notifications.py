"""Notifications: review requests, mentions and decisions reach the inbox, and e-mail."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from chains.models import Chain, Notification, Role, Team
from chains.services import review as reviewing
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


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_review_request_reaches_the_reviewers_inbox_and_is_mailed(
    chain, people, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True
    with django_capture_on_commit_callbacks(execute=True):  # mailed once the request commits
        reviewing.request_review(chain, people["owner"], ["ann"], note="before Friday")
    (told,) = Notification.objects.filter(recipient=people["ann"])
    assert told.kind == "review_requested" and "owner asks you to review r1" in told.text
    page = signed_in(people["ann"]).get("/inbox/")
    assert "owner asks you to review r1" in page.content.decode()
    assert [m.to for m in mail.outbox] == [["ann@example.com"]]
    assert "before Friday" in mail.outbox[0].body and told.url in mail.outbox[0].body


def test_nobody_is_mailed_while_e_mail_is_off(
    chain, people, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = False
    with django_capture_on_commit_callbacks(execute=True):
        reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.filter(recipient=people["ann"]).count() == 1
    assert mail.outbox == []


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
    chain, people, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BY_EMAIL = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1  # nothing listens there
    with django_capture_on_commit_callbacks(execute=True):
        reviewing.request_review(chain, people["owner"], ["ann"], note="")
    assert Notification.objects.filter(recipient=people["ann"]).count() == 1


def test_the_inbox_needs_sign_in(client):
    assert Client().get("/inbox/").status_code == 302
