"""One chain: its head revision summarised, its history, and downloads.

Read-only for now; the designer workspace replaces the summary later. Every
view finds its chain through ``_get_chain`` so lookups (and, later,
permission checks) live in one place.
"""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from chains.core import formats
from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.models import Chain, Revision

CONTENT_TYPES = {"yaml": "application/yaml; charset=utf-8", "json": "application/json"}


def _get_chain(key: str) -> Chain:
    return get_object_or_404(Chain, key=key)


def _get_revision(chain: Chain, number: int) -> Revision:
    return get_object_or_404(Revision, chain=chain, number=number)


@require_GET
def chain_detail(request: HttpRequest, key: str) -> HttpResponse:
    chain = _get_chain(key)
    head = chain.head()
    if head is None:
        raise Http404("this chain has no revision")
    context = {"chain": chain, "head": head, "revisions": chain.revisions.order_by("-number")}
    try:
        document = formats.from_document(head.document)
    except DocumentError as exc:
        # Stored before the grammar changed: show it as stored, with the reasons.
        context.update(problems=exc.problems, raw=json.dumps(head.document, indent=2))
    else:
        context.update(
            document=document, yaml=formats.dump(document, "yaml"), report=lint(document)
        )
    return render(request, "chains/chain.html", context)


@require_GET
def revision_export(request: HttpRequest, key: str, number: str, fmt: str) -> HttpResponse:
    revision = _get_revision(_get_chain(key), int(number))
    try:
        text = formats.dump(formats.from_document(revision.document), fmt)
    except DocumentError as exc:
        message = f"revision {number} no longer validates: {exc}\n"
        return HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(text, content_type=CONTENT_TYPES[fmt])
    filename = f"{revision.chain.key}-r{revision.number}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Hash"] = revision.content_hash
    return response
