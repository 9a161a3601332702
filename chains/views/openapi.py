"""Proposing actions from a provider's OpenAPI document, on a chain's page.

Upload (or paste) the document: it is read once and kept on the server as
the person's upload on this chain (``chains.models.uploads``: its text, its
operations and the ticks), and the answer is a redirect to the upload's own
address (POST/redirect/GET), where its operations are listed as proposed
actions (docs/openapi-import.md), :data:`PAGE` at a time, each with its
guessed effect in a menu. Filtering and paging are addresses
(``?q=&tag=&page=``; the tag menu offers the document's tags); the buttons
that move between them are in the one form of the list, which posts only the
rows of the page shown (their ticks and effects) to be kept before the
redirect to the page asked for. *Add* posts the same, and adds every ticked
operation, on whichever page it was ticked, as one revision (one undo); the
upload is then deleted. An operation attaches to the chain's action its row
names (by default the one bound to the same method and path) instead of
being added, and the handles they need come with them (``openapi.edits_onto``).
Their documented errors come with them, and the linter names those no row
covers. A base revision that is no longer the head
is a 409 and a refused add a 400, the ticks kept; another person's upload, or
one no longer kept, is a 404; one past its day is a 410 that says so.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import BaseModel, Field

from chains.core.errors import ChainError, DocumentError, Problem
from chains.core.model import EFFECTS
from chains.core.openapi import Operation, confirmed_effects, propose_chain, read_provider
from chains.core.openapi.picking import document_tags, has_tag, search
from chains.core.openapi.reading import resource_tag
from chains.models import Chain, OpenApiUpload, Role, StaleRevision
from chains.services import editing
from chains.services.access import get_head, spec_of
from chains.views.common import get_chain
from chains.views.forms import FormError, Prefixed, read_form, read_post, uploaded_text
from chains.views.limits import rate_limited

PAGE = 100  # operations listed at once; the filter and the tag menu find the others
_TEMPLATE = "chains/openapi.html"
NEW_ACTION = "+new"  # what the onto menu posts for "a new action" (an empty value is no choice)
_NAMED = 10  # ids named in the message after an add; the revision's message has them all


class Upload(BaseModel):
    """The upload form besides the document: the header every POST takes its
    idempotency key in, where the provider says so only in prose (Stripe)."""

    key_header: str = Field("", max_length=100, pattern=r"^(?:[A-Za-z0-9][A-Za-z0-9-]*)?$")


class Listing(BaseModel):
    """Which operations a page of the list shows: the filter's words, a tag, only the
    ticked ones or all, the page."""

    q: str = Field("", max_length=500)
    tag: str = Field("", max_length=200)
    ticked: bool = False
    page: int = Field(1, ge=1)


class Ticks(Listing):
    """A post from the list: where to go next (the filter and tag, and ``go``, the page a
    button asks for, else ``page``, the one shown), this page's ticks, the effect in each
    of its menus (``effect-<id>``: the rows it showed), and the revision it was opened on."""

    go: int | None = Field(None, ge=1)
    pick: list[str] = []
    effects: Annotated[dict[str, str], Prefixed("effect-")] = {}
    onto: Annotated[dict[str, str], Prefixed("onto-")] = {}
    base: int | None = Field(None, ge=1)


@require_http_methods(["GET", "POST"])
@rate_limited("import")
def openapi(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The upload form (GET); a document read and kept, then a redirect to its list (POST)."""
    chain = get_chain(request, team, key, Role.EDITOR)
    earlier = OpenApiUpload.objects.defer("text", "operations").filter(
        chain=chain, user=request.user
    )
    context = {**_page(chain), "earlier": earlier.first()}
    if request.method == "GET":
        return render(request, _TEMPLATE, context)
    try:
        limit = settings.OPENAPI_UPLOAD_MAX_BYTES
        text, name = uploaded_text(request, "document", "OpenAPI document", limit)
        stated = read_post(request, Upload).key_header or None
        read = read_provider(text, name, limit=limit, key_header=stated)
    except (DocumentError, FormError) as exc:
        return _refused(request, context, exc)
    kept = OpenApiUpload.objects.keep(chain, request.user, name=name, text=text, read=read)
    return redirect(kept.url())


