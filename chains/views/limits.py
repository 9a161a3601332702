"""The pages' door to the rate limits: a decorator per expensive view, and the 429 page.

``@rate_limited("import")`` counts each POST (or each request of the methods
given) against the person's (or the client address's) limit for that action (``services.limits``,
``RATE_LIMITS`` in settings) before the view runs. Past it the answer is 429
with ``Retry-After`` and a page that says which limit and when to come back;
an htmx request gets only that message, placed above the page it came from
(``HX-Retarget``), so the form it was sent from stays as it was.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chains.services.limits import RateLimited, client_address, spend

__all__ = ["rate_limited", "too_many_requests"]

View = Callable[..., HttpResponse]


def rate_limited(
    action: str, methods: Iterable[str] = ("POST",), *, by_address: bool = False
) -> Callable[[View], View]:
    """Count the view's ``methods`` requests against ``action``; past the limit, a 429 page.

    A signed-in person is counted by account, anyone else by client address;
    ``by_address`` counts by address always (sign-up: one client, many accounts).
    """
    counted = frozenset(methods)

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method in counted:
                try:
                    user = None if by_address else request.user
                    spend(action, user=user, address=client_address(request))
                except RateLimited as exc:
                    return too_many_requests(request, exc)
            return view(request, *args, **kwargs)

        return limited

    return decorate


def too_many_requests(request: HttpRequest, refused: RateLimited) -> HttpResponse:
    htmx = request.headers.get("HX-Request") == "true"
    template = "429.html#message" if htmx else "429.html"
    response = render(request, template, {"refused": refused}, status=429)
    response["Retry-After"] = str(refused.retry_after)
    if htmx:
        response["HX-Retarget"] = "main"
        response["HX-Reswap"] = "afterbegin"
    return response
