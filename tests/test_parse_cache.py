"""The per-process caches of parsed documents and lint statuses are bounded by bytes too."""

from __future__ import annotations

import hashlib
import json
import sys
import tracemalloc

import pytest
from pydantic import ValidationError

from chains.core import formats
from chains.core.lint import lint
from chains.core.recent import PARSED_FACTOR, Recent
from chains.models import chains as chains_models
from chains.models.chains import document_status
from chains.services import access
from chains.services.access import spec_of

pytestmark = pytest.mark.django_db


def test_a_parsed_document_is_weighed_by_its_size(flight, monkeypatch):
    monkeypatch.setattr(access, "_PARSED", access.Recent(budget=10**9))
    revision = flight.head()
    spec_of(revision)
    size = len(json.dumps(revision.document, separators=(",", ":")))
    assert access._PARSED.weight == size * PARSED_FACTOR


def test_a_document_heavier_than_the_budget_is_parsed_but_not_kept(flight, monkeypatch):
    monkeypatch.setattr(access, "_PARSED", access.Recent(budget=1000))
    parsed = spec_of(flight.head())
    assert parsed.id == flight.head().document["id"]
    assert access._PARSED.get(flight.head().content_hash) is None


def test_a_kept_lint_status_is_weighed_in_bytes(flight, monkeypatch):
    monkeypatch.setattr(chains_models, "_STATUS", Recent(budget=10**9))
    document_status(flight.head().document)
    assert chains_models._STATUS.weight == chains_models.STATUS_BYTES


def test_with_no_budget_for_derived_values_no_status_is_kept(flight, monkeypatch):
    monkeypatch.setattr(chains_models, "_STATUS", Recent(budget=0))
    document = flight.head().document
    assert document_status(document) == lint(formats.from_document(document)).status
    assert chains_models._STATUS.values == {}


def test_a_kept_status_weighs_no_more_than_its_estimate():
    """Measured: the entry, and the content hash it is kept under (the status is a constant)."""
    kept = Recent(10_000, budget=10**9)
    digests = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(5000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for digest in digests:
            kept.put(digest, "VALID", weight=chains_models.STATUS_BYTES)
        measured = (tracemalloc.get_traced_memory()[0] - before) / len(digests)
    finally:
        tracemalloc.stop()
    measured += sys.getsizeof(digests[0])  # the hash strings were made before measuring
    assert chains_models.STATUS_BYTES / 2 <= measured <= chains_models.STATUS_BYTES


def test_a_spec_taken_from_the_parse_cache_twice_is_one_object_no_holder_can_change(
    flight, monkeypatch
):
    monkeypatch.setattr(access, "_PARSED", access.Recent(budget=10**9))
    first, second = spec_of(flight.head()), spec_of(flight.head())
    assert first is second
    with pytest.raises(ValidationError, match="frozen"):
        first.actions[0].effect = "compensate"
    assert second.actions[0].effect == flight.head().document["actions"][0]["effect"]
