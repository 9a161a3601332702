"""Sign-in with a limit on guessing passwords.

After ``SIGNIN_MAX_FAILURES`` failed sign-ins for one username, or from one
client address, within ``SIGNIN_WINDOW_SECONDS``, the next attempts are
answered 429 without checking the password, until a whole window has passed
since the failure that reached the limit; a successful sign-in clears the
username's count (not the address's: one person signing in must not wipe out
another's guesses). Usernames count case-insensitively, so ``Ada`` and
``ada`` share a count. The counts live in Django's cache: per process with
the default local-memory cache, shared by every process with Redis
(``CACHE_URL``); while that does not answer, in each process's own memory
(``services.limits.counted``), so sign-in works with Redis down. The client
address is ``REMOTE_ADDR``, or behind a proxy the address the proxy appended
to X-Forwarded-For (``USE_X_FORWARDED_FOR``). The username counted is read
from the bound sign-in form (``typed_username``) without validating it, so a
locked sign-in never reaches the password check.
"""

from __future__ import annotations

import hashlib
import math
import time
import unicodedata
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import LoginView
from django.core.cache.backends.base import BaseCache
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.decorators import method_decorator

from chains.services.limits import client_address, counted


@method_decorator(login_not_required, name="dispatch")
class SignInView(LoginView):
    template_name = "registration/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        """The page states the limits it enforces, and offers sign-up only where it is open."""
        limits = {
            "max_failures": settings.SIGNIN_MAX_FAILURES,
            "window_minutes": math.ceil(settings.SIGNIN_WINDOW_SECONDS / 60),
        }
        return super().get_context_data(
            signin_limits=limits, signup_open=settings.ALLOW_SIGNUP, **kwargs
        )

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        until = locked_until(counters(request, self.typed_username()))
        if until is not None:
            return self.refused(until)
        return super().post(request, *args, **kwargs)

    def typed_username(self) -> str:
        """The username as posted, from the bound form's field (no password is checked)."""
        return self.get_form()["username"].value() or ""

    def form_invalid(self, form: Any) -> HttpResponse:
        for counter in counters(self.request, form["username"].value() or ""):
            record_failure(counter)
        return super().form_invalid(form)

    def form_valid(self, form: Any) -> HttpResponse:
        keys = _keys(username_counter(form["username"].value() or ""))
        counted(lambda store: store.delete_many(keys))
        return super().form_valid(form)

    def refused(self, until: float) -> HttpResponse:
        """The form again, saying when to come back; the password was not looked at."""
        seconds = max(1, math.ceil(until - time.time()))
        form = self.get_form_class()(self.request, initial={"username": self.typed_username()})
        context = self.get_context_data(
            form=form,
            locked_until=timezone.localtime(datetime.fromtimestamp(until, tz=UTC)),
            retry_minutes=math.ceil(seconds / 60),
        )
        response = self.render_to_response(context, status=429)
        response["Retry-After"] = str(seconds)
        return response


def counters(request: HttpRequest, username: str) -> list[str]:
    """The cache keys of the failure counts this attempt adds to: its username and address."""
    found = [f"signin:address:{_digest(client_address(request))}"]
    if username.strip():
        found.append(username_counter(username))
    return found


def username_counter(username: str) -> str:
    folded = unicodedata.normalize("NFKC", username).strip().casefold()
    return f"signin:username:{_digest(folded)}"


def record_failure(counter: str) -> None:
    """Count one failure; the one that reaches the limit locks the counter for a window."""
    counted(lambda store: _record_failure(store, *_keys(counter)))


def _record_failure(store: BaseCache, count_key: str, until_key: str) -> None:
    window = settings.SIGNIN_WINDOW_SECONDS
    store.add(count_key, 0, timeout=window)  # the window starts at the first failure
    try:
        failures = store.incr(count_key)
    except ValueError:  # the window ended between add and incr
        store.set(count_key, 1, timeout=window)
        failures = 1
    if failures >= settings.SIGNIN_MAX_FAILURES:
        store.set(until_key, time.time() + window, timeout=window)


def locked_until(counters: list[str]) -> float | None:
    """When the latest lock among ``counters`` ends (a Unix time), or None when none is on."""
    until_keys = [_keys(counter)[1] for counter in counters]
    found = counted(lambda store: store.get_many(until_keys))
    ends = [end for end in found.values() if end > time.time()]
    return max(ends, default=None)


def _keys(counter: str) -> tuple[str, str]:
    return f"{counter}:failures", f"{counter}:until"


def _digest(text: str) -> str:
    # Cache keys stay short and plain whatever a client sends.
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:32]
