"""The security headers Django 5.2 does not send: Content-Security-Policy, Permissions-Policy.

Django's SecurityMiddleware already sends X-Content-Type-Options, Referrer-Policy
and Cross-Origin-Opener-Policy, and XFrameOptionsMiddleware X-Frame-Options;
this middleware adds the other two to every response, from settings shaped
like Django 6's (``SECURE_CSP`` and ``SECURE_CSP_REPORT_ONLY``: directive →
sources; ``PERMISSIONS_POLICY``: feature → allowed origins, empty for none),
so Django 6's own CSP middleware can replace it without touching the policy.
It assumes every page keeps its scripts and styles in our static files. A
header a view already set is left alone. With DEBUG on, error responses go
without a policy: Django's debug pages style themselves inline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict

__all__ = [
    "ApiErrorsAsJsonMiddleware",
    "NulCharacter",
    "RefuseNulMiddleware",
    "SecurityHeadersMiddleware",
    "csp_header",
    "permissions_policy_header",
]


def csp_header(policy: Mapping[str, Sequence[str]]) -> str:
    """``{"default-src": ["'self'"], "img-src": ["'self'", "data:"]}`` as a header value.

    >>> csp_header({"default-src": ["'self'"], "img-src": ["'self'", "data:"]})
    "default-src 'self'; img-src 'self' data:"
    """
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


def permissions_policy_header(policy: Mapping[str, Sequence[str]]) -> str:
    """``{"camera": [], "fullscreen": ["self"]}`` as ``camera=(), fullscreen=(self)``."""
    return ", ".join(f"{feature}=({' '.join(allowed)})" for feature, allowed in policy.items())


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code >= 400:
            return response
        headers = {
            "Content-Security-Policy": csp_header(settings.SECURE_CSP),
            "Content-Security-Policy-Report-Only": csp_header(settings.SECURE_CSP_REPORT_ONLY),
            "Permissions-Policy": permissions_policy_header(settings.PERMISSIONS_POLICY),
        }
        for name, value in headers.items():
            if value:
                response.headers.setdefault(name, value)
        return response


URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


class NulCharacter(SuspiciousOperation):
    """A request carrying a NUL character, which no field of ours can store."""


class RefuseNulMiddleware:
    """Refuse (400) a request whose path, query, form or body holds a NUL character.

    PostgreSQL cannot store or even compare text with one, so a NUL reaching
    a query would end in a server error; refusing it at the door is simpler
    than guarding every field. A body is checked whatever its content type
    claims, since the API reads JSON from a ``text/plain`` or even a form body:
    a form field by field, then the raw body for the byte and for the JSON
    escape ``\\u0000`` (a browser sends a backslash in a form as ``%5C``).
    Files uploaded in a multipart form are left to their readers: chain and
    scenario documents say where the character is.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = self._nul(request)
        if where:
            raise NulCharacter(f"{where} contains a NUL character, which cannot be stored")
        return self.get_response(request)

    def _nul(self, request: HttpRequest) -> str | None:
        if "\x00" in request.path:
            return "the address"
        for name, form in (("query", request.GET), ("form", self._form(request))):
            for key, values in form.lists():
                if "\x00" in key or any("\x00" in str(v) for v in values):
                    return f"the {name} field {key!r}"
        if request.content_type != MULTIPART:
            body = request.body
            if b"\x00" in body or b"\\u0000" in body:
                return "the body"
        return None

    def _form(self, request: HttpRequest) -> QueryDict:
        if request.method == "POST" and request.content_type in (URLENCODED, MULTIPART):
            return request.POST
        if request.content_type == URLENCODED:  # Django reads form bodies of POSTs only
            return QueryDict(request.body, encoding=request.encoding)
        return QueryDict()


class ApiErrorsAsJsonMiddleware:
    """Below ``/api/``, an error answer that is not JSON becomes the API's error shape.

    The operations answer their errors in JSON themselves (designer/api.py),
    and Django's 400 and 500 handlers do below ``/api/``; this catches what
    comes before any operation: Django's 404 for an address no operation
    answers, and the 405 for a method an operation does not take.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        is_json = response.get("Content-Type", "").startswith("application/json")
        if response.status_code < 400 or is_json or not request.path.startswith("/api/"):
            return response
        if response.status_code == 404:
            code, message = "not_found", f"no API operation answers {request.path}"
        elif response.status_code == 405:
            allowed = response.get("Allow", "")
            code = "method_not_allowed"
            message = f"{request.path} does not take {request.method}; it takes {allowed}"
        else:
            code, message = "http_error", response.reason_phrase
        error = {"code": code, "message": message, "location": None}
        answer = JsonResponse({"error": error}, status=response.status_code)
        for header in ("Allow", "Retry-After"):
            if header in response:
                answer[header] = response[header]
        return answer
