"""Every save is explored at up to two faults, and the workspace shows the answer beside lint."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from chains.models import Chain
from chains.services import save_check as checking

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def answer(client, chain: Chain, revision: int | None = None) -> str:
    query = f"?revision={revision}" if revision else ""
    response = client.get(f"{chain.url('save_check')}{query}", **HTMX)
    assert response.status_code == 200
    return response.content.decode()


def unkeyed_retry(chain: Chain, document: dict) -> Chain:
    """The flight chain with a row that re-sends its unkeyed booking after a timeout."""
    row = {"id": "R0", "signal": ["timeout"], "scope": {"steps": ["book_trip"]}}
    row.update(verdict="retry", no_side_effect=True)
    document["verdict_table"].insert(0, row)
    Chain.objects.store(document, "edit", team=chain.team)
    return chain


def test_the_workspace_asks_for_the_head_s_exploration_after_it_renders(client, flight):
    html = client.get(flight.url()).content.decode()
    assert f'hx-get="{flight.url("save_check")}?revision=1" hx-trigger="load"' in html


def test_a_clean_chain_says_how_many_sequences_it_tried_and_the_rows_they_exercised(client, flight):
    html = answer(client, flight, 1)
    assert "no double booking and no broken invariant in" in html
    assert "rows exercised" in html and 'class="save-check clean"' in html


def test_a_save_that_re_sends_an_unkeyed_commit_shows_the_double_booking_and_its_cause(
    client, flight, flight_document
):
    unkeyed_retry(flight, flight_document)
    html = answer(client, flight, 2)
    assert 'class="save-check broken"' in html
    assert "<code>double_commit</code>" in html
    assert "book_trip on timeout: row R0 -&gt; retry" in html
    assert "open in the simulator" in html and "violation=double_commit" in html


def test_the_answer_is_kept_by_content_so_the_same_document_is_not_explored_again(
    client, flight, monkeypatch
):
    answer(client, flight, 1)
    monkeypatch.setattr(checking, "explore", lambda *a, **k: pytest.fail("explored again"))
    assert "rows exercised" in answer(client, flight, 1)


def test_without_htmx_the_answer_is_a_page_of_its_own(client, flight):
    response = client.get(f"{flight.url('save_check')}?revision=1")
    assert response.status_code == 200
    assert "<title>Explored r1" in response.content.decode()


def test_an_unknown_revision_is_not_found(client, flight):
    assert client.get(f"{flight.url('save_check')}?revision=9", **HTMX).status_code == 404


def test_the_search_is_bounded_in_faults_time_and_states():
    bounds = checking.BOUNDS
    assert bounds.max_faults == 2 and bounds.max_seconds and bounds.max_states


def test_a_chain_without_steps_has_nothing_to_explore_yet(client, team):
    chain = Chain.objects.store({"id": "bare"}, "new", team=team).chain
    assert "nothing to explore yet" in answer(client, chain, 1)


def test_with_exploring_on_save_off_the_workspace_offers_a_link_instead(client, flight, settings):
    settings.WORKSPACE_EXPLORE_ON_SAVE = False
    html = client.get(flight.url()).content.decode()
    panel = html.split('id="save-check"')[1].split("</div>")[0]
    assert 'hx-trigger="load"' not in panel
    assert "Explore every failure sequence up to two faults</a>" in panel
