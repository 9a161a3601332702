"""The trace audit page: a run's trace, uploaded, replayed against a revision of the chain.

Each divergence is listed at its event and drawn on the handle graph (its
step outlined), with a link that opens the simulator on the run as it stood
there (docs/trace-audit.md). Reading a trace changes nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from chains.core.dot import RenderError
from chains.core.errors import DocumentError
from chains.core.keys import node_key
from chains.core.model import ChainSpec
from chains.core.render import handle_graph_svg
from chains.core.sim.audit import audit, read_trace, scenario_until
from chains.core.sim.palette import default_intent
from chains.core.sim.session import encode
from chains.models import Chain, Revision
from chains.services.access import document_of, get_revision
from chains.views.common import get_chain
from chains.views.forms import plain_number, uploaded_text
from chains.views.limits import rate_limited


@require_http_methods(["GET", "POST"])
@rate_limited("lint")
def audit_trace(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The upload form (GET); the audit of the uploaded trace (POST)."""
    chain = get_chain(request, team, key)
    revision = get_revision(chain, plain_number(request.POST.get("r") or request.GET.get("r")))
    context: dict[str, Any] = {"chain": chain, "revision": revision}
    if request.method == "GET":
        return render(request, "chains/audit.html", context)
    try:
        document = document_of(revision)
        events = read_trace(uploaded_text(request, "trace", "trace")[0])
    except DocumentError as exc:
        context["problems"] = exc.problems
        return render(request, "chains/audit.html", context, status=400)
    result = audit(document, events)
    context.update(result=result, divergences=_shown(chain, revision, document, events, result))
    try:
        marks = {node_key("action", d.step): "audit-diverged" for d in result.divergences if d.step}
        context["svg"] = handle_graph_svg(document, marks, settings.GRAPH_LAYOUT_SECONDS)
    except RenderError as exc:
        context["render_error"] = str(exc)
    return render(request, "chains/audit.html", context)


def _shown(
    chain: Chain, revision: Revision, document: ChainSpec, events: list, result: Any
) -> list[dict[str, Any]]:
    """Each divergence with the simulator's address of the run as it stood at its event."""
    shown = []
    for d in result.divergences:
        scenario = scenario_until(events, d.seq).model_copy(
            update={"chain": document.id, "intent": default_intent(document)}
        )
        query = urlencode({"r": revision.number, "s": encode(scenario)})
        shown.append({"divergence": d, "simulate": f"{chain.url('simulate')}?{query}"})
    return shown
