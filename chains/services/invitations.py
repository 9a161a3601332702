"""Joining a team: an owner invites, and only the person's acceptance makes them a member.

No web or API door adds someone to a team directly: a person who was added
without asking would find their chain list filled, and their tools' imports
refused for want of a team choice. ``Team.add`` stays the verb that an
accepted invitation, the team's own founding and trusted code (the command
line, the demo setup) use.

Two kinds, one model (``Invitation``), both single use and expiring after
``INVITATION_DAYS``, both revocable by the team's owners:

- **addressed** to an existing username: the person sees it on their Teams
  page and accepts or declines it there; no secret is involved, since only
  that account may answer it.
- a **link** with a secret, for whoever the owner passes it to: opened signed
  in, it offers to accept or decline; opened without an account, it offers to
  create one, even while sign-up is closed (the lookalike check and the
  sign-up rate limit still apply; the views see to the limit).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from chains.models import (
    AlreadyMember,
    Invitation,
    InvitationClosed,
    InvitationStatus,
    Role,
    Team,
)

__all__ = [
    "AlreadyMember",
    "InvitationClosed",
    "InvitationRefused",
    "NotAnOwner",
    "UnknownInvitation",
    "invite",
    "open_link",
    "pending_for",
    "pending_of_team",
    "revoke",
]


class NotAnOwner(Exception):
    """Only a team's owners invite people and revoke invitations."""


class InvitationRefused(Exception):
    """An invitation that cannot be made: no name given, or a member already."""


class UnknownInvitation(Exception):
    """A link that opens no invitation at all."""


def invite(
    team: Team, by: Any, role: str, username: str | None = None
) -> tuple[Invitation, str | None]:
    """An invitation to ``team`` with ``role`` from its owner ``by``, and the link's secret.

    With ``username`` it is addressed to that account (no secret: ``None``),
    and replaces any earlier one to that name still pending; without, it is a
    link. A name no account has is invited all the same, and listed the
    same way, but nobody can answer it: the answer never tells an owner (or
    someone who founded a team to probe) which usernames exist.
    """
    if team.role_of(by) != Role.OWNER:
        raise NotAnOwner(f"only an owner of {team.name} invites people to it")
    invitee, name = None, ""
    if username is not None:
        name = username.strip()
        if not name:
            raise InvitationRefused("username: name the person to invite")
        invitee = get_user_model().objects.filter(username=name).first()
        if invitee is not None and team.memberships.filter(user=invitee).exists():
            raise InvitationRefused(
                f"{invitee} is a member of {team.name} already; change their role instead"
            )
    with transaction.atomic():
        if name:
            earlier = team.invitations.pending().filter(invitee_name=name)
            earlier.update(status=InvitationStatus.REVOKED)
        days = settings.INVITATION_DAYS
        return Invitation.objects.issue(team, role, by, days, invitee, name=name)


def open_link(secret: str) -> Invitation:
    """The link invitation ``secret`` opens, in whatever state it is; raises if none."""
    invitation = Invitation.objects.by_secret(secret)
    if invitation is None:
        raise UnknownInvitation(
            "There is no such invitation: check that the whole link was copied."
        )
    return invitation


def revoke(invitation: Invitation, by: Any) -> None:
    if invitation.team.role_of(by) != Role.OWNER:
        raise NotAnOwner(f"only an owner of {invitation.team.name} revokes its invitations")
    invitation.revoke(by)


def pending_for(user: Any) -> Any:
    """The invitations addressed to ``user`` that they may still answer."""
    return Invitation.objects.pending().filter(invitee=user).select_related("team", "created_by")


def pending_of_team(team: Team) -> Any:
    """A team's invitations still open, for its owners' page."""
    return team.invitations.pending().select_related("invitee", "created_by")
