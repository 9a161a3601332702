"""The handle graph and the flow as DOT and SVG: keys, classes, styles, escaping, failures."""

from __future__ import annotations

import doctest
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chains.core import dot, formats, render
from chains.core.dot import RenderError, to_svg
from chains.core.fixes import apply_fix, fixes_for
from chains.core.keys import GraphKey
from chains.core.layout import Layout
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.render import (
    EFFECT_FILLS,
    flow_dot,
    flow_svg,
    handle_graph_dot,
    handle_graph_svg,
)
from tests.shapes import long_chain

from .lint.helpers import chain

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
XSS = "<script>alert(1)</script>"
ATTRIBUTE_BREAKOUT = 'x" onload="alert(1)'


def fixture(name: str) -> ChainSpec:
    path = FIXTURES / name
    return formats.load(path.read_bytes(), filename=path.name).chains[0]


@pytest.fixture(scope="module")
def flight_handles(flight_spec: ChainSpec) -> dict[str, ET.Element]:
    return by_id(handle_graph_svg(flight_spec))


@pytest.fixture(scope="module")
def flight_flow(flight_spec: ChainSpec) -> dict[str, ET.Element]:
    return by_id(flow_svg(flight_spec))


@pytest.fixture(scope="module")
def card_flow() -> dict[str, ET.Element]:
    return by_id(flow_svg(fixture("card-payment.yaml")))


def by_id(svg: str) -> dict[str, ET.Element]:
    """Every SVG element with an id, by id (parsing fails the test if the SVG is not XML)."""
    return {el.get("id", ""): el for el in ET.fromstring(svg).iter() if el.get("id")}


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def tooltip(element: ET.Element) -> str | None:
    link = element.find(f".//{SVG}a")
    return None if link is None else link.get(f"{XLINK}title")


def texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def node_key_of(dot: str, name: str) -> str:
    """The key of the one handle or action node called ``name`` in ``dot``."""
    (key,) = [k for k in (f"handle:{name}", f"action:{name}") if f'  "{k}" [' in dot]
    return key


def centre(element: ET.Element) -> tuple[float, float]:
    """Where a node's label sits (Graphviz centres it on the node); y grows downwards."""
    text = element.find(f".//{SVG}text")
    assert text is not None
    return float(text.get("x", "0")), float(text.get("y", "0"))


def size(svg: str) -> tuple[float, float]:
    """Width and height of a drawing in its own units (points, as the label font size)."""
    _, _, width, height = (float(n) for n in ET.fromstring(svg).get("viewBox", "").split())
    return width, height


def strokes(element: ET.Element) -> ET.Element:
    path = element.find(f".//{SVG}path")
    assert path is not None
    return path


@pytest.mark.parametrize("module", [render, dot])
def test_the_module_doctests_pass(module):
    assert doctest.testmod(module).failed == 0


# --- the handle graph: keys ----------------------------------------------------------


def test_every_handle_and_action_has_an_svg_element_with_its_graph_key(flight_spec, flight_handles):
    keys = [f"handle:{h.id}" for h in flight_spec.handles]
    keys += [f"action:{a.id}" for a in flight_spec.actions]
    assert [k for k in keys if k not in flight_handles] == []


def test_every_derived_from_edge_has_an_svg_element_keyed_child_then_parent(
    flight_spec, flight_handles
):
    keys = [f"edge:derived_from:{h.id}:{p}" for h in flight_spec.handles for p in h.derived_from]
    assert keys
    assert [k for k in keys if k not in flight_handles] == []


def test_every_consumes_and_mints_edge_has_an_svg_element_with_its_graph_key(
    flight_spec, flight_handles
):
    keys = [f"edge:consumes:{a.id}:{h}" for a in flight_spec.actions for h in a.input.handles]
    keys += [f"edge:mints:{a.id}:{h}" for a in flight_spec.actions for h in a.output.handles]
    assert [k for k in keys if k not in flight_handles] == []


def test_probe_and_compensator_edges_have_svg_elements_with_their_graph_keys(flight_handles):
    assert "edge:probe:book_trip:find_trips_by_reference" in flight_handles
    assert "edge:probe:cancel_trip:find_trips_by_reference" in flight_handles
    assert "edge:compensator:book_trip:get_cancel_options" in flight_handles
    assert "edge:compensator:book_trip:cancel_trip" in flight_handles


