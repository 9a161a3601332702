"""``chains.services.imports``: the one import the page, the API and the CLI share."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.models import Chain
from chains.services.imports import digest, import_document

pytestmark = pytest.mark.django_db

LOCKERS = (
    Path(__file__).resolve().parent.parent / "fixtures" / "import-problems" / "parcel-lockers.md"
).read_text()


def test_a_document_with_an_error_is_not_stored_without_confirm():
    imported = import_document(LOCKERS, filename="lockers.md")
    assert imported.awaits_confirmation
    assert imported.stored is None
    assert [c.id for c in imported.chains] == ["locker_reserve", "locker_release"]
    assert not Chain.objects.exists()


def test_confirm_stores_exactly_the_chains_the_import_produced():
    imported = import_document(LOCKERS, filename="lockers.md", confirm=True)
    assert [s["id"] for s in imported.stored] == ["locker_reserve", "locker_release"]
    assert not imported.awaits_confirmation


def test_problems_come_errors_first_then_by_line():
    imported = import_document(LOCKERS, filename="lockers.md", store=False)
    assert [(p.severity, p.line) for p in imported.problems] == [("error", 36), ("info", 16)]


def test_a_dry_run_stores_nothing_even_when_confirmed():
    assert import_document(LOCKERS, filename="l.md", confirm=True, store=False).stored is None
    assert not Chain.objects.exists()


def test_bytes_that_are_not_utf8_are_a_problem_at_their_line_not_a_crash():
    imported = import_document(b"id: x\n\xff\n")
    assert imported.chains == [] and imported.text is None
    assert imported.problems[0].line == 2


def test_the_digest_ignores_line_endings_and_nothing_else():
    assert digest(LOCKERS) == digest(LOCKERS.replace("\n", "\r\n")) == digest(LOCKERS.encode())
    assert digest(LOCKERS) != digest(LOCKERS + " ")
