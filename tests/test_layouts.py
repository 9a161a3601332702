"""The layout memory of the workspace: each revision's drawing is kept, and the next one
is drawn against it, so an edit moves only what it changes."""

from __future__ import annotations

import pytest

from chains.core.layout import Layout
from chains.models import Chain, RevisionLayout
from chains.services.editing import save_edit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def kept(chain: Chain, number: int, view: str = "handles") -> Layout:
    row = RevisionLayout.objects.get(revision__chain=chain, revision__number=number, view=view)
    return Layout.from_json(row.layout)


def apart(layout: Layout, a: str, b: str) -> tuple[float, float]:
    (ax, ay), (bx, by) = layout.nodes[a], layout.nodes[b]
    return round(bx - ax, 1), round(by - ay, 1)


def add_handle(client, chain: Chain, name: str, base: int, view: str = "handles"):
    data = {"base": str(base), "op": "add_handle", "args": f'{{"id": "{name}"}}', "view": view}
    return client.post(f"{chain.url()}edit", data, **HTMX)


def test_the_first_view_of_a_revision_keeps_its_layout_for_that_view(client, flight):
    client.get(f"{flight.url()}?view=flow")
    assert set(RevisionLayout.objects.values_list("view", flat=True)) == {"flow"}
    assert "action:book_trip" in kept(flight, 1, "flow").nodes


def test_an_edit_is_drawn_against_the_layout_of_the_revision_it_changed(client, flight):
    client.get(flight.url())
    response = add_handle(client, flight, "visa_ref", base=1)
    assert response.status_code == 200
    before, after = kept(flight, 1), kept(flight, 2)
    for key in before.nodes:
        assert apart(after, "action:book_trip", key) == apart(before, "action:book_trip", key)
    assert "handle:visa_ref" in after.nodes


def test_a_revision_first_shown_later_is_drawn_against_the_latest_earlier_layout(client, flight):
    client.get(flight.url())
    save_edit(flight, "add_handle", {"id": "visa_ref"}, base=1, author=None)  # as the API does
    save_edit(flight, "add_handle", {"id": "fare_ref"}, base=2, author=None)
    client.get(flight.url())
    before, after = kept(flight, 1), kept(flight, 3)
    for key in before.nodes:
        assert apart(after, "handle:quote_id", key) == apart(before, "handle:quote_id", key)


def test_a_shown_revision_is_drawn_from_its_own_layout_again(client, flight):
    client.get(flight.url())
    stored = RevisionLayout.objects.get().layout
    client.get(f"{flight.url()}?select=handle:quote_id")
    assert RevisionLayout.objects.get().layout == stored


def test_tidy_lays_the_shown_view_out_afresh(client, flight):
    client.get(flight.url())
    natural = kept(flight, 1)
    row = RevisionLayout.objects.get()
    scattered = {k: [x * 3, y + 50, w, h] for k, (x, y, w, h) in row.layout["nodes"].items()}
    row.layout = {"nodes": scattered, "edges": {}}
    row.save()
    response = client.post(f"{flight.url()}tidy", {"view": "handles"}, **HTMX)
    assert response.status_code == 200
    assert "data-refit" in response.content.decode()
    assert kept(flight, 1).nodes == natural.nodes


def test_tidy_without_javascript_goes_back_to_the_same_view(client, flight):
    response = client.post(f"{flight.url()}tidy", {"view": "flow", "tab": "gates"})
    assert response.status_code == 302
    assert response["Location"] == f"{flight.url()}?tab=gates&view=flow"
    assert RevisionLayout.objects.get(view="flow").layout is None  # drawn afresh when shown


def test_a_moved_step_is_laid_out_afresh_in_both_views(client, flight):
    client.get(flight.url())
    save_edit(flight, "move_action", {"id": "seat_map", "index": 2}, base=1, author=None)
    rows = RevisionLayout.objects.filter(revision__number=2)
    assert sorted(rows.values_list("view", "layout")) == [("flow", None), ("handles", None)]
    client.get(flight.url())
    assert kept(flight, 2).nodes["action:seat_map"] != kept(flight, 1).nodes["action:seat_map"]


def test_a_stored_layout_that_no_longer_reads_is_laid_out_afresh(client, flight):
    client.get(flight.url())
    RevisionLayout.objects.update(layout={"nodes": "not a layout"})
    save_edit(flight, "add_handle", {"id": "visa_ref"}, base=1, author=None)
    assert client.get(flight.url()).status_code == 200
    assert "handle:visa_ref" in kept(flight, 2).nodes


def test_a_viewer_is_offered_no_tidy_button(signed_in, people, flight):
    body = signed_in(people["viewer"]).get(flight.url()).content.decode()
    assert 'id="tidy-form"' not in body