def test_nodes_and_edges_are_classed_by_kind(flight_handles):
    assert {"node", "handle"} <= classes(flight_handles["handle:search_token"])
    assert {"node", "action"} <= classes(flight_handles["action:outbound_search"])
    assert classes(flight_handles["edge:derived_from:outbound_pick:search_token"]) == {
        "edge",
        "derived-from",
    }
    assert classes(flight_handles["edge:consumes:return_search:search_token"]) == {
        "edge",
        "consumes",
    }
    assert classes(flight_handles["edge:mints:outbound_search:search_token"]) == {"edge", "mints"}


def test_a_node_carries_its_key_kind_and_id_as_data_attributes(flight_handles):
    node = flight_handles["handle:search_token"]
    assert (node.get("data-key"), node.get("data-kind"), node.get("data-name")) == (
        "handle:search_token",
        "handle",
        "search_token",
    )


def test_an_edge_carries_its_kind_source_and_target_as_data_attributes(flight_handles):
    edge = flight_handles["edge:derived_from:outbound_pick:search_token"]
    assert [edge.get(f"data-{n}") for n in ("kind", "edge-kind", "source", "target")] == [
        "edge",
        "derived_from",
        "outbound_pick",
        "search_token",
    ]


def test_a_route_edge_carries_its_verdict_type(flight_spec):
    routes = [el for el in by_id(flow_svg(flight_spec)).values() if el.get("data-verdict")]
    assert routes and all(el.get("data-edge-kind") in ("route", "outcome") for el in routes)


def test_the_drawing_settles_the_ends_of_an_edge_whose_ids_contain_colons():
    doc = ChainSpec.model_validate(
        {
            "id": "c",
            "handles": [{"id": "ns:offer", "minted_by": "ns:search"}],
            "actions": [{"id": "ns:search", "effect": "read", "output": {"handles": ["ns:offer"]}}],
        }
    )
    edge = by_id(handle_graph_svg(doc))["edge:mints:ns:search:ns:offer"]
    assert (edge.get("data-source"), edge.get("data-target")) == ("ns:search", "ns:offer")


# --- the handle graph: looks ---------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "effect"),
    [
        ("outbound_search", "read"),
        ("price_quote", "mint"),
        ("book_trip", "commit"),
        ("cancel_trip", "compensate"),
        ("select_outbound", "select"),
    ],
)
def test_an_action_carries_its_effect_class_and_fill(flight_handles, action, effect):
    node = flight_handles[f"action:{action}"]
    shape = node.find(f".//{SVG}path")
    assert f"effect-{effect}" in classes(node)
    assert shape is not None and shape.get("fill", "").lower() == EFFECT_FILLS[effect].lower()


def test_the_five_effect_fills_are_distinct():
    assert len(set(EFFECT_FILLS.values())) == 5


def test_a_probe_only_action_has_the_probe_only_class(flight_handles):
    assert "probe-only" in classes(flight_handles["action:find_trips_by_reference"])


def test_a_single_use_handle_has_the_single_use_class(flight_handles):
    assert "single-use" in classes(flight_handles["handle:price_lock"])
    assert "single-use" not in classes(flight_handles["handle:quote_id"])


def test_a_node_is_labelled_with_its_id_and_its_tooltip_is_the_description(flight_handles):
    node = flight_handles["handle:quote_id"]
    assert texts(node) == ["quote_id"]
    assert tooltip(node) == "Priced quote for the outbound+return pair; does not lock the price."


def test_a_long_description_is_cut_short_in_the_tooltip():
    doc = chain(f"""
        id: c
        handles: [{{id: h, description: "{"word " * 100}"}}]
    """)
    tip = tooltip(by_id(handle_graph_svg(doc))["handle:h"]) or ""
    assert len(tip) <= 200 and tip.endswith("…")


def test_derived_from_edges_are_bold_and_their_arrow_points_at_the_child(flight_spec):
    dot = handle_graph_dot(flight_spec)
    line = next(
        ln for ln in dot.splitlines() if "edge:derived_from:outbound_pick:search_token" in ln
    )
    assert line.lstrip().startswith('"handle:search_token" -> "handle:outbound_pick"')
    assert "dir=" not in line and 'style="bold"' in line


