"""Review: comments on revisions, review requests and votes.

A comment is written on one revision and anchored to the chain or to one of
its elements by graph key (chains.core.comments); replies join their thread,
whose first comment holds the anchor and the resolved state; listings read
threads with only their first replies, so a page stays bounded. A review
asks named people to approve one revision; when every one of them has
approved (apart from those whose approval would not count, who may only
request changes: ``Revision.refusals``) and nobody on any review of that
revision asks for changes, the revision is approved
(Revision.approve), which only a VALID or WARNINGS revision whose saved
scenarios all hold can be; its other reviews are then closed.

Builds on ``chains`` and ``people``; nothing else in the package imports it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.utils import timezone

from chains.core import formats
from chains.core.comments import CHAIN, UnknownAnchor, check_anchor, mentions, split_mentions
from chains.core.errors import DocumentError
from chains.core.words import article
from chains.models.chains import Chain, Revision
from chains.models.errors import NotApprovable, ReviewError
from chains.models.people import Role, at_least

MAX_COMMENT = 10_000  # characters: the default of the COMMENT_MAX_CHARS setting


def max_comment() -> int:
    """The most characters a comment or a review note may have (``COMMENT_MAX_CHARS``)."""
    return int(getattr(settings, "COMMENT_MAX_CHARS", MAX_COMMENT))


def replies_shown() -> int:
    """How many replies a thread shows in a listing (``COMMENT_REPLIES_SHOWN``)."""
    return int(getattr(settings, "COMMENT_REPLIES_SHOWN", 10))


class CommentQuerySet(models.QuerySet):
    def post(
        self,
        revision: Revision,
        author: Any,
        body: str,
        *,
        anchor: str = CHAIN,
        reply_to: Comment | None = None,
    ) -> Comment:
        """A new comment on ``revision``: a thread anchored at ``anchor``, or a reply.

        A reply joins the thread of ``reply_to`` (threads are one level deep)
        and takes its anchor. ``@username`` mentions of people with a role on
        the chain are recorded; other ``@words`` stay plain text. Raises
        :class:`ReviewError` for an empty or oversized body, an anchor the
        revision lacks, or a comment of another chain.
        """
        body = body.strip()
        if not body:
            raise ReviewError("body: a comment needs some text")
        limit = max_comment()
        if len(body) > limit:
            raise ReviewError(f"body: {len(body):,} characters is more than {limit:,}")
        chain = revision.chain
        if reply_to is not None:
            if reply_to.chain_id != chain.pk:
                raise ReviewError(f"reply_to: comment {reply_to.pk} is not on {chain.key}")
            reply_to = reply_to.thread()
            anchor = reply_to.anchor
        elif anchor != CHAIN:
            try:
                check_anchor(formats.from_document(revision.document), anchor)
            except DocumentError:
                message = f"anchor: r{revision.number} no longer validates; comment on the chain"
                raise ReviewError(message) from None
            except UnknownAnchor as exc:
                raise ReviewError(str(exc)) from None
        named = get_user_model().objects.filter(username__in=mentions(body))
        mentioned = [user for user in named if chain.role_of(user) is not None]
        with transaction.atomic():
            comment = self.create(
                chain=chain,
                revision=revision,
                anchor=anchor,
                body=body,
                author=author if getattr(author, "is_authenticated", False) else None,
                parent=reply_to,
            )
            comment.mentions.set(mentioned)
        return comment

    def threads(self, chain: Chain) -> CommentQuerySet:
        """The first comments of ``chain``'s threads, open ones first, newest first.

        Each carries ``reply_count`` and, as ``first_replies``, only its first
        ``COMMENT_REPLIES_SHOWN`` replies, so a listing stays bounded however
        long a thread grows; :meth:`replies_of` reads the rest.
        """
        first = _oldest_first(Comment.objects.all())[: replies_shown()]
        return (
            self.filter(chain=chain, parent__isnull=True)
            .select_related("author", "revision", "resolved_by")
            .annotate(reply_count=models.Count("replies"))
            .prefetch_related(
                "mentions", models.Prefetch("replies", queryset=first, to_attr="first_replies")
            )
            .order_by(models.F("resolved_at").desc(nulls_first=True), "-created_at", "-pk")
        )

    def replies_of(self, thread: Comment) -> CommentQuerySet:
        """The replies of ``thread``, oldest first."""
        return _oldest_first(self.filter(parent=thread))

    def open_counts(self, chain: Chain) -> dict[str, int]:
        """How many open threads each anchor of ``chain`` has (anchors without any left out)."""
        open_threads = self.filter(chain=chain, parent__isnull=True, resolved_at__isnull=True)
        counts = open_threads.values("anchor").annotate(n=models.Count("pk")).order_by()
        return {row["anchor"]: row["n"] for row in counts}


def _oldest_first(comments: models.QuerySet) -> models.QuerySet:
    return (
        comments.select_related("author", "revision")
        .prefetch_related("mentions")
        .order_by("created_at", "pk")
    )


class Comment(models.Model):
    """One comment, written on a revision; the first of a thread holds its anchor and state."""

    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="comments")
    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="comments")
    anchor = models.CharField(max_length=500, default=CHAIN)
    body = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies"
    )
    mentions = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="mentioned_in"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = CommentQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["chain", "anchor"], name="comment_chain_anchor")]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.anchor} of r{self.revision.number}"

    def thread(self) -> Comment:
        """The first comment of this comment's thread (itself, unless it is a reply)."""
        return self.parent if self.parent is not None else self

    def shown_replies(self) -> tuple[list[Comment], int]:
        """The replies a listing shows (the first ``COMMENT_REPLIES_SHOWN``), and how many in all.

        A reply has none. A thread read by :meth:`CommentQuerySet.threads`
        carries both already; any other is asked.
        """
        if self.parent_id is not None:
            return [], 0
        if not hasattr(self, "first_replies"):
            self.first_replies = list(Comment.objects.replies_of(self)[: replies_shown()])
        if not hasattr(self, "reply_count"):
            self.reply_count = self.replies.count()
        return self.first_replies, self.reply_count

    @property
    def more_replies(self) -> int:
        """How many replies a listing leaves out (a thread from ``Comment.objects.threads``)."""
        return getattr(self, "reply_count", 0) - len(getattr(self, "first_replies", ()))

    def parts(self) -> list[tuple[str, bool]]:
        """The body in pieces, each with whether it is a recorded mention (for display)."""
        return split_mentions(self.body, {user.username for user in self.mentions.all()})

    def resolve(self, by: Any) -> Comment:
        """Mark the thread resolved (by ``by``); resolving a resolved thread changes nothing."""
        thread = self.thread()
        Comment.objects.filter(pk=thread.pk, resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolved_by=by
        )
        thread.refresh_from_db(fields=["resolved_at", "resolved_by"])
        return thread

    def reopen(self) -> Comment:
        """Mark the thread open again."""
        thread = self.thread()
        Comment.objects.filter(pk=thread.pk).update(resolved_at=None, resolved_by=None)
        thread.refresh_from_db(fields=["resolved_at", "resolved_by"])
        return thread

    def toggle(self, by: Any) -> Comment:
        """Resolve an open thread, reopen a resolved one."""
        return self.reopen() if self.thread().resolved_at else self.resolve(by)


