"""What people are told: review requests, mentions and review decisions, in an inbox.

A notification is written when the verb that causes it is carried out (the
services in ``chains.services.review`` call :meth:`NotificationQuerySet.send`),
never for the person who acted, and read in the inbox page. When e-mail is
on (``NOTIFY_BY_EMAIL``, docs/configuration.md), the notification is also the
outbox: it keeps the address to mail, the attempts, the last error and when
it went. No request talks to the mail server: once the transaction commits,
a task is queued (through the function given to :func:`connect_mailer`; the
app connects ``chains.tasks.queue_mail``) and a Celery worker sends every
mail still waiting (:meth:`NotificationQuerySet.mail`), trying again later on
failure. A mail the queue did not take waits for the next send, or for the
next worker to start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from chains.models.chains import Chain

__all__ = [
    "MAIL_ATTEMPTS",
    "Notification",
    "NotificationKind",
    "NotificationQuerySet",
    "connect_mailer",
]

logger = logging.getLogger(__name__)

# Tries per mail before it is left unsent (its last error stays on the notification).
MAIL_ATTEMPTS = 5
MAILS_PER_BATCH = 100

# What queues the sending of waiting mails; set by connect_mailer().
_queue_mail: Callable[[], None] | None = None


def connect_mailer(queue: Callable[[], None]) -> None:
    """Queue the sending of waiting mails through ``queue()`` from now on (the app's start-up)."""
    global _queue_mail
    _queue_mail = queue


def queue_mail() -> None:
    """Ask a worker to send the waiting mails; a queue that is down leaves them waiting."""
    try:
        if _queue_mail is None:
            raise RuntimeError("no mailer is connected (chains.models.connect_mailer)")
        _queue_mail()
    except Exception as exc:  # the outbox keeps them for the next send
        logger.warning("could not queue notification e-mail: %s", exc)


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
                email_to=person.email if settings.NOTIFY_BY_EMAIL else "",
            )
            for person in people.values()
        )
        if any(n.email_to for n in made):
            transaction.on_commit(queue_mail)
        return made

    def unmailed(self) -> NotificationQuerySet:
        """Mails waiting to be sent: an address, not sent yet, attempts left."""
        return self.exclude(email_to="").filter(
            mailed_at__isnull=True, mail_attempts__lt=MAIL_ATTEMPTS
        )

    def mail(self, limit: int = MAILS_PER_BATCH) -> tuple[int, int]:
        """Send the waiting mails, oldest first, over one connection; (sent, failed).

        Each attempt is claimed with a conditional update on the attempt count,
        so two workers never send one mail twice at once. The first failure
        ends the batch (a server that is down or hangs fails the rest alike,
        each after EMAIL_TIMEOUT); it is recorded on that mail, and the rest
        wait for the next send.
        """
        sent = 0
        connection = get_connection(fail_silently=False)
        try:
            for n in self.unmailed().select_related("chain").order_by("pk")[:limit]:
                mine = Notification.objects.filter(
                    pk=n.pk, mailed_at__isnull=True, mail_attempts=n.mail_attempts
                )
                if not mine.update(mail_attempts=F("mail_attempts") + 1):
                    continue  # another worker has it
                try:
                    connection.send_messages([n.email()])
                except Exception as exc:
                    logger.warning("could not mail notification %s: %s", n.pk, exc)
                    error = f"{type(exc).__name__}: {exc}"[:500]
                    Notification.objects.filter(pk=n.pk).update(mail_error=error)
                    return sent, 1
                Notification.objects.filter(pk=n.pk).update(mailed_at=timezone.now(), mail_error="")
                sent += 1
        finally:
            connection.close()
        return sent, 0

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
    # The outbox: where to mail it (empty: not mailed), tries so far, the last error, when sent.
    email_to = models.EmailField(blank=True)
    mail_attempts = models.PositiveSmallIntegerField(default=0)
    mail_error = models.TextField(blank=True)
    mailed_at = models.DateTimeField(null=True, blank=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["recipient", "read_at"], name="notification_inbox"),
            models.Index(
                fields=["mailed_at"], condition=~models.Q(email_to=""), name="notification_outbox"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.recipient}: {self.text}"

    def email(self) -> EmailMessage:
        """This notification as a mail to ``email_to``, its link absolute when SITE_URL is set."""
        subject = f"[Chain Designer] {self.get_kind_display()}: {self.chain.key}"
        link = f"{settings.SITE_URL.rstrip('/')}{self.url}" if settings.SITE_URL else self.url
        return EmailMessage(subject, f"{self.text}\n\n{link}\n", to=[self.email_to])
