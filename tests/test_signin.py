"""Sign-in limits: failures lock a username or an address for a while; passwords go unchecked."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import resolve

from chains.views import signin

PASSWORD = "right-passphrase-7"


@pytest.fixture
def ada(db):
    return get_user_model().objects.create_user("ada", password=PASSWORD)


def attempt(username: str, password: str = "wrong", address: str = "192.0.2.1", **extra):
    return Client(REMOTE_ADDR=address).post(
        "/accounts/login/", {"username": username, "password": password}, **extra
    )


def signed_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/"


def fail(times: int, username: str = "ada", address: str = "192.0.2.1") -> None:
    for _ in range(times):
        assert attempt(username, address=address).status_code == 200


def test_a_right_password_signs_in(ada):
    assert signed_in(attempt("ada", PASSWORD))


def test_a_wrong_password_says_so_and_signs_nobody_in(ada):
    response = attempt("ada")
    assert response.status_code == 200
    assert "do not match an account" in response.content.decode()


def test_after_five_failures_for_a_username_even_the_right_password_gets_429(ada):
    fail(5)
    response = attempt("ada", PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in response.wsgi_request.session


def test_a_locked_attempt_does_not_check_the_password(ada, monkeypatch):
    fail(5)
    checked = []
    monkeypatch.setattr("django.contrib.auth.forms.authenticate", lambda *a, **k: checked.append(1))
    assert attempt("ada", PASSWORD).status_code == 429
    assert checked == []


def test_the_refusal_says_when_to_try_again(ada):
    fail(5)
    response = attempt("ada", PASSWORD)
    body = response.content.decode()
    assert 'id="signin-locked"' in body
    assert "Too many failed sign-ins" in body and "Try again in 15 minutes, after " in body
    assert 899 <= int(response["Retry-After"]) <= 900
    assert 'value="ada"' in body  # the username stays in the form


def test_four_failures_still_let_the_right_password_in(ada):
    fail(4)
    assert signed_in(attempt("ada", PASSWORD))


def test_a_username_is_locked_from_every_address_and_in_any_case(ada):
    for n in range(5):
        fail(1, username="ada", address=f"192.0.2.{n + 10}")
    assert attempt("ADA", PASSWORD, address="198.51.100.7").status_code == 429
    assert attempt("bob", address="198.51.100.7").status_code == 200  # only ada is locked


def test_an_address_is_locked_for_every_username(ada):
    for n in range(5):
        fail(1, username=f"guess{n}", address="203.0.113.9")
    assert attempt("ada", PASSWORD, address="203.0.113.9").status_code == 429
    assert signed_in(attempt("ada", PASSWORD, address="203.0.113.10"))


def test_a_success_resets_the_usernames_count(ada):
    fail(4, address="192.0.2.20")
    assert signed_in(attempt("ada", PASSWORD, address="192.0.2.21"))
    fail(4, address="192.0.2.22")
    assert signed_in(attempt("ada", PASSWORD, address="192.0.2.23"))


def test_a_success_does_not_reset_the_addresss_count(ada):
    fail(4, username="mallory", address="192.0.2.30")
    assert signed_in(attempt("ada", PASSWORD, address="192.0.2.30"))
    fail(1, username="mallory2", address="192.0.2.30")
    assert attempt("ada", PASSWORD, address="192.0.2.30").status_code == 429


def test_the_lock_ends_a_window_after_the_failure_that_reached_the_limit(ada, monkeypatch):
    fail(5)
    later = time.time() + 15 * 60 + 1
    monkeypatch.setattr(time, "time", lambda: later)  # the cache's clock too
    assert signed_in(attempt("ada", PASSWORD))


def test_the_limits_come_from_settings(ada, settings):
    settings.SIGNIN_MAX_FAILURES = 2
    settings.SIGNIN_WINDOW_SECONDS = 60
    fail(2)
    response = attempt("ada", PASSWORD)
    assert response.status_code == 429
    assert "Try again in 1 minute, after " in response.content.decode()


def test_behind_a_proxy_the_address_it_appended_counts(ada, settings):
    settings.SIGNIN_USE_X_FORWARDED_FOR = True
    proxy = "10.0.0.1"
    for n in range(5):
        forwarded = f"198.51.100.{n}, 203.0.113.50"  # the first part is the client's to forge
        response = attempt(f"guess{n}", address=proxy, HTTP_X_FORWARDED_FOR=forwarded)
        assert response.status_code == 200
    forged = "192.0.2.99, 203.0.113.50"
    assert attempt("ada", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=forged).status_code == 429
    other = "203.0.113.51"
    assert signed_in(attempt("ada", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=other))


def test_without_the_proxy_setting_a_forwarded_header_is_ignored(ada):
    for n in range(5):
        fail(1, username=f"guess{n}", address="192.0.2.40")
    locked = attempt("ada", PASSWORD, address="192.0.2.40", HTTP_X_FORWARDED_FOR="192.0.2.41")
    assert locked.status_code == 429


def test_the_sign_in_page_is_ours_and_needs_no_account(anonymous, template_context):
    match = resolve("/accounts/login/")
    assert match.url_name == "login" and match.func.view_class is signin.SignInView
    assert getattr(match.func, "login_required", True) is False
    response = anonymous.get("/accounts/login/?next=/chains/import/")
    assert response.status_code == 200
    assert "registration/login.html" in [t.name for t in response.templates]


def test_the_sign_in_page_is_never_counted_by_looking_at_it(ada):
    for _ in range(10):
        assert Client(REMOTE_ADDR="192.0.2.1").get("/accounts/login/").status_code == 200
    assert signed_in(attempt("ada", PASSWORD))


def test_the_sign_in_page_says_how_failures_lock_a_username(anonymous):
    text = anonymous.get("/accounts/login/").content.decode()
    assert 'id="signin-limits"' in text
    assert "5 failed sign-ins for one username within 15 minutes" in text
    assert "lock that username for 15 minutes, from every address" in text


def test_the_sign_in_page_takes_the_numbers_from_settings(anonymous, settings):
    settings.SIGNIN_MAX_FAILURES = 3
    settings.SIGNIN_WINDOW_SECONDS = 60 * 60
    text = anonymous.get("/accounts/login/").content.decode()
    assert "3 failed sign-ins for one username within 60 minutes" in text
