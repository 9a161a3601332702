"""The home page: every stored chain with its revision count and head."""

from __future__ import annotations

from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chains.models import Chain


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    chains = Chain.objects.annotate(
        revision_count=Count("revisions"), head_number=Max("revisions__number")
    ).order_by("-updated_at", "key")
    return render(request, "chains/home.html", {"chains": chains})
