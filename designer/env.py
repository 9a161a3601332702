"""Typed readers for settings that come from the environment.

Each helper returns the default when the variable is unset or empty and raises
ImproperlyConfigured, naming the variable, when a value cannot be understood:
a typo in a deployment must stop the process, not silently pick a default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal, overload

from django.core.exceptions import ImproperlyConfigured

__all__ = ["env_bool", "env_int", "env_list", "env_rates", "env_str"]

_SECONDS = {"s": 1, "m": 60, "h": 60 * 60, "d": 24 * 60 * 60}
_RATE = re.compile(r"(?P<action>[a-z_]+)=(?P<count>[0-9]+)/(?P<span>[0-9]*)(?P<unit>[smhd])")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


@overload
def env_str(name: str, default: str, *, required: bool = False) -> str: ...
@overload
def env_str(name: str, default: None = None, *, required: Literal[True]) -> str: ...
@overload
def env_str(name: str, default: None = None, *, required: bool = False) -> str | None: ...


def env_str(name: str, default: str | None = None, *, required: bool = False) -> str | None:
    """The variable's text; ``default`` when unset or empty (a str default gives a str)."""
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


def env_rates(name: str, default: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Rate limits as ``action=count/window``, comma-separated: ``import=30/10m, lint=5/s``.

    A window is a number (1 if left out) of s, m, h or d. Each value is
    ``(count, seconds)``; actions not named keep their default, and an action
    the default does not know stops the process like any malformed part.
    """
    rates = dict(default)
    for part in env_list(name):
        found = _RATE.fullmatch(part.replace(" ", ""))
        if found is None or int(found["count"]) < 1 or int(found["span"] or 1) < 1:
            raise ImproperlyConfigured(
                f"{name}: {part!r} is not action=count/window, e.g. lint=60/10m "
                "(a count of 1 or more; a window in s, m, h or d)"
            )
        if found["action"] not in rates:
            raise ImproperlyConfigured(
                f"{name}: no limit is called {found['action']!r}; "
                f"the limits are {', '.join(sorted(rates))}"
            )
        seconds = int(found["span"] or 1) * _SECONDS[found["unit"]]
        rates[found["action"]] = (int(found["count"]), seconds)
    return rates
