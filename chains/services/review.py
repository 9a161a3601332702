"""Design review: comment, resolve a thread, request a review, vote; one function each.

The rules are model verbs (``Comment.objects.post``, ``Comment.toggle``,
``Review.objects.request``, ``Review.vote``); this module does what both the
pages and the API must do around them: find the revision a request names by
number (the head when it names none), and the comment or review it names,
only among those of the chain it was reached through. A field of the request
that names nothing on this chain is a :class:`ReviewError` naming that field
(a 400 that keeps what was typed); a comment or review in the path that is
not this chain's is a 404, as if it did not exist. The schemas here
(``CommentIn``, ``ReviewIn``, ``VoteIn``, ``PageIn``) are what the API takes and
the pages read from their forms; they say the shape, the verbs say what is
allowed, so a refusal reads the same through either door. Listings of
comments are read a page at a time (``list_threads``, ``list_replies``),
with the page size and its maximum from the settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from pydantic import BaseModel, Field

from chains.core.comments import CHAIN
from chains.models import (
    Chain,
    Comment,
    Decision,
    Notification,
    NotificationKind,
    Review,
    ReviewError,
    Revision,
)
from chains.services.access import find_revision

__all__ = [
    "CommentIn",
    "Page",
    "PageIn",
    "ReviewIn",
    "VoteIn",
    "get_review",
    "list_replies",
    "list_threads",
    "post_comment",
    "request_review",
    "toggle_comment",
    "vote",
]


class CommentIn(BaseModel):
    body: str = Field("", description="the text; @username mentions someone on the chain")
    anchor: str = Field(CHAIN, description="chain, or an element's key: handle:x, row:F3, ...")
    revision: int | None = Field(None, description="the revision it is written on (the head)")
    reply_to: int | None = Field(None, description="the comment this answers")


class PageIn(BaseModel):
    limit: int | None = Field(None, description="items per page (COMMENTS_PER_PAGE)")
    offset: int = Field(0, description="items to skip")


class ReviewIn(BaseModel):
    reviewers: list[str] = Field(default_factory=list, description="usernames of reviewers")
    revision: int | None = Field(None, description="the revision to review (the head)")
    note: str = ""


class VoteIn(BaseModel):
    vote: Literal["approve", "request_changes"]
    note: str = Field("", description="what should change (needed to request changes)")


@dataclass(frozen=True)
class Page:
    """One page of a listing: its ``items``, and where it sits among all ``total`` of them."""

    items: list[Comment]
    total: int
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts, or None when this is the last."""
        after = self.offset + len(self.items)
        return after if after < self.total else None


def list_threads(
    chain: Chain, *, limit: int | None = None, offset: int = 0, anchor: str = ""
) -> Page:
    """One page of ``chain``'s threads (of one ``anchor``), each with its first replies."""
    threads = Comment.objects.threads(chain)
    counted = Comment.objects.filter(chain=chain, parent__isnull=True)
    if anchor:
        threads, counted = threads.filter(anchor=anchor), counted.filter(anchor=anchor)
    return _page(threads, counted, limit, offset)


def list_replies(chain: Chain, pk: int, *, limit: int | None = None, offset: int = 0) -> Page:
    """One page of the replies in the thread of ``chain``'s comment ``pk``; 404 for another's."""
    thread = get_object_or_404(Comment, pk=pk, chain=chain).thread()
    replies = Comment.objects.replies_of(thread)
    return _page(replies, replies, limit, offset)


