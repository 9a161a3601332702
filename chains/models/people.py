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

from chains.models.errors import (
    AlreadyMember,
    InvitationClosed,
    LastOwner,
    ReviewError,
    TeamTaken,
    TooManyTeams,
)


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

        Raises :class:`TeamTaken` when another team has the ``slug`` given, and
        :class:`TooManyTeams` when ``owner`` has founded ``TEAMS_PER_ACCOUNT``
        teams already (those they founded count, whoever owns them now).
        """
        with transaction.atomic():
            most = settings.TEAMS_PER_ACCOUNT
            if getattr(owner, "pk", None) and self.filter(founded_by=owner).count() >= most:
                raise TooManyTeams(
                    f"name: {owner} has founded {most} teams, the most one account may "
                    "(TEAMS_PER_ACCOUNT); ask an owner of one of them to invite you instead"
                )
            if slug is not None and self.filter(slug=slug).exists():
                raise TeamTaken(f"slug: a team called {slug!r} exists already; choose another")
            if slug is None:
                base = slugify(name)[:50] or "team"
                slug, n = base, 1
                while self.filter(slug=slug).exists():
                    n += 1
                    slug = f"{base}-{n}"
            team = self.create(name=name, slug=slug, founded_by=owner)
            team.add(owner, Role.OWNER)
        return team


class Team(models.Model):
    """People who own chains together; a member's role holds on every chain of the team."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    founded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

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

    def add(self, user: Any, role: str = Role.VIEWER, invited_by: Any = None) -> Membership:
        """Make ``user`` a member with ``role`` (or change the role of a member).

        Raises :class:`LastOwner` when that would leave the team without an owner.
        An owner owns every chain of the team, so their grants on its chains go;
        someone who is no longer an owner may no longer invite, so the
        invitations they made and nobody answered yet go too. ``invited_by``
        is recorded for a new member only: a new role keeps who brought them in.
        """
        with transaction.atomic():
            if role != Role.OWNER:
                self._keep_an_owner(user)
                self._revoke_invitations_of(user)
            membership, _ = Membership.objects.update_or_create(
                team=self,
                user=user,
                defaults={"role": Role(role)},
                create_defaults={"role": Role(role), "invited_by": invited_by},
            )
            if role == Role.OWNER:
                self.grants_of(user).delete()
        return membership

    def remove(self, user: Any) -> None:
        """Take ``user`` out of the team, with their grants on its chains and open invitations.

        An invitation stands on its maker's place in the team: a removed
        owner's link would otherwise let them (or anyone they gave it to)
        walk back in. Raises :class:`LastOwner` for its last owner.
        """
        with transaction.atomic():
            self._keep_an_owner(user)
            self.memberships.filter(user=user).delete()
            self.grants_of(user).delete()
            self._revoke_invitations_of(user)

    def grants_of(self, user: Any) -> models.QuerySet:
        """``user``'s grants on this team's chains."""
        return ChainRole.objects.filter(user=user, chain__team=self)

    def _revoke_invitations_of(self, user: Any) -> None:
        self.invitations.filter(created_by=user, status=InvitationStatus.PENDING).update(
            status=InvitationStatus.REVOKED, answered_at=timezone.now()
        )

    def _keep_an_owner(self, leaving: Any) -> None:
        owners = self.memberships.select_for_update().filter(role=Role.OWNER)
        if owners.exists() and not owners.exclude(user=leaving).exists():
            raise LastOwner(
                f"{leaving} is the last owner of {self.name}; make someone else owner first"
            )


class Membership(models.Model):
    """One person in one team, with their role, who brought them in and who vouches for them.

    ``invited_by`` is the member whose invitation they accepted (None for the
    founder and for people added by trusted code). Their approval does not
    count on a change that person made, unless another owner of the team
    vouches for them (``vouched_by``; see ``Revision.approver_problem``).
    """

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    vouched_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["team", "user__username"]
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="unique_team_member")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def vouch(self, by: Any) -> Membership:
        """Record that the owner ``by`` vouches for this member; vouching twice changes nothing.

        A vouch lets the member approve changes made by the person who
        invited them. Raises :class:`ReviewError` when ``by`` is not an owner
        of the team, is this member, or invited them.
        """
        if self.team.role_of(by) != Role.OWNER:
            raise ReviewError(f"only an owner of {self.team.name} vouches for its members")
        if by.pk == self.user_id:
            raise ReviewError(f"{by} cannot vouch for themselves; another owner may")
        if by.pk == self.invited_by_id:
            raise ReviewError(
                f"{by} invited {self.user}; another owner of {self.team.name} may vouch for them"
            )
        Membership.objects.filter(pk=self.pk, vouched_by__isnull=True).update(vouched_by=by)
        self.refresh_from_db(fields=["vouched_by"])
        return self

    def vouch_counts(self, authors: Any) -> bool:
        """Whether this member's vouch holds against changes saved by ``authors`` (user ids).

        It holds while the one who vouched is an owner of the team, did not
        invite the member, and saved none of the changes.
        """
        by = self.vouched_by
        if by is None or by.pk in authors or by.pk == self.invited_by_id:
            return False
        return self.team.role_of(by) == Role.OWNER


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
        self, team: Team, role: str, by: Any, days: int, invitee: Any = None, name: str = ""
    ) -> tuple[Invitation, str | None]:
        """A new invitation to ``team`` with ``role``, valid ``days``; returns it with its secret.

        Addressed to ``invitee`` (or to the username ``name``, which no
        account may have), it has no secret (``None``): they answer it signed in.
        Otherwise it is a link: only a sha256 of the secret is stored, and the
        short prefix finds the row, as for API tokens.
        """
        prefix, digest, secret = None, "", None
        if invitee is not None:
            name = invitee.username
        if not name:
            prefix = secrets.token_hex(4)
            secret = f"inv_{prefix}_{secrets.token_urlsafe(24)}"
            digest = _digest(secret)
        invitation = self.create(
            team=team,
            role=Role(role),
            created_by=by,
            invitee=invitee,
            invitee_name=name,
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
    # The username an owner named. Kept also when no account has it, so the
    # team page lists the invitation either way and tells nobody which names
    # exist; without an ``invitee`` (and without a secret) nobody can answer it.
    invitee_name = models.CharField(max_length=150, blank=True)
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
        to = self.invitee_name or "link"
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
        if self.created_by is None or self.team.role_of(self.created_by) != Role.OWNER:
            # Removal revokes a member's invitations; this holds should one be left open.
            return (
                "This invitation was made by someone who is no longer an owner of the team; "
                "ask an owner of the team for a new one."
            )
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
            membership = self.team.add(user, fresh.role, invited_by=fresh.created_by)
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