@require_http_methods(["GET", "POST"])
def operations(
    request: HttpRequest, key: str, upload: int, team: str | None = None
) -> HttpResponse:
    """A page of the upload's operations (GET ``?q=&tag=&page=``); this page's ticks kept,
    then a redirect to the page the post asks for (POST)."""
    chain, kept = _get_upload(request, team, key, upload)
    if kept.expired:
        return _expired(request, chain, kept)
    if request.method == "GET":
        try:
            listing = read_form(Listing, request.GET)
        except FormError as exc:
            return _list_page(request, chain, kept, Listing(), exc, status=400)
        return _list_page(request, chain, kept, listing)
    try:
        ticks = read_post(request, Ticks)
        _tick(kept, ticks)
    except ChainError as exc:
        return _list_page(request, chain, kept, _where(request), exc, status=400)
    return redirect(_address(kept, ticks))


@require_POST
@rate_limited("import")
def add_operations(
    request: HttpRequest, key: str, upload: int, team: str | None = None
) -> HttpResponse:
    """Every ticked operation (this page's ticks kept first) added as one revision."""
    chain, kept = _get_upload(request, team, key, upload)
    if kept.expired:
        return _expired(request, chain, kept)
    try:
        ticks = read_post(request, Ticks)
        chosen = _add(request, chain, kept, _tick(kept, ticks), ticks.base)
    except StaleRevision:
        stale = "the chain changed since you opened this page; your ticks are kept: add again"
        return _list_page(request, chain, kept, _where(request), stale, status=409)
    except ChainError as exc:
        return _list_page(request, chain, kept, _where(request), exc, status=400)
    name = kept.name or "the OpenAPI document"
    kept.delete()
    more = f" and {len(chosen) - _NAMED} more" if len(chosen) > _NAMED else ""
    added = f"Added {len(chosen)} action{'s' if len(chosen) != 1 else ''} from {name}"
    messages.success(request, f"{added}: {', '.join(chosen[:_NAMED])}{more}.")
    return redirect(chain.url())


def _get_upload(
    request: HttpRequest, team: str | None, key: str, pk: int
) -> tuple[Chain, OpenApiUpload]:
    """The chain (editors only, 403/404 as on every chain page) and the signed-in person's
    upload ``pk`` on it; 404 for another person's or one no longer kept."""
    chain = get_chain(request, team, key, Role.EDITOR)
    found = OpenApiUpload.objects.defer("text").filter(chain=chain, user=request.user, pk=pk)
    kept = found.first()
    if kept is None:
        raise Http404(
            "No upload of yours is kept at this address: its operations were added, a newer "
            "upload replaced it, or it expired. Upload the document again from the chain's "
            "page (Add action, handle or gate)."
        )
    return chain, kept


def _tick(kept: OpenApiUpload, ticks: Ticks) -> list[Operation]:
    """The ticks and effects of the page posted, kept with the upload; its operations.

    An id the document lacks or an effect that is not one is refused, and then
    nothing is kept (the ticks of earlier pages stay as they were)."""
    operations = kept.read_operations()
    guessed: dict[str, str] = {op.id: op.effect for op in operations}
    strange = sorted((set(ticks.pick) | set(ticks.effects) | set(ticks.onto)) - set(guessed))
    if strange:
        raise DocumentError([Problem(f"no operation {name} in the document") for name in strange])
    confirmed_effects(ticks.effects)
    onto = {op: "" if a == NEW_ACTION else a for op, a in ticks.onto.items()}
    actions = {a.id for a in spec_of(get_head(kept.chain)).actions}
    wrong = sorted(
        f"{op}: the chain has no action {a}" for op, a in onto.items() if a and a not in actions
    )
    if wrong:
        raise DocumentError([Problem(w) for w in wrong])
    kept.tick(ticks.effects, ticks.pick, guessed, onto)
    return operations


def _add(
    request: HttpRequest,
    chain: Chain,
    kept: OpenApiUpload,
    operations: list[Operation],
    base: int | None,
) -> list[str]:
    """The ticked operations added to ``chain`` as one revision on ``base``; their ids."""
    ticked = set(kept.ticked)
    chosen = [op.id for op in operations if op.id in ticked]
    if not chosen:
        raise DocumentError([Problem("tick at least one operation to add")])
    name = kept.name or "an OpenAPI document"
    editing.add_proposal(
        chain,
        propose_chain(operations, chosen, kept.effects),
        renames={op: kept.onto[op] for op in chosen if op in kept.onto},
        base=base or get_head(chain).number,
        author=request.user,
        message=f"add actions from {name}: {', '.join(chosen)}",
    )
    return chosen