class Decision(models.TextChoices):
    PENDING = "pending", "pending"
    APPROVED = "approved", "approved"
    CHANGES = "changes_requested", "changes requested"


# What a vote form posts -> the decision it records.
VOTES = {"approve": Decision.APPROVED, "request_changes": Decision.CHANGES}


class ReviewQuerySet(models.QuerySet):
    def request(self, revision: Revision, by: Any, reviewers: list[str], note: str = "") -> Review:
        """Ask the people named by username in ``reviewers`` to review ``revision``.

        Each must have the reviewer role or higher on the chain and must not
        be ``by``, who asks; people whose approval would not count (the
        revision's authors, their invitees: ``Revision.refusals``) may be
        named, to request changes, but not alone.
        Raises :class:`ReviewError` naming everyone refused and why, or when
        the revision is approved already.
        """
        chain = revision.chain
        if revision.approved_at is not None:
            raise ReviewError(f"revision: r{revision.number} is approved already ({revision.tag})")
        names = list(dict.fromkeys(n.strip() for n in reviewers if n.strip()))
        if not names:
            raise ReviewError("reviewers: name at least one reviewer")
        found = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
        refused = []
        for name in names:
            user = found.get(name)
            role = chain.role_of(user) if user is not None else None
            if user is None or role is None:
                refused.append(f"{name} has no role on {chain.key}")
            elif not at_least(role, Role.REVIEWER):
                why = f"{name} is {article(role)} on {chain.key}; reviewing needs reviewer"
                refused.append(why)
            elif user == by:
                refused.append(f"{name} asks for this review and cannot also give it")
        if not refused:
            barred = revision.refusals([found[name] for name in names])
            if all(found[name].pk in barred for name in names):
                why = "; ".join(barred[found[name].pk] for name in names)
                refused.append(f"{why}; name someone else as well")
        if refused:
            raise ReviewError("reviewers: " + "; ".join(refused))
        note = _checked_note(note)
        with transaction.atomic():
            review = self.create(chain=chain, revision=revision, requested_by=by, note=note)
            ReviewVote.objects.bulk_create(
                ReviewVote(review=review, reviewer=found[name]) for name in names
            )
        return review


