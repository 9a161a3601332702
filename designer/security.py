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
from django.http import HttpRequest, HttpResponse

__all__ = ["SecurityHeadersMiddleware", "csp_header", "permissions_policy_header"]


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
