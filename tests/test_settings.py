"""Settings come from the environment, fail loudly on bad values, and deploy cleanly."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from designer.env import env_bool, env_int, env_list, env_rates, env_str

ROOT = Path(__file__).resolve().parent.parent
OUR_VARIABLES = {
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "CACHE_URL",
    "REDIS_URL",
    "CSP_REPORT_ONLY",
    "CSP_REPORT_URI",
    "SIGNIN_MAX_FAILURES",
    "SIGNIN_WINDOW_SECONDS",
    "USE_X_FORWARDED_FOR",
    "ALLOW_SIGNUP",
    "RATE_LIMITS",
    "LOG_LEVEL",
    "DJANGO_ALLOW_ASYNC_UNSAFE",  # set by conftest for Playwright; never in deployment
}


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter whose only settings variables are ``env``."""
    clean = {k: v for k, v in os.environ.items() if k not in OUR_VARIABLES}
    clean["DJANGO_SETTINGS_MODULE"] = "designer.settings"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def production_env() -> dict[str, str]:
    return {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "chains.example.com",
    }


@pytest.mark.parametrize("value", ["maybe", "2", "ja", "truee"])
def test_bad_boolean_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("DEBUG", value)
    with pytest.raises(ImproperlyConfigured, match="DEBUG"):
        env_bool("DEBUG")


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("TRUE", True), ("on", True), ("0", False), ("no", False)]
)
def test_boolean_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("DEBUG", value)
    assert env_bool("DEBUG") is expected


def test_unset_or_empty_variables_take_the_default(monkeypatch):
    monkeypatch.delenv("SOME_FLAG", raising=False)
    assert env_bool("SOME_FLAG", default=True) is True
    monkeypatch.setenv("SOME_FLAG", " ")
    assert env_bool("SOME_FLAG", default=True) is True
    assert env_str("SOME_FLAG", "fallback") == "fallback"
    assert env_int("SOME_FLAG", 7) == 7
    assert env_list("SOME_FLAG", ["a"]) == ["a"]


def test_bad_integer_names_the_variable(monkeypatch):
    monkeypatch.setenv("SECURE_HSTS_SECONDS", "a year")
    with pytest.raises(ImproperlyConfigured, match="SECURE_HSTS_SECONDS"):
        env_int("SECURE_HSTS_SECONDS", 0)


def test_list_is_comma_separated_without_blanks(monkeypatch):
    monkeypatch.setenv("ALLOWED_HOSTS", "a.example, b.example,,")
    assert env_list("ALLOWED_HOSTS") == ["a.example", "b.example"]


def test_required_string_names_the_variable(monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY"):
        env_str("SECRET_KEY", required=True)


def test_settings_refuse_to_load_with_a_bad_debug_value():
    result = run_python("import django; django.setup()", DEBUG="maybe")
    assert result.returncode != 0
    assert "ImproperlyConfigured: DEBUG must be one of" in result.stderr


def test_production_requires_a_secret_key():
    result = run_python("import django; django.setup()", DEBUG="0")
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set" in result.stderr


def test_defaults_are_the_embedded_setup():
    code = (
        "import json; from django.conf import settings; "
        "print(json.dumps({'debug': settings.DEBUG, "
        "'engine': settings.DATABASES['default']['ENGINE'], "
        "'name': str(settings.DATABASES['default']['NAME']), "
        "'broker': settings.CELERY_BROKER_URL, "
        "'ssl_redirect': settings.SECURE_SSL_REDIRECT, "
        "'max_bytes': settings.CHAIN_UPLOAD_MAX_BYTES}))"
    )
    result = run_python(code, DEBUG="1")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["debug"] is True
    assert values["engine"] == "django.db.backends.sqlite3"
    assert Path(values["name"]) == ROOT / "var" / "db.sqlite3"
    assert values["broker"] == "filesystem://"
    assert values["ssl_redirect"] is False
    assert values["max_bytes"] == 2 * 1024 * 1024


def test_database_url_selects_postgresql():
    code = "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
    result = run_python(code, DEBUG="1", DATABASE_URL="postgres://someone@db.example:5432/chains")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "django.db.backends.postgresql"


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {
            "CACHE_URL": "redis://cache.example.com:6379/2",
            "CSP_REPORT_ONLY": "1",
            "CSP_REPORT_URI": "https://chains.example.com/csp-reports",
            "SIGNIN_MAX_FAILURES": "10",
            "USE_X_FORWARDED_FOR": "1",
        },
    ],
    ids=["minimal", "with-security-variables"],
)
def test_production_configuration_passes_check_deploy_without_warnings(extra):
    code = (
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('check', deploy=True, fail_level='WARNING')"
    )
    result = run_python(code, **production_env(), **extra)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNING" not in result.stdout + result.stderr


