"""The project's own error answers: a request refused unread (400) and a bug (500).

Django answers a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, more fields than
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` or files than ``DATA_UPLOAD_MAX_NUMBER_FILES``,
a NUL character (``security.RefuseNulMiddleware``) and other malformed requests
with :func:`bad_request` (``handler400`` in ``urls.py``). The page says which
limit was hit in the user's terms and that nothing was stored; any other cause
gets a general sentence, since the exception's own message is written for
developers. Below ``/api/`` both answer JSON in the API's error shape instead
(``api.error``). These live here, not in an app, because what they answer
(request limits, the project's middleware, the API's error shape) is the
project's: the apps import nothing from ``designer`` but settings.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

from designer.api import SERVER_ERROR, error
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
    if request.path.startswith("/api/"):
        return error(request, 400, "bad_request", reason)
    return render(request, "400.html", {"reason": reason}, status=400)


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    """Django has logged the traceback already; the API gets JSON, a page Django's 500 page."""
    if request.path.startswith("/api/"):
        return error(request, 500, "server_error", SERVER_ERROR)
    return defaults.server_error(request)
