"""The harness pages: a chain's fault-harness runs, uploaded, listed and shown campaign-style.

The app never runs a client or a provider (a command given over the web
would be remote code execution): an editor uploads the report that
``chain-designer harness ... --json`` printed on the command line or in CI
(or CI posts it to the API), and everyone who sees the chain sees the runs.
A run's page shows its counts, then each schedule, clean or failed at its
gravest divergence, every divergence with a link that opens the simulator
at that point on the revision the run is stored against; a page holds
:data:`~chains.services.harness.PER_PAGE` schedules, and ``?diverged=1``
keeps only the failed ones. The services in ``chains.services.harness``
do the work (the API calls the same ones).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods
from pydantic import BaseModel, Field

from chains.core.errors import DocumentError
from chains.models import Role
from chains.services.access import get_revision
from chains.services.harness import (
    get_run,
    list_runs,
    read_report,
    record_report,
    report_limit,
    shown_results,
)
from chains.views.common import get_access
from chains.views.forms import plain_number, posted, uploaded_text
from chains.views.limits import rate_limited


class UploadForm(BaseModel):
    """The upload form besides the report (a file, or pasted ``text``)."""

    r: str = Field("", description="the revision to store the run against; the head if empty")


@require_http_methods(["GET", "POST"])
@rate_limited("import")
def harness_runs(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The chain's harness runs and the upload form (GET); an uploaded report stored (POST)."""
    needed = Role.EDITOR if request.method == "POST" else Role.VIEWER
    access = get_access(request, team, key, needed)
    chain = access.chain
    form = posted(request, UploadForm)
    listed = list_runs(chain, plain_number(request.GET.get("page")) or 1)
    context = {"chain": chain, "access": access, "runs": listed, "limit": report_limit()}
    context["can_upload"] = access.may(Role.EDITOR)
    if request.method == "GET":
        return render(request, "chains/harness.html", context)
    try:
        revision = get_revision(chain, plain_number(form.text("r") or request.GET.get("r")))
        report = read_report(uploaded_text(request, "report", "report", report_limit())[0])
        run = record_report(chain, revision, report, by=request.user, source="upload")
    except DocumentError as exc:
        context["problems"] = exc.problems
        return render(request, "chains/harness.html", context, status=400)
    return HttpResponseRedirect(run.url(), status=303)


@require_GET
def harness_run(request: HttpRequest, key: str, run: int, team: str | None = None) -> HttpResponse:
    """One run, campaign-style: its counts, then a page of its schedules."""
    access = get_access(request, team, key)
    found = get_run(access.chain, run)
    diverged = request.GET.get("diverged") == "1"
    page = plain_number(request.GET.get("page")) or 1
    results = shown_results(found, page, diverged_only=diverged)
    filters = {"diverged": "1"} if diverged else {}
    pages = {
        "previous": results.page > 1 and urlencode({**filters, "page": results.page - 1}),
        "next": results.page < results.pages and urlencode({**filters, "page": results.page + 1}),
    }
    context = {"chain": access.chain, "access": access, "run": found, "results": results}
    context.update(diverged=diverged, pages=pages)
    return render(request, "chains/harness.html", context)
