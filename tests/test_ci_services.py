"""In CI the suite must run against the real PostgreSQL and Redis, not the embedded defaults."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.db import connection

in_ci = pytest.mark.skipif(os.environ.get("CI") != "true", reason="only CI=true promises servers")


@in_ci
@pytest.mark.django_db
def test_ci_runs_database_tests_on_postgresql():
    assert connection.vendor == "postgresql"


@in_ci
def test_ci_runs_celery_tests_through_redis():
    assert settings.CELERY_BROKER_URL.startswith("redis://")