def _list_page(
    request: HttpRequest,
    chain: Chain,
    kept: OpenApiUpload,
    listing: Listing,
    problem: ChainError | str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The page of ``kept``'s operations ``listing`` names, ``problem`` above it."""
    context: dict[str, Any] = {**_page(chain), "upload": kept}
    try:
        operations = kept.read_operations()
    except DocumentError as exc:  # read again by newer code, which refuses it
        return _refused(request, context, exc)
    context.update(_listed(kept, operations, listing), effects=EFFECTS)
    if problem is not None:
        context["problems"] = _problems(problem)
    return render(request, _TEMPLATE, context, status=status)


def _listed(kept: OpenApiUpload, operations: list[Operation], listing: Listing) -> dict[str, Any]:
    """The page of the operations the tag and the filter match, each with its tick and
    effect, and what is ticked in all."""
    ticked = set(kept.ticked)
    tagged = [op for op in operations if has_tag(op, listing.tag)] if listing.tag else operations
    matching = search(tagged, listing.q)
    if listing.ticked:
        matching = [op for op in matching if op.id in ticked]
    pages = max(1, -(-len(matching) // PAGE))
    page = min(listing.page, pages)
    shown = matching[(page - 1) * PAGE : page * PAGE]
    actions = spec_of(get_head(kept.chain)).actions
    bound: dict[tuple[str, str], str] = {
        (a.http.method, a.http.path): a.id for a in actions if a.http is not None
    }
    rows = [
        {
            "op": op,
            "ticked": op.id in ticked,
            "effect": kept.effects.get(op.id, op.effect),
            "onto": kept.onto.get(op.id, bound.get((op.method.upper(), op.path), "")),
        }
        for op in shown
    ]
    return {
        "operations": operations,
        "rows": rows,
        "actions": [a.id for a in actions],
        "tags": document_tags(operations),
        "tags_from_paths": all(op.tags == [resource_tag(op.path)] for op in operations),
        "listing": listing,
        "page": page,
        "pages": pages,
        "first": (page - 1) * PAGE + 1,
        "last": (page - 1) * PAGE + len(shown),
        "matching": len(matching),
        "all_ticked": [op.id for op in operations if op.id in ticked],
        "here": sum(1 for op in shown if op.id in ticked),
        "elsewhere": len(ticked - {op.id for op in shown}),
    }


def _where(request: HttpRequest) -> Listing:
    """The page a refused post was sent from, as far as its own fields say."""
    try:
        return read_post(request, Listing)
    except FormError:
        return Listing()


def _address(kept: OpenApiUpload, ticks: Ticks) -> str:
    page = ticks.go or ticks.page
    query = {"q": ticks.q, "tag": ticks.tag, "ticked": "1" if ticks.ticked else ""}
    query["page"] = str(page) if page > 1 else ""
    given = urlencode({k: v for k, v in query.items() if v})
    return f"{kept.url()}?{given}" if given else kept.url()


def _expired(request: HttpRequest, chain: Chain, kept: OpenApiUpload) -> HttpResponse:
    """A 410 saying the upload expired (it is deleted now), with the form to upload again."""
    name = kept.name or "the pasted document"
    kept.delete()
    why = (
        f"the upload of {name} expired: an upload is kept for a day; "
        "upload it again to go on (its ticks were not kept)"
    )
    context = {**_page(chain), "problems": [Problem(why)]}
    return render(request, _TEMPLATE, context, status=410)


def _page(chain: Chain) -> dict[str, Any]:
    """What every answer of the page shows: the chain, its head, the upload's size limit."""
    return {"chain": chain, "head": get_head(chain), "limit": settings.OPENAPI_UPLOAD_MAX_BYTES}


def _refused(
    request: HttpRequest, context: dict[str, Any], exc: ChainError, status: int = 400
) -> HttpResponse:
    context["problems"] = _problems(exc)
    return render(request, _TEMPLATE, context, status=status)


def _problems(problem: ChainError | str) -> list[Problem]:
    if isinstance(problem, str):
        return [Problem(problem)]
    return getattr(problem, "problems", None) or [Problem(str(problem))]
