"""Import a chain document (YAML, JSON or a compile Markdown document) by upload or paste.

The report lists every problem with its line. Nothing is stored unless the
whole import is clean of errors: a document with two chains stores both or
neither, and a refused import changes nothing already saved.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from chains.core import formats
from chains.core.errors import DocumentError, Problem
from chains.models import Team, store_all
from chains.views.common import NoTeam, creating_team, unwritable


@require_http_methods(["GET", "POST"])
def import_chain(request: HttpRequest) -> HttpResponse:
    context = {"teams": Team.objects.creating(request.user), "team": request.POST.get("team", "")}
    if request.method == "GET":
        return render(request, "chains/import.html", context)
    data, name = _submitted(request)
    if data is None:
        return _refused(request, context, [Problem(name)])
    try:
        result = formats.load(data, filename=name or None)
    except DocumentError as exc:
        return _refused(request, context, exc.problems)
    context.update(result=result, problems=result.problems, pasted=request.POST.get("text", ""))
    try:
        team = creating_team(request.user, request.POST.get("team"))
    except NoTeam as exc:
        return _refused(request, context, [*result.problems, Problem(str(exc))])
    refused = [Problem(why) for why in unwritable(request, [c.id for c in result.chains])]
    if result.errors or not result.chains or refused:
        return _refused(request, context, [*result.problems, *refused])
    message = f"import {name or 'pasted text'}"
    stored = store_all(result.chains, message, author=request.user, team=team)
    if len(stored) == 1:
        return redirect("chains:chain", key=stored[0]["id"])
    return render(request, "chains/import.html", {**context, "stored": stored})


def _refused(request: HttpRequest, context: dict, problems: list[Problem]) -> HttpResponse:
    """The form again with the report; nothing was stored."""
    return render(request, "chains/import.html", {**context, "problems": problems}, status=400)


def _submitted(request: HttpRequest) -> tuple[bytes | str | None, str]:
    """The uploaded file or the pasted text and its name; (None, why) when neither is usable."""
    upload = request.FILES.get("file")
    if upload is not None:
        if upload.size > settings.CHAIN_UPLOAD_MAX_BYTES:
            limit = settings.CHAIN_UPLOAD_MAX_BYTES
            return None, f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,} bytes"
        return upload.read(), upload.name or ""
    text = request.POST.get("text", "")
    if len(text.encode("utf-8", errors="replace")) > settings.CHAIN_UPLOAD_MAX_BYTES:
        limit = settings.CHAIN_UPLOAD_MAX_BYTES
        return None, f"the pasted document is over the limit of {limit:,} bytes"
    if text.strip():
        return text, request.POST.get("name", "")
    return None, "choose a file to upload or paste a document"