def test_every_document_edge_is_drawn_the_way_its_arrow_convention_says(flight_spec):
    dot = handle_graph_dot(flight_spec)
    for line in dot.splitlines():
        key = line.partition('id="')[2].partition('"')[0]
        if not key.startswith(("edge:derived_from:", "edge:mints:", "edge:consumes:")):
            continue
        tail, head = GraphKey.parse(key).arrow
        edge = line.lstrip().partition(" [")[0]
        assert edge == f'"{node_key_of(dot, tail)}" -> "{node_key_of(dot, head)}"', key


@pytest.mark.parametrize(
    "key",
    [
        "edge:derived_from:outbound_pick:search_token",
        "edge:consumes:return_search:search_token",
        "edge:mints:outbound_search:search_token",
    ],
)
def test_derived_from_edges_are_drawn_thicker_than_mint_and_consume_edges(flight_handles, key):
    width = float(strokes(flight_handles[key]).get("stroke-width", "1"))
    assert (width > 1.5) == key.startswith("edge:derived_from")


@pytest.mark.parametrize(
    "key",
    [
        "edge:probe:book_trip:find_trips_by_reference",
        "edge:compensator:book_trip:cancel_trip",
    ],
)
def test_probe_and_compensator_edges_are_dashed(flight_handles, key):
    assert strokes(flight_handles[key]).get("stroke-dasharray")


def test_mint_and_consume_edges_are_solid(flight_handles):
    assert (
        strokes(flight_handles["edge:mints:book_trip:trip_locator"]).get("stroke-dasharray") is None
    )
    assert (
        strokes(flight_handles["edge:consumes:book_trip:price_lock"]).get("stroke-dasharray")
        is None
    )


# --- marks ---------------------------------------------------------------------------


def test_marks_add_their_class_to_the_marked_nodes_and_edges(flight_spec):
    marks = {
        "handle:quote_id": "cascade",
        "handle:trip_locator": "fact",
        "edge:consumes:book_trip:price_lock": "changed",
    }
    svg = by_id(handle_graph_svg(flight_spec, marks))
    assert {key: marks[key] in classes(svg[key]) for key in marks} == dict.fromkeys(marks, True)
    assert "cascade" not in classes(svg["handle:search_token"])


def test_marks_apply_to_the_flow_too(flight_spec):
    svg = by_id(flow_svg(flight_spec, {"action:revalidate": "repair-scope"}))
    assert "repair-scope" in classes(svg["action:revalidate"])


def test_a_mark_for_a_key_the_drawing_lacks_is_ignored(flight_spec):
    marked = handle_graph_dot(flight_spec, {"handle:gone": "removed"})
    assert marked == handle_graph_dot(flight_spec)


@pytest.mark.parametrize("mark", ["", 'x" onload="alert(1)', "<b>", "1st"])
def test_a_mark_that_is_not_a_css_class_name_is_refused(flight_spec, mark):
    with pytest.raises(RenderError, match="not a CSS class name"):
        handle_graph_dot(flight_spec, {"handle:quote_id": mark})


# --- escaping ------------------------------------------------------------------------

HOSTILE = chain(f"""
    id: hostile
    handles:
      - id: {XSS!r}
        description: {ATTRIBUTE_BREAKOUT!r}
      - id: {ATTRIBUTE_BREAKOUT!r}
        description: {XSS!r}
    actions:
      - id: {XSS!r}
        description: {XSS!r}
        effect: commit
        entry_gate: {ATTRIBUTE_BREAKOUT!r}
        input: {{handles: [{XSS!r}]}}
        output: {{handles: [{ATTRIBUTE_BREAKOUT!r}]}}
    gates:
      - id: {ATTRIBUTE_BREAKOUT!r}
        description: {XSS!r}
        audience: user
""")


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_markup_in_ids_and_descriptions_reaches_the_svg_as_escaped_text(draw):
    svg = draw(HOSTILE)
    assert "&lt;script&gt;" in svg
    assert "<script" not in svg.lower()


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_hostile_strings_add_no_element_or_attribute(draw):
    root = ET.fromstring(draw(HOSTILE))
    tags = {el.tag.removeprefix(SVG).removeprefix(XLINK) for el in root.iter()}
    attributes = {name.split("}")[-1] for el in root.iter() for name in el.attrib}
    assert "script" not in tags
    assert not [a for a in attributes if a.lower().startswith("on")]


