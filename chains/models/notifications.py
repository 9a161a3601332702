"""What people are told: review requests, mentions and review decisions, in an inbox.

A notification is written when the verb that causes it is carried out (the
services in ``chains.services.review`` call :meth:`NotificationQuerySet.send`),
never for the person who acted, and read in the inbox page. When e-mail is
on (``NOTIFY_BY_EMAIL``, docs/configuration.md), each also goes out through
Django's e-mail backend once the transaction that wrote it has committed; a
failed send is logged and loses nothing in the inbox.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.mail import send_mass_mail
from django.db import models, transaction
from django.utils import timezone

from chains.models.chains import Chain

__all__ = ["Notification", "NotificationKind", "NotificationQuerySet"]

logger = logging.getLogger(__name__)


class NotificationKind(models.TextChoices):
    REVIEW_REQUESTED = "review_requested", "review requested"
    MENTION = "mention", "mention"
    REVIEW_DECIDED = "review_decided", "review decided"


class NotificationQuerySet(models.QuerySet):
    def unread(self) -> NotificationQuerySet:
        return self.filter(read_at__isnull=True)

    def send(
        self,
        recipients: Iterable[Any],
        kind: str,
        chain: Chain,
        *,
        actor: Any,
        text: str,
        url: str,
    ) -> list[Notification]:
        """One notification per recipient but ``actor`` (each person once); e-mail after commit."""
        actor_pk = getattr(actor, "pk", None)
        people = {p.pk: p for p in recipients if p is not None and p.pk != actor_pk}
        made = self.bulk_create(
            Notification(
                recipient=person,
                kind=kind,
                chain=chain,
                actor=actor if actor_pk is not None else None,
                text=text[: Notification.TEXT_MAX],
                url=url,
            )
            for person in people.values()
        )
        if settings.NOTIFY_BY_EMAIL:
            mails = [_mail(n) for n in made if n.recipient.email]
            if mails:
                transaction.on_commit(lambda: _send(mails))
        return made

    def mark_read(self, recipient: Any, pk: int | None = None) -> int:
        """Mark ``recipient``'s notification ``pk`` (or all of them) read; how many changed."""
        mine = self.filter(recipient=recipient).unread()
        if pk is not None:
            mine = mine.filter(pk=pk)
        return mine.update(read_at=timezone.now())


class Notification(models.Model):
    TEXT_MAX = 300

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="notifications")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.CharField(max_length=TEXT_MAX)
    url = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["recipient", "read_at"], name="notification_inbox")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.recipient}: {self.text}"


def _mail(n: Notification) -> tuple[str, str, str | None, list[str]]:
    subject = f"[Chain Designer] {n.get_kind_display()}: {n.chain.key}"
    link = f"{settings.SITE_URL.rstrip('/')}{n.url}" if settings.SITE_URL else n.url
    return subject, f"{n.text}\n\n{link}\n", None, [n.recipient.email]


def _send(mails: list[tuple[str, str, str | None, list[str]]]) -> None:
    try:
        send_mass_mail(mails, fail_silently=False)
    except Exception:  # the inbox has them; a mail server that is down must not fail the verb
        logger.exception("could not send %d notification e-mail(s)", len(mails))
