"""Proposing actions from a provider's OpenAPI document, on a chain's page.

Upload (or paste) the document; every operation is listed as a proposed
action (docs/openapi-import.md) with its guessed effect in a menu; tick the
ones to add, confirm or change their effects, and they are added to the
chain as one revision (one undo). Their documented errors come with them,
and the linter names those no row covers.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from chains.core.errors import ChainError, DocumentError, Problem
from chains.core.model import EFFECTS
from chains.core.openapi import propose_actions, read_openapi
from chains.models import Role, StaleRevision
from chains.services import editing
from chains.services.access import get_head
from chains.views.common import get_chain
from chains.views.forms import uploaded_text
from chains.views.limits import rate_limited


@require_http_methods(["GET", "POST"])
@rate_limited("import")
def openapi(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The upload form (GET); the proposals (POST a document); the chosen added (POST ``add``)."""
    chain = get_chain(request, team, key, Role.EDITOR)
    head = get_head(chain)
    context: dict[str, Any] = {"chain": chain, "head": head, "effects": EFFECTS}
    if request.method == "GET":
        return render(request, "chains/openapi.html", context)
    try:
        text, name = uploaded_text(request, "document", "OpenAPI document")
        operations = read_openapi(text, name)
    except DocumentError as exc:
        context["problems"] = exc.problems
        return render(request, "chains/openapi.html", context, status=400)
    context.update(text=text, name=name, operations=operations)
    if "add" not in request.POST:
        return render(request, "chains/openapi.html", context)
    chosen = request.POST.getlist("pick")
    if not chosen:
        context["problems"] = [Problem("tick at least one operation to add")]
        return render(request, "chains/openapi.html", context, status=400)
    effects = {op.id: request.POST.get(f"effect-{op.id}", op.effect) for op in operations}
    base = int(request.POST.get("base") or head.number)
    try:
        actions = propose_actions(operations, chosen, _known(effects))
        editing.add_actions(
            chain, actions, base=base, author=request.user, message=_message(name, chosen)
        )
    except StaleRevision:
        context["problems"] = [Problem("the chain changed since you opened this page; look again")]
        return render(request, "chains/openapi.html", context, status=409)
    except (DocumentError, ChainError) as exc:
        context["problems"] = getattr(exc, "problems", None) or [Problem(str(exc))]
        return render(request, "chains/openapi.html", context, status=400)
    messages.success(request, f"Added {', '.join(chosen)} from {name or 'the OpenAPI document'}.")
    return redirect(chain.url())


def _known(effects: dict[str, str]) -> dict[str, str]:
    """The effects chosen in the menus; anything else is refused by name."""
    wrong = [
        f"{op}: {effect!r} is not an effect"
        for op, effect in effects.items()
        if effect not in EFFECTS
    ]
    if wrong:
        raise DocumentError([Problem(w) for w in wrong])
    return effects


def _message(name: str, chosen: list[str]) -> str:
    return f"add actions from {name or 'an OpenAPI document'}: {', '.join(chosen)}"