def test_a_hostile_handle_keeps_its_text_as_label_and_tooltip():
    svg = by_id(handle_graph_svg(HOSTILE))
    assert texts(svg[f"handle:{XSS}"]) == [XSS]
    assert tooltip(svg[f"handle:{XSS}"]) == ATTRIBUTE_BREAKOUT
    assert tooltip(svg[f"handle:{ATTRIBUTE_BREAKOUT}"]) == XSS


def test_a_hostile_gate_keeps_its_key_and_text_in_the_flow():
    svg = by_id(flow_svg(HOSTILE))
    gate = svg[f"gate:{ATTRIBUTE_BREAKOUT}"]
    assert texts(gate) == [ATTRIBUTE_BREAKOUT] and tooltip(gate) == XSS


def test_no_element_links_anywhere():
    for svg in (handle_graph_svg(HOSTILE), flow_svg(HOSTILE)):
        root = ET.fromstring(svg)
        assert not [el for el in root.iter() if {"href", f"{XLINK}href"} & set(el.attrib)]


@pytest.mark.parametrize(
    "name",
    [
        "quote.v2-final",
        XSS,
        ATTRIBUTE_BREAKOUT,
        "back\\slash\\N\\G",
        "trailing\\",
        "entity&nbsp;&lt;&amp;",
        "it's ünïcødé ✈",
        "space and: colon",
    ],
)
def test_any_id_survives_exactly_as_the_svg_id(name):
    doc = ChainSpec.model_validate(
        {
            "id": "c",
            "handles": [{"id": name, "minted_by": name}],
            "actions": [{"id": name, "effect": "mint", "output": {"handles": [name]}}],
        }
    )
    svg = by_id(handle_graph_svg(doc))
    assert {f"handle:{name}", f"action:{name}", f"edge:mints:{name}:{name}"} <= set(svg)
    assert texts(svg[f"handle:{name}"]) == [name]


def test_backslashes_in_a_description_cannot_expand_graphviz_escapes():
    doc = chain(r"""
        id: c
        handles: [{id: h, description: 'see \N and \G'}]
    """)
    tip = tooltip(by_id(handle_graph_svg(doc))["handle:h"]) or ""
    assert "handle:h" not in tip and tip.startswith("see ")


# --- documents under edit --------------------------------------------------------------

DANGLING = chain("""
    id: dangling
    handles:
      - {id: quote, minted_by: ghost_action, derived_from: [ghost_parent]}
      - {id: token, minted_by: external}
      - {id: order_ref, minted_by: "external(scope A place_order)"}
    actions:
      - id: book
        effect: commit
        entry_gate: ghost_gate
        input: {handles: [quote, token, ghost_input]}
        output:
          handles: [ghost_output]
          empty: {route: "rewind(to: ghost_step)"}
        confirmation: {probe: ghost_probe}
        compensation: {chain: [ghost_undo]}
""")


@pytest.mark.parametrize(
    "key",
    [
        "handle:ghost_parent",
        "handle:ghost_input",
        "handle:ghost_output",
        "action:ghost_action",
        "action:ghost_probe",
        "action:ghost_undo",
    ],
)
def test_names_nothing_defines_render_as_undefined_nodes_in_the_handle_graph(key):
    assert "undefined" in classes(by_id(handle_graph_svg(DANGLING))[key])


@pytest.mark.parametrize(
    "key", ["gate:ghost_gate", "action:ghost_step", "action:ghost_probe", "action:ghost_undo"]
)
def test_names_nothing_defines_render_as_undefined_nodes_in_the_flow(key):
    assert "undefined" in classes(by_id(flow_svg(DANGLING))[key])


def test_a_handle_minted_outside_the_chain_has_the_external_class():
    svg = by_id(handle_graph_svg(DANGLING))
    assert "external" in classes(svg["handle:token"])
    assert "action:external" not in svg


def test_a_handle_minted_by_another_chain_of_its_document_is_drawn_external():
    svg = by_id(handle_graph_svg(DANGLING))
    assert "external" in classes(svg["handle:order_ref"])
    assert not any(key.startswith("action:external(") for key in svg)


def test_an_empty_chain_renders():
    assert set(by_id(flow_svg(ChainSpec(id="empty")))) == {"flow-graph"}


# --- determinism -------------------------------------------------------------------------


@pytest.mark.parametrize("draw", [handle_graph_dot, flow_dot])
def test_the_same_document_always_gives_the_same_dot_text(draw):
    assert draw(fixture("flight-roundtrip.yaml")) == draw(fixture("flight-roundtrip.yaml"))


