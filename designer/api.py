"""The project's one ``NinjaAPI``: authentication, the routers, and errors as JSON.

Every error leaves as ``{"error": {"code", "message", "location"}}`` (plus
``problems`` for a document that does not load), so a pipeline can branch on
``code`` and point a person at ``location``. That holds for a request past a
rate limit (429 ``rate_limited``, with ``Retry-After``) and for a bug too: an
unexpected exception is logged with its traceback and answers 500
``server_error`` in JSON, DEBUG on or off (Django's own 500 page for a
failure outside the operations is JSON below ``/api/`` as well: ``handler500``).
That shape is ``ErrorOut`` in ``chains/api/schemas.py``, which every operation
declares for its errors. The interactive docs are at ``/api/docs`` and the
OpenAPI document at ``/api/openapi.json``: built once per process, as it
changes only with the code, and both limited for anyone not signed in
(``RATE_LIMITS["docs"]``, by client address).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.http.request import RawPostDataException
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer, SessionAuth

from chains.api import Refused
from chains.api import router as chains_router
from chains.core.edit import EditError
from chains.core.errors import ChainError, DocumentError
from chains.models import ApiToken, NothingToUndo, QueueDown, ReviewError, StaleRevision
from chains.services.access import AmbiguousChain
from chains.services.campaigns import BadCampaign
from chains.services.limits import RateLimited, client_address, spend

SERVER_ERROR = "the server failed to answer this request; the error is logged for its operators"


class TokenAuth(HttpBearer):
    """``Authorization: Bearer cd_…``: a personal token, acting as its owner."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = ApiToken.objects.authenticate(token)
        if found is None:
            return None
        request.user = found.user
        return found.user


class DesignerAPI(NinjaAPI):
    """A NinjaAPI that builds its OpenAPI document once (most of a second) and keeps it.

    The document is shared by every caller: it must not be changed.
    """

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.schemas: dict[str, Any] = {}
        self.building = threading.Lock()

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> Any:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        with self.building:
            if path_prefix not in self.schemas:
                self.schemas[path_prefix] = super().get_openapi_schema(path_prefix=path_prefix)
            return self.schemas[path_prefix]


def docs_limited(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The docs page and the OpenAPI document count against ``docs`` when nobody is signed in."""

    @functools.wraps(view)
    def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            try:
                spend("docs", address=client_address(request))
            except RateLimited as exc:
                return rate_limited(request, exc)
        return view(request, *args, **kwargs)

    return limited


api = DesignerAPI(
    title="Chain Designer API",
    version="1",
    description="Chains, revisions, lint, simulation, campaigns, scenarios and exports.",
    auth=[TokenAuth(), SessionAuth()],
    urls_namespace="api",
    docs_decorator=docs_limited,
)
api.add_router("/", chains_router)


def error(
    request: HttpRequest, status: int, code: str, message: str, location: Any = None, **more: Any
) -> HttpResponse:
    body = {"error": {"code": code, "message": message, "location": location}, **more}
    return api.create_response(request, body, status=status)


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error(request, 404, "not_found", str(exc) or "not found")


@api.exception_handler(PermissionDenied)
def forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return error(request, 403, "forbidden", str(exc) or "your role does not allow this")


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    message = "sign in, or send Authorization: Bearer <a personal token>"
    return error(request, 401, "unauthorized", message)


@api.exception_handler(ValidationError)
def invalid_request(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = [
        {"message": e.get("msg", ""), "location": ".".join(str(p) for p in e.get("loc", ()))}
        for e in exc.errors
    ]
    first = problems[0] if problems else None
    message = first["message"] if first else "invalid request"
    location = first["location"] if first else None
    return error(request, 422, "invalid_request", message, location, problems=problems)


@api.exception_handler(DocumentError)
def invalid_document(request: HttpRequest, exc: DocumentError) -> HttpResponse:
    problems = [p.as_dict() for p in exc.problems]
    first = exc.problems[0] if exc.problems else None
    where = (first.path or (f"line {first.line}" if first.line else None)) if first else None
    return error(request, 400, "invalid_document", str(exc), where, problems=problems)


@api.exception_handler(AmbiguousChain)
def ambiguous(request: HttpRequest, exc: AmbiguousChain) -> HttpResponse:
    return error(request, 409, "ambiguous_key", f"{exc}: add ?team=<slug>", "team")


@api.exception_handler(StaleRevision)
def conflict(request: HttpRequest, exc: StaleRevision) -> HttpResponse:
    return error(request, 409, "stale_revision", str(exc), "base")


@api.exception_handler(EditError)
def edit_refused(request: HttpRequest, exc: EditError) -> HttpResponse:
    problems = [p.as_dict() for p in exc.problems]
    return error(request, 400, "edit_refused", str(exc), exc.path or None, problems=problems)


@api.exception_handler(NothingToUndo)
def nothing_to_undo(request: HttpRequest, exc: NothingToUndo) -> HttpResponse:
    return error(request, 400, "nothing_to_undo", str(exc), "base")


@api.exception_handler(QueueDown)
def queue_down(request: HttpRequest, exc: QueueDown) -> HttpResponse:
    return error(request, 503, "queue_down", str(exc))


@api.exception_handler(Refused)
def refused(request: HttpRequest, exc: Refused) -> HttpResponse:
    return error(request, exc.status, exc.code, str(exc), exc.location)


@api.exception_handler(ReviewError)
def review_refused(request: HttpRequest, exc: ReviewError) -> HttpResponse:
    message = str(exc)
    field, _, rest = message.partition(": ")
    where = field if rest and field.isidentifier() else None  # "reviewers: …" names the field
    return error(request, 400, "review_refused", message, where)


@api.exception_handler(BadCampaign)
def campaign_refused(request: HttpRequest, exc: BadCampaign) -> HttpResponse:
    return error(request, 400, "refused", str(exc), exc.field)


@api.exception_handler(ChainError)
def domain_error(request: HttpRequest, exc: ChainError) -> HttpResponse:
    return error(request, 400, "refused", str(exc))


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error(request, exc.status_code, "http_error", str(exc))


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = error(request, 429, "rate_limited", str(exc))
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(RawPostDataException)
def form_body(request: HttpRequest, exc: RawPostDataException) -> HttpResponse:
    # A multipart body has been read as a form (for its NUL check); the API reads JSON only.
    message = "send the body as JSON (Content-Type: application/json), not as a multipart form"
    return error(request, 400, "bad_request", message)


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    if isinstance(exc, SuspiciousOperation | BadRequest):
        raise exc  # Django answers these 400 itself, in JSON below /api/ (handler400)
    logging.getLogger("django.request").error(
        "Internal Server Error: %s",
        request.path,
        exc_info=exc,
        extra={"status_code": 500, "request": request},
    )
    return error(request, 500, "server_error", SERVER_ERROR)


def urls() -> tuple[list, str, str]:
    """The API's URL patterns, answered by the API itself when nobody is signed in.

    (The sign-in middleware would redirect to the sign-in page; an API client
    wants a 401 in JSON.)
    """
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback.login_required = False
    return patterns, app_name, namespace
