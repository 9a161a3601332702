"""Who may reach a chain, and with which role: the one door the pages, the API and the CLI share.

``chain_access(user, key, role, team)`` returns a :class:`ChainAccess`, the chain
and the caller's role on it as one frozen value the caller passes on (nothing is
kept on the ``Chain``: a chain fetched any other way knows no one's role). A person with no
role on the chain gets :class:`~django.http.Http404` (its existence is not
revealed), one whose role is too small gets
:class:`~django.core.exceptions.PermissionDenied` naming the role needed. The
pages turn those into their 404 and 403 pages, the API into its JSON errors.
A key is unique within its team only. Without ``team`` (the short address
``/chains/<key>/``, an API call without ``?team=``) the key names the one
chain of that key the person may see; when they may see several,
:class:`AmbiguousChain` lists their teams, and only those.
Around it live the other lookups every surface needs: a chain's head or a
numbered revision, the team a new chain belongs to, and a revision's parsed
document, cached by content hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.recent import Recent, parsed_weight
from chains.models import Chain, Revision, Role, Team, at_least

__all__ = [
    "AmbiguousChain",
    "ChainAccess",
    "ChainForbidden",
    "ChainNotFound",
    "NoTeam",
    "chain_access",
    "chain_owners",
    "creating_team",
    "spec_of",
    "find_revision",
    "get_head",
    "get_revision",
]


class ChainNotFound(Http404):
    """No chain of that key the person may see; a missing chain and a hidden one look the same.

    Its own class so the 404 page can say how access is had without saying
    whether the chain exists.
    """


class ChainForbidden(PermissionDenied):
    """The person sees ``chain`` but their role ``have`` is below ``needed``.

    They see the chain already, so the 403 page may name its owners to ask.
    """

    def __init__(self, chain: Chain, needed: str, have: str):
        self.chain, self.needed, self.have = chain, needed, have
        super().__init__(f"this needs the {needed} role on {chain.key}; yours is {have}")


class AmbiguousChain(Exception):
    """Several chains the person may see have this key: the address must name the team."""

    def __init__(self, key: str, chains: list[Chain]):
        self.key = key
        self.chains = chains
        teams = ", ".join(c.team_slug for c in chains)
        super().__init__(f"{len(chains)} of your teams have a chain {key!r}: {teams}")


@dataclass(frozen=True)
class ChainAccess:
    """A chain and the role on it of the person it was opened for.

    What a page may offer that person is asked of this value (``access.may(Role.EDITOR)``),
    never of the chain, which is shared by everyone who opens it.
    """

    chain: Chain
    role: str

    def may(self, role: str) -> bool:
        """Whether the person's role is at least ``role``."""
        return at_least(self.role, role)


def chain_access(
    user: Any, key: str, role: str = Role.VIEWER, team: str | None = None
) -> ChainAccess:
    """The chain ``key`` of ``team`` (a slug, or :data:`NO_TEAM`) with ``user``'s role on it.

    Raises unless that role is at least ``role``. Without ``team``, the one
    chain called ``key`` that ``user`` may see.
    """
    chains = Chain.objects.named(key, team)
    seen = [(chain, have) for chain in chains if (have := chain.role_of(user)) is not None]
    if not seen:
        raise ChainNotFound(f"no chain {key!r} that you may see")
    if len(seen) > 1:
        raise AmbiguousChain(key, [chain for chain, _ in seen])
    chain, have = seen[0]
    if not at_least(have, role):
        raise ChainForbidden(chain, role, have)
    return ChainAccess(chain, have)


def chain_owners(chain: Chain) -> list[str]:
    """The usernames of ``chain``'s owners: its team's owners and members granted owner here.

    A grant counts only for a member of the team (as in ``Chain.role_of``); a
    chain without a team has its owners by grant alone.
    """
    granted = chain.roles.filter(role=Role.OWNER)
    names: set[str] = set()
    if chain.team is not None:
        granted = granted.filter(user__memberships__team=chain.team)
        owners = chain.team.memberships.filter(role=Role.OWNER)
        names.update(owners.values_list("user__username", flat=True))
    names.update(granted.values_list("user__username", flat=True))
    return sorted(names)


class NoTeam(Exception):
    """The person cannot say, or may not use, the team a new chain should belong to."""


def creating_team(user: Any, slug: str | None) -> Team | None:
    """The team a chain ``user`` creates belongs to: the one ``slug`` names.

    One team to choose from needs no choice. Raises :class:`NoTeam` with what
    to do instead; a superuser may leave the team out (the chain then has none).
    """
    allowed = Team.objects.creating(user)
    if slug:
        team = allowed.filter(slug=slug).first()
        if team is None:
            raise NoTeam(f"team: you may not create chains in {slug!r}")
        return team
    if user.is_superuser:
        return None
    choices = list(allowed[:2])
    if len(choices) == 1:
        return choices[0]
    if not choices:
        raise NoTeam("team: you edit in no team; found one on the Teams page or ask to be added")
    raise NoTeam("team: choose the team the new chain belongs to")


def get_head(chain: Chain) -> Revision:
    head = chain.head()
    if head is None:
        raise Http404("this chain has no revision")
    return head


def find_revision(chain: Chain, number: int | None = None) -> Revision | None:
    """Revision ``number`` of ``chain``, the head when ``number`` is None; None if it has none."""
    if number is None:
        return chain.head()
    return chain.revisions.filter(number=number).first()


def get_revision(chain: Chain, number: int | None = None) -> Revision:
    """Revision ``number`` of ``chain`` (the head when None), or 404."""
    found = find_revision(chain, number)
    if found is None:
        missing = "no revision yet" if number is None else f"no revision {number}"
        raise Http404(f"{chain.key} has {missing}")
    return found


_PARSED = Recent(budget=settings.PARSE_CACHE_BYTES)


def spec_of(revision: Revision, known: ChainSpec | None = None) -> ChainSpec:
    """The validated document of ``revision``, parsed once per content hash.

    ``known`` primes the cache with a document just saved. Raises
    :class:`DocumentError` like ``from_document``.
    """
    key = revision.content_hash
    cached = _PARSED.get(key)
    if cached is not None and known is None:
        return cached
    spec = known or formats.from_document(revision.document)
    return _PARSED.put(key, spec, weight=parsed_weight(revision.document))
