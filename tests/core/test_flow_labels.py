"""The flow's words never sit on one another: step names, gate names and route labels.

A flow of a long chain carries a label on every route back (rewind,
reselect, repair) and a name beside every gate; each is measured as
Graphviz drew it (its text's place, anchor and size in the SVG) and no two
may overlap, on the fixtures and on a generated chain of 40 nodes.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.render import flow_svg
from tests.shapes import long_chain

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_TEXT = re.compile(r"<text ([^>]*)>([^<]*)</text>")
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
# Helvetica's advance widths (thousandths of the font size; Arial and Liberation Sans,
# what the pages fall back to, share them): the characters ids and labels use.
_WIDTHS = {
    **dict.fromkeys("abdeghnopqu0123456789_", 556),
    **dict.fromkeys("ckvxyzsJ", 500),
    **dict.fromkeys("ft :.,I", 278),
    **dict.fromkeys("ijl", 222),
    **dict.fromkeys("r-()", 333),
    **dict.fromkeys("mM", 833),
    "w": 722,
    **dict.fromkeys("ABEKPSVXY", 667),
    **dict.fromkeys("CDHNRU", 722),
    **dict.fromkeys("FTZ", 611),
    **dict.fromkeys("GOQ", 778),
    "L": 556,
    "W": 944,
}


def width(text: str, size: float) -> float:
    return sum(_WIDTHS.get(c, 556) for c in text) * size / 1000


def forty_nodes() -> ChainSpec:
    """34 steps and 6 gates: each step from the third rewinds or reselects one to three back."""
    actions, gates, rows = [], [], []
    for i in range(34):
        action = {"id": f"step_{i:02d}", "effect": "mint" if i % 4 == 0 else "read"}
        if i and i % 5 == 0:
            gate = {"id": f"gate_{i:02d}", "audience": "user"}
            gate["outcomes"] = {"ok": "ok", "no": f"rewind(to: step_{i - 2:02d})"}
            gates.append(gate)
            action["entry_gate"] = gate["id"]
        actions.append(action)
        if i >= 2:
            back, kind = 1 + i % 3, ("rewind", "reselect")[i % 2]
            rows.append(
                {
                    "id": f"R{i}",
                    "signal": [f"code:E{i}"],
                    "scope": {"steps": [f"step_{i:02d}"]},
                    "verdict": f"{kind}(to: step_{i - back:02d})",
                }
            )
    doc = {"id": "forty", "actions": actions, "gates": gates, "verdict_table": rows}
    return formats.from_document(doc)


def fixture(name: str) -> ChainSpec:
    return formats.load((FIXTURES / name).read_text(), format="yaml").chains[0]


def text_boxes(svg: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Each text of ``svg`` with its box (left, top, right, bottom), as drawn."""
    boxes = []
    for attributes, content in _TEXT.findall(svg):
        found = dict(_ATTRIBUTE.findall(attributes))
        text, size = html.unescape(content), float(found.get("font-size", "14"))
        x, y, wide = float(found["x"]), float(found["y"]), width(text, size)
        left = {"start": x, "end": x - wide}.get(found.get("text-anchor", ""), x - wide / 2)
        boxes.append((text, (left, y - 0.75 * size, left + wide, y + 0.2 * size)))
    return boxes


def overlapping(boxes) -> list[tuple[str, str]]:
    found = []
    for i, (a, (al, at, ar, ab)) in enumerate(boxes):
        for b, (bl, bt, br, bb) in boxes[i + 1 :]:
            if al < br - 0.5 and bl < ar - 0.5 and at < bb - 0.5 and bt < ab - 0.5:
                found.append((a, b))
    return found


CHAINS = {
    "flight": lambda: fixture("flight-roundtrip.yaml"),
    "cloud": lambda: fixture("cloud-provisioning.yaml"),
    "card": lambda: fixture("card-payment.yaml"),
    "forty steps in a row": lambda: long_chain(20),
    "forty nodes with routes and gates": forty_nodes,
}


@pytest.mark.parametrize("name", CHAINS)
def test_no_two_words_of_the_flow_overlap(name):
    spec = CHAINS[name]()
    boxes = text_boxes(flow_svg(spec))
    assert len(boxes) >= len(spec.actions)
    assert overlapping(boxes) == []


def test_the_generated_chain_has_forty_nodes_and_a_label_on_every_route():
    spec = forty_nodes()
    assert len(spec.actions) + len(spec.gates) == 40
    labels = [text for text, _ in text_boxes(flow_svg(spec)) if text in ("rewind", "reselect")]
    assert len(labels) >= 32
