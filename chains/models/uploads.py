"""Provider OpenAPI documents uploaded on a chain's OpenAPI page, kept while a person picks.

One upload per chain and person (``chains.views.openapi``): the document's
text with its name, size and sha256; the operations read from it, as JSON,
with a fingerprint of the code that read them (reading Stripe's 4 MB
document takes about 3 s; loading its 468 operations back takes a few
milliseconds), read again from the text only when that code has changed since;
and the person's ticks and the effects they chose, so each page of the list
posts only its own rows and the final *Add* posts no document at all. A new
upload replaces the person's old one (its address then finds nothing),
adding the ticked operations deletes it, and one older than :data:`UPLOAD_KEPT_FOR`
has expired: its page says so, and the next upload anyone makes sweeps
every expired one away. ``OpenApiUpload`` names ``Chain`` by string, so this
module imports no other model module but ``fields`` at run time.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from chains.core import openapi
from chains.core.errors import Problem
from chains.core.openapi import STATED_KEY, Operation, Provider, read_provider
from chains.models.fields import DocumentField

if TYPE_CHECKING:
    from chains.models.chains import Chain

__all__ = ["UPLOAD_KEPT_FOR", "OpenApiUpload", "OpenApiUploadQuerySet", "reader_version"]

UPLOAD_KEPT_FOR = timedelta(days=1)
_NOT_READING = {"picking.py"}  # choosing among operations does not change what is read


@functools.cache
def reader_version() -> str:
    """A fingerprint of the code that reads a document into operations: its modules' text.

    Stored operations carry the fingerprint of the code that read them; any
    change to that code (a new field on :class:`Operation`, a better guess of
    an effect) makes a stored upload read its text again, once.
    """
    digest = hashlib.sha256()
    folder = Path(openapi.__file__).parent
    for module in sorted(folder.glob("*.py")):
        if module.name not in _NOT_READING:
            digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


class OpenApiUploadQuerySet(models.QuerySet):
    def keep(
        self, chain: Chain, user: Any, *, name: str, text: str, read: Provider
    ) -> OpenApiUpload:
        """Keep ``text`` (``read`` into its operations) as ``user``'s upload on ``chain``.

        It replaces their earlier one there, ticks and all, and every expired
        upload is deleted on the way.
        """
        now = timezone.now()
        data = text.encode("utf-8")
        fields = {
            "name": name[:255],
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "text": text,
            "operations": [op.as_dict() for op in read.operations],
            "warnings": [_warning(w) for w in read.warnings],
            "key_header": read.key_header or "",
            "key_source": read.key_source[:200],
            "reader": reader_version(),
            "expires_at": now + UPLOAD_KEPT_FOR,
        }
        self.filter(expires_at__lte=now).delete()
        for attempt in (1, 2):
            try:
                with transaction.atomic():
                    self.filter(chain=chain, user=user).delete()
                    return self.create(chain=chain, user=user, **fields)
            except IntegrityError:  # the same person's other upload, stored meanwhile
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


class OpenApiUpload(models.Model):
    """A person's uploaded OpenAPI document on a chain, its operations and their ticks."""

    chain = models.ForeignKey("Chain", on_delete=models.CASCADE, related_name="openapi_uploads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=255, blank=True)
    size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    text = models.TextField()
    # Operation.as_dict() of each operation, in the document's order.
    operations: Any = DocumentField()
    reader = models.CharField(max_length=64)  # reader_version() of the code that read them
    # Where the document breaks the OpenAPI schema ({"path", "message"}), its operations read.
    warnings = models.JSONField(default=list)
    # The header every POST takes its key in, and who says so (the document, or the person).
    key_header = models.CharField(max_length=200, blank=True)
    key_source = models.CharField(max_length=200, blank=True)
    # The ids ticked, and the effects chosen where they differ from the guess (ticked or not).
    ticked = models.JSONField(default=list)
    effects = models.JSONField(default=dict)
    # The chain's action each operation is to attach to, where chosen ("": a new action).
    onto = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    objects = OpenApiUploadQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chain", "user"], name="one_openapi_upload_per_person")
        ]

    def __str__(self) -> str:
        return f"{self.name or 'pasted document'} on {self.chain_id} by {self.user_id}"

    def url(self, name: str = "openapi_upload") -> str:
        return self.chain.url(name, self.pk)

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    def read_operations(self) -> list[Operation]:
        """The operations, as stored; read again from the text (and stored so) when the code
        that reads documents changed since, or they no longer fit :class:`Operation`.

        Raises ``DocumentError`` when the text no longer reads (the reader grew stricter).
        """
        if self.reader == reader_version():
            try:
                return [Operation.from_dict(one) for one in self.operations]
            except (TypeError, KeyError, AttributeError):
                pass  # stored by other code under the same fingerprint: read the text again
        text = type(self).objects.values_list("text", flat=True).get(pk=self.pk)
        stated = self.key_header if self.key_source == STATED_KEY else None
        read = read_provider(text, self.name, limit=max(len(text.encode()), 1), key_header=stated)
        self.operations = [op.as_dict() for op in read.operations]
        self.warnings = [_warning(w) for w in read.warnings]
        self.reader = reader_version()
        self.save(update_fields=["operations", "warnings", "reader"])
        return read.operations

    def tick(
        self,
        shown: Mapping[str, str],
        picked: Iterable[str],
        guessed: Mapping[str, str],
        onto: Mapping[str, str] | None = None,
    ):
        """Keep what one page of the list said: of the ids ``shown`` on it (with the effect
        chosen for each), those ``picked`` are ticked and the others not; an effect equal to
        the ``guessed`` one is no choice; ``onto`` names the chain's action each of them is
        to attach to ("": a new action). Ticks on other pages stay as they were, even when
        two pages of the same upload are saved at once."""
        picked = set(picked)
        with transaction.atomic():
            row = (
                type(self)
                .objects.select_for_update()
                .only("ticked", "effects", "onto")
                .get(pk=self.pk)
            )
            ticked, effects = set(row.ticked), dict(row.effects)
            attached = {**row.onto, **(onto or {})}
            for op, effect in shown.items():
                if op in picked:
                    ticked.add(op)
                else:
                    ticked.discard(op)
                if effect == guessed.get(op):
                    effects.pop(op, None)
                else:
                    effects[op] = effect
            ticked |= picked  # a tick posted without its menu (a crafted form) counts too
            self.ticked, self.effects, self.onto = sorted(ticked), effects, attached
            self.save(update_fields=["ticked", "effects", "onto"])


def _warning(problem: Problem) -> dict[str, str]:
    return {"path": problem.path or "", "message": problem.message}
