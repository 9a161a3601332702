"""The pages for a chain one may not see (404) or a role too small (403).

A chain the person may not see is a 404 that says how access is had, the
same page whether the chain exists or not; a role too small for what they
asked is a 403 naming the role needed and the chain's owners, whom they may
ask (they see the chain, so naming its owners reveals nothing). Below
``/api/`` both are left to the API's JSON errors. A request refused unread
(400) and a bug (500) are the project's, not the app's: ``designer/errors.py``.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

from chains.services.access import ChainForbidden, ChainNotFound, chain_owners


@requires_csrf_token
def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/"):  # ApiErrorsAsJsonMiddleware turns it into JSON
        return defaults.page_not_found(request, exception)
    context = {"chain_hidden": isinstance(exception, ChainNotFound), "reason": _said(exception)}
    return render(request, "404.html", context, status=404)


@requires_csrf_token
def forbidden(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/"):
        return defaults.permission_denied(request, exception)
    context: dict[str, object] = {"reason": _said(exception)}
    if isinstance(exception, ChainForbidden):
        chain = exception.chain
        context.update(chain=chain, needed=exception.needed, have=exception.have)
        context["owners"] = chain_owners(chain)
    return render(request, "403.html", context, status=403)


def _said(exception: Exception) -> str:
    """The sentence the exception was raised with, or "" (the page then says something general)."""
    message = exception.args[0] if exception.args else ""
    return message if isinstance(message, str) else ""
