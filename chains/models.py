"""Stored chains: a Chain is a name, its Revisions are immutable documents.

A revision holds one chain document as JSON (the output of
``chains.core.formats.to_document``) and the sha256 of its canonical form, so
storing the same content twice is a no-op and history is append-only.
Comments and Reviews are written on revisions; an approved revision is the
team's sign-off and can be neither changed nor deleted.

An Exploration is a model-checker run over one revision, cut into shards that
Celery workers claim with conditional updates (the rows are the lock, so it
works the same on SQLite and PostgreSQL). The search itself is
``chains.core.sim.explorer``; this module only records who runs what, how far
it got, and the merged result.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import uuid
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, models, transaction
from django.db.models import F, Max
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone
from django.utils.text import slugify

from chains.core import formats
from chains.core.comments import CHAIN, UnknownAnchor, check_anchor, mentions, split_mentions
from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.core.sim.explorer import Bounds, ExploreResult, merge, scenario_dict
from chains.core.sim.regression import ScenarioCheck, check_all
from chains.core.sim.scenario import Scenario, load_scenario


def content_hash(document: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON form of a document (sorted keys, no spaces)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class StaleRevision(Exception):
    """An edit was based on a revision that is no longer the head."""

    def __init__(self, head: Revision, base: int):
        self.head = head
        self.base = base
        super().__init__(
            f"this edit was based on revision {base}, but the chain is at revision "
            f"{head.number} now; reload to see the other change, then edit again"
        )


class NothingToUndo(Exception):
    """Undo at the first revision, or redo with nothing undone."""


def document_status(document: dict[str, Any]) -> str:
    """The lint status of a stored document; INVALID when it no longer loads."""
    try:
        return lint(formats.from_document(document)).status
    except DocumentError:
        return "INVALID"


# --- people: teams and per-chain roles -------------------------------------------


class Role(models.TextChoices):
    """What a person may do with a chain; each role may do everything the ones before it may."""

    VIEWER = "viewer"  # read, simulate, export
    REVIEWER = "reviewer"  # and comment, approve or request changes
    EDITOR = "editor"  # and edit, save scenarios, run and cancel campaigns
    OWNER = "owner"  # and grant roles


RANK = {role: n for n, role in enumerate(Role, 1)}


def at_least(role: str | None, needed: str) -> bool:
    """Whether ``role`` may do what ``needed`` may (``None``: no access at all)."""
    return role is not None and RANK[Role(role)] >= RANK[Role(needed)]


class LastOwner(Exception):
    """A team must keep at least one owner."""


class TeamQuerySet(models.QuerySet):
    def of(self, user: Any) -> TeamQuerySet:
        """The teams ``user`` belongs to (every team, for a superuser)."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        if user.is_superuser:
            return self
        return self.filter(pk__in=Membership.objects.filter(user=user).values("team"))

    def creating(self, user: Any) -> TeamQuerySet:
        """The teams ``user`` may create chains in: where they are an editor or an owner."""
        if getattr(user, "is_superuser", False):
            return self.all()
        editing = Membership.objects.filter(user=user, role__in=[Role.EDITOR, Role.OWNER])
        return self.filter(pk__in=editing.values("team"))

    def found(self, name: str, owner: Any, slug: str | None = None) -> Team:
        """A new team with ``owner`` as its first owner; the slug is made unique if not given."""
        with transaction.atomic():
            if slug is None:
                base = slugify(name)[:50] or "team"
                slug, n = base, 1
                while self.filter(slug=slug).exists():
                    n += 1
                    slug = f"{base}-{n}"
            team = self.create(name=name, slug=slug)
            team.add(owner, Role.OWNER)
        return team


