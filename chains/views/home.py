"""The chain list: every chain the user may see, with its team and lint status badge, searchable."""

from __future__ import annotations

from django.db.models import Count, Max, OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chains.models import Chain, Revision
from chains.services.invitations import pending_for


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()[:200]
    heads = Revision.objects.filter(chain=OuterRef("pk")).order_by("-number")
    chains = (
        Chain.objects.visible_to(request.user)
        .select_related("team")
        .annotate(
            revision_count=Count("revisions"),
            head_number=Max("revisions__number"),
            head_status=Subquery(heads.values("status")[:1]),
        )
        .order_by("-updated_at", "key")
    )
    if query:
        chains = chains.filter(
            Q(key__icontains=query) | Q(title__icontains=query) | Q(description__icontains=query)
        )
    chains = list(chains)
    for chain in chains:
        if chain.head_number and not chain.head_status:  # stored before statuses were kept
            chain.head_status = chain.head().lint_status()
    context = {"chains": chains, "query": query, "invitations": list(pending_for(request.user))}
    return render(request, "chains/home.html", context)
