"""Lookups every chain view shares, with the permission check, so no view repeats them.

``get_chain(request, team, key, role)`` is the pages' door to a chain, through
``services.access.chain_access``: a person with no role on it gets 404 (its
existence is not revealed), one whose role is too small gets 403 naming the
role needed. The role found is kept on the chain (``chain.viewer_role``,
``chain.viewer_may(role)``) so templates can offer only what it allows.

``team`` is None on the short address ``/chains/<key>/...``, which older
links and scripts use: it names the one chain of that key the person may see.
When they may see several, :class:`ChooseChainMiddleware` answers with a page
that links the same page of each (409), since the address cannot say which.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chains.models import Chain, Role
from chains.services.access import AmbiguousChain, chain_access

__all__ = ["ChooseChainMiddleware", "get_chain"]


def get_chain(request: HttpRequest, team: str | None, key: str, role: str = Role.VIEWER) -> Chain:
    """The chain ``key`` of ``team`` if the signed-in user has at least ``role`` on it."""
    return chain_access(request.user, key, role, team=team)[0]


class ChooseChainMiddleware:
    """A short chain address that fits several of the person's chains: a page to choose one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, AmbiguousChain) or request.path.startswith("/api/"):
            return None
        short = f"/chains/{exception.key}/"
        rest = request.get_full_path().partition(short)[2]
        choices = [(chain, chain.url() + rest) for chain in exception.chains]
        context = {"key": exception.key, "choices": choices}
        return render(request, "chains/choose_chain.html", context, status=409)