# --- the flow ----------------------------------------------------------------------------


def test_every_action_and_gate_has_an_element_in_the_flow(flight_spec, flight_flow):
    keys = [f"action:{a.id}" for a in flight_spec.actions]
    keys += [f"gate:{g.id}" for g in flight_spec.gates]
    assert [k for k in keys if k not in flight_flow] == []


def test_the_main_line_joins_consecutive_steps_in_chain_order(flight_flow):
    steps = [
        "outbound_search",
        "select_outbound",
        "return_search",
        "select_return",
        "price_quote",
        "seat_map",
        "initiate_hold",
        "revalidate",
        "book_trip",
    ]
    flows = [k for k in flight_flow if k.startswith("edge:flow:")]
    assert flows == [f"edge:flow:{a}:{b}" for a, b in zip(steps, steps[1:], strict=False)]


@pytest.mark.parametrize("step", ["find_trips_by_reference", "get_cancel_options", "cancel_trip"])
def test_probes_and_compensation_steps_are_off_the_main_line(flight_flow, step):
    assert "off-line" in classes(flight_flow[f"action:{step}"])
    assert not [k for k in flight_flow if k.startswith("edge:flow:") and step in k.split(":")]


def test_the_entry_gate_is_a_small_diamond_before_its_step(card_flow):
    gate = card_flow["gate:payment_consent"]
    diamond = gate.find(f".//{SVG}polygon")
    assert "entry-gate" in classes(gate)
    assert diamond is not None and len(diamond.get("points", "").split()) == 5  # closed
    assert "edge:flow:create_intent:confirm_intent" in card_flow
    assert "edge:entry_gate:payment_consent:confirm_intent" in card_flow


def test_a_rewind_is_a_dashed_route_edge_labelled_rewind(card_flow):
    edge = card_flow["edge:route:confirm_intent:create_intent:rewind"]
    assert "route" in classes(edge)
    assert texts(edge) == ["rewind"]
    assert strokes(edge).get("stroke-dasharray")


def test_a_route_edge_tooltip_names_where_each_verdict_was_written(card_flow):
    tip = tooltip(card_flow["edge:route:capture:create_intent:rewind"]) or ""
    assert "verdict_table[P4]" in tip and "verdict_table[P5]" in tip


def test_a_repair_of_the_step_itself_is_a_loop(card_flow):
    assert "edge:route:confirm_intent:confirm_intent:repair" in card_flow


def test_a_gate_verdict_raises_the_gate_and_its_outcomes_route_back(flight_flow):
    assert "edge:raises:revalidate:price_change_consent" in flight_flow
    assert "edge:outcome:price_change_consent:select_outbound:reselect" in flight_flow


def test_a_probe_and_a_compensation_chain_hang_off_the_commit(flight_flow):
    assert "edge:probe:book_trip:find_trips_by_reference" in flight_flow
    assert "edge:compensator:book_trip:get_cancel_options" in flight_flow
    assert "edge:compensation:get_cancel_options:cancel_trip" in flight_flow
    assert "edge:compensator:book_trip:cancel_trip" not in flight_flow


def test_each_ladder_rung_hangs_off_the_commit():
    svg = by_id(flow_svg(fixture("cloud-provisioning.yaml")))
    assert texts(svg["edge:compensator:create_instance:terminate_instance"]) == ["rung 1"]
    assert texts(svg["edge:compensator:create_instance:force_stop_instance"]) == ["rung 2"]
    assert "edge:compensation:force_stop_instance:terminate_instance" in svg


# --- to_svg --------------------------------------------------------------------------------


def test_to_svg_returns_the_svg_element_alone():
    svg = to_svg("digraph { a -> b }")
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg


@pytest.mark.parametrize("name", ["flight-roundtrip.yaml", "card-payment.yaml"])
def test_the_drawings_carry_no_style_attribute_a_content_security_policy_would_block(name):
    doc = fixture(name)
    for svg in (handle_graph_svg(doc), flow_svg(doc)):
        assert not [el.tag for el in ET.fromstring(svg).iter() if "style" in el.attrib]


def test_graphviz_style_attributes_become_presentation_attributes():
    svg = to_svg('digraph { a [style=filled, fillcolor="red:blue"] }')  # a gradient fill
    stops = list(ET.fromstring(svg).iter(f"{SVG}stop"))
    assert [(s.get("stop-color"), "style" in s.attrib) for s in stops] == [
        ("red", False),
        ("blue", False),
    ]


