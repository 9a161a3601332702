"""Error pages: a request refused unread (400), no access (403, 404), a bug (500).

Django answers a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, more fields than
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` or files than ``DATA_UPLOAD_MAX_NUMBER_FILES``,
and other malformed requests with this handler (``handler400`` in
designer/urls.py). The page says which limit was hit in the user's terms and
that nothing was stored; any other cause gets a general sentence, since the
exception's own message is written for developers. Below ``/api/`` both
answer JSON in the API's error shape instead (``designer/api.py``).

A chain the person may not see is a 404 that says how access is had, the
same page whether the chain exists or not; a role too small for what they
asked is a 403 naming the role needed and the chain's owners, whom they may
ask (they see the chain, so naming its owners reveals nothing).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

from chains.services.access import ChainForbidden, ChainNotFound, chain_owners
from designer.api import SERVER_ERROR
from designer.security import NulCharacter


@requires_csrf_token
def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        limit = settings.CHAIN_UPLOAD_MAX_BYTES
        reason = (
            f"The request was larger than this site accepts. A chain document may be at most "
            f"{limit / 1024 / 1024:g} MiB ({limit:,} bytes), uploaded or pasted; "
            "split a larger one into several documents."
        )
    elif isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        reason = (
            f"The form sent more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields "
            "or too many files."
        )
    elif isinstance(exception, NulCharacter):
        reason = f"The request was refused: {exception}."
    else:
        reason = "The request could not be understood."
    if request.path.startswith("/api/"):  # the API's error shape (designer/api.py)
        error = {"code": "bad_request", "message": reason, "location": None}
        return JsonResponse({"error": error}, status=400)
    return render(request, "400.html", {"reason": reason}, status=400)


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    """Django has logged the traceback already; the API gets JSON, a page Django's 500 page."""
    if request.path.startswith("/api/"):
        error = {"code": "server_error", "message": SERVER_ERROR, "location": None}
        return JsonResponse({"error": error}, status=500)
    return defaults.server_error(request)


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
