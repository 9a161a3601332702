"""Lookups every chain view shares, with the permission check, so no view repeats them.

``get_access(request, team, key, role)`` is the pages' door to a chain, through
``services.access.chain_access``: a person with no role on it gets 404 (its
existence is not revealed), one whose role is too small gets 403 naming the
role needed. It returns a :class:`~chains.services.access.ChainAccess`, the
chain and the role found, which a view passes on to whatever decides what the
page offers (``access.may(Role.EDITOR)``) and to its template as ``access``.
``get_chain`` is the same check for a view that needs the chain only.

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
from chains.services.access import AmbiguousChain, ChainAccess, chain_access

__all__ = ["ChooseChainMiddleware", "get_access", "get_chain"]


def get_access(
    request: HttpRequest, team: str | None, key: str, role: str = Role.VIEWER
) -> ChainAccess:
    """The chain ``key`` of ``team`` with the signed-in user's role, if at least ``role``."""
    return chain_access(request.user, key, role, team=team)


def get_chain(request: HttpRequest, team: str | None, key: str, role: str = Role.VIEWER) -> Chain:
    """The chain ``key`` of ``team`` if the signed-in user has at least ``role`` on it."""
    return get_access(request, team, key, role).chain


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
