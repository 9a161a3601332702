"""The one door to a chain that the pages and the API share: ``services.access.chain_access``."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from chains.models import Role
from chains.services.access import chain_access


def test_access_gives_the_chain_and_the_callers_role(flight, people):
    chain, role = chain_access(people["reviewer"], flight.key, Role.VIEWER)
    assert (chain, role) == (flight, Role.REVIEWER)


def test_someone_with_no_role_is_told_the_chain_does_not_exist(flight, people):
    with pytest.raises(Http404):
        chain_access(people["outsider"], flight.key)


def test_a_role_too_small_is_refused_naming_the_role_needed(flight, people):
    with pytest.raises(PermissionDenied, match="needs the editor role"):
        chain_access(people["viewer"], flight.key, Role.EDITOR)
