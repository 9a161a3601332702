"""Design review in the browser: comment threads on a revision's elements, review requests, votes.

A shell over ``chains.services.review``, which the API calls too: each view
binds its form to the service's schema (``views.forms.posted``), calls one use
case and answers with the page or its partial. A refused comment, request or
vote is a 400 that re-renders the bound form: what was typed, and the reason
beside the field the schema or the service names; nothing is stored. A
comment or review of another chain in the address is a 404. The workspace's comment forms
post ``from=workspace`` with its view state, so the answer is the workspace
again with the graph's comment markers redrawn. The comments page shows one
page of threads (``?page=``), or one thread with a page of its replies
(``?thread=``), as the service lists them for the API too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from pydantic import BaseModel, Field

from chains.core.comments import CHAIN, anchors
from chains.core.errors import DocumentError
from chains.models import Chain, Comment, Review, ReviewError, Role, at_least
from chains.services import review as reviewing
from chains.services.access import ChainAccess, get_head, spec_of
from chains.services.review import CommentIn, ReviewIn, VoteIn
from chains.views.common import get_access
from chains.views.forms import FormError, SchemaForm, posted, read_form, read_post
from chains.views.limits import rate_limited
from chains.views.workspace import ViewState, render_workspace, workspace_context

S = TypeVar("S", bound=BaseModel)
T = TypeVar("T")


class Back(ViewState):
    """Where a comment form's answer goes: the workspace (with its view state), or comments."""

    from_: str = Field("", alias="from")

    def state(self) -> dict[str, str]:
        """The workspace's view state to carry along, when the form was the workspace's."""
        return self.given() if self.from_ == "workspace" else {}