class Review(models.Model):
    """A request that named people review one revision; approved when all of them approve."""

    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="reviews")
    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="reviews")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"review {self.pk} of {self.revision}"

    def state(self) -> str:
        """Where this review stands: one of :data:`STATES`.

        ``approved``: the revision is, and everyone here who may approve did;
        ``closed``: the revision was approved through another review, so what
        is still pending here no longer counts; ``changes requested``: someone
        here asked; ``held back``: everyone here approved, but someone on
        another review of the revision asks for changes; else ``open``.
        """
        votes = list(self.votes.all())
        if self.revision.approved_at is not None:
            return "approved" if self._complete(votes) else "closed"
        if any(v.decision == Decision.CHANGES for v in votes):
            return "changes requested"
        return "held back" if self._complete(votes) else "open"

    def ballots(self) -> list[tuple[ReviewVote, str]]:
        """Each vote with the decision a listing shows for it.

        A vote still pending counts for nothing once the revision is approved,
        and one from someone ``Revision.refusals`` bars never counts: showing
        either as "pending" beside an approved review reads as if approval
        skipped someone, so they say why they do not count.
        """
        approved = self.revision.approved_at is not None
        votes = list(self.votes.all())
        barred = self.revision.refusals([v.reviewer for v in votes])
        shown = []
        for v in votes:
            label = v.get_decision_display()
            if v.decision != Decision.CHANGES and v.reviewer_id in barred:
                # Shown beside the reviewer's name, so the reason starts after it.
                label = f"not counted: {barred[v.reviewer_id].removeprefix(f'{v.reviewer} ')}"
            elif v.decision == Decision.PENDING and approved:
                label = "not needed: approved without this vote"
            shown.append((v, label))
        return shown

    def holds(self) -> list[ReviewVote]:
        """The requests for changes on other reviews of the revision that hold back its approval."""
        return list(
            ReviewVote.objects.filter(review__revision=self.revision, decision=Decision.CHANGES)
            .exclude(review=self)
            .select_related("reviewer", "review")
            .order_by("review_id", "reviewer__username")
        )

    def vote(self, user: Any, vote: str, note: str = "") -> ReviewVote:
        """Record ``user``'s ``vote`` (``approve`` or ``request_changes``) on this review.

        Only a named reviewer votes, and may change their vote while the
        revision is not approved. Requesting changes needs a note. An approval
        is refused (:class:`NotApprovable`) while the revision fails an
        approval condition, and from anyone ``Revision.refusals`` bars. The
        revision is approved when everyone on one of its reviews who may
        approve has approved and nobody on any of its reviews asks for
        changes; the other reviews are then closed. Nothing is stored when a
        :class:`ReviewError` is raised.
        """
        decision = VOTES.get(vote)
        if decision is None:
            raise ReviewError(f"vote: {vote!r} is neither 'approve' nor 'request_changes'")
        self._refuse_when_closed()
        signed_in = getattr(user, "is_authenticated", False)
        mine = self.votes.filter(reviewer=user).first() if signed_in else None
        if mine is None:
            named = ", ".join(v.reviewer.username for v in self.votes.select_related("reviewer"))
            raise ReviewError(f"{user} is not a reviewer of review {self.pk} (those are: {named})")
        note = _checked_note(note)
        if decision == Decision.CHANGES and not note:
            raise ReviewError("note: say what should change")
        if decision == Decision.APPROVED:
            barred = self.revision.refusals([user]).get(user.pk)
            if barred:
                raise ReviewError(f"vote: {barred}; requesting changes is still possible")
            problems = self.revision.approval_problems()
            if problems:
                raise NotApprovable(self.revision, problems)
        with transaction.atomic():
            # One vote at a time per revision, so the vote that completes a review sees every
            # other review of it, and two reviews cannot both approve it.
            Revision.objects.select_for_update().filter(pk=self.revision.pk).first()
            self._refuse_when_closed()
            mine.decision, mine.note, mine.decided_at = decision, note, timezone.now()
            mine.save(update_fields=["decision", "note", "decided_at"])
            if _approvable_by_review(self.revision):
                self.revision.approve(by=user)
        return mine

    def _refuse_when_closed(self) -> None:
        self.revision.refresh_from_db(fields=["approved_at", "approved_by", "tag"])
        if self.revision.approved_at is not None:
            raise ReviewError(f"r{self.revision.number} is approved already; this review is closed")

    def _complete(self, votes: list[ReviewVote]) -> bool:
        """Whether everyone in ``votes`` whose approval counts (``Revision.refusals``) approved."""
        barred = self.revision.refusals([v.reviewer for v in votes])
        counted = [v for v in votes if v.reviewer_id not in barred]
        return bool(counted) and all(v.decision == Decision.APPROVED for v in counted)


STATES = ("open", "changes requested", "held back", "approved", "closed")


def _checked_note(note: str) -> str:
    note = note.strip()
    limit = max_comment()
    if len(note) > limit:
        raise ReviewError(f"note: {len(note):,} characters is more than {limit:,}")
    return note


def _approvable_by_review(revision: Revision) -> bool:
    """Whether one review of ``revision`` is complete and none of them asks for changes."""
    reviews = list(revision.reviews.prefetch_related("votes__reviewer"))
    for review in reviews:
        review.revision = revision
    if any(v.decision == Decision.CHANGES for r in reviews for v in r.votes.all()):
        return False
    return any(r._complete(list(r.votes.all())) for r in reviews)


class ReviewVote(models.Model):
    """One named reviewer of a review and what they decided."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="votes")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_votes"
    )
    decision = models.CharField(max_length=20, choices=Decision.choices, default=Decision.PENDING)
    note = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["review", "reviewer__username"]
        constraints = [
            models.UniqueConstraint(fields=["review", "reviewer"], name="unique_review_vote")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} on {self.review}: {self.decision}"