def settings_json(expression: str, **env: str) -> object:
    code = f"import json; from django.conf import settings; print(json.dumps({expression}))"
    result = run_python(code, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_cache_is_local_memory_unless_a_redis_url_is_given():
    backend = "settings.CACHES['default']['BACKEND']"
    assert settings_json(backend, DEBUG="1").endswith("LocMemCache")


@pytest.mark.parametrize("variable", ["CACHE_URL", "REDIS_URL"])
def test_a_cache_url_selects_redis(variable):
    cache = settings_json("settings.CACHES['default']", DEBUG="1", **{variable: "redis://c:6379/2"})
    assert cache == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://c:6379/2",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }


def test_a_cache_url_that_is_not_redis_stops_the_process():
    result = run_python("import django; django.setup()", DEBUG="1", CACHE_URL="memcached://c")
    assert result.returncode != 0
    assert "ImproperlyConfigured: CACHE_URL/REDIS_URL must be a redis://" in result.stderr


def test_the_policy_is_enforced_by_default():
    policy = settings_json("[settings.SECURE_CSP, settings.SECURE_CSP_REPORT_ONLY]", DEBUG="1")
    enforced, report_only = policy
    assert enforced["script-src"] == ["'self'"] and enforced["frame-ancestors"] == ["'none'"]
    assert report_only == {}


def test_csp_report_only_moves_the_policy_and_a_report_uri_joins_it():
    expression = "[settings.SECURE_CSP, settings.SECURE_CSP_REPORT_ONLY]"
    enforced, report_only = settings_json(
        expression, DEBUG="1", CSP_REPORT_ONLY="yes", CSP_REPORT_URI="/csp-reports"
    )
    assert enforced == {}
    assert report_only["style-src"] == ["'self'"] and report_only["report-uri"] == ["/csp-reports"]


def test_sign_in_limits_come_from_the_environment():
    expression = "[settings.SIGNIN_MAX_FAILURES, settings.SIGNIN_WINDOW_SECONDS]"
    assert settings_json(expression, DEBUG="1") == [5, 900]
    assert settings_json(expression, DEBUG="1", SIGNIN_MAX_FAILURES="3") == [3, 900]


def test_a_sign_in_limit_of_zero_stops_the_process():
    result = run_python("import django; django.setup()", DEBUG="1", SIGNIN_MAX_FAILURES="0")
    assert result.returncode != 0
    assert "SIGNIN_MAX_FAILURES" in result.stderr


def test_request_bodies_may_be_a_little_larger_than_a_chain_document():
    limits = settings_json(
        "[settings.CHAIN_UPLOAD_MAX_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE, "
        "settings.FILE_UPLOAD_MAX_MEMORY_SIZE, settings.DATA_UPLOAD_MAX_NUMBER_FIELDS]",
        DEBUG="1",
    )
    document, body, file_in_memory, fields = limits
    assert document < body <= document * 1.25 and file_in_memory == body
    assert fields == 500


RATES = {"import": (30, 600), "lint": (60, 600)}


def test_rates_are_action_equals_count_per_window(monkeypatch):
    monkeypatch.setenv("RATE_LIMITS", "import=5/m, lint=100/2h")
    assert env_rates("RATE_LIMITS", RATES) == {"import": (5, 60), "lint": (100, 7200)}


def test_actions_not_named_keep_their_default_rate(monkeypatch):
    monkeypatch.setenv("RATE_LIMITS", "lint=1/s")
    assert env_rates("RATE_LIMITS", RATES) == {"import": (30, 600), "lint": (1, 1)}
    monkeypatch.delenv("RATE_LIMITS")
    assert env_rates("RATE_LIMITS", RATES) == RATES


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("imports=5/m", "'imports'"),
        ("lint=5", "'lint=5'"),
        ("lint=0/m", "'lint=0/m'"),
        ("lint=5/0m", "'lint=5/0m'"),
        ("lint=5/week", "'lint=5/week'"),
    ],
)
def test_a_bad_rate_names_the_variable_and_the_part(monkeypatch, value, named):
    monkeypatch.setenv("RATE_LIMITS", value)
    with pytest.raises(ImproperlyConfigured, match="RATE_LIMITS") as refused:
        env_rates("RATE_LIMITS", RATES)
    assert named in str(refused.value)


def test_rate_limits_have_defaults_for_every_expensive_door():
    limits = settings_json("settings.RATE_LIMITS", DEBUG="1")
    assert set(limits) == {
        "import",
        "lint",
        "simulate",
        "campaign",
        "comment",
        "signup",
        "team",
        "invite",
        "docs",
    }
    assert all(count >= 1 and window >= 1 for count, window in limits.values())
    assert settings_json("settings.RATE_LIMITS", DEBUG="1", RATE_LIMITS="lint=7/m")["lint"] == [
        7,
        60,
    ]


def test_a_bad_rate_limit_stops_the_process():
    result = run_python("import django; django.setup()", DEBUG="1", RATE_LIMITS="lint=lots")
    assert result.returncode != 0
    assert "RATE_LIMITS" in result.stderr


def test_sign_up_is_closed_unless_the_environment_opens_it():
    assert settings_json("settings.ALLOW_SIGNUP", DEBUG="1") is False
    assert settings_json("settings.ALLOW_SIGNUP", DEBUG="1", ALLOW_SIGNUP="1") is True


def test_production_logs_server_errors_to_standard_error_whatever_debug_says():
    expression = "[settings.LOGGING['loggers']['django'], settings.LOGGING['handlers']]"
    django_logger, handlers = settings_json(expression, **production_env())
    (handler,) = (handlers[name] for name in django_logger["handlers"])
    assert handler["class"] == "logging.StreamHandler"
    assert not handler.get("filters")  # Django's own console handler is mute without DEBUG
    assert django_logger["level"] in ("INFO", "WARNING", "ERROR")


def test_a_bad_log_level_stops_the_process():
    result = run_python("import django; django.setup()", DEBUG="1", LOG_LEVEL="LOUD")
    assert result.returncode != 0
    assert "LOG_LEVEL" in result.stderr
