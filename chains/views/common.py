"""Lookups every chain view shares, with the permission check, so no view repeats them.

``get_chain(request, key, role)`` is the pages' door to a chain, through
``services.access.chain_access``: a person with no role on it gets 404 (its
existence is not revealed), one whose role is too small gets 403 naming the
role needed. The role found is kept on the chain (``chain.viewer_role``,
``chain.viewer_may(role)``) so templates can offer only what it allows.
"""

from __future__ import annotations

from django.http import HttpRequest

from chains.models import Chain, Role
from chains.services.access import chain_access

__all__ = ["get_chain"]


def get_chain(request: HttpRequest, key: str, role: str = Role.VIEWER) -> Chain:
    """The chain ``key`` if the signed-in user has at least ``role`` on it."""
    return chain_access(request.user, key, role)[0]
