"""The inbox: what a person was told (review requests, mentions, decisions), newest first."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET, require_POST

from chains.models import Notification

SHOWN = 100  # the newest notifications the page lists


@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    """Your notifications, unread ones marked; each opens where it happened."""
    mine = Notification.objects.filter(recipient=request.user).select_related("chain", "actor")
    return render(request, "chains/inbox.html", {"notifications": mine[:SHOWN]})


@require_POST
def open_notification(request: HttpRequest, pk: int) -> HttpResponse:
    """Mark one of your notifications read and go where it points."""
    notification = get_object_or_404(Notification, pk=pk, recipient=request.user)
    Notification.objects.mark_read(request.user, pk)
    return redirect(notification.url)


@require_POST
def read_all(request: HttpRequest) -> HttpResponse:
    """Mark all your notifications read."""
    Notification.objects.mark_read(request.user)
    return redirect("chains:inbox")


def unread_count(request: HttpRequest) -> dict[str, Any]:
    """Context: the signed-in person's unread notifications, counted when a page shows it."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "unread_count": SimpleLazyObject(
            lambda: Notification.objects.filter(recipient=user).unread().count()
        )
    }
