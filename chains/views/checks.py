"""A verdict or signal box checked while it is typed in (``static/js/checks.js``).

The page asks ``check?what=verdict&value=...`` (or ``signal``, or
``verdict-parts`` with the builder's ``type``, ``to``, ``gate``, ``fields``
and ``reason``) and shows the answer under the box: what the text reads as
and what the run would do, or what is wrong, judged against the head
revision's chain. Nothing is saved; the save checks again.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chains.core.errors import DocumentError, VerdictSyntaxError
from chains.core.explain import Explained, explain_signals, explain_verdict
from chains.core.verdicts import build_verdict
from chains.services.access import get_head, spec_of
from chains.services.editing import MAX_FIELD
from chains.views.common import get_access
from chains.views.doc_fields import split_csv
from chains.views.element_forms import BUILDER_PARTS

__all__ = ["check_value"]


@require_GET
def check_value(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    access = get_access(request, team, key)
    try:
        spec = spec_of(get_head(access.chain))
    except DocumentError:
        spec = None  # the head does not load: the grammar is still checked
    what, value = request.GET.get("what", ""), request.GET.get("value", "")[:MAX_FIELD]
    if what == "verdict":
        explained = explain_verdict(spec, value) if value.strip() else Explained()
    elif what == "signal":
        explained = explain_signals(split_csv(value))
    elif what == "verdict-parts":
        parts = {p: request.GET.get(p, "")[:MAX_FIELD] for p in BUILDER_PARTS}
        try:
            explained = explain_verdict(spec, build_verdict(parts))
        except VerdictSyntaxError as exc:
            explained = Explained(problems=[str(exc)])
    else:
        return HttpResponseBadRequest("what: expected verdict, verdict-parts or signal")
    return render(request, "chains/_check.html", {"explained": explained})
