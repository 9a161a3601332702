"""``/healthz``: 200 while the database and the broker answer, 503 naming what does not."""

from __future__ import annotations

import os

import pytest
from django.db.utils import OperationalError

from designer import health


def test_healthz_answers_200_when_the_database_and_the_broker_answer(anonymous):
    response = anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok"}


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="CI=true promises a Redis server")
def test_healthz_pings_the_redis_broker_ci_serves(anonymous, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
    assert anonymous.get("/healthz").status_code == 200


def test_healthz_answers_503_when_redis_is_down(anonymous, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    response = anonymous.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "ok",
        "broker": "unavailable",
        "broker_error": "ConnectionError",
    }


def test_healthz_answers_503_when_the_database_does_not(anonymous, monkeypatch):
    def down() -> None:
        raise OperationalError("connection refused")

    monkeypatch.setitem(health.CHECKS, "database", down)
    response = anonymous.get("/healthz")
    assert (response.status_code, response.json()["database_error"]) == (503, "OperationalError")


def test_healthz_answers_503_when_the_filesystem_brokers_folder_is_gone(
    anonymous, settings, tmp_path
):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(tmp_path / "gone"),
        "data_folder_out": str(tmp_path),
        "processed_folder": str(tmp_path),
    }
    assert anonymous.get("/healthz").status_code == 503


def test_healthz_is_never_cached_and_sets_no_cookie(anonymous):
    response = anonymous.get("/healthz")
    assert "no-cache" in response["Cache-Control"] and not response.cookies


def test_healthz_answers_plain_http_where_everything_else_redirects_to_https(anonymous, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert anonymous.get("/healthz").status_code == 200
    assert anonymous.get("/").status_code == 301


def test_healthz_refuses_a_post(anonymous):
    assert anonymous.post("/healthz").status_code == 405
