"""Stored chains: a Chain is a name in a team, its Revisions are immutable documents.

A chain's key is its document's id, unique within its team: two teams may
each have a chain ``flight`` without either learning of the other's. Its
address says both (``/t/<team>/chains/<key>/``; :meth:`Chain.url`).

A revision holds one chain document as JSON (the output of
``chains.core.formats.to_document``) and the sha256 of its canonical form, so
storing the same content twice is a no-op and history is append-only. An
approved revision is the team's sign-off and can be neither changed nor
deleted; it may be approved only when its lint status is one of
:data:`APPROVABLE` and every saved scenario of its chain still holds on it.

Imports ``people`` (who may see and do what) and ``scenarios`` (the approval
check); ``review`` and ``campaigns`` build on this module, never the reverse.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import Max
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from chains.core import formats
from chains.core.errors import DocumentError
from chains.core.lint import lint
from chains.core.recent import Recent
from chains.core.words import article
from chains.models.errors import (
    ChainUnavailable,
    GrantRefused,
    ImmutableRevision,
    NotApprovable,
    NothingToUndo,
    StaleRevision,
)
from chains.models.fields import DocumentField
from chains.models.people import ChainRole, Membership, Role, Team, at_least
from chains.models.scenarios import scenario_checks


def content_hash(document: dict[str, Any]) -> str:
    """sha256 hex of a document's JSON text (no spaces), every mapping in its own order.

    The order is content: the first of a gate's outcomes is the answer the
    simulator and the explorer expect when none is ``ok``, and exports list
    them as written, so a document with its outcomes reordered is a new
    revision, and nothing kept by this hash serves it the old order.
    Documents are stored as ``formats.to_document`` writes them, whose
    elements' own fields always come in one order.
    """
    text = json.dumps(document, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def document_status(document: dict[str, Any], digest: str | None = None) -> str:
    """The lint status of a stored document; INVALID when it no longer loads.

    Kept per content hash (``digest``, computed when not given): storing a
    content seen before, as undo and redo do, does not lint it again. Each
    status kept weighs :data:`STATUS_BYTES` against ``DERIVED_CACHE_BYTES``.
    """
    digest = digest or content_hash(document)
    known = _STATUS.get(digest)
    if known is not None:
        return known
    try:
        status = lint(formats.from_document(document)).status
    except DocumentError:
        status = "INVALID"
    return _STATUS.put(digest, status, weight=STATUS_BYTES)


# Bytes one kept status takes: its entry and the content hash it is kept under (the
# status itself is one of a few constants); measured with tracemalloc: 235.
STATUS_BYTES = 240
_STATUS = Recent(256, budget=settings.DERIVED_CACHE_BYTES)


APPROVABLE = ("VALID", "WARNINGS")

# The fixed path segments below /chains/ (the pages /chains/new/ and /chains/import/):
# a chain with one of these ids could never be opened, so none may be created.
# tests/test_chain_creation.py fails when an address is added without its segment here.
RESERVED_KEYS = frozenset({"new", "import"})

# The team part of the address of a chain that has no team (stored from the
# command line without --team): no team's slug can be a lone dash.
NO_TEAM = "-"

NOTHING_TO = {
    "undo": "nothing to undo: this is the chain's first revision",
    "redo": "nothing to redo: the last change was not an undo",
}


class ChainQuerySet(models.QuerySet):
    def visible_to(self, user: Any) -> ChainQuerySet:
        """The chains ``user`` has any role on."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        if user.is_superuser:
            return self
        # Subqueries, not joins: a join would multiply the rows an annotation counts.
        # A grant on a team's chain counts only for a member, who sees it anyway.
        teams = Membership.objects.filter(user=user).values("team")
        granted = ChainRole.objects.filter(user=user, chain__team__isnull=True).values("chain")
        return self.filter(models.Q(team__in=teams) | models.Q(pk__in=granted))

    def named(self, key: str, team: str | None = None) -> ChainQuerySet:
        """The chains called ``key``; only ``team``'s when given (a slug, or :data:`NO_TEAM`)."""
        chains = self.select_related("team").filter(key=key)
        if team == NO_TEAM:
            return chains.filter(team__isnull=True)
        return chains if team is None else chains.filter(team__slug=team)

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
        new: bool = False,
    ) -> Revision:
        """Save a document as the head of its chain: ``team``'s chain ``document["id"]``.

        Creates the chain when new; appends a revision only when the content
        differs from the head, and returns the head otherwise. With ``base``
        (the revision number an edit started from) a head that has moved on
        raises :class:`StaleRevision` and stores nothing: the other person's
        edit is never overwritten. A new revision's undo target is the old
        head unless ``restores`` says it is an undo or redo (see
        :meth:`Chain.undo`). ``status`` is the document's lint status when
        the caller has linted it already. ``team`` is the chain's team (None:
        a chain without one); other teams' chains of that id are not touched.

        The chain is created or locked in the same transaction as the
        revision, and the rules are checked there, whatever the caller
        checked before (a teammate may have created the key since):
        :class:`ChainUnavailable` when a new chain's id is one of
        :data:`RESERVED_KEYS`, when ``author`` (None: the operator, who may
        write anything) may not edit the existing chain, or when ``new``
        says the chain must not exist yet.
        """
        key = document["id"]
        digest = content_hash(document)
        with transaction.atomic():
            chain, created = self.select_for_update().get_or_create(key=key, team=team)
            refusal = reserved_key(key) if created else chain.refusal_for(author, new=new)
            if refusal:
                raise ChainUnavailable(key, refusal)
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
                status=status or document_status(document, digest),
                author=author if getattr(author, "is_authenticated", False) else None,
                parent=head,
                undo_target=undo_target if restores else head,
                redo_target=redo_target,
            )