def test_only_style_attributes_change_and_text_that_mentions_style_is_kept():
    svg = (
        '<svg><g id="n" class="node"><a xlink:title="a style=" id="t"><text x="1">'
        'style=&quot;fill:red&quot;</text></a>\n<stop offset="0" fill="x" '
        'style="fill: &quot;y&quot;;bogus;stop-opacity:1.;"/></g></svg>'
    )
    assert dot._without_style_attributes(svg) == svg.replace(
        'fill="x" style="fill: &quot;y&quot;;bogus;stop-opacity:1.;"',
        'fill="&quot;y&quot;" stop-opacity="1."',
    )


def test_a_missing_dot_program_raises_render_error(monkeypatch):
    monkeypatch.setattr(dot, "DOT_EXECUTABLE", "no-such-graphviz-dot")
    with pytest.raises(RenderError, match="not installed"):
        to_svg("digraph { a }")


def test_a_dot_program_that_fails_raises_render_error_with_its_message():
    with pytest.raises(RenderError, match="failed"):
        to_svg("digraph { this is not dot")


def test_a_dot_program_that_hangs_raises_render_error(monkeypatch, tmp_path):
    slow = tmp_path / "slow-dot"
    slow.write_text("#!/bin/sh\nexec sleep 5\n")
    slow.chmod(0o755)
    monkeypatch.setattr(dot, "DOT_EXECUTABLE", str(slow))
    with pytest.raises(RenderError, match="longer than"):
        to_svg("digraph { a }", timeout=0.2)


def test_control_characters_become_replacement_characters_so_the_svg_stays_xml():
    doc = ChainSpec.model_validate(
        {"id": "c", "handles": [{"id": "bell\x07", "description": "nul\x00 here"}]}
    )
    node = by_id(handle_graph_svg(doc))["handle:bell\ufffd"]
    assert texts(node) == ["bell\ufffd"] and tooltip(node) == "nul\ufffd here"


# --- start_svg: one layout per drawing --------------------------------------------------


def test_a_drawing_is_laid_out_once_and_marks_are_added_after_layout(monkeypatch):
    calls = []
    real = dot.lay_out
    monkeypatch.setattr(dot, "lay_out", lambda *a: calls.append(a) or real(*a))
    source = 'digraph "once" { "handle:a" [id="handle:a", class="handle"] }'
    plain = dot.start_svg(source).result()
    marked = dot.start_svg(source, marks={"handle:a": "selected"}).result()
    assert len(calls) == 1
    assert 'class="node handle"' in plain
    assert 'class="node handle selected"' in marked


def test_a_layout_that_timed_out_is_remembered_and_fails_at_once(monkeypatch):
    source = 'digraph "slow" { a -> b }'
    monkeypatch.setattr(dot, "lay_out", lambda *a: (_ for _ in ()).throw(RenderError("slow")))
    with pytest.raises(RenderError, match="slow"):
        dot.start_svg(source, timeout=1).result()
    monkeypatch.setattr(dot, "lay_out", lambda *a: pytest.fail("laid out again"))
    with pytest.raises(RenderError, match="slow"):
        dot.start_svg(source, timeout=1).result()


def test_a_remembered_failure_is_tried_again_once_it_is_old(monkeypatch):
    source = 'digraph "later" { a -> b }'
    monkeypatch.setattr(dot, "lay_out", lambda *a: (_ for _ in ()).throw(RenderError("busy")))
    with pytest.raises(RenderError):
        dot.start_svg(source).result()
    now = dot.time.monotonic()
    monkeypatch.setattr(dot.time, "monotonic", lambda: now + dot.FAILED_LAYOUT_SECONDS + 1)
    monkeypatch.setattr(dot, "lay_out", lambda *a: dot.Picture("<svg></svg>", Layout()))
    assert dot.start_svg(source).result() == "<svg></svg>"


def test_a_bad_mark_is_refused_before_any_layout():
    with pytest.raises(RenderError, match="not a CSS class name"):
        dot.start_svg("digraph { a }", marks={"handle:a": "no good!"})


