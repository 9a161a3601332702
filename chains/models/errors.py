"""What the model verbs refuse, in one place, so every area and caller imports it from here.

Each exception's message is a sentence for the person who asked; the pages,
the API and the command line show it as it is. This module imports no other
module of the package at run time, so any of them may raise these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied

if TYPE_CHECKING:
    from chains.models.chains import Revision


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


class LastOwner(Exception):
    """A team must keep at least one owner."""


class TeamTaken(Exception):
    """Another team has the slug a new team asked for."""


class TooManyTeams(Exception):
    """The account has founded as many teams as one may (``TEAMS_PER_ACCOUNT``)."""


class ChainUnavailable(PermissionDenied):
    """A chain id a person may not store under: reserved, or a chain they may not edit.

    A PermissionDenied, so a store that is refused where no caller expects it
    (an edit racing the editor's removal from the team) is a 403, not a 500.
    """

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


class GrantRefused(Exception):
    """A role on one chain that cannot be given: to someone outside its team, or to an owner."""


class DuplicateScenario(Exception):
    """A scenario of that name is already kept with the chain."""


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


class QueueDown(Exception):
    """The task queue (the Celery broker) refused a task, so a launch cannot run."""


class InvitationClosed(Exception):
    """An invitation used, declined, revoked or expired: it can no longer be answered."""


class AlreadyMember(Exception):
    """An invitation to a team the person belongs to already."""
