"""Chain.objects.store keeps an append-only, content-addressed history."""

from __future__ import annotations

import hashlib
import json

import pytest

from chains.models import Chain, Revision, content_hash

pytestmark = pytest.mark.django_db

DOC = {"id": "demo", "description": "tiny chain", "handles": [], "actions": []}


def test_store_creates_the_chain_and_revision_1():
    revision = Chain.objects.store(DOC, message="first")
    chain = Chain.objects.get(key="demo")
    assert revision.number == 1
    assert revision.chain == chain
    assert revision.document == DOC
    assert revision.message == "first"
    assert chain.description == "tiny chain"
    assert chain.head() == revision


def test_content_hash_is_sha256_of_canonical_json():
    canonical = json.dumps(DOC, sort_keys=True, separators=(",", ":"))
    assert content_hash(DOC) == hashlib.sha256(canonical.encode()).hexdigest()
    assert content_hash(dict(reversed(DOC.items()))) == content_hash(DOC)


def test_storing_identical_content_adds_nothing():
    first = Chain.objects.store(DOC, message="first")
    again = Chain.objects.store(dict(DOC), message="again")
    assert again == first
    assert Revision.objects.count() == 1


def test_changed_content_adds_revision_2_with_a_new_hash():
    first = Chain.objects.store(DOC, message="first")
    second = Chain.objects.store({**DOC, "description": "less tiny"}, message="second")
    assert second.number == 2
    assert second.content_hash != first.content_hash
    chain = Chain.objects.get(key="demo")
    assert chain.head() == second
    assert chain.description == "less tiny"
    assert list(chain.revisions.values_list("number", flat=True)) == [1, 2]


def test_a_chain_without_revisions_has_no_head():
    assert Chain.objects.create(key="empty").head() is None