def test_a_layout_that_failed_within_a_short_limit_is_tried_again_with_a_longer_one(monkeypatch):
    source = 'digraph "longer" { a -> b }'
    monkeypatch.setattr(dot, "lay_out", lambda *a: (_ for _ in ()).throw(RenderError("slow")))
    with pytest.raises(RenderError):
        dot.start_svg(source, timeout=1).result()
    monkeypatch.setattr(dot, "lay_out", lambda *a: dot.Picture("<svg></svg>", Layout()))
    assert dot.start_svg(source, timeout=5).result() == "<svg></svg>"


# --- layout: readable at first sight -----------------------------------------------------

# The canvas of the workspace page at 1280x800 is about 800 x 600 CSS px; the
# page fits the drawing into it, so a label shows at LABEL_PT times this scale.
CANVAS = (800.0, 600.0)
LABEL_PT = 14.0


def label_px(svg: str) -> float:
    width, height = size(svg)
    return LABEL_PT * min(CANVAS[0] / width, CANVAS[1] / height, 4 / 3)


def test_node_labels_are_set_in_the_size_the_readability_budget_assumes(flight_spec):
    assert f'fontsize="{LABEL_PT:g}"' in handle_graph_dot(flight_spec).split("node [")[1]


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_the_flight_chain_fits_the_canvas_with_labels_of_eleven_px_or_more(flight_spec, draw):
    assert label_px(draw(flight_spec)) >= 11


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_a_forty_node_chain_fits_the_canvas_with_labels_of_eleven_px_or_more(draw):
    assert label_px(draw(long_chain(20))) >= 11


def test_the_handle_graph_draws_the_steps_top_down_in_chain_order(flight_spec, flight_handles):
    ys = [centre(flight_handles[f"action:{a.id}"])[1] for a in flight_spec.actions]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)


def test_the_handles_a_step_mints_sit_beside_it_on_its_row(flight_handles):
    step_x, step_y = centre(flight_handles["action:price_quote"])
    handle_x, handle_y = centre(flight_handles["handle:quote_id"])
    assert handle_y == step_y and handle_x > step_x


def test_a_gate_is_drawn_on_the_handle_graph_in_the_row_of_the_step_that_raises_it(
    flight_handles,
):
    gate = flight_handles["gate:price_change_consent"]
    assert {"node", "gate", "audience-user"} <= classes(gate)
    assert texts(gate) == ["price_change_consent"]  # named inside, not beside
    # On the same row: the labels' baselines differ only by their sizes (12 and 14 pt).
    assert centre(gate)[1] == pytest.approx(centre(flight_handles["action:revalidate"])[1], abs=1)
    raises = flight_handles["edge:raises:revalidate:price_change_consent"]
    assert classes(raises) == {"edge", "raises"}


def test_a_step_that_waits_for_a_gate_has_an_edge_from_it_on_the_handle_graph():
    doc = chain("""
        id: c
        gates: [{id: consent, audience: user, outcomes: {accept: ok}}]
        actions:
          - {id: quote, effect: read}
          - {id: book, effect: commit, entry_gate: consent}
        """)
    drawn = by_id(handle_graph_svg(doc))
    assert classes(drawn["edge:entry_gate:consent:book"]) == {"edge", "entry-gate"}
    assert centre(drawn["gate:consent"])[1] == pytest.approx(centre(drawn["action:book"])[1], abs=1)


def test_a_probe_and_a_compensation_listed_before_their_commit_are_drawn_right_after_it():
    doc = chain("""
        id: c
        actions:
          - {id: find, effect: read, probe_only: true}
          - {id: undo, effect: compensate}
          - {id: search, effect: read}
          - id: book
            effect: commit
            confirmation: {probe: find, signal: found}
            compensation: {action: undo}
          - {id: pay, effect: commit}
        """)
    drawn = by_id(handle_graph_svg(doc))
    rows = sorted(
        ["find", "undo", "search", "book", "pay"], key=lambda a: centre(drawn[f"action:{a}"])[1]
    )
    assert rows == ["search", "book", "find", "undo", "pay"]


def test_a_chain_without_edges_is_drawn_top_down_in_order():
    doc = chain("""
        id: c
        actions: [{id: first, effect: read}, {id: second, effect: read}, {id: third, effect: read}]
    """)
    svg = by_id(handle_graph_svg(doc))
    ys = [centre(svg[f"action:{name}"])[1] for name in ("first", "second", "third")]
    assert ys[0] < ys[1] < ys[2]


