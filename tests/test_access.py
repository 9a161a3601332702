"""The one door to a chain that the pages and the API share: ``services.access.chain_access``."""

from __future__ import annotations

import importlib
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import PermissionDenied
from django.http import Http404

from chains.models import Chain, ChainQuerySet, ChainRole, GrantRefused, Role
from chains.services.access import chain_access


def test_access_gives_the_chain_and_the_callers_role(flight, people):
    access = chain_access(people["reviewer"], flight.key, Role.VIEWER)
    assert (access.chain, access.role) == (flight, Role.REVIEWER)


@pytest.mark.parametrize(
    ("role", "expected"),
    [(Role.VIEWER, True), (Role.REVIEWER, True), (Role.EDITOR, False), (Role.OWNER, False)],
)
def test_access_may_do_what_its_role_or_a_smaller_one_allows(flight, people, role, expected):
    assert chain_access(people["reviewer"], flight.key).may(role) is expected


def test_access_is_a_value_that_cannot_be_given_another_role(flight, people):
    access = chain_access(people["viewer"], flight.key)
    with pytest.raises(FrozenInstanceError):
        access.role = Role.OWNER
    assert not access.may(Role.EDITOR)


def test_a_chain_opened_through_access_carries_no_role_of_its_own(flight, people):
    access = chain_access(people["owner"], flight.key, Role.OWNER)
    fetched = Chain.objects.get(pk=flight.pk)
    for chain in (access.chain, fetched):
        assert not [name for name in vars(chain) if "role" in name]
        assert not hasattr(chain, "viewer_role") and not hasattr(chain, "viewer_may")


def test_someone_with_no_role_is_told_the_chain_does_not_exist(flight, people):
    with pytest.raises(Http404):
        chain_access(people["outsider"], flight.key)


def test_a_role_too_small_is_refused_naming_the_role_needed(flight, people):
    with pytest.raises(PermissionDenied, match="needs the editor role"):
        chain_access(people["viewer"], flight.key, Role.EDITOR)


# --- grants end with membership; owners keep owning ------------------------------------------


def test_a_grant_ends_when_its_holder_leaves_the_team(flight, team, people):
    flight.grant(people["editor"], Role.OWNER)
    team.remove(people["editor"])
    with pytest.raises(Http404):
        chain_access(people["editor"], flight.key)
    assert not ChainRole.objects.filter(user=people["editor"]).exists()


def test_a_grant_stored_for_someone_outside_the_team_counts_for_nothing(flight, people):
    ChainRole.objects.create(chain=flight, user=people["outsider"], role=Role.EDITOR)
    with pytest.raises(Http404):
        chain_access(people["outsider"], flight.key)
    assert flight not in Chain.objects.visible_to(people["outsider"])


def test_a_team_owner_keeps_owner_rights_whatever_a_grant_says(flight, people):
    ChainRole.objects.create(chain=flight, user=people["owner"], role=Role.VIEWER)
    assert chain_access(people["owner"], flight.key, Role.OWNER).role == Role.OWNER


def test_a_grant_to_someone_outside_the_team_is_refused(flight, people):
    with pytest.raises(GrantRefused, match="outsider is not a member of Flight desk"):
        flight.grant(people["outsider"], Role.REVIEWER)
    assert not flight.roles.exists()


def test_a_grant_cannot_demote_a_team_owner(flight, people):
    with pytest.raises(GrantRefused, match="owner owns Flight desk"):
        flight.grant(people["owner"], Role.VIEWER)
    assert flight.role_of(people["owner"]) == Role.OWNER


def test_becoming_an_owner_drops_ones_grants_on_the_teams_chains(flight, team, people):
    flight.grant(people["editor"], Role.VIEWER)
    team.add(people["editor"], Role.OWNER)
    assert not flight.roles.exists()
    assert flight.role_of(people["editor"]) == Role.OWNER


def migration(name: str):
    """A migration module by its name (the number before it may change on merge)."""
    folder = Path(importlib.import_module("chains.migrations").__file__).parent
    return importlib.import_module(f"chains.migrations.{next(folder.glob(f'*_{name}.py')).stem}")


def test_grants_of_people_no_longer_in_the_team_are_cleared_by_the_migration(flight, people):
    ChainRole.objects.create(chain=flight, user=people["outsider"], role=Role.EDITOR)
    ChainRole.objects.create(chain=flight, user=people["viewer"], role=Role.EDITOR)
    migration("grants_end_with_membership").forget_grants_of_non_members(apps, None)
    assert list(flight.roles.values_list("user__username", flat=True)) == ["viewer"]


def test_an_edit_racing_the_editors_removal_is_a_403_not_a_500(
    flight, team, people, signed_in, monkeypatch
):
    original = ChainQuerySet.store

    def removed_meanwhile(self, *args, **kwargs):  # after the edit's access check
        team.remove(people["editor"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ChainQuerySet, "store", removed_meanwhile)
    response = signed_in(people["editor"]).post(
        f"/chains/{flight.key}/edit",
        {"op": "add_handle", "base": "1", "form": "add-handle", "id": "late"},
    )
    assert response.status_code == 403
    assert flight.revisions.count() == 1