@require_http_methods(["GET", "POST"])
@rate_limited("comment")
def comments(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The chain's comment threads (GET); a new thread or a reply (POST)."""
    if request.method == "GET":
        return _comments_page(request, get_access(request, team, key))
    access = get_access(request, team, key, Role.REVIEWER)
    form = posted(request, CommentIn)
    chain = access.chain
    _carry_out(form, lambda c: reviewing.post_comment(chain, request.user, **c.model_dump()))
    return _after_comment(request, access, form)


@require_POST
def resolve_comment(
    request: HttpRequest, key: str, pk: int, team: str | None = None
) -> HttpResponse:
    """Resolve the comment's thread, or reopen it when it is resolved."""
    access = get_access(request, team, key, Role.REVIEWER)
    reviewing.toggle_comment(access.chain, pk, request.user)
    return _after_comment(request, access)


@require_http_methods(["GET", "POST"])
def reviews(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The chain's reviews (GET); a request that named people review a revision (POST)."""
    if request.method == "GET":
        return _reviews_page(request, get_access(request, team, key))
    access = get_access(request, team, key, Role.EDITOR)
    chain = access.chain
    form = posted(request, ReviewIn)
    review = _carry_out(
        form, lambda r: reviewing.request_review(chain, request.user, **r.model_dump())
    )
    if review is None:
        return _reviews_page(request, access, form, status=400)
    url = chain.url("review", review.pk)
    if request.htmx:  # htmx would follow a redirect and swap the page into the form
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url, status=303)


@require_GET
def review(request: HttpRequest, key: str, pk: int, team: str | None = None) -> HttpResponse:
    """One review: the approval conditions first, then each reviewer's decision."""
    access = get_access(request, team, key)
    return _review_page(request, access, reviewing.get_review(access.chain, pk))


@require_POST
def vote(request: HttpRequest, key: str, pk: int, team: str | None = None) -> HttpResponse:
    """A named reviewer approves or requests changes (``vote``, with a ``note``)."""
    access = get_access(request, team, key, Role.REVIEWER)
    chain = access.chain
    form = posted(request, VoteIn)
    review = _carry_out(form, lambda v: reviewing.vote(chain, pk, request.user, v.vote, v.note))
    if review is None:
        review = reviewing.get_review(chain, pk)
        return _review_page(request, access, review, form=form, status=400)
    if request.htmx:
        return _review_page(request, access, review)
    url = chain.url("review", review.pk)
    return HttpResponseRedirect(url, status=303)


def _carry_out(form: SchemaForm[S], use_case: Callable[[S], T]) -> T | None:
    """Run ``use_case`` on the form's values: its result, or None with the refusal on the form."""
    if not form.is_valid():
        return None
    try:
        return use_case(form.value)
    except ReviewError as exc:
        form.refuse(exc)
        return None


# --- answering ------------------------------------------------------------------------


def _after_comment(
    request: HttpRequest, access: ChainAccess, form: SchemaForm[Any] | None = None
) -> HttpResponse:
    """The page the comment form was on: redirect a plain post, re-render for htmx or errors.

    A refused comment's bound form goes back as ``comment_form`` (what was
    typed, the reasons beside the fields), to the comments page or the
    workspace's comment box alike.
    """
    back = read_post(request, Back)
    in_workspace, state = back.from_ == "workspace", back.state()
    refused = form is not None and bool(form.errors)
    if not refused and not request.htmx:
        url = access.chain.url("chain" if in_workspace else "comments")
        return HttpResponseRedirect(f"{url}?{urlencode(state)}" if state else url, status=303)
    shown: dict[str, Any] = {}
    if form is not None and refused:
        shown = {"comment_form": form, "comment_error": form.message}
    status = 400 if refused else 200
    if not in_workspace:
        return _comments_page(request, access, status=status, **shown)
    head = get_head(access.chain)
    context = workspace_context(access, head, state, **shown)
    return render_workspace(request, context, status)


class Listing(BaseModel):
    """Which page of threads the comments page shows, or which page of one thread's replies."""

    anchor: str = ""
    thread: int | None = None
    page: int = Field(1, ge=1)

    def query(self, page: int) -> str:
        """The query string of ``page`` of this listing."""
        kept = {"anchor": self.anchor, "thread": self.thread or ""}
        return urlencode({**{k: v for k, v in kept.items() if v}, "page": page})


def _comments_page(
    request: HttpRequest, access: ChainAccess, status: int = 200, **extra: Any
) -> HttpResponse:
    chain = access.chain
    head = get_head(chain)
    try:
        listing = read_form(Listing, request.GET)
    except FormError as exc:
        listing, status, extra = Listing(), 400, {**extra, "comment_error": str(exc)}
    try:
        known = sorted(anchors(spec_of(head)))
    except DocumentError:
        known = [CHAIN]
    context = {
        "chain": chain,
        "head": head,
        **_listed(chain, listing),
        "anchor": listing.anchor,
        "anchors": known,
        "access": access,
        "can_comment": access.may(Role.REVIEWER),
        **extra,
    }
    template = "chains/comments.html#comments" if request.htmx else "chains/comments.html"
    return render(request, template, context, status=status)


def _listed(chain: Chain, listing: Listing) -> dict[str, Any]:
    """The threads of one page, or one thread with a page of its replies, and the pager."""
    per_page = settings.COMMENTS_PER_PAGE
    offset = (listing.page - 1) * per_page
    if listing.thread is None:
        page = reviewing.list_threads(chain, limit=per_page, offset=offset, anchor=listing.anchor)
        threads, thread = page.items, None
    else:
        thread = get_object_or_404(Comment.objects.threads(chain), pk=listing.thread)
        page = reviewing.list_replies(chain, thread.pk, limit=per_page, offset=offset)
        thread.first_replies, threads = page.items, [thread]
    return {
        "threads": threads,
        "one_thread": thread,
        "page": page,
        "first_shown": offset + 1 if page.items else 0,
        "last_shown": offset + len(page.items),
        "prev_query": listing.query(listing.page - 1) if listing.page > 1 else "",
        "next_query": listing.query(listing.page + 1) if page.next_offset is not None else "",
    }


def _reviews_page(
    request: HttpRequest,
    access: ChainAccess,
    form: SchemaForm[Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The reviews and the request form: ``form`` as refused, else a new one on the head."""
    chain = access.chain
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
        "access": access,
        "can_request": access.may(Role.EDITOR),
        "form": form or SchemaForm(ReviewIn, initial={"revision": head.number}),
    }
    template = "chains/reviews.html#reviews" if request.htmx else "chains/reviews.html"
    return render(request, template, context, status=status)


def _review_page(
    request: HttpRequest,
    access: ChainAccess,
    review: Review,
    status: int = 200,
    form: SchemaForm[Any] | None = None,
) -> HttpResponse:
    chain = access.chain
    revision = review.revision
    votes = list(review.votes.all())
    mine = next((v for v in votes if v.reviewer_id == request.user.pk), None)
    state = review.state()
    approved = chain.approved()
    can_review = access.may(Role.REVIEWER)
    context = {
        "chain": chain,
        "access": access,
        "head": get_head(chain),
        "review": review,
        "revision": revision,
        "state": state,
        "ballots": review.ballots(),
        "mine": mine,
        "can_vote": mine is not None and state not in ("approved", "closed") and can_review,
        "barred": revision.refusals([mine.reviewer]).get(mine.reviewer_id) if mine else None,
        "author_named": any(v.reviewer_id == revision.author_id for v in votes),
        "held": [] if revision.approved_at else review.holds(),
        "problems": [] if revision.approved_at else revision.approval_problems(),
        "approved": approved if approved != revision else None,
        "form": form or SchemaForm(VoteIn, initial={"note": mine.note if mine else ""}),
    }
    template = "chains/review.html#review" if request.htmx else "chains/review.html"
    return render(request, template, context, status=status)
