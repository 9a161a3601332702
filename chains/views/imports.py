"""Import a chain document (YAML, JSON or a compile Markdown document) by upload or paste.

A thin shell over ``chains.services.imports``, which the API and ``chain
import`` call too. A clean document is stored at once. One whose import lost
something (an error problem) comes back as a confirmation: its problems, errors
first, each linked to its line in a numbered listing of the text, the text in
the form, and a button that stores the usable chains. The button carries the
digest of the text it confirms, so an edited text is checked again, never
stored unseen. A document with nothing usable is a 400; nothing is stored.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, Field

from chains.core.errors import Problem
from chains.models import Team
from chains.services.access import NoTeam, creating_team
from chains.services.imports import Imported, digest, import_document
from chains.views.forms import read_post
from chains.views.limits import rate_limited

TEMPLATE = "chains/import.html"


class ImportForm(BaseModel):
    """The import form besides an uploaded file (``request.FILES``, read as it comes)."""

    text: str = Field("", description="a pasted document")
    name: str = Field("", description="its file name, which tells its format")
    team: str = Field("", description="slug of the team new chains belong to")
    confirm: str = Field("", description="the digest of the text whose problems were accepted")


@require_http_methods(["GET", "POST"])
@rate_limited("import")
def import_chain(request: HttpRequest) -> HttpResponse:
    form = read_post(request, ImportForm)
    context = _form(request, form)
    if request.method == "GET":
        return render(request, TEMPLATE, context)
    data, name = _submitted(request, form)
    if data is None:  # an oversized paste is not sent back: it could not be imported anyway
        refused = {**context, "problems": [Problem(name)], "pasted": ""}
        return render(request, TEMPLATE, refused, status=400)
    try:
        team = creating_team(request.user, form.team)
    except NoTeam as exc:
        return render(request, TEMPLATE, {**context, "problems": [Problem(str(exc))]}, status=400)
    imported = import_document(
        data,
        filename=name or None,
        author=request.user,
        team=team,
        confirm=form.confirm == digest(data),
        message=f"import {name or 'pasted text'}",
    )
    if imported.stored and len(imported.stored) == 1 and not imported.errors:
        return redirect("chains:chain", *(imported.stored[0][k] for k in ("team", "id")))
    context.update(_report(imported), name=name)
    status = 400 if not imported.chains else 200
    return render(request, TEMPLATE, context, status=status)


def _form(request: HttpRequest, form: ImportForm) -> dict:
    """The form as it was sent: the team chosen, the text and its name stay."""
    return {
        "teams": Team.objects.creating(request.user),
        "team": form.team,
        "pasted": form.text,
        "name": form.name,
    }


def _report(imported: Imported) -> dict:
    """What the page shows of an import: its problems, chains, and the numbered text."""
    return {
        "imported": imported,
        "problems": imported.problems,
        "notes": [p for p in imported.problems if p.severity == "info"],
        "summary": imported.report()["chains"],
        "pasted": imported.text or "",
        "lines": _numbered(imported),
    }


def _numbered(imported: Imported) -> list[dict]:
    """The text's lines, each with the problems found on it; empty if no problem has a line."""
    if imported.text is None or not any(p.line for p in imported.problems):
        return []
    at: dict[int, list[Problem]] = {}
    for p in imported.problems:
        if p.line:
            at.setdefault(p.line, []).append(p)
    lines = imported.text.replace("\r\n", "\n").removesuffix("\n").split("\n")
    return [
        {"number": n, "text": text, "problems": at.get(n, [])}
        for n, text in enumerate(lines, start=1)
    ]


def _submitted(request: HttpRequest, form: ImportForm) -> tuple[bytes | str | None, str]:
    """The uploaded file or the pasted text and its name; (None, why) when neither is usable."""
    upload = request.FILES.get("file")
    limit = settings.CHAIN_UPLOAD_MAX_BYTES
    if upload is not None:
        if upload.size > limit:
            return None, f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,} bytes"
        return upload.read(), upload.name or ""
    if len(form.text.encode("utf-8", errors="replace")) > limit:
        return None, f"the pasted document is over the limit of {limit:,} bytes"
    if form.text.strip():
        return form.text, form.name
    return None, "choose a file to upload or paste a document"
