"""Design review in the browser: comment threads on a revision's elements, review requests, votes.

The rules are model verbs (``Comment.objects.post``, ``Comment.toggle``,
``Review.objects.request``, ``Review.vote``, ``Revision.approve``); these
views read the form, call one verb and answer with the page or its partial.
A refused comment, request or vote is a 400 that says why and stores nothing;
a comment or review of another chain is a 404. The workspace's comment forms
post ``from=workspace`` with its view state, so the answer is the workspace
again with the graph's comment markers redrawn.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from chains.core.comments import CHAIN, anchors
from chains.core.errors import DocumentError
from chains.models import Chain, Comment, Review, ReviewError, Revision, Role, at_least
from chains.views.common import document_of, get_chain, get_head
from chains.views.workspace import render_workspace, workspace_context

STATE = ("select", "tab", "view")  # the workspace's view state its forms carry along


@require_http_methods(["GET", "POST"])
def comments(request: HttpRequest, key: str) -> HttpResponse:
    """The chain's comment threads (GET); a new thread or a reply (POST)."""
    chain = get_chain(request, key, Role.REVIEWER if request.method == "POST" else Role.VIEWER)
    if request.method == "GET":
        return _comments_page(request, chain)
    try:
        Comment.objects.post(
            _revision(chain, request.POST.get("base", "")),
            request.user,
            request.POST.get("body", ""),
            anchor=request.POST.get("anchor") or CHAIN,
            reply_to=_reply_to(chain, request.POST.get("reply_to", "")),
        )
    except ReviewError as exc:
        return _after_comment(request, chain, str(exc), 400)
    return _after_comment(request, chain)


