"""Typed readers for settings that come from the environment.

Each helper returns the default when the variable is unset or empty and raises
ImproperlyConfigured, naming the variable, when a value cannot be understood:
a typo in a deployment must stop the process, not silently pick a default.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

__all__ = ["env_bool", "env_int", "env_list", "env_str"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(name: str, default: str | None = None, *, required: bool = False) -> str | None:
    value = _raw(name)
    if value is None:
        if required:
            raise ImproperlyConfigured(f"{name} must be set")
        return default
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}"
    )


def env_int(name: str, default: int) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer; got {value!r}") from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """Comma-separated values; blanks between commas are dropped."""
    value = _raw(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]
