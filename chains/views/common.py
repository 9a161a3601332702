"""Lookups every chain view shares, so none repeats them (and, later, permission checks)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404

from chains.models import Chain, Revision


def get_chain(key: str) -> Chain:
    return get_object_or_404(Chain, key=key)


def get_head(chain: Chain) -> Revision:
    head = chain.head()
    if head is None:
        raise Http404("this chain has no revision")
    return head


def get_revision(chain: Chain, number: int) -> Revision:
    return get_object_or_404(Revision, chain=chain, number=number)
