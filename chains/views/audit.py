"""The trace audit page: a run's trace, uploaded, replayed against a revision of the chain.

The trace may be any shape :mod:`chains.core.traces` reads (the simulator's
or SPEC §2.5 JSON lines, an intent log, OTLP JSON, HAR), told from its
content or picked in the form. Each divergence is listed at its event and
drawn on the handle graph (its step outlined), with a button that opens the
simulator on the run as it stood there (docs/trace-audit.md); the inputs the
audit inferred and the calls no action is bound to are listed too. The page
holds the trace once, in the form those buttons post: the simulator's
scenario of an event is built only when someone opens it, since building one
replays the trace from its start and a trace may diverge thousands of times.
Reading a trace changes nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, Field

from chains.core.dot import RenderError
from chains.core.errors import DocumentError, Problem
from chains.core.keys import node_key
from chains.core.model import ChainSpec
from chains.core.render import handle_graph_svg
from chains.core.sim.audit import AuditResult, audit, scenario_at
from chains.core.sim.session import encode
from chains.core.traces import FORMATS
from chains.core.traces import read as read_telemetry
from chains.models import Chain, Revision, RevisionLayout
from chains.services.access import get_revision, spec_of
from chains.views.common import get_chain
from chains.views.forms import plain_number, posted, uploaded_text
from chains.views.limits import rate_limited

LISTED = 1_000  # divergences listed in full; the count says how many more there are


class AuditForm(BaseModel):
    """The audit form besides the trace (a file, or pasted ``text``)."""

    r: str = Field("", description="the revision audited (else ``?r=``); the head if no number")
    simulate: str = Field("", description="the seq of the event to open in the simulator")
    format: str = Field("auto", description="the trace's shape; auto tells it from the content")
    run: str = Field("", description="the run to audit in a trace that holds several")


@require_http_methods(["GET", "POST"])
@rate_limited("lint")
def audit_trace(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The upload form (GET); the audit of the uploaded trace, or one of its events opened in
    the simulator (POST with ``simulate=<seq>``)."""
    chain = get_chain(request, team, key)
    form = posted(request, AuditForm)
    revision = get_revision(chain, plain_number(form.text("r") or request.GET.get("r")))
    shape, run = form.text("format") or "auto", form.text("run") or None
    context: dict[str, Any] = {"chain": chain, "revision": revision, "formats": FORMATS}
    context.update(shape=shape, run=run or "")
    if request.method == "GET":
        return render(request, "chains/audit.html", context)
    try:
        spec = spec_of(revision)
        text = uploaded_text(request, "trace", "trace")[0]
        result = audit(spec, read_telemetry(text, spec, shape, run))
        if form.sent("simulate"):  # a button of the listing; any other value is refused
            url = _simulator_at(chain, revision, spec, result, form.text("simulate"))
            return HttpResponseRedirect(url, status=303)
    except DocumentError as exc:
        context["problems"] = exc.problems
        return render(request, "chains/audit.html", context, status=400)
    context.update(result=result, trace=text, divergences=result.divergences[:LISTED])
    context["unlisted"] = len(result.divergences) - len(context["divergences"])
    try:
        marks = {node_key("action", d.step): "audit-diverged" for d in result.divergences if d.step}
        memory = RevisionLayout.objects.recall(revision, "handles")
        context["svg"] = handle_graph_svg(spec, marks, settings.GRAPH_LAYOUT_SECONDS, memory)
    except RenderError as exc:
        context["render_error"] = str(exc)
    return render(request, "chains/audit.html", context)


def _simulator_at(
    chain: Chain, revision: Revision, spec: ChainSpec, result: AuditResult, raw: str
) -> str:
    """The simulator's address of the run as it stood at event ``raw`` (a seq) of the trace,
    with the inputs the audit inferred in their places."""
    seq = plain_number(raw)
    events = result.replayed
    if seq is None or all(e.seq != seq for e in events):
        raise DocumentError([Problem(f"simulate: the trace has no event of seq {raw!r}")])
    scenario = scenario_at(spec, events, seq)
    return f"{chain.url('simulate')}?{urlencode({'r': revision.number, 's': encode(scenario)})}"
