"""Stored chains: a Chain is a name, its Revisions are immutable documents.

A revision holds one chain document as JSON (the output of
``chains.core.formats.to_document``) and the sha256 of its canonical form, so
storing the same content twice is a no-op and history is append-only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import models, transaction


def content_hash(document: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON form of a document (sorted keys, no spaces)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class ChainQuerySet(models.QuerySet):
    def store(self, document: dict[str, Any], message: str = "") -> Revision:
        """Save a document as the head of its chain (keyed by ``document["id"]``).

        Creates the chain when new; appends a revision only when the content
        differs from the head, and returns the head otherwise.
        """
        key = document["id"]
        digest = content_hash(document)
        with transaction.atomic():
            chain, _ = self.select_for_update().get_or_create(key=key)
            head = chain.head()
            if head is not None and head.content_hash == digest:
                return head
            chain.title = str(document.get("title") or key)[:200]
            chain.description = str(document.get("description") or "")
            chain.save()
            return chain.revisions.create(
                number=head.number + 1 if head else 1,
                document=document,
                content_hash=digest,
                message=message,
            )


class Chain(models.Model):
    key = models.SlugField(max_length=200, unique=True)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChainQuerySet.as_manager()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key

    def head(self) -> Revision | None:
        return self.revisions.order_by("-number").first()


class Revision(models.Model):
    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    content_hash = models.CharField(max_length=64)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chain", "number"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "number"], name="unique_revision_number")
        ]

    def __str__(self) -> str:
        return f"{self.chain.key}@{self.number}"
