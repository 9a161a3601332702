"""The home page lists stored chains, or says how to import one."""

from __future__ import annotations

import pytest

from chains.models import Chain

pytestmark = pytest.mark.django_db


def test_home_without_chains_explains_how_to_import(client):
    response = client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "No chains yet" in body
    assert "python manage.py chain import" in body


def test_home_lists_stored_chains_with_revision_counts(client, template_context):
    Chain.objects.store({"id": "booking", "title": "Flight booking"}, message="r1")
    Chain.objects.store({"id": "booking", "title": "Flight booking", "x": 1}, message="r2")
    Chain.objects.store({"id": "refunds"}, message="r1")

    response = client.get("/")

    body = response.content.decode()
    assert "No chains yet" not in body
    assert "Flight booking" in body
    assert "<code>booking</code>" in body
    assert "<code>refunds</code>" in body
    rows = {c.key: c for c in response.context["chains"]}
    assert (rows["booking"].revision_count, rows["booking"].head_number) == (2, 2)
    assert (rows["refunds"].revision_count, rows["refunds"].head_number) == (1, 1)


def test_home_loads_htmx_from_our_static_files_and_sets_the_csrf_header(client):
    body = client.get("/").content.decode()
    assert '<script src="/static/vendor/htmx/htmx.min.js"' in body
    assert 'hx-headers=\'{"X-CSRFToken": ' in body


def test_home_accepts_only_get(client):
    assert client.post("/").status_code == 405


def test_the_list_shows_each_chains_lint_status(client):
    Chain.objects.store({"id": "broken", "actions": "nope"})
    body = client.get("/").content.decode()
    assert 'class="status status-invalid">INVALID<' in body


def test_search_finds_chains_by_id_title_or_description(client):
    Chain.objects.store({"id": "booking", "title": "Flight booking"})
    Chain.objects.store({"id": "refunds", "description": "card refunds"})
    body = client.get("/?q=card").content.decode()
    assert "refunds" in body and "Flight booking" not in body
    assert "No chain matches" in client.get("/?q=zzz").content.decode()
