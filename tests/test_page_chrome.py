"""What every page carries: the favicon and the skip links that keyboard users start from."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def links(body: str) -> list[tuple[str, str]]:
    """The page's ``<a>`` elements in order, as (href, text)."""
    return re.findall(r'<a [^>]*href="([^"]*)"[^>]*>([^<]*)</a>', body)


def test_every_page_links_an_svg_favicon_that_exists(client):
    body = client.get("/").content.decode()
    found = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', body)
    assert found
    path = found.group(1).removeprefix(settings.STATIC_URL)
    assert finders.find(path), path
    with open(finders.find(path)) as svg:
        assert svg.read().startswith("<svg")


def test_the_first_link_on_a_page_skips_to_its_content(client):
    body = client.get("/").content.decode()
    assert links(body)[0] == ("#main", "Skip to content")
    assert '<main id="main"' in body


def test_the_workspace_offers_a_skip_to_the_graph_before_the_header(client, flight):
    body = client.get(flight.url()).content.decode()
    assert links(body)[:2] == [("#main", "Skip to content"), ("#canvas", "Skip to the graph")]
    assert 'id="canvas"' in body


@pytest.mark.parametrize(("page", "target"), [("simulate", "sim-canvas"), ("diff", "diff-canvas")])
def test_other_pages_with_a_graph_skip_to_their_own_graph(client, flight, page, target):
    body = client.get(flight.url(page)).content.decode()
    assert ("#" + target, "Skip to the graph") in links(body)
    assert f'id="{target}"' in body


def test_a_page_without_a_graph_offers_no_skip_to_the_graph(client):
    assert "Skip to the graph" not in client.get("/teams/").content.decode()
