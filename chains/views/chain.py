"""Read-only views of a chain's revisions: the semantic diff and the downloads."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chains.core import formats
from chains.core.diff import diff, graph_marks
from chains.core.dot import RenderError
from chains.core.errors import DocumentError
from chains.core.render import handle_graph_svg
from chains.core.sim.regression import test_vectors
from chains.models import RevisionLayout, saved_scenarios
from chains.services import exports
from chains.services.access import get_head, get_revision
from chains.views.common import get_chain
from chains.views.forms import plain_number


@require_GET
def revision_diff(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """What changed between two revisions (default: the head and the one before it)."""
    chain = get_chain(request, team, key)
    head = get_head(chain)
    new = get_revision(chain, _number(request.GET.get("to"), head.number))
    old = get_revision(chain, _number(request.GET.get("from"), max(new.number - 1, 1)))
    context = {"chain": chain, "head": head, "old": old, "new": new}
    try:
        before, after = formats.from_document(old.document), formats.from_document(new.document)
    except DocumentError as exc:
        context["problems"] = exc.problems
        return render(request, "chains/diff.html", context, status=409)
    changes = diff(before, after)
    context["changes"] = changes
    try:
        memory = RevisionLayout.objects.recall(new, "handles")
        context["svg"] = handle_graph_svg(
            after, graph_marks(changes), settings.GRAPH_LAYOUT_SECONDS, memory
        )
    except RenderError as exc:
        context["render_error"] = str(exc)
    return render(request, "chains/diff.html", context)


@require_GET
def test_vectors_export(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The chain's saved scenarios replayed on the head, as conformance test vectors."""
    chain = get_chain(request, team, key)
    head = get_head(chain)
    try:
        spec = formats.from_document(head.document)
    except DocumentError as exc:
        message = f"revision {head.number} no longer validates: {exc}\n"
        return HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")
    vectors = {**test_vectors(spec, saved_scenarios(chain)), "revision": head.number}
    response = JsonResponse(vectors, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = (
        f'attachment; filename="{chain.key}-r{head.number}-vectors.json"'
    )
    return response


def _number(raw: str | None, default: int) -> int:
    if raw is None or raw == "":
        return default
    number = plain_number(raw)
    if number is None:
        raise Http404(f"revision {raw!r} is not a number")
    return number


@require_GET
def revision_export(
    request: HttpRequest, key: str, number: str, fmt: str, team: str | None = None
) -> HttpResponse:
    """A revision as a file: the document (yaml, json, md) or a drawing (dot, svg, png).

    A drawing is of the handle graph, or of the flow with ``?graph=flow``.
    """
    revision = get_revision(get_chain(request, team, key), int(number))
    graph: exports.Graph = "flow" if request.GET.get("graph") == "flow" else "handles"
    try:
        return exports.download(revision, fmt, graph)
    except DocumentError as exc:
        message = f"revision {number} no longer validates: {exc}\n"
        return HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")
    except RenderError as exc:  # Graphviz missing or too slow: the server's trouble, not theirs
        message = f"revision {number} could not be drawn: {exc}\n"
        return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
