"""Lookups every chain view shares, so none repeats them (and, later, permission checks)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404

from chains.core import formats
from chains.core.model import Chain as Document
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


class Recent:
    """The last few dozen values computed from a revision's content, by content hash.

    Revisions are immutable and core functions never change a document in
    place, so what is derived from one content stays true; the workspace
    reuses it across the clicks and edits of a session.
    """

    def __init__(self, size: int = 64):
        self.size = size
        self.values: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self.lock:
            return self.values.get(key)

    def put(self, key: str, value: Any) -> Any:
        with self.lock:
            self.values[key] = value
            self.values.move_to_end(key)
            while len(self.values) > self.size:
                self.values.popitem(last=False)
        return value


_PARSED = Recent()


def document_of(revision: Revision, known: Document | None = None) -> Document:
    """The validated document of ``revision``, parsed once per content hash.

    ``known`` primes the cache with a document just saved. Raises
    :class:`DocumentError` like ``from_document``.
    """
    key = revision.content_hash
    document = known or _PARSED.get(key)
    if document is None:
        document = formats.from_document(revision.document)
    return _PARSED.put(key, document)
