"""Of edges that run close together, a click selects the one nearest the pointer.

The wide hit area of an edge drawn later lies over the line of one drawn
before it; the test finds a point on one edge's line that another edge's hit
area covers (the flight chain has many near its busy handles) and clicks it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_designer_browser import open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A point on an edge's line (away from its ends and from every node) where the topmost
# element is another edge's hit area: [x, y, the edge under the line, the edge on top].
COVERED_POINT = """() => {
  const edges = [...document.querySelectorAll("#canvas g.edge")];
  for (const g of edges) {
    const path = g.querySelector("path:not(.hit)");
    if (!path) continue;
    const length = path.getTotalLength();
    for (let at = length * 0.2; at < length * 0.8; at += 3) {
      const p = path.getPointAtLength(at).matrixTransform(path.getScreenCTM());
      const top = document.elementFromPoint(p.x, p.y);
      const other = top && top.closest("g.edge");
      if (other && other !== g && !top.closest("g.node")) return [p.x, p.y, g.id, other.id];
    }
  }
  return null;
}"""


def test_a_click_on_a_line_under_another_edge_s_hit_area_selects_that_line(
    live_server, page, flight
):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_workspace(page, live_server, flight.key)
    found = page.evaluate(COVERED_POINT)
    assert found, "no edge line lies under another edge's hit area in this drawing"
    x, y, wanted, on_top = found
    page.mouse.move(x, y)
    expect(page.locator(f'#canvas g.edge.candidate[id="{wanted}"]')).to_have_count(1)
    page.mouse.click(x, y)
    expect(page.locator("#canvas g.edge.selected")).to_have_attribute("id", wanted)
    assert wanted != on_top
