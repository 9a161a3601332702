"""People: roles, teams and their members, per-chain grants, and personal API tokens.

The bottom layer of the package: it imports no other model module but
``errors`` (``ChainRole`` names ``Chain`` by string), and
``chains.models.chains`` asks it who may do what.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django.utils.text import slugify

from chains.models.errors import AlreadyMember, InvitationClosed, LastOwner, TeamTaken


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
        """A new team with ``owner`` as its first owner; the slug is made unique if not given.

        Raises :class:`TeamTaken` when another team has the ``slug`` given.
        """
        with transaction.atomic():
            if slug is not None and self.filter(slug=slug).exists():
                raise TeamTaken(f"slug: a team called {slug!r} exists already; choose another")
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
        An owner owns every chain of the team, so their grants on its chains go.
        """
        with transaction.atomic():
            if role != Role.OWNER:
                self._keep_an_owner(user)
            membership, _ = Membership.objects.update_or_create(
                team=self, user=user, defaults={"role": Role(role)}
            )
            if role == Role.OWNER:
                self.grants_of(user).delete()
        return membership

    def remove(self, user: Any) -> None:
        """Take ``user`` out of the team, and their grants on its chains with them.

        Raises :class:`LastOwner` for its last owner.
        """
        with transaction.atomic():
            self._keep_an_owner(user)
            self.memberships.filter(user=user).delete()
            self.grants_of(user).delete()

    def grants_of(self, user: Any) -> models.QuerySet:
        """``user``'s grants on this team's chains."""
        return ChainRole.objects.filter(user=user, chain__team=self)

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
    """A role on one chain for a member of its team, which replaces their team role there.

    It ends with the membership (``Team.remove`` deletes it, and ``Chain.role_of``
    ignores one left behind), and it never lowers a team owner.
    """

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


# --- invitations ----------------------------------------------------------------------


class InvitationStatus(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    REVOKED = "revoked"


class InvitationQuerySet(models.QuerySet):
    def pending(self) -> InvitationQuerySet:
        """The invitations that may still be answered: neither used, revoked nor expired."""
        return self.filter(status=InvitationStatus.PENDING, expires_at__gt=timezone.now())

    def issue(
        self, team: Team, role: str, by: Any, days: int, invitee: Any = None
    ) -> tuple[Invitation, str | None]:
        """A new invitation to ``team`` with ``role``, valid ``days``; returns it with its secret.

        Addressed to ``invitee``, it has no secret (``None``): they answer it signed in.
        Otherwise it is a link: only a sha256 of the secret is stored, and the
        short prefix finds the row, as for API tokens.
        """
        prefix, digest, secret = None, "", None
        if invitee is None:
            prefix = secrets.token_hex(4)
            secret = f"inv_{prefix}_{secrets.token_urlsafe(24)}"
            digest = _digest(secret)
        invitation = self.create(
            team=team,
            role=Role(role),
            created_by=by,
            invitee=invitee,
            prefix=prefix,
            digest=digest,
            expires_at=timezone.now() + timedelta(days=days),
        )
        return invitation, secret

    def by_secret(self, secret: str) -> Invitation | None:
        """The link invitation ``secret`` opens (in whatever state), or None."""
        parts = secret.split("_")
        if len(parts) < 3 or parts[0] != "inv":
            return None
        found = self.filter(prefix=parts[1]).select_related("team").first()
        if found is None or not hmac.compare_digest(found.digest, _digest(secret)):
            return None
        return found


class Invitation(models.Model):
    """An owner's offer of a role in a team; it makes a member only when it is accepted.

    Addressed to one person (``invitee``), or a link with a secret that
    whoever holds it may accept. Single use: accepted, declined or revoked,
    it is over; and it expires at ``expires_at``.
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Role.choices)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="invitations",
    )
    prefix = models.CharField(max_length=8, unique=True, null=True, blank=True)
    digest = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=10, choices=InvitationStatus.choices, default=InvitationStatus.PENDING
    )
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        to = self.invitee or "link"
        return f"{to} to {self.team} as {self.role} ({self.status})"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    def problem(self) -> str | None:
        """Why this invitation can no longer be answered, or None while it can."""
        if self.status == InvitationStatus.ACCEPTED:
            return "This invitation has been used; ask an owner of the team for a new one."
        if self.status == InvitationStatus.DECLINED:
            return "This invitation was declined; ask an owner of the team for a new one."
        if self.status == InvitationStatus.REVOKED:
            return "This invitation was revoked by an owner of the team."
        if self.expired:
            return "This invitation has expired; ask an owner of the team for a new one."
        return None

    def accept(self, user: Any) -> Membership:
        """Make ``user`` a member with the invitation's role, and use the invitation up.

        Raises :class:`InvitationClosed` when it can no longer be answered and
        :class:`AlreadyMember` when ``user`` belongs to the team already (the
        invitation then stays unused, and their role unchanged).
        """
        with transaction.atomic():
            fresh = self._answerable()
            role = self.team.role_of(user)
            if role is not None:
                raise AlreadyMember(f"You belong to {self.team.name} already, as {role}.")
            membership = self.team.add(user, fresh.role)
            self._close(InvitationStatus.ACCEPTED, user)
        return membership

    def decline(self, user: Any) -> None:
        with transaction.atomic():
            self._answerable()
            self._close(InvitationStatus.DECLINED, user)

    def revoke(self, by: Any) -> None:
        with transaction.atomic():
            self._answerable()
            self._close(InvitationStatus.REVOKED, by)

    def _answerable(self) -> Invitation:
        # Locked, so of two people answering one link at once only the first gets it.
        fresh = Invitation.objects.select_for_update().get(pk=self.pk)
        problem = fresh.problem()
        if problem is not None:
            raise InvitationClosed(problem)
        return fresh

    def _close(self, status: str, by: Any) -> None:
        Invitation.objects.filter(pk=self.pk).update(
            status=status, answered_by=by, answered_at=timezone.now()
        )
        self.refresh_from_db()
