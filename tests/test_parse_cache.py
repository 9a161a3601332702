"""The per-process cache of parsed documents is bounded by bytes, not only by count."""

from __future__ import annotations

import json

import pytest

from chains.core.recent import PARSED_FACTOR
from chains.services import access
from chains.services.access import document_of

pytestmark = pytest.mark.django_db


def test_a_parsed_document_is_weighed_by_its_size(flight, monkeypatch):
    monkeypatch.setattr(access, "_PARSED", access.Recent(budget=10**9))
    revision = flight.head()
    document_of(revision)
    size = len(json.dumps(revision.document, separators=(",", ":")))
    assert access._PARSED.weight == size * PARSED_FACTOR


def test_a_document_heavier_than_the_budget_is_parsed_but_not_kept(flight, monkeypatch):
    monkeypatch.setattr(access, "_PARSED", access.Recent(budget=1000))
    parsed = document_of(flight.head())
    assert parsed.id == flight.head().document["id"]
    assert access._PARSED.get(flight.head().content_hash) is None