def post_comment(
    chain: Chain,
    author: Any,
    body: str,
    *,
    anchor: str,
    revision: int | None = None,
    reply_to: int | None = None,
) -> Comment:
    """A new thread on ``anchor`` of ``revision`` (the head), or a reply to ``reply_to``."""
    parent = None
    if reply_to is not None:
        parent = Comment.objects.filter(chain=chain, pk=reply_to).first()
        if parent is None:
            raise ReviewError(f"reply_to: {chain.key} has no comment {reply_to}")
    comment = Comment.objects.post(
        _revision(chain, revision), author, body, anchor=anchor, reply_to=parent
    )
    excerpt = comment.body if len(comment.body) <= 120 else comment.body[:119] + "…"
    Notification.objects.send(
        comment.mentions.all(),
        NotificationKind.MENTION,
        chain,
        actor=author,
        text=f"{_name(author)} mentioned you on {chain}: {excerpt}",
        url=f"{chain.url('comments')}#comment-{comment.thread().pk}",
    )
    return comment


def toggle_comment(chain: Chain, pk: int, by: Any) -> Comment:
    """Resolve the thread of ``chain``'s comment ``pk``, or reopen it; 404 for another's."""
    return get_object_or_404(Comment, pk=pk, chain=chain).toggle(by=by)


def request_review(
    chain: Chain,
    requested_by: Any,
    reviewers: list[str],
    *,
    revision: int | None = None,
    note: str,
) -> Review:
    """Ask ``reviewers`` (usernames) to review revision ``revision`` of ``chain`` (the head)."""
    review = Review.objects.request(_revision(chain, revision), requested_by, reviewers, note)
    number = review.revision.number
    Notification.objects.send(
        [v.reviewer for v in review.votes.select_related("reviewer")],
        NotificationKind.REVIEW_REQUESTED,
        chain,
        actor=requested_by,
        text=f"{_name(requested_by)} asks you to review r{number} of {chain}"
        + (f": {review.note}" if review.note else ""),
        url=chain.url("review", review.pk),
    )
    return review


def vote(chain: Chain, review_pk: int, reviewer: Any, decision: str, note: str) -> Review:
    """Record ``reviewer``'s ``decision`` on ``chain``'s review ``review_pk``; return the review.

    The person who asked for the review and the revision's author are told.
    """
    cast = get_review(chain, review_pk).vote(reviewer, decision, note)
    review = get_review(chain, review_pk)
    said = "approved" if cast.decision == Decision.APPROVED else "requested changes to"
    approved = f"; r{review.revision.number} is approved" if review.revision.approved_at else ""
    Notification.objects.send(
        [review.requested_by, review.revision.author],
        NotificationKind.REVIEW_DECIDED,
        chain,
        actor=reviewer,
        text=f"{_name(reviewer)} {said} r{review.revision.number} of {chain}{approved}"
        + (f": {cast.note}" if cast.note else ""),
        url=chain.url("review", review.pk),
    )
    return review


def get_review(chain: Chain, pk: int) -> Review:
    """``chain``'s review ``pk`` with its revision and votes; 404 for another chain's."""
    found = Review.objects.select_related("revision", "requested_by").prefetch_related(
        "votes__reviewer"
    )
    return get_object_or_404(found, pk=pk, chain=chain)


def _page(found: QuerySet, counted: QuerySet, limit: int | None, offset: int) -> Page:
    """The page of ``found`` at ``offset``; a limit or offset out of range names itself."""
    most = settings.COMMENTS_MAX_PER_PAGE
    limit = settings.COMMENTS_PER_PAGE if limit is None else limit
    if not 1 <= limit <= most:
        raise ReviewError(f"limit: {limit} is not between 1 and {most}")
    if offset < 0:
        raise ReviewError(f"offset: {offset} is negative")
    total = counted.count()
    # Past the end reads nothing (and an offset too big for the database never reaches it).
    items = list(found[offset : offset + limit]) if offset < total else []
    return Page(items, total, limit, offset)


def _revision(chain: Chain, number: int | None) -> Revision:
    """The revision ``number`` of ``chain``; the head when it is None."""
    found = find_revision(chain, number)
    if found is None:
        raise ReviewError(f"revision: {chain.key} has no revision {number}")
    return found


def _name(person: Any) -> str:
    return getattr(person, "username", None) or "someone"