class Team(models.Model):
    """People who own chains together; a member's role holds on every chain of the team."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def role_of(self, user: Any) -> str | None:
        if not getattr(user, "is_authenticated", False):
            return None
        if user.is_superuser:
            return Role.OWNER
        found = self.memberships.filter(user=user).values_list("role", flat=True).first()
        return found

    def add(self, user: Any, role: str = Role.VIEWER) -> Membership:
        """Make ``user`` a member with ``role`` (or change the role of a member).

        Raises :class:`LastOwner` when that would leave the team without an owner.
        """
        with transaction.atomic():
            if role != Role.OWNER:
                self._keep_an_owner(user)
            membership, _ = Membership.objects.update_or_create(
                team=self, user=user, defaults={"role": Role(role)}
            )
        return membership

    def remove(self, user: Any) -> None:
        """Take ``user`` out of the team; raises :class:`LastOwner` for its last owner."""
        with transaction.atomic():
            self._keep_an_owner(user)
            self.memberships.filter(user=user).delete()

    def _keep_an_owner(self, leaving: Any) -> None:
        owners = self.memberships.select_for_update().filter(role=Role.OWNER)
        if owners.exists() and not owners.exclude(user=leaving).exists():
            raise LastOwner(
                f"{leaving} is the last owner of {self.name}; make someone else owner first"
            )


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        ordering = ["team", "user__username"]
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="unique_team_member")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class ChainRole(models.Model):
    """A role on one chain for one person, which replaces the role their team gives them."""

    chain = models.ForeignKey("Chain", on_delete=models.CASCADE, related_name="roles")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chain_roles"
    )
    role = models.CharField(max_length=10, choices=Role.choices)

    class Meta:
        ordering = ["chain", "user__username"]
        constraints = [models.UniqueConstraint(fields=["chain", "user"], name="unique_chain_role")]

    def __str__(self) -> str:
        return f"{self.user} on {self.chain} ({self.role})"


class ChainQuerySet(models.QuerySet):
    def visible_to(self, user: Any) -> ChainQuerySet:
        """The chains ``user`` has any role on."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        if user.is_superuser:
            return self
        # Subqueries, not joins: a join would multiply the rows an annotation counts.
        teams = Membership.objects.filter(user=user).values("team")
        granted = ChainRole.objects.filter(user=user).values("chain")
        return self.filter(models.Q(team__in=teams) | models.Q(pk__in=granted))

    def store(
        self,
        document: dict[str, Any],
        message: str = "",
        *,
        base: int | None = None,
        author: Any = None,
        undo_target: Revision | None = None,
        redo_target: Revision | None = None,
        restores: bool = False,
        status: str | None = None,
        team: Team | None = None,
    ) -> Revision:
        """Save a document as the head of its chain (keyed by ``document["id"]``).

        Creates the chain when new; appends a revision only when the content
        differs from the head, and returns the head otherwise. With ``base``
        (the revision number an edit started from) a head that has moved on
        raises :class:`StaleRevision` and stores nothing: the other person's
        edit is never overwritten. A new revision's undo target is the old
        head unless ``restores`` says it is an undo or redo (see
        :meth:`Chain.undo`). ``status`` is the document's lint status when
        the caller has linted it already. ``team`` owns the chain when this
        creates it (or when it has no team yet); who may store into an
        existing chain is the caller's check.
        """
        key = document["id"]
        digest = content_hash(document)
        with transaction.atomic():
            chain, _ = self.select_for_update().get_or_create(key=key, defaults={"team": team})
            if team is not None and chain.team_id is None:  # adopted by the first team to store it
                chain.team = team
                chain.save(update_fields=["team"])
            head = chain.head()
            if base is not None and head is not None and head.number != base:
                raise StaleRevision(head, base)
            if head is not None and head.content_hash == digest:
                return head
            chain.title = str(document.get("title") or key)[:200]
            chain.description = str(document.get("description") or "")
            chain.save()
            return chain.revisions.create(
                number=head.number + 1 if head else 1,
                document=document,
                content_hash=digest,
                message=message,
                status=status or document_status(document),
                author=author if getattr(author, "is_authenticated", False) else None,
                parent=head,
                undo_target=undo_target if restores else head,
                redo_target=redo_target,
            )


class Chain(models.Model):
    key = models.SlugField(max_length=200, unique=True)
    # The team that owns it; a chain without one (stored from the command line
    # without --team) is reachable by superusers only.
    team = models.ForeignKey(
        Team, null=True, blank=True, on_delete=models.PROTECT, related_name="chains"
    )
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChainQuerySet.as_manager()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key

    def head(self) -> Revision | None:
        return self.revisions.order_by("-number").first()

    def approved(self) -> Revision | None:
        """The latest approved revision, or None."""
        return self.revisions.filter(approved_at__isnull=False).order_by("-number").first()

    def people(self) -> models.QuerySet:
        """Everyone with a role here through the team or a grant of their own."""
        members = models.Q(chain_roles__chain=self)
        if self.team_id is not None:
            members |= models.Q(memberships__team_id=self.team_id)
        return get_user_model().objects.filter(members).distinct().order_by("username")

    def role_of(self, user: Any) -> str | None:
        """``user``'s role here: a grant on this chain, else their team role, else None."""
        if not getattr(user, "is_authenticated", False):
            return None
        if user.is_superuser:
            return Role.OWNER
        granted = self.roles.filter(user=user).values_list("role", flat=True).first()
        if granted is not None:
            return granted
        return self.team.role_of(user) if self.team is not None else None

    def grant(self, user: Any, role: str | None) -> None:
        """Give ``user`` ``role`` on this chain; ``None`` takes the grant away."""
        if role is None:
            self.roles.filter(user=user).delete()
        else:
            ChainRole.objects.update_or_create(chain=self, user=user, defaults={"role": Role(role)})

    def undo(self, base: int, author: Any = None) -> Revision:
        """A new head with the content before the last edit (itself undoable by redo).

        Undo and redo never rewrite history: each appends a revision that
        restores an earlier document, and remembers where the next undo and
        redo lead, so repeated undos walk back edit by edit.
        """
        head = self._head_at(base)
        target = head.undo_target
        if target is None:
            raise NothingToUndo("nothing to undo: this is the chain's first revision")
        return Chain.objects.store(
            target.document,
            f"undo revision {head.number}",
            base=base,
            author=author,
            undo_target=target.undo_target,
            redo_target=head,
            restores=True,
        )

    def redo(self, base: int, author: Any = None) -> Revision:
        """A new head with the content the last undo took away."""
        head = self._head_at(base)
        target = head.redo_target
        if target is None:
            raise NothingToUndo("nothing to redo: the last change was not an undo")
        return Chain.objects.store(
            target.document,
            f"redo revision {target.number}",
            base=base,
            author=author,
            undo_target=target.undo_target,
            redo_target=target.redo_target,
            restores=True,
        )

    def _head_at(self, base: int) -> Revision:
        head = self.head()
        if head is None:
            raise NothingToUndo("this chain has no revision")
        if head.number != base:
            raise StaleRevision(head, base)
        return head