@require_POST
def resolve_comment(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """Resolve the comment's thread, or reopen it when it is resolved."""
    chain = get_chain(request, key, Role.REVIEWER)
    get_object_or_404(Comment, pk=pk, chain=chain).toggle(by=request.user)
    return _after_comment(request, chain)


@require_http_methods(["GET", "POST"])
def reviews(request: HttpRequest, key: str) -> HttpResponse:
    """The chain's reviews (GET); a request that named people review a revision (POST)."""
    chain = get_chain(request, key, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    if request.method == "GET":
        return _reviews_page(request, chain)
    try:
        review = Review.objects.request(
            _revision(chain, request.POST.get("revision", "")),
            request.user,
            request.POST.getlist("reviewers"),
            request.POST.get("note", ""),
        )
    except ReviewError as exc:
        return _reviews_page(request, chain, error=str(exc), status=400)
    url = reverse("chains:review", args=[chain.key, review.pk])
    if request.htmx:  # htmx would follow a redirect and swap the page into the form
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url, status=303)


@require_GET
def review(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """One review: the approval conditions first, then each reviewer's decision."""
    chain = get_chain(request, key)
    return _review_page(request, chain, _get_review(chain, pk))


@require_POST
def vote(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """A named reviewer approves or requests changes (``vote``, with a ``note``)."""
    chain = get_chain(request, key, Role.REVIEWER)
    review = _get_review(chain, pk)
    try:
        review.vote(request.user, request.POST.get("vote", ""), request.POST.get("note", ""))
    except ReviewError as exc:
        return _review_page(request, chain, review, error=str(exc), status=400)
    if request.htmx:
        return _review_page(request, chain, _get_review(chain, pk))
    url = reverse("chains:review", args=[chain.key, review.pk])
    return HttpResponseRedirect(url, status=303)


# --- reading the request --------------------------------------------------------------


def _revision(chain: Chain, raw: str) -> Revision:
    """The revision a form names by number; the head when it names none."""
    if raw == "":
        return get_head(chain)
    revision = chain.revisions.filter(number=int(raw)).first() if _whole(raw) else None
    if revision is None:
        raise ReviewError(f"revision: {chain.key} has no revision {raw!r}")
    return revision


def _reply_to(chain: Chain, raw: str) -> Comment | None:
    if raw == "":
        return None
    found = Comment.objects.filter(pk=int(raw), chain=chain).first() if _whole(raw) else None
    if found is None:
        raise ReviewError(f"reply_to: {chain.key} has no comment {raw!r}")
    return found


def _whole(raw: str) -> bool:
    """A number a database column holds (a longer one names nothing that exists)."""
    return raw.isdigit() and len(raw) < 10


def _get_review(chain: Chain, pk: int) -> Review:
    """The review ``pk`` if it is one of ``chain``'s; 404 otherwise."""
    found = Review.objects.select_related("revision", "requested_by").prefetch_related(
        "votes__reviewer"
    )
    return get_object_or_404(found, pk=pk, chain=chain)


# --- answering ------------------------------------------------------------------------


def _after_comment(
    request: HttpRequest, chain: Chain, error: str = "", status: int = 200
) -> HttpResponse:
    """The page the comment form was on: redirect a plain post, re-render for htmx or errors."""
    in_workspace = request.POST.get("from") == "workspace"
    state = {k: request.POST[k] for k in STATE if request.POST.get(k)} if in_workspace else {}
    typed = {k: request.POST.get(k, "") for k in ("body", "reply_to", "anchor")} if error else {}
    if not error and not request.htmx:
        url = reverse("chains:chain" if in_workspace else "chains:comments", args=[chain.key])
        return HttpResponseRedirect(f"{url}?{urlencode(state)}" if state else url, status=303)
    if not in_workspace:
        return _comments_page(
            request, chain, comment_error=error, typed_comment=typed, status=status
        )
    context = workspace_context(
        chain, get_head(chain), state, comment_error=error, typed_comment=typed
    )
    return render_workspace(request, context, status)


def _comments_page(
    request: HttpRequest, chain: Chain, status: int = 200, **extra: Any
) -> HttpResponse:
    head = get_head(chain)
    threads = Comment.objects.threads(chain)
    anchor = request.GET.get("anchor", "")
    try:
        known = sorted(anchors(document_of(head)))
    except DocumentError:
        known = [CHAIN]
    context = {
        "chain": chain,
        "head": head,
        "threads": threads.filter(anchor=anchor) if anchor else threads,
        "anchor": anchor,
        "anchors": known,
        "can_comment": chain.viewer_may(Role.REVIEWER),
        **extra,
    }
    template = "chains/comments.html#comments" if request.htmx else "chains/comments.html"
    return render(request, template, context, status=status)


def _reviews_page(
    request: HttpRequest, chain: Chain, status: int = 200, **extra: Any
) -> HttpResponse:
    head = get_head(chain)
    eligible = [
        person
        for person in chain.people()
        if person != request.user and at_least(chain.role_of(person), Role.REVIEWER)
    ]
    context = {
        "chain": chain,
        "head": head,
        "approved": chain.approved(),
        "reviews": Review.objects.filter(chain=chain)
        .select_related("revision", "requested_by")
        .prefetch_related("votes__reviewer"),
        "eligible": eligible,
        "can_request": chain.viewer_may(Role.EDITOR),
        "typed": _typed_request(request),
        **extra,
    }
    template = "chains/reviews.html#reviews" if request.htmx else "chains/reviews.html"
    return render(request, template, context, status=status)


def _typed_request(request: HttpRequest) -> dict[str, Any]:
    """What the request form shows again after a refusal, as typed."""
    if request.method != "POST":
        return {}
    post = request.POST
    return {
        "revision": post.get("revision", ""),
        "reviewers": post.getlist("reviewers"),
        "note": post.get("note", ""),
    }


def _review_page(
    request: HttpRequest, chain: Chain, review: Review, status: int = 200, **extra: Any
) -> HttpResponse:
    revision = review.revision
    votes = list(review.votes.all())
    mine = next((v for v in votes if v.reviewer_id == request.user.pk), None)
    state = review.state()
    approved = chain.approved()
    can_review = chain.viewer_may(Role.REVIEWER)
    context = {
        "chain": chain,
        "head": get_head(chain),
        "review": review,
        "revision": revision,
        "state": state,
        "votes": votes,
        "mine": mine,
        "can_vote": mine is not None and state != "approved" and can_review,
        "problems": [] if revision.approved_at else revision.approval_problems(),
        "approved": approved if approved != revision else None,
        **extra,
    }
    template = "chains/review.html#review" if request.htmx else "chains/review.html"
    return render(request, template, context, status=status)
