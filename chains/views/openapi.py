"""Proposing actions from a provider's OpenAPI document, on a chain's page.

Upload (or paste) the document; its operations are listed as proposed
actions (docs/openapi-import.md), a page of :data:`PAGE` at a time with a
filter, each with its guessed effect in a menu; tick the ones to add,
confirm or change their effects, and they are added to the chain as one
revision (one undo). Their documented errors come with them, and the linter
names those no row covers. Nothing is kept between requests: every form
posts the document's text back, with the filter, the page and the ticks
(those on other pages as hidden fields), and each answer reads it again.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, Field

from chains.core.errors import ChainError, DocumentError, Problem
from chains.core.model import EFFECTS
from chains.core.openapi import Operation, propose_actions, read_openapi
from chains.models import Chain, Revision, Role, StaleRevision
from chains.services import editing
from chains.services.access import get_head
from chains.views.common import get_chain
from chains.views.forms import FormError, Prefixed, read_post, uploaded_text
from chains.views.limits import rate_limited

PAGE = 100  # operations listed at once; the filter finds the others
_TEMPLATE = "chains/openapi.html"


class Picking(BaseModel):
    """The operations form besides the document: filter, page, ticks, the effect chosen for
    each operation (``effect-<id>``), the revision it was on, and whether to add."""

    q: str = ""
    page: int = Field(1, ge=1)
    pick: list[str] = []
    effects: Annotated[dict[str, str], Prefixed("effect-")] = {}
    base: int | None = Field(None, ge=1)
    add: bool = False


@require_http_methods(["GET", "POST"])
@rate_limited("import")
def openapi(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The upload form (GET); the proposals (POST a document); the chosen added (POST ``add``)."""
    chain = get_chain(request, team, key, Role.EDITOR)
    head = get_head(chain)
    context: dict[str, Any] = {"chain": chain, "head": head, "effects": EFFECTS}
    if request.method == "GET":
        return render(request, _TEMPLATE, context)
    try:
        limit = settings.OPENAPI_UPLOAD_MAX_BYTES
        text, name = uploaded_text(request, "document", "OpenAPI document", limit)
        operations = read_openapi(text, name, limit=limit)
        picking = read_post(request, Picking)
    except (DocumentError, FormError) as exc:
        return _refused(request, context, exc)
    context.update(text=text, name=name, **_listed(operations, picking))
    if not picking.add:
        return render(request, _TEMPLATE, context)
    return _add(request, chain, head, operations, picking, context)


def _add(
    request: HttpRequest,
    chain: Chain,
    head: Revision,
    operations: list[Operation],
    picking: Picking,
    context: dict[str, Any],
) -> HttpResponse:
    """The ticked operations added as one revision on ``picking.base``; a 4xx naming why not."""
    name = context["name"]
    if not picking.pick:
        return _refused(
            request, context, DocumentError([Problem("tick at least one operation to add")])
        )
    effects = {op.id: picking.effects.get(op.id, op.effect) for op in operations}
    try:
        actions = propose_actions(operations, picking.pick, _known(effects))
        editing.add_actions(
            chain,
            actions,
            base=picking.base or head.number,
            author=request.user,
            message=_message(name, picking.pick),
        )
    except StaleRevision:
        stale = DocumentError([Problem("the chain changed since you opened this page; look again")])
        return _refused(request, context, stale, status=409)
    except ChainError as exc:
        return _refused(request, context, exc)
    chosen = ", ".join(picking.pick)
    messages.success(request, f"Added {chosen} from {name or 'the OpenAPI document'}.")
    return redirect(chain.url())


def _refused(
    request: HttpRequest, context: dict[str, Any], exc: ChainError, status: int = 400
) -> HttpResponse:
    context["problems"] = getattr(exc, "problems", None) or [Problem(str(exc))]
    return render(request, _TEMPLATE, context, status=status)


def _listed(operations: list[Operation], picking: Picking) -> dict[str, Any]:
    """The page of the operations the filter matches, each with its tick and effect, and
    the ticks on other pages (kept as hidden fields, with their effects)."""
    words = picking.q.lower().split()
    matching = [op for op in operations if all(w in _searched(op) for w in words)]
    pages = max(1, -(-len(matching) // PAGE))
    page = min(picking.page, pages)
    shown = matching[(page - 1) * PAGE : page * PAGE]
    ticked = set(picking.pick)
    rows = [
        {"op": op, "ticked": op.id in ticked, "effect": picking.effects.get(op.id, op.effect)}
        for op in shown
    ]
    on_page = {op.id for op in shown}
    kept = [
        (op.id, picking.effects.get(op.id, op.effect))
        for op in operations
        if op.id in ticked - on_page
    ]
    return {
        "operations": operations,
        "rows": rows,
        "kept": kept,
        "query": picking.q,
        "page": page,
        "pages": pages,
        "matching": len(matching),
    }


def _searched(op: Operation) -> str:
    """What the filter looks in: the action id, the method and path, the summary."""
    return f"{op.id} {op.method} {op.path} {op.summary}".lower()


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
