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

from designer.env import env_bool, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parent.parent
OUR_VARIABLES = {
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
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


def test_production_configuration_passes_check_deploy_without_warnings():
    code = (
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('check', deploy=True, fail_level='WARNING')"
    )
    result = run_python(code, **production_env())
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNING" not in result.stdout + result.stderr