class Revision(models.Model):
    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    content_hash = models.CharField(max_length=64)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The lint status when stored (VALID, WARNINGS, INVALID, BLOCKED): the list page's badge.
    status = models.CharField(max_length=16, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    undo_target = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    redo_target = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set once by approve(); an approved revision can be neither changed nor deleted.
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tag = models.CharField(max_length=40, blank=True)

    class Meta:
        ordering = ["chain", "number"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "number"], name="unique_revision_number"),
            models.UniqueConstraint(
                fields=["chain", "tag"], condition=~models.Q(tag=""), name="unique_revision_tag"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chain.key}@{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Store a new revision; a stored one never changes (history is append-only)."""
        if not self._state.adding:
            raise ImmutableRevision(f"{self} is stored already; a change is a new revision")
        super().save(*args, **kwargs)

    def lint_status(self) -> str:
        """The stored status; revisions from before it was stored get it computed once."""
        if not self.status:
            self.status = document_status(self.document)
            Revision.objects.filter(pk=self.pk).update(status=self.status)
        return self.status

    def approval_problems(self) -> list[str]:
        """Why this revision may not be approved, one sentence per failed condition.

        It may when its lint status is VALID or WARNINGS and every saved
        scenario of its chain still holds on it; then the list is empty.
        """
        problems = []
        status = self.lint_status()
        if status not in APPROVABLE:
            problems.append(
                f"its lint status is {status}; only a VALID or WARNINGS revision can be approved"
            )
        try:
            document = formats.from_document(self.document)
        except DocumentError:
            return problems
        for check in scenario_checks(self.chain, document):
            if not check.held:
                why = "; ".join(check.changes) or check.error or "it no longer replays"
                problems.append(f"saved scenario {check.name!r} no longer holds: {why}")
        return problems

    def approve(self, by: Any) -> Revision:
        """Approve this revision as ``by`` and tag it ``approved-<number>``.

        Raises :class:`NotApprovable` with every failed condition of
        :meth:`approval_problems`. Approving twice changes nothing (the first
        approval stays), and any revision may be approved, not only the head:
        a team may sign off on r3 while r4 is being drafted.
        """
        if self.approved_at is not None:
            return self
        problems = self.approval_problems()
        if problems:
            raise NotApprovable(self, problems)
        Revision.objects.filter(pk=self.pk, approved_at__isnull=True).update(
            approved_at=timezone.now(),
            approved_by=by if getattr(by, "is_authenticated", False) else None,
            tag=f"approved-{self.number}",
        )
        self.refresh_from_db(fields=["approved_at", "approved_by", "tag"])
        return self


def store_all(
    chains: list, message: str, author: Any = None, team: Team | None = None
) -> list[dict[str, Any]]:
    """Store every chain of one import, all or none; says which added a revision.

    ``team`` owns the chains this creates.
    """
    stored = []
    with transaction.atomic():
        for chain in chains:
            document = formats.to_document(chain)
            before = Revision.objects.filter(chain__key=document["id"]).aggregate(n=Max("number"))
            revision = Chain.objects.store(document, message=message, author=author, team=team)
            stored.append(
                {
                    "id": document["id"],
                    "revision": revision.number,
                    "created": revision.number != before["n"],
                }
            )
    return stored


class DuplicateScenario(Exception):
    """A scenario of that name is already kept with the chain."""


class SavedScenarioQuerySet(models.QuerySet):
    def keep(
        self,
        chain: Chain,
        name: str,
        scenario: Scenario,
        *,
        author: Any = None,
        replace: bool = False,
    ) -> SavedScenario:
        """Keep ``scenario`` with ``chain`` under ``name`` (its seed and run key included).

        Raises :class:`DuplicateScenario` when the name is taken, unless ``replace``.
        """
        data = scenario_dict(scenario)
        data.update(
            {k: v for k, v in (("seed", scenario.seed), ("run_key", scenario.run_key)) if v}
        )
        if replace:
            saved, _ = self.update_or_create(
                chain=chain, name=name, defaults={"document": data, "author": author}
            )
            return saved
        try:
            with transaction.atomic():
                return self.create(chain=chain, name=name, document=data, author=author)
        except IntegrityError:
            message = f"a scenario named {name!r} is already kept with {chain.key}"
            raise DuplicateScenario(message) from None


class SavedScenario(models.Model):
    """A scripted run kept with a chain: replayed on every revision as a regression check.

    ``document`` is a scenario as ``chains.core.sim.scenario.load_scenario``
    reads it (events and, usually, the expected outcome).
    """

    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="scenarios")
    name = models.CharField(max_length=200)
    document = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SavedScenarioQuerySet.as_manager()

    class Meta:
        ordering = ["chain", "name"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "name"], name="unique_scenario_name")
        ]

    def __str__(self) -> str:
        return f"{self.chain.key}: {self.name}"

    def scenario(self) -> Scenario:
        """The core scenario; raises ``DocumentError`` if it no longer loads."""
        return load_scenario(json.dumps(self.document), filename=f"{self.name}.json")


def saved_scenarios(chain: Chain) -> dict[str, Scenario]:
    """The chain's saved scenarios that still load, by name (:func:`scenario_checks` reports
    the others)."""
    return _load_saved(chain)[0]


def scenario_checks(chain: Chain, document: Any) -> list[ScenarioCheck]:
    """Replay every saved scenario of ``chain`` against ``document`` (a revision's chain)."""
    loaded, broken = _load_saved(chain)
    checks = check_all(document, loaded)
    checks += [ScenarioCheck(name, False, (), why) for name, why in broken.items()]
    return sorted(checks, key=lambda c: c.name)


def _load_saved(chain: Chain) -> tuple[dict[str, Scenario], dict[str, str]]:
    """Saved scenarios by name: those that load, and why each other one does not."""
    loaded, broken = {}, {}
    for saved in chain.scenarios.all():
        try:
            loaded[saved.name] = saved.scenario()
        except DocumentError as exc:
            broken[saved.name] = f"scenario {saved.name!r} no longer loads: {exc}"
    return loaded, broken


# --- review: comments on revisions, review requests and approval ----------------------
#
# A comment is written on one revision and anchored to the chain or to one of
# its elements by graph key (chains.core.comments); replies join their thread,
# whose first comment holds the anchor and the resolved state. A review asks
# named people to approve one revision; when every one of them has approved,
# the revision is approved (Revision.approve), which only a VALID or WARNINGS
# revision whose saved scenarios all hold can be.

APPROVABLE = ("VALID", "WARNINGS")
MAX_COMMENT = 10_000  # characters


class ReviewError(Exception):
    """A comment, review request or vote that cannot be accepted; the message says why."""


class NotApprovable(ReviewError):
    """The revision fails an approval condition; ``problems`` holds one sentence per failure."""

    def __init__(self, revision: Revision, problems: list[str]):
        self.revision = revision
        self.problems = problems
        super().__init__(f"r{revision.number} cannot be approved: " + "; ".join(problems))


class ImmutableRevision(Exception):
    """Something tried to change or delete a stored revision (or an approved one)."""


@receiver(pre_delete, sender=Revision)
def _keep_approved_revisions(sender: Any, instance: Revision, **kwargs: Any) -> None:
    # A signal, not Revision.delete(): queryset and cascading deletes skip the method.
    if instance.approved_at is not None:
        raise ImmutableRevision(f"{instance} is approved ({instance.tag}) and cannot be deleted")


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
        if len(body) > MAX_COMMENT:
            raise ReviewError(f"body: {len(body):,} characters is more than {MAX_COMMENT:,}")
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
        """The first comments of ``chain``'s threads, open ones first, newest first."""
        return (
            self.filter(chain=chain, parent__isnull=True)
            .select_related("author", "revision", "resolved_by")
            .prefetch_related("mentions", "replies__author", "replies__mentions")
            .order_by(models.F("resolved_at").desc(nulls_first=True), "-created_at", "-pk")
        )

    def open_counts(self, chain: Chain) -> dict[str, int]:
        """How many open threads each anchor of ``chain`` has (anchors without any left out)."""
        open_threads = self.filter(chain=chain, parent__isnull=True, resolved_at__isnull=True)
        counts = open_threads.values("anchor").annotate(n=models.Count("pk")).order_by()
        return {row["anchor"]: row["n"] for row in counts}


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
        be ``by``, who asks. Raises :class:`ReviewError` naming everyone
        refused and why, or when the revision is approved already.
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
                refused.append(f"{name} is a {role} on {chain.key}; reviewing needs reviewer")
            elif user == by:
                refused.append(f"{name} asks for this review and cannot also give it")
        if refused:
            raise ReviewError("reviewers: " + "; ".join(refused))
        with transaction.atomic():
            review = self.create(
                chain=chain, revision=revision, requested_by=by, note=note.strip()[:MAX_COMMENT]
            )
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
        """``approved`` (the revision is), ``changes requested`` (someone asked), or ``open``."""
        if self.revision.approved_at is not None:
            return "approved"
        if any(v.decision == Decision.CHANGES for v in self.votes.all()):
            return "changes requested"
        return "open"

    def vote(self, user: Any, vote: str, note: str = "") -> ReviewVote:
        """Record ``user``'s ``vote`` (``approve`` or ``request_changes``) on this review.

        Only a named reviewer votes, and may change their vote while the
        revision is not approved. Requesting changes needs a note. An approval
        is refused (:class:`NotApprovable`) while the revision fails an
        approval condition, and the approval that completes the set approves
        the revision. Nothing is stored when a :class:`ReviewError` is raised.
        """
        decision = VOTES.get(vote)
        if decision is None:
            raise ReviewError(f"vote: {vote!r} is neither 'approve' nor 'request_changes'")
        self.revision.refresh_from_db(fields=["approved_at", "approved_by", "tag"])
        if self.revision.approved_at is not None:
            raise ReviewError(f"r{self.revision.number} is approved already; this review is closed")
        signed_in = getattr(user, "is_authenticated", False)
        mine = self.votes.filter(reviewer=user).first() if signed_in else None
        if mine is None:
            named = ", ".join(v.reviewer.username for v in self.votes.select_related("reviewer"))
            raise ReviewError(f"{user} is not a reviewer of review {self.pk} (those are: {named})")
        note = note.strip()[:MAX_COMMENT]
        if decision == Decision.CHANGES and not note:
            raise ReviewError("note: say what should change")
        if decision == Decision.APPROVED:
            problems = self.revision.approval_problems()
            if problems:
                raise NotApprovable(self.revision, problems)
        with transaction.atomic():
            # One vote at a time per review, so the approval that completes the set sees the rest.
            list(self.votes.select_for_update())
            mine.decision, mine.note, mine.decided_at = decision, note, timezone.now()
            mine.save(update_fields=["decision", "note", "decided_at"])
            if not self.votes.exclude(decision=Decision.APPROVED).exists():
                self.revision.approve(by=user)
        return mine


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


class ExplorationStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE = (ExplorationStatus.QUEUED, ExplorationStatus.RUNNING)

# A running shard beats at least this often while the explorer calls back...
HEARTBEAT_EVERY = 0.5  # seconds
# ...so one silent for this long belongs to a worker that died or hangs.
STALE_AFTER = timedelta(minutes=2)
# Claims per shard before a stale one fails the exploration instead of going back in the queue.
MAX_ATTEMPTS = 2
MAX_SHARDS = 256


class QueueDown(Exception):
    """The task queue (the Celery broker) refused a task, so a launch cannot run."""


class ExplorationQuerySet(models.QuerySet):
    def launch(
        self, revision: Revision, bounds: Bounds | dict[str, Any] | None = None, *, shards: int = 1
    ) -> Exploration:
        """Create an exploration of ``revision`` in ``shards`` parts and queue one task per part.

        The tasks are sent once the surrounding transaction commits, so a worker
        never looks for rows it cannot see yet. When the broker refuses them,
        the exploration is failed at once and :class:`QueueDown` raised (out of
        the commit): a launch never leaves a campaign queued that no worker
        will ever hear of.
        """
        if isinstance(bounds, dict):
            bounds = Bounds(**bounds)
        bounds = bounds or Bounds()
        if not 1 <= shards <= MAX_SHARDS:
            raise ValueError(f"shards must be between 1 and {MAX_SHARDS}, got {shards}")
        with transaction.atomic():
            exploration = self.create(revision=revision, bounds=asdict(bounds), shard_count=shards)
            ExplorationShard.objects.bulk_create(
                ExplorationShard(exploration=exploration, index=i) for i in range(shards)
            )
            transaction.on_commit(exploration.enqueue)
        return exploration

    def recover(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> int:
        """:meth:`Exploration.recover` for each active exploration here; shards it touched.

        A worker runs it for all of them when it starts (``chains.tasks``), so a
        restarted worker resumes abandoned work without anyone opening a page.
        """
        return sum(
            exploration.recover(stale_after, max_attempts)
            for exploration in self.filter(status__in=ACTIVE)
        )


class Exploration(models.Model):
    """A model-checker run over one revision, split into shards that workers claim.

    Status moves queued → running → done, or to failed / cancelled; ``finished_at``
    is set once, by whoever settles the last shard, and with it ``merged``.

    Nothing here depends on a worker staying alive or a message arriving: a
    shard whose worker went silent is taken back, and a shard whose message
    was lost is sent again, whenever someone looks (:meth:`recover`, called by
    every view and poll of the campaign page) and whenever a worker starts.
    So an exploration ends done, failed or cancelled; it is never left running.
    """

    Status = ExplorationStatus

    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="explorations")
    bounds = models.JSONField()
    shard_count = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=10, choices=ExplorationStatus.choices, default=ExplorationStatus.QUEUED
    )
    merged = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ExplorationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"exploration {self.pk} of {self.revision} ({self.status})"

    def get_bounds(self) -> Bounds:
        return Bounds(**self.bounds)

    def enqueue(self) -> None:
        """Send a task for every shard still queued; fail the exploration if the broker refuses.

        Raises :class:`QueueDown` with the reason the exploration now carries.
        Tasks already sent before the refusal find the exploration failed and
        are skipped.
        """
        queued = list(self.shards.filter(status=ExplorationStatus.QUEUED))
        try:
            for shard in queued:
                shard.enqueue()
        except Exception as exc:  # kombu's OperationalError, or whatever the transport raises
            reason = f"the worker queue is down: {type(exc).__name__}: {exc}"
            self.fail(reason)
            self.refresh_from_db()
            raise QueueDown(reason) from exc

    def recover(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> int:
        """Take back what a dead worker or a lost message left; how many shards it touched.

        - A running shard silent for longer than ``stale_after`` is reaped
          (:meth:`ShardQuerySet.reap`): queued again with a fresh task while it
          has attempts left, else failed, and the exploration with it, with a
          reason naming the silent worker.
        - A shard queued for longer than ``stale_after`` (since launch, its last
          requeue or its last re-send) gets its task sent again
          (:meth:`ShardQuerySet.resend`): the message was probably lost, and a
          duplicate is skipped by the claim.

        Both are conditional updates, so any number of pages polling at once
        (and a starting worker) do each at most once per shard per
        ``stale_after``. A finished exploration is left alone.
        """
        if self.status not in ACTIVE:
            return 0
        touched = len(self.shards.reap(stale_after, max_attempts))
        touched += len(self.shards.resend(stale_after))
        if touched:
            self.refresh_from_db()
        return touched

    def cancel(self) -> bool:
        """Stop the exploration: queued shards never start, running ones stop at their next beat.

        Returns False when it had already finished. The partial results of the
        shards that ran are merged (and marked truncated) once the last one stops.
        """
        won = Exploration.objects.filter(pk=self.pk, status__in=ACTIVE).update(
            status=ExplorationStatus.CANCELLED
        )
        self.shards.filter(status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.CANCELLED, finished_at=timezone.now()
        )
        self.settle()
        self.refresh_from_db()
        return bool(won)

    def fail(self, reason: str) -> bool:
        """Mark the exploration failed; its running shards stop at their next beat."""
        won = Exploration.objects.filter(pk=self.pk, status__in=ACTIVE).update(
            status=ExplorationStatus.FAILED, error=reason
        )
        self.shards.filter(status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.CANCELLED, finished_at=timezone.now()
        )
        self.settle()
        return bool(won)

    def settle(self) -> bool:
        """Finish the exploration once no shard is queued or running; True for the caller that did.

        Every shard calls this after its own terminal update, so several may
        race here; the conditional update on ``finished_at`` lets exactly one
        of them write the merged result.
        """
        if self.shards.filter(status__in=ACTIVE).exists():
            return False
        results = [
            ExploreResult.from_dict(data)
            for data in self.shards.order_by("index").values_list("result", flat=True)
            if data is not None
        ]
        for _ in range(3):  # a cancel or failure may land between the read and the update
            status = Exploration.objects.values_list("status", flat=True).get(pk=self.pk)
            final = ExplorationStatus.DONE if status in ACTIVE else status
            merged = merge(results) if results else None
            if merged is not None and final != ExplorationStatus.DONE:
                merged.truncated = True
            won = Exploration.objects.filter(
                pk=self.pk, status=status, finished_at__isnull=True
            ).update(
                status=final,
                merged=merged.as_dict() if merged is not None else None,
                finished_at=timezone.now(),
            )
            if won:
                return True
            if Exploration.objects.filter(pk=self.pk, finished_at__isnull=False).exists():
                return False
        return False

    def progress(self) -> dict[str, Any]:
        """Where the exploration stands, for a page or the API to poll."""
        shards = list(self.shards.order_by("index"))
        return {
            "id": self.pk,
            "status": self.status,
            "shard_count": self.shard_count,
            "shards_done": sum(s.status == ExplorationStatus.DONE for s in shards),
            "states": sum(s.states for s in shards),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "error": self.error,
            "shards": [s.progress() for s in shards],
        }

    def result(self) -> dict[str, Any] | None:
        """The merged result (``ExploreResult.as_dict()``) once finished, else None."""
        return self.merged

    def elapsed(self) -> timedelta | None:
        """How long it has run (until it finished); None if no worker ever started it."""
        if self.started_at is None:
            return None
        return (self.finished_at or timezone.now()) - self.started_at


class ShardQuerySet(models.QuerySet):
    def claim(self, exploration_id: int, index: int, worker: str) -> ExplorationShard | None:
        """Take a queued shard for ``worker``; None when another worker has it or it is over.

        The conditional update is the lock: of two workers claiming the same
        shard, only one changes a row. Each claim gets its own token in
        ``claimed_by``, so a worker whose stale claim was taken back cannot
        write over its successor.

        The exploration is tested with ``exploration__in`` (a subquery on the
        other table), never ``exploration__status`` (a join): Django turns a
        joined UPDATE into ``WHERE id IN (SELECT ...)``, and PostgreSQL does not
        re-evaluate that subquery for a row a concurrent claim just changed,
        so both claims would win.
        """
        now = timezone.now()
        token = f"{worker}/{uuid.uuid4().hex[:8]}"
        won = self.filter(
            exploration_id=exploration_id,
            index=index,
            status=ExplorationStatus.QUEUED,
            exploration__in=Exploration.objects.filter(status__in=ACTIVE),
        ).update(
            status=ExplorationStatus.RUNNING,
            claimed_by=token,
            claimed_at=now,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            states=0,
        )
        if not won:
            return None
        Exploration.objects.filter(pk=exploration_id, status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.RUNNING, started_at=now
        )
        return self.select_related("exploration__revision").get(
            exploration_id=exploration_id, index=index, claimed_by=token
        )

    def stale(self, stale_after: timedelta = STALE_AFTER) -> ShardQuerySet:
        """Running shards whose worker has not beaten for longer than ``stale_after``."""
        return self.filter(
            status=ExplorationStatus.RUNNING, heartbeat_at__lt=timezone.now() - stale_after
        )

    def reap(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> list[ExplorationShard]:
        """Take back every stale shard: queue it again, or fail it once it used its attempts."""
        return [
            shard
            for shard in self.stale(stale_after).select_related("exploration")
            if shard.reclaim(stale_after, max_attempts)
        ]

    def lost(self, stale_after: timedelta = STALE_AFTER) -> ShardQuerySet:
        """Shards of active explorations queued for longer than ``stale_after``.

        No worker claimed them in that time: their message was probably lost
        (a broker restarted without persistence, a send that failed after the
        commit), or they wait behind long shards, which a duplicate does not harm.
        """
        return self.filter(
            status=ExplorationStatus.QUEUED,
            queued_at__lt=timezone.now() - stale_after,
            exploration__in=Exploration.objects.filter(status__in=ACTIVE),
        )

    def resend(self, stale_after: timedelta = STALE_AFTER) -> list[ExplorationShard]:
        """Send the task of every lost shard again; the shards it sent.

        Safe because the claim is a conditional update: of two messages for one
        shard the second is skipped. Moving ``queued_at`` forward is itself
        conditional, so of several callers at once only one sends, and a shard
        gets at most one new message per ``stale_after``. A send the broker
        refuses is logged; the next recovery tries again.
        """
        now = timezone.now()
        sent = []
        for shard in self.lost(stale_after):
            won = ExplorationShard.objects.filter(
                pk=shard.pk, status=ExplorationStatus.QUEUED, queued_at=shard.queued_at
            ).update(queued_at=now)
            if won:
                transaction.on_commit(shard.enqueue, robust=True)
                sent.append(shard)
        return sent


class ExplorationShard(models.Model):
    """One part of an exploration (``explore(..., shard=(index, count))``) and who runs it."""

    exploration = models.ForeignKey(Exploration, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=10, choices=ExplorationStatus.choices, default=ExplorationStatus.QUEUED
    )
    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When it last went into the queue (launch, requeue, re-send): how long it has waited.
    queued_at = models.DateTimeField(default=timezone.now)
    states = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ShardQuerySet.as_manager()

    class Meta:
        ordering = ["exploration", "index"]
        constraints = [
            models.UniqueConstraint(fields=["exploration", "index"], name="unique_shard_index")
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="shard_status_heartbeat")]

    def __str__(self) -> str:
        return f"shard {self.index} of exploration {self.exploration_id}"

    def _mine(self) -> ShardQuerySet:
        """This shard, only while it is still running under this claim."""
        return ExplorationShard.objects.filter(
            pk=self.pk, status=ExplorationStatus.RUNNING, claimed_by=self.claimed_by
        )

    def enqueue(self) -> None:
        from chains.tasks import explore_shard  # tasks import this module

        explore_shard.delay(self.exploration_id, self.index)

    def beat(self, states: int) -> bool:
        """Record progress and liveness; False when the worker should stop.

        It should stop when the exploration was cancelled or failed, or when
        this claim was taken back as stale. One conditional update answers both.
        """
        return bool(
            self._mine()
            .filter(exploration__in=Exploration.objects.filter(status=ExplorationStatus.RUNNING))
            .update(states=states, heartbeat_at=timezone.now())
        )

    def finish(self, result: ExploreResult, *, stopped: bool = False) -> bool:
        """Store this shard's result (``stopped``: cut short on request); settle the exploration."""
        now = timezone.now()
        won = self._mine().update(
            status=ExplorationStatus.CANCELLED if stopped else ExplorationStatus.DONE,
            result=result.as_dict(),
            states=result.states,
            heartbeat_at=now,
            finished_at=now,
        )
        if won:
            self.exploration.settle()
        return bool(won)

    def fail(self, reason: str) -> bool:
        """Mark this shard failed and with it the exploration, naming the shard in the reason."""
        won = self._mine().update(
            status=ExplorationStatus.FAILED, error=reason, finished_at=timezone.now()
        )
        if won:
            self.exploration.fail(f"shard {self.index}: {reason}")
        return bool(won)

    def is_stale(self, stale_after: timedelta = STALE_AFTER) -> bool:
        return (
            self.status == ExplorationStatus.RUNNING
            and self.heartbeat_at is not None
            and self.heartbeat_at < timezone.now() - stale_after
        )

    def reclaim(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> bool:
        """Take a stale shard back from its silent worker; False if it beat or finished meanwhile.

        A shard with attempts left goes back in the queue with a fresh task;
        otherwise it fails, and the exploration with it, naming the worker.
        """
        silent = (timezone.now() - self.heartbeat_at).total_seconds() if self.heartbeat_at else 0
        reason = (
            f"no heartbeat from {self.claimed_by} for {silent:.0f}s "
            f"(limit {stale_after.total_seconds():.0f}s)"
        )
        still_stale = self._mine().filter(heartbeat_at=self.heartbeat_at)
        if self.attempts < max_attempts and self.exploration.status in ACTIVE:
            won = still_stale.update(
                status=ExplorationStatus.QUEUED,
                claimed_by="",
                error=f"requeued: {reason}",
                queued_at=timezone.now(),
            )
            if won:
                # robust: a refused send must not stop the reaping of other shards;
                # the shard is queued, so a later recovery re-sends it (resend).
                transaction.on_commit(self.enqueue, robust=True)
            return bool(won)
        won = still_stale.update(
            status=ExplorationStatus.FAILED, error=reason, finished_at=timezone.now()
        )
        if won:
            self.exploration.fail(f"shard {self.index}: {reason}")
        return bool(won)

    def progress(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": self.status,
            "states": self.states,
            "claimed_by": self.claimed_by,
            "heartbeat_at": self.heartbeat_at,
            "stale": self.is_stale(),
            "attempts": self.attempts,
            "error": self.error,
        }


# --- personal API tokens --------------------------------------------------------------


class ApiTokenQuerySet(models.QuerySet):
    def issue(self, user: Any, name: str) -> tuple[ApiToken, str]:
        """A new token for ``user``; returns it with its secret, which is shown this once.

        Only a sha256 of the secret is stored; the short prefix finds the row.
        """
        prefix = secrets.token_hex(4)
        secret = f"cd_{prefix}_{secrets.token_urlsafe(24)}"
        token = self.create(user=user, name=name[:100], prefix=prefix, digest=_digest(secret))
        return token, secret

    def authenticate(self, secret: str) -> ApiToken | None:
        """The live token ``secret`` is, or None; records when it was last used."""
        parts = secret.split("_")
        if len(parts) < 3 or parts[0] != "cd":
            return None
        token = self.filter(prefix=parts[1], revoked_at__isnull=True).select_related("user").first()
        if token is None or not hmac.compare_digest(token.digest, _digest(secret)):
            return None
        if not token.user.is_active:
            return None
        self.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiToken(models.Model):
    """A personal token for tooling: acts as its user, until revoked."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, unique=True)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user}, cd_{self.prefix}_…)"

    def revoke(self) -> None:
        ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        self.refresh_from_db()