def reserved_key(key: str) -> str | None:
    """Why no chain may be created with the id ``key``, or None when one may."""
    if key in RESERVED_KEYS:
        return f"chain id {key!r} is reserved for the page /chains/{key}/; choose another id"
    return None


def unavailable(key: str) -> str:
    """The refusal of a chain id taken by a chain the person may not edit.

    The same words whether or not they may see that chain: an outsider is not
    told whose it is (the chain's own pages answer them 404).
    """
    return f"chain id {key!r} is not available to you; choose another id"


class Chain(models.Model):
    key = models.SlugField(max_length=200)
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
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="chain_key_unique_in_team"),
            models.UniqueConstraint(
                fields=["key"],
                condition=models.Q(team__isnull=True),
                name="chain_key_unique_without_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.team_slug}/{self.key}"

    def get_absolute_url(self) -> str:
        return self.url()

    @property
    def team_slug(self) -> str:
        """The team part of this chain's address (:data:`NO_TEAM` for a chain without one)."""
        return self.team.slug if self.team is not None else NO_TEAM

    def url(self, name: str = "chain", *args: Any) -> str:
        """The address of this chain's page ``name`` (a ``chains:`` URL name), team included."""
        return reverse(f"chains:{name}", args=[self.team_slug, self.key, *args])

    def head(self) -> Revision | None:
        return self.revisions.order_by("-number").first()

    def approved(self) -> Revision | None:
        """The latest approved revision, or None."""
        return self.revisions.filter(approved_at__isnull=False).order_by("-number").first()

    def people(self) -> models.QuerySet:
        """Everyone with a role here: the team's members (grants count only for them).

        A chain without a team is reached through grants alone.
        """
        if self.team_id is not None:
            members = models.Q(memberships__team_id=self.team_id)
        else:
            members = models.Q(chain_roles__chain=self)
        return get_user_model().objects.filter(members).distinct().order_by("username")

    def role_of(self, user: Any) -> str | None:
        """``user``'s role here: their team role, replaced by a grant on this chain; else None.

        Grants end with membership: on a team's chain, a grant counts only
        while its holder is a member, and a team owner is an owner here
        whatever a grant says. On a chain without a team, grants are the roles.
        """
        if not getattr(user, "is_authenticated", False):
            return None
        if user.is_superuser:
            return Role.OWNER
        team_role = self.team.role_of(user) if self.team is not None else None
        if team_role == Role.OWNER or (self.team is not None and team_role is None):
            return team_role
        granted = self.roles.filter(user=user).values_list("role", flat=True).first()
        return granted if granted is not None else team_role

    def grant(self, user: Any, role: str | None) -> None:
        """Give ``user`` ``role`` on this chain; ``None`` takes the grant away.

        Raises :class:`GrantRefused` for someone outside the chain's team
        (they join the team first) and for a team owner, who owns every chain
        of the team.
        """
        if role is None:
            self.roles.filter(user=user).delete()
            return
        team_role = self.team.role_of(user) if self.team is not None else None
        if self.team is not None and team_role is None:
            raise GrantRefused(
                f"username: {user} is not a member of {self.team.name}; "
                "a role on one of its chains is for its members"
            )
        if team_role == Role.OWNER:
            raise GrantRefused(
                f"username: {user} owns {self.team.name}, and so every chain of it; "
                "make them an editor of the team first to give them less here"
            )
        ChainRole.objects.update_or_create(chain=self, user=user, defaults={"role": Role(role)})

    def refusal_for(self, author: Any, new: bool = False) -> str | None:
        """Why ``author`` may not store a revision into this existing chain, or None.

        ``new``: they meant to create it. None as ``author`` is the operator.
        """
        role = self.role_of(author) if author is not None else Role.OWNER
        if role is None:
            return unavailable(self.key)
        if not new and not at_least(role, Role.EDITOR):
            return (
                f"chain id {self.key!r}: your role on this chain is {role}; "
                "storing a revision needs the editor role"
            )
        if new:
            return f"key: a chain called {self.key!r} exists already; open it or choose another id"
        return None

    def undo(self, base: int, author: Any = None) -> Revision:
        """A new head with the content before the last edit (itself undoable by redo).

        Undo and redo never rewrite history: each appends a revision that
        restores an earlier document, and remembers where the next undo and
        redo lead, so repeated undos walk back edit by edit.
        """
        return self._restore("undo", base, author)

    def redo(self, base: int, author: Any = None) -> Revision:
        """A new head with the content the last undo took away."""
        return self._restore("redo", base, author)

    def _restore(self, way: Literal["undo", "redo"], base: int, author: Any) -> Revision:
        head = self._head_at(base)
        target = head.undo_target if way == "undo" else head.redo_target
        if target is None:
            raise NothingToUndo(NOTHING_TO[way])
        # An undo can be redone back to this head; a redo keeps the redo trail beyond it.
        redo_to = head if way == "undo" else target.redo_target
        # Name the edit taken back or brought back, not the revision numbers of
        # earlier undos: the second of two undos takes back the edit before the last.
        edited = self._edit_shown_by(head if way == "undo" else target)
        return Chain.objects.store(
            target.document,
            f"{way} {edited.message or 'the change'} (r{edited.number})"[:500],
            base=base,
            author=author,
            undo_target=target.undo_target,
            redo_target=redo_to,
            restores=True,
            team=self.team,
        )

    def _edit_shown_by(self, revision: Revision) -> Revision:
        """The edit whose content ``revision`` shows: itself, or the edit an undo or redo restored.

        An edit's undo target is its parent; an undo or redo takes the undo target
        of the revision it restores, never its own parent. So the edit a restore
        shows is the latest edit with the same content and the same undo target.
        """
        if revision.undo_target_id == revision.parent_id:
            return revision
        same = self.revisions.filter(
            undo_target_id=revision.undo_target_id,
            content_hash=revision.content_hash,
            number__lt=revision.number,
        ).order_by("-number")
        return next((r for r in same if r.undo_target_id == r.parent_id), revision)

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
    document = DocumentField()
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
            self.status = document_status(self.document, self.content_hash)
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
            spec = formats.from_document(self.document)
        except DocumentError:
            return problems
        for check in scenario_checks(self.chain, spec):
            if not check.held:
                why = "; ".join(check.changes) or check.error or "it no longer replays"
                problems.append(f"saved scenario {check.name!r} no longer holds: {why}")
        return problems

    def covered_authors(self) -> dict[int, int]:
        """Who saved what an approval of this revision covers: author id -> their latest number.

        It covers this revision and every one before it back to the last
        approved one (or to r1): approving r6 on top of an unapproved r5
        signs off r5's change too. Revisions stored without an author (the
        command line, the operator) name nobody.
        """
        earlier = self.chain.revisions.filter(number__lt=self.number, approved_at__isnull=False)
        since = earlier.aggregate(n=Max("number"))["n"] or 0
        saved = self.chain.revisions.filter(
            number__gt=since, number__lte=self.number, author__isnull=False
        ).order_by("number")
        return dict(saved.values_list("author_id", "number"))

    def refusals(self, people: list[Any]) -> dict[int, str]:
        """Why each of ``people`` may not approve this revision, by id; those who may are left out.

        The review rule: an approval does not count from anyone who saved a
        revision it covers (:meth:`covered_authors`), nor from a member whom
        one of those authors invited into the chain's team, unless another
        owner of the team, who saved none of them and did not invite that
        member, vouches for them. Reviews ask this of their reviewers, and
        :meth:`approve` of whoever approves, so no caller can skip it.
        """
        authors = self.covered_authors()
        refused = {}
        for person in people:
            if person.pk in authors:
                refused[person.pk] = _authored(person, authors[person.pk], self.number)
        if self.chain.team_id is None or not authors:
            return refused
        invited = Membership.objects.filter(
            team_id=self.chain.team_id,
            user__in=[p for p in people if p.pk not in refused],
            invited_by__in=list(authors),
        ).select_related("user", "invited_by", "vouched_by", "team")
        for membership in invited:
            if not membership.vouch_counts(authors):
                inviter = membership.invited_by
                refused[membership.user_id] = (
                    f"{membership.user} was invited to {membership.team.name} by {inviter}, "
                    f"who saved r{authors[inviter.pk]}; another owner of the team may vouch "
                    "for them on the team page"
                )
        return refused

    def approver_problem(self, by: Any) -> str | None:
        """Why ``by`` may not approve this revision, or None; ``None`` as ``by`` is the operator.

        They need the reviewer role on the chain, and must pass :meth:`refusals`.
        """
        if by is None:
            return None
        role = self.chain.role_of(by)
        if role is None:
            return f"{by} has no role on {self.chain.key}"
        if not at_least(role, Role.REVIEWER):
            return f"{by} is {article(role)} on {self.chain.key}; approving needs reviewer"
        return self.refusals([by]).get(by.pk)

    def approve(self, by: Any) -> Revision:
        """Approve this revision as ``by`` and tag it ``approved-<number>``.

        Raises :class:`NotApprovable` with every failed condition of
        :meth:`approval_problems`, and when ``by`` may not approve it
        (:meth:`approver_problem`; ``None`` is the operator, who may).
        Approving twice changes nothing (the first approval stays), and any
        revision may be approved, not only the head: a team may sign off on
        r3 while r4 is being drafted.
        """
        if self.approved_at is not None:
            return self
        problems = self.approval_problems()
        barred = self.approver_problem(by)
        if barred:
            problems.append(barred)
        if problems:
            raise NotApprovable(self, problems)
        Revision.objects.filter(pk=self.pk, approved_at__isnull=True).update(
            approved_at=timezone.now(),
            approved_by=by if getattr(by, "is_authenticated", False) else None,
            tag=f"approved-{self.number}",
        )
        self.refresh_from_db(fields=["approved_at", "approved_by", "tag"])
        return self


def _authored(person: Any, number: int, approving: int) -> str:
    if number == approving:
        return f"{person} saved r{number} and cannot approve it"
    covers = f"which an approval of r{approving} covers"
    return f"{person} saved r{number}, {covers}, and cannot approve it"


def store_all(
    specs: list, message: str, author: Any = None, team: Team | None = None
) -> list[dict[str, Any]]:
    """Store every chain of one import into ``team``, all or none; says which added a revision.

    Each is ``{"id", "team", "revision", "created"}``; ``team`` is the slug
    in the chain's address.
    """
    stored = []
    with transaction.atomic():
        for spec in specs:
            document = formats.to_document(spec)
            before = Revision.objects.filter(chain__team=team, chain__key=document["id"]).aggregate(
                n=Max("number")
            )
            revision = Chain.objects.store(document, message=message, author=author, team=team)
            stored.append(
                {
                    "id": document["id"],
                    "team": team.slug if team is not None else NO_TEAM,
                    "revision": revision.number,
                    "created": revision.number != before["n"],
                }
            )
    return stored


@receiver(pre_delete, sender=Revision)
def _keep_approved_revisions(sender: Any, instance: Revision, **kwargs: Any) -> None:
    # A signal, not Revision.delete(): queryset and cascading deletes skip the method.
    if instance.approved_at is not None:
        raise ImmutableRevision(f"{instance} is approved ({instance.tag}) and cannot be deleted")