def test_handles_no_step_mints_sit_above_the_first_step():
    doc = chain("""
        id: c
        handles: [{id: given}, {id: made, minted_by: make}]
        actions: [{id: make, effect: mint, input: {handles: [given]}, output: {handles: [made]}}]
    """)
    svg = by_id(handle_graph_svg(doc))
    assert centre(svg["handle:given"])[1] < centre(svg["action:make"])[1]


def test_the_flow_runs_top_down_with_the_probe_beside_its_commit(flight_flow):
    search_y = centre(flight_flow["action:outbound_search"])[1]
    book_x, book_y = centre(flight_flow["action:book_trip"])
    probe_x, probe_y = centre(flight_flow["action:find_trips_by_reference"])
    assert search_y < book_y and probe_y == book_y and probe_x != book_x


def steps_without_edges(count: int) -> ChainSpec:
    actions = [{"id": f"call_{i:02d}", "effect": "read"} for i in range(count)]
    return ChainSpec.model_validate({"id": "bare", "actions": actions})


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_forty_steps_wrap_into_two_columns_side_by_side(draw):
    svg = by_id(draw(steps_without_edges(40)))
    first_x, first_y = centre(svg["action:call_00"])
    wrapped_x, wrapped_y = centre(svg["action:call_20"])
    assert wrapped_y == first_y and wrapped_x > first_x
    assert centre(svg["action:call_19"])[1] > first_y


@pytest.mark.parametrize("draw", [handle_graph_svg, flow_svg])
def test_forty_steps_fit_the_canvas_with_labels_of_eleven_px_or_more(draw):
    assert label_px(draw(steps_without_edges(40))) >= 11


def test_twenty_steps_stay_in_one_column():
    svg = by_id(handle_graph_svg(steps_without_edges(20)))
    assert len({centre(svg[f"action:call_{i:02d}"])[0] for i in range(20)}) == 1


def test_the_flow_of_forty_steps_wraps_into_short_columns_that_fill_the_width():
    svg = by_id(flow_svg(steps_without_edges(40)))
    first_x, first_y = centre(svg["action:call_00"])
    wrapped_x, wrapped_y = centre(svg["action:call_10"])
    assert wrapped_y == first_y and wrapped_x > first_x
    width, height = size(flow_svg(steps_without_edges(40)))
    assert width > height


def test_the_flow_of_twenty_steps_stays_in_one_column():
    svg = by_id(flow_svg(steps_without_edges(20)))
    assert len({centre(svg[f"action:call_{i:02d}"])[0] for i in range(20)}) == 1


PROBE_FOURTH = """
    id: c
    actions:
      - {id: search, effect: read}
      - {id: pick, effect: select}
      - {id: price, effect: read}
      - {id: find_booking, effect: read, input: {intent: [reference]}}
      - {id: book, effect: commit, input: {intent: [reference]}, idempotency: {mode: none},
         confirmation: {probe: find_booking}, compensation: {action: none}}
"""


def test_a_probe_placed_fourth_is_a_step_of_the_flow_until_it_is_marked_probe_only():
    doc = chain(PROBE_FOURTH)
    assert "edge:flow:find_booking:book" in by_id(flow_svg(doc))
    (finding,) = [f for f in lint(doc).findings if f.rule == "commit.probe-before-commit"]
    (fix,) = fixes_for(doc, finding)
    flow = by_id(flow_svg(apply_fix(doc, fix)))
    assert not [k for k in flow if k.startswith("edge:flow:") and "find_booking" in k.split(":")]
    assert "edge:probe:book:find_booking" in flow
    assert centre(flow["action:find_booking"])[1] == centre(flow["action:book"])[1]


def test_a_probe_a_compile_calls_a_probe_is_drawn_beside_its_commit_not_as_a_step():
    text = (
        "# Room booking\n\n```yaml\nactions:\n"
        "  - {id: find_rooms, effect: read}\n"
        "  - {id: book_room, effect: commit, idempotency: {mode: none},\n"
        "     confirmation: {probe: lookup_stay}, compensation: {action: none}}\n"
        "  - id: lookup_stay                # the confirmation probe\n"
        "    effect: read\n```\n"
    )
    (doc,) = formats.load(text.encode(), filename="rooms.md").chains
    flow = by_id(flow_svg(doc))
    assert [k for k in flow if k.startswith("edge:flow:")] == ["edge:flow:find_rooms:book_room"]
    assert "probe-only" in classes(flow["action:lookup_stay"])
    assert centre(flow["action:lookup_stay"])[1] == centre(flow["action:book_room"])[1]
