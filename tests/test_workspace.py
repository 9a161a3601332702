"""The workspace: what it shows, and every edit as a form post (plain and htmx)."""

from __future__ import annotations

import json
import re

import pytest

from chains.core import formats
from chains.core.lint import lint
from chains.models import Chain, Revision

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def store(text: str) -> Chain:
    chain = formats.load(text, format="yaml").chains[0]
    return Chain.objects.store(formats.to_document(chain), message="import").chain


@pytest.fixture
def small() -> Chain:
    return store(
        """
        id: small
        handles:
          - {id: search_id, minted_by: search}
          - {id: pick, minted_by: choose, derived_from: [search_id]}
        actions:
          - {id: search, effect: read, output: {handles: [search_id]}}
          - {id: choose, effect: select, input: {handles: [search_id]}, output: {handles: [pick]}}
        verdict_table:
          - {id: R1, signal: [http:410], verdict: "rewind(to: search)"}
          - {id: R2, signal: [http:409], verdict: dead_end}
        """
    )


def post_edit(client, chain: Chain, op: str, base: int = 1, htmx: bool = False, **fields):
    data = {"base": str(base), "op": op, **fields}
    return client.post(f"{chain.url()}edit", data, **(HTMX if htmx else {}))


def head(chain: Chain) -> dict:
    return chain.head().document


# --- what it shows --------------------------------------------------------------------


def test_the_workspace_draws_the_handle_graph_with_a_node_per_handle(client, flight):
    body = client.get(f"{flight.url()}").content.decode()
    assert "<svg" in body
    assert 'id="handle:search_token"' in body
    assert 'id="action:book_trip"' in body


# The flight's main line: its steps in chain order but the probe and the compensation
# steps, which hang off book_trip (fixtures/flight-roundtrip.yaml).
FLIGHT_MAIN_LINE = [
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


def test_the_flow_view_draws_the_steps_in_order(client, flight):
    body = client.get(f"{flight.url()}?view=flow").content.decode()
    assert 'id="flow&#45;graph"' in body  # Graphviz writes '-' as a character reference
    flows = re.findall(
        r'<g id="edge:flow:[^"]*" class="edge flow"[^>]*'
        r'data-source="([^"]*)" data-target="([^"]*)"',
        body,
    )
    then = dict(flows)
    assert len(then) == len(flows), f"a step is followed twice: {flows}"
    first = set(then) - set(then.values())
    assert len(first) == 1, f"the main line has no single start: {flows}"
    line = [first.pop()]
    while line[-1] in then and len(line) <= len(flows):
        line.append(then[line[-1]])
    assert line == FLIGHT_MAIN_LINE


def test_the_graph_has_the_layout_time_the_settings_give(client, flight, settings, layout_timeouts):
    settings.GRAPH_LAYOUT_SECONDS = 2
    client.get(f"{flight.url()}?view=flow&tab=gates")
    assert layout_timeouts == [2]


def test_a_graph_past_its_layout_time_leaves_the_page_with_its_tabs(client, flight, monkeypatch):
    from chains.core import dot

    def too_slow(source, timeout, *memory):
        raise dot.RenderError(f"Graphviz 'dot' took longer than {timeout:g}s")

    monkeypatch.setattr(dot, "lay_out", too_slow)
    response = client.get(f"{flight.url()}?view=flow&tab=handles")
    body = response.content.decode()
    assert response.status_code == 200
    assert "took longer than 4s. The tabs list every element." in body
    assert 'id="handle:search_token"' not in body
    assert "search_token" in body  # the Handles tab still lists it


# What only each tab shows of the flight chain (a tab's body, not the page around it).
TAB_CONTENT = {
    "actions": ['<ol class="steps" id="step-list">', "Search outbound itineraries"],
    "handles": ['<ul class="handles">', "minted by outbound_search"],
    "gates": ["<code>manual_cancel_review</code>", "<small>operator</small>"],
    "table": ['id="verdict-table"', 'data-row="F1"'],
    "coverage": ['id="coverage"', "stale: code:SEARCH_TOKEN_EXPIRED"],
    "policy": ["Max rewinds", "12m"],
    "evidence": ["No UNKNOWNs."],
    "history": ["r1 (head)", "<td>import</td>"],
}


def tab_body(client, chain: Chain, tab: str) -> str:
    response = client.get(f"{chain.url()}?tab={tab}")
    assert response.status_code == 200, tab
    body = response.content.decode()
    assert f'<div class="tab-body" id="tab-{tab}">' in body, tab
    return body.split(f'id="tab-{tab}">', 1)[1].split("</aside>", 1)[0]


def test_every_tab_has_content_of_its_own_listed_here():
    from chains.views.workspace import TABS

    assert sorted(TAB_CONTENT) == sorted(TABS)


@pytest.mark.parametrize("tab", sorted(TAB_CONTENT))
def test_every_tab_shows_its_own_content_and_no_other_tabs(client, flight, tab):
    body = tab_body(client, flight, tab)
    for marker in TAB_CONTENT[tab]:
        assert marker in body, (tab, marker)
    for other, markers in TAB_CONTENT.items():
        if other != tab:
            assert not [m for m in markers if m in body], (tab, other)


def test_selecting_a_handle_lists_its_cascade_and_marks_it_on_the_graph(client, flight):
    body = client.get(f"{flight.url()}?select=handle:search_token").content.decode()
    assert 'id="cascade-list"' in body
    assert "outbound_pick" in body.split('id="cascade-list"')[1].split("</ul>")[0]
    assert '<g id="handle:outbound_pick" class="node handle cascade"' in body
    assert '<g id="handle:search_token" class="node handle selected"' in body


def test_selecting_an_intent_field_shows_its_repair_scope(client, flight):
    body = client.get(f"{flight.url()}?select=intent:travellers").content.decode()
    assert "resumes at <code>initiate_hold</code>" in body
    assert '<g id="action:initiate_hold" class="node action effect&#45;mint selected"' in body
    assert '<g id="handle:hold_session" class="node handle repair&#45;scope"' in body


def test_selecting_an_edge_offers_to_remove_it_by_its_parts(client, small, template_context):
    page = client.get(f"{small.url()}?select=edge:derived_from:pick:search_id")
    args = {"kind": "derived_from", "source": "pick", "target": "search_id"}
    assert json.loads(page.context["element"]["edge_args"]) == args
    assert 'name="op" value="remove_edge"' in page.content.decode()


def test_a_selected_derived_from_edge_is_named_parent_to_child_as_drawn(
    client, small, template_context
):
    page = client.get(f"{small.url()}?select=edge:derived_from:pick:search_id")
    assert page.context["element"]["id"] == "search_id → pick"


def test_a_selected_edge_says_in_words_which_end_derives_from_which(client, small):
    page = client.get(f"{small.url()}?select=edge:derived_from:pick:search_id")
    assert '<p class="edge-says">pick derives from search_id.</p>' in page.content.decode()


def test_an_edge_between_ids_with_colons_is_read_by_the_ids_the_chain_has(client, template_context):
    chain = store(
        """
        id: colons
        handles:
          - {id: "ns:search_id", minted_by: "ns:search"}
        actions:
          - {id: "ns:search", effect: read, output: {handles: ["ns:search_id"]}}
        """
    )
    page = client.get(f"{chain.url()}?select=edge:mints:ns:search:ns:search_id")
    assert page.context["element"]["id"] == "ns:search → ns:search_id"


def test_the_graph_tells_the_script_each_elements_kind_and_id(client, small):
    body = client.get(f"{small.url()}").content.decode()
    assert 'data-key="handle:pick" data-kind="handle" data-name="pick"' in body
    assert 'data-edge-kind="derived_from" data-source="pick" data-target="search_id"' in body


def test_a_domain_row_links_to_its_row_key(client, small):
    body = client.get(f"{small.url()}?tab=table").content.decode()
    assert "?select=row%3AR1&amp;tab=table" in body


def test_an_htmx_request_gets_only_the_workspace_partial(client, flight):
    body = client.get(f"{flight.url()}", **HTMX).content.decode()
    assert body.lstrip().startswith('<div id="workspace"')
    assert "<html" not in body


def test_the_table_tab_shows_domain_rows_then_the_generic_rows_with_11_and_12_fixed(client, small):
    body = client.get(f"{small.url()}?tab=table").content.decode()
    assert body.index('data-row="R1"') < body.index('data-row="R2"') < body.index("#1<")
    assert body.count('class="generic-row fixed"') == 2


def test_the_coverage_tab_shows_which_row_decides_each_cell(client, flight):
    body = client.get(f"{flight.url()}?tab=coverage").content.decode()
    assert 'id="coverage"' in body
    assert "F17" in body


def test_user_text_is_escaped_in_the_page_and_the_graph(client):
    chain = store(
        """
        id: xss
        handles:
          - {id: tok, minted_by: a, description: "<script>alert(1)</script>"}
        actions:
          - {id: a, effect: read, description: "<img src=x onerror=alert(1)>",
             output: {handles: [tok]}}
        """
    )
    body = client.get(f"{chain.url()}?select=handle:tok").content.decode()
    assert "<script>alert(1)" not in body
    assert "<img src=x" not in body
    assert "&lt;script&gt;alert(1)" in body


# --- edits ----------------------------------------------------------------------------


def test_adding_a_handle_stores_a_new_revision_and_redirects_back(client, small):
    fields = {"form": "add-handle", "id": "quote", "minted_by": "choose"}
    response = post_edit(client, small, "add_handle", **fields)
    assert response.status_code == 302
    assert response["Location"] == f"{small.url()}"
    assert small.head().number == 2
    assert "quote" in [h["id"] for h in head(small)["handles"]]
    assert small.head().message == "add handle quote"


def test_an_htmx_edit_answers_with_the_workspace_showing_the_new_revision(client, small):
    response = post_edit(
        client,
        small,
        "add_handle",
        htmx=True,
        **{"form": "add-handle", "id": "quote", "select": "handle:quote"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-base="2"' in body
    assert "Saved revision 2" in body
    assert 'id="handle:quote"' in body


def test_adding_an_edge_with_json_args(client, small):
    args = {"kind": "consumes", "source": "search", "target": "pick"}
    post_edit(client, small, "add_edge", args=json.dumps(args))
    assert "pick" in head(small)["actions"][0]["input"]["handles"]


def test_updating_an_element_with_json_args_keeps_the_keys_it_does_not_name(client, small):
    fields = {"description": "The search result set.", "staleness": {"detect": ["http:410"]}}
    args = json.dumps({"id": "search_id", "fields": fields})
    post_edit(client, small, "update_handle", args=args)
    handle = head(small)["handles"][0]
    assert handle["description"] == "The search result set."
    assert handle["staleness"]["detect"] == ["http:410"]


def test_a_row_is_added_with_the_verdict_builder(client, small):
    post_edit(
        client,
        small,
        "add_row",
        **{
            "form": "add-row",
            "id": "R3",
            "signal": "code:SOLD_OUT",
            "scope__steps": ["choose"],
            "verdict_type": "reselect",
            "verdict_to": "choose",
        },
    )
    row = head(small)["verdict_table"][-1]
    assert row["id"] == "R3"
    assert row["verdict"] == "reselect(to: choose)"
    assert row["scope"]["steps"] == ["choose"]


def test_moving_a_row_reorders_the_table(client, small):
    post_edit(client, small, "move_row", args='{"id": "R2", "index": 0}')
    assert [r["id"] for r in head(small)["verdict_table"]] == ["R2", "R1"]


def test_a_quick_fix_posted_from_the_lint_panel_removes_its_finding(client, flight):
    document = head(flight)
    for handle in document["handles"]:
        if handle["id"] == "hold_session":
            handle["derived_from"].remove("seatmap_ref")
    Chain.objects.store(document, "drop an edge", team=flight.team)
    body = client.get(f"{flight.url()}").content.decode()
    assert 'data-rule="edges.missing-derivation"' in body
    fix = body.split('data-rule="edges.missing-derivation"')[1].split('name="args" value="')[1]
    args = fix.split('"')[0].replace("&quot;", '"')
    post_edit(client, flight, "add_edge", base=2, args=args)
    after = client.get(f"{flight.url()}").content.decode()
    assert 'data-rule="edges.missing-derivation"' not in after


@pytest.fixture
def open_gates() -> Chain:
    """Six gates without a timeout: six findings, each with a quick fix."""
    gates = "\n".join(
        f"  - {{id: g{i}, audience: user, outcomes: {{yes: ok, no: dead_end}}}}" for i in range(6)
    )
    return store(f"id: gates\nactions:\n  - {{id: ask, effect: read}}\ngates:\n{gates}\n")


def gate_row(body: str, gate: str) -> str:
    """The lint panel's row of the missing-timeout finding of ``gate``."""
    row = f'data-rule="gates.no-timeout" data-element="gates[{gate}]"'
    return body.split(row)[1].split("</tr>")[0]


def test_the_first_findings_show_their_quick_fixes_and_the_rest_a_link_to_them(
    client, open_gates, settings
):
    settings.WORKSPACE_EAGER_FIXES = 2
    body = client.get(f"{open_gates.url()}").content.decode()
    assert 'name="op" value="update_gate"' in gate_row(body, "g0")
    later = gate_row(body, "g5")
    assert 'name="op"' not in later
    assert "Quick fixes" in later
    assert f"{open_gates.url()}fixes?" in later


def test_a_large_chain_gets_fewer_quick_fixes_up_front(client, open_gates, settings):
    settings.WORKSPACE_FIX_BUDGET_BYTES = 1  # less than the document: none tried up front
    body = client.get(f"{open_gates.url()}").content.decode()
    assert 'name="op"' not in gate_row(body, "g0")
    assert "Quick fixes" in gate_row(body, "g0")


def test_the_lint_panel_lists_the_first_findings_and_says_how_many_more_there_are(
    client, open_gates, settings
):
    settings.WORKSPACE_FINDINGS_SHOWN = 2
    body = client.get(f"{open_gates.url()}").content.decode()
    panel = body.split('id="lint-panel"')[1].split("</section>")[0]
    total = len(lint(formats.from_document(head(open_gates))).findings)
    assert panel.count("data-rule=") == 2
    assert f"{total} findings" in panel
    assert f"{total - 2} more" in panel


def fixes_on_demand(client, chain, gate: str) -> str:
    """The quick fixes of ``gate``'s finding, loaded as the lint panel's link loads them."""
    body = client.get(f"{chain.url()}").content.decode()
    url = gate_row(body, gate).split('hx-get="')[1].split('"')[0].replace("&amp;", "&")
    return client.get(url, **HTMX).content.decode()


def first_fix_args(answer: str) -> str:
    """The JSON arguments of the first quick fix in ``answer``."""
    return answer.split('name="args" value="')[1].split('"')[0].replace("&quot;", '"')


def test_a_chain_too_large_to_draw_says_so_instead_of_a_graph(client, open_gates, settings):
    settings.WORKSPACE_GRAPH_MAX_NODES = 3
    body = client.get(f"{open_gates.url()}").content.decode()
    canvas = body.split('id="canvas"')[1].split('id="overview"')[0]  # the toolbar's icons aside
    assert "<svg" not in canvas
    assert "the graph is drawn up to 3" in body


def test_the_quick_fixes_of_one_finding_load_on_demand_and_only_for_it(
    client, open_gates, settings
):
    settings.WORKSPACE_EAGER_FIXES = 0
    answer = fixes_on_demand(client, open_gates, "g5")
    assert answer.count('name="op" value="update_gate"') == 1
    # by the gate the fixes name, not by a bare "g4" that a random token may also hold
    named = set(re.findall(r"\bgate (g\d)\b", answer))
    assert named == {"g5"}
    assert json.loads(first_fix_args(answer))["id"] == "g5"


def test_a_quick_fix_loaded_on_demand_removes_its_finding_when_posted(client, open_gates, settings):
    settings.WORKSPACE_EAGER_FIXES = 0
    args = first_fix_args(fixes_on_demand(client, open_gates, "g3"))
    post_edit(client, open_gates, "update_gate", args=args)
    after = client.get(f"{open_gates.url()}").content.decode()
    assert 'data-rule="gates.no-timeout" data-element="gates[g3]"' not in after
    assert 'data-rule="gates.no-timeout" data-element="gates[g4]"' in after


def test_without_htmx_the_quick_fixes_link_opens_the_workspace_with_them_shown(
    client, open_gates, settings
):
    settings.WORKSPACE_EAGER_FIXES = 0
    body = client.get(f"{open_gates.url()}").content.decode()
    href = re.search(r'href="(\?fixes=[^"]*)"', gate_row(body, "g2"))[1].replace("&amp;", "&")
    page = client.get(f"{open_gates.url()}{href}").content.decode()
    assert 'name="op" value="update_gate"' in gate_row(page, "g2")
    assert 'name="op"' not in gate_row(page, "g1")


def test_quick_fixes_of_an_unknown_finding_are_a_400_naming_it(client, open_gates):
    answer = client.get(f"{open_gates.url()}fixes?finding=99&revision=1", **HTMX)
    assert answer.status_code == 400
    assert "finding" in answer.content.decode()


def test_an_outsider_cannot_load_the_quick_fixes_of_a_chain(signed_in, people, flight):
    url = f"{flight.url()}fixes?finding=0&revision=1"
    answer = signed_in(people["outsider"]).get(url, **HTMX)
    assert answer.status_code == 404


def test_undo_and_redo_walk_the_history_as_new_revisions(client, small):
    post_edit(client, small, "delete_row", args='{"id": "R2"}')
    client.post(f"{small.url()}undo", {"base": "2"})
    assert [r["id"] for r in head(small)["verdict_table"]] == ["R1", "R2"]
    client.post(f"{small.url()}redo", {"base": "3"})
    assert [r["id"] for r in head(small)["verdict_table"]] == ["R1"]
    assert small.head().number == 4


# --- refusals -------------------------------------------------------------------------


def test_an_edit_on_a_stale_base_is_refused_with_409_and_changes_nothing(client, small):
    post_edit(client, small, "add_handle", args='{"id": "theirs"}')
    response = post_edit(client, small, "add_handle", base=1, htmx=True, args='{"id": "mine"}')
    body = response.content.decode()
    assert response.status_code == 409
    assert "based on revision 1" in body and "Reload revision 2" in body
    assert [h["id"] for h in head(small)["handles"]][-1] == "theirs"
    assert Revision.objects.filter(chain=small).count() == 2


def test_an_edit_naming_an_unknown_element_is_a_400_naming_it(client, small):
    response = post_edit(client, small, "delete_handle", args='{"id": "nope"}')
    assert response.status_code == 400
    assert "nope" in response.content.decode()
    assert small.head().number == 1


@pytest.mark.parametrize(
    "fields, says",
    [
        ({"op": "fly"}, "fly"),
        ({"op": "add_edge", "args": "{not json"}, "args: not valid JSON"),
        ({"op": "add_edge", "args": "[1, 2]"}, "expected a JSON object"),
        (
            {"op": "update_handle", "form": "element-yaml", "target": "pick", "fields": "a: [1"},
            "not valid YAML",
        ),
        (
            {"op": "add_row", "form": "add-row", "id": "R9", "verdict_type": "rewind"},
            "needs a target",
        ),
        ({"op": "add_handle", "args": '{"id": "x"}', "base": "latest"}, "base"),
        ({"op": "add_edge", "args": "[" * 5000 + "]" * 5000}, "nesting deeper"),
        (
            {
                "op": "update_handle",
                "form": "element-yaml",
                "target": "pick",
                "fields": "a: " + "[" * 5000,
            },
            "YAML",
        ),
        (
            {
                "op": "update_chain",
                "form": "settings-yaml",
                "fields": "a: &a [x, x]\n"
                + "".join(
                    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}]\n"
                    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
                ),
            },
            "alias",
        ),
    ],
)
def test_malformed_edits_are_400s_that_say_what_is_wrong(client, small, fields, says):
    data = {"base": "1", **fields}
    response = client.post(f"{small.url()}edit", data)
    assert response.status_code == 400
    assert says in response.content.decode()
    assert small.head().number == 1


def test_undo_at_the_first_revision_is_a_400(client, small):
    response = client.post(f"{small.url()}undo", {"base": "1"})
    assert response.status_code == 400
    assert "nothing to undo" in response.content.decode()


def test_edits_and_undo_accept_only_post(client, small):
    assert client.get(f"{small.url()}edit").status_code == 405
    assert client.get(f"{small.url()}undo").status_code == 405


def test_editing_an_unknown_chain_is_not_found(client):
    assert client.post("/chains/nope/edit", {"base": "1", "op": "add_handle"}).status_code == 404


# --- diff -----------------------------------------------------------------------------


def test_the_diff_page_lists_what_changed_and_marks_it_on_the_graph(client, small):
    post_edit(client, small, "add_handle", form="add-handle", id="quote", minted_by="choose")
    body = client.get(f"{small.url()}diff").content.decode()
    assert "Revision 1 → 2" in body
    assert 'class="change change-added"' in body and "quote" in body
    assert "added" in body.split('id="handle:quote"')[1].split(">")[0]


def test_a_diff_of_a_revision_that_does_not_exist_is_not_found(client, small):
    assert client.get(f"{small.url()}diff?to=9").status_code == 404
    assert client.get(f"{small.url()}diff?to=x").status_code == 404


def test_chain_settings_are_edited_as_yaml_but_the_id_cannot_change(client, small):
    post_edit(client, small, "update_chain", form="settings-yaml", fields="title: Small one")
    assert head(small)["title"] == "Small one"
    response = post_edit(client, small, "update_chain", 2, form="settings-yaml", fields="id: other")
    assert response.status_code == 400
    assert not Chain.objects.filter(key="other").exists()


def test_a_refused_element_edit_keeps_what_was_typed_and_says_why_beside_it(client, small):
    typed = "description: my long careful text\nstaleness: {detect: 7}"
    response = post_edit(
        client,
        small,
        "update_handle",
        htmx=True,
        **{"form": "element-yaml", "target": "search_id", "fields": typed},
        select="handle:search_id",
    )
    body = response.content.decode()
    assert response.status_code == 400
    assert "my long careful text" in body.split('id="element-yaml"')[1].split("</textarea>")[0]
    assert 'class="field-error"' in body
    assert small.head().number == 1


def test_a_row_can_be_scoped_to_consumers_flagged_fragile_and_given_evidence(client, small):
    post_edit(
        client,
        small,
        "add_row",
        **{
            "form": "add-row",
            "id": "R3",
            "signal": "code:GONE",
            "scope__consumers_of": ["search_id"],
            "fragile": "on",
            "source__tag": "documented",
            "source__urls": "https://docs.example.com/errors",
            "verdict_type": "rewind",
            "verdict_to": "search",
        },
    )
    row = head(small)["verdict_table"][-1]
    assert row["scope"] == {"consumers_of": ["search_id"]}
    assert row["fragile"] == "prose-match"
    assert row["source"] == {"tag": "documented", "urls": ["https://docs.example.com/errors"]}


def form_fields(body: str, form_id: str) -> dict[str, list[str]]:
    """The name/value pairs a browser would post from a form (selected options, checked boxes)."""
    import html
    import re

    form = body.split(f'id="{form_id}"')[1].split("</form>")[0]
    fields: dict[str, list[str]] = {}
    for tag in re.findall(r"<(?:input|textarea|select)[^>]*>(?:[^<]*</textarea>)?", form):
        name = re.search(r'name="([^"]+)"', tag)
        if not name or ('type="checkbox"' in tag and "checked" not in tag):
            continue
        if 'type="checkbox"' in tag and "value=" not in tag:
            fields.setdefault(name.group(1), []).append("on")  # as a browser posts a tick
            continue
        if tag.startswith("<select"):
            continue
        value = re.search(r'value="([^"]*)"', tag)
        text = (
            tag.split(">", 1)[1].rsplit("</textarea>", 1)[0]
            if tag.startswith("<textarea")
            else None
        )
        fields.setdefault(name.group(1), []).append(
            html.unescape(text if text is not None else value.group(1) if value else "")
        )
    for name, options in re.findall(r'<select name="([^"]+)"[^>]*>(.*?)</select>', form, re.S):
        chosen = re.findall(r'<option value="([^"]*)" selected>', options)
        fields.setdefault(name, []).extend(chosen)
    return fields


def test_the_common_fields_form_of_a_handle_shows_and_saves_its_values(client, small):
    body = client.get(f"{small.url()}?select=handle:pick").content.decode()
    fields = form_fields(body, "element-fields")
    assert fields["minted_by"] == ["choose"]
    assert fields["derived_from"] == ["search_id"]
    del fields["derived_from"]  # deselect every parent
    fields["description"] = ["The chosen result."]
    fields["single_use"] = ["on"]  # the box ticked
    response = client.post(f"{small.url()}edit", fields)
    assert response.status_code == 302
    pick = next(h for h in head(small)["handles"] if h["id"] == "pick")
    assert pick.get("derived_from", []) == []
    assert pick["description"] == "The chosen result."
    assert pick["single_use"] is True


def test_clearing_a_field_in_the_common_form_removes_it(client, small):
    body = client.get(f"{small.url()}?select=action:search").content.decode()
    fields = form_fields(body, "element-fields")
    fields["timeout"] = ["30s"]
    client.post(f"{small.url()}edit", fields)
    assert head(small)["actions"][0]["timeout"] == "30s"
    body = client.get(f"{small.url()}?select=action:search").content.decode()
    fields = form_fields(body, "element-fields")
    assert fields["timeout"] == ["30s"]
    fields["timeout"] = [""]
    client.post(f"{small.url()}edit", fields)
    assert "timeout" not in head(small)["actions"][0]


def test_a_row_is_edited_from_its_common_fields(client, small):
    body = client.get(f"{small.url()}?select=row:R2&tab=table").content.decode()
    fields = form_fields(body, "element-fields")
    assert fields["verdict_type"] == ["dead_end"]
    fields.update(verdict_type=["rewind"], verdict_to=["search"])
    assert client.post(f"{small.url()}edit", fields).status_code == 302
    assert head(small)["verdict_table"][1]["verdict"] == "rewind(to: search)"


def test_the_saved_note_offers_to_undo_what_was_just_saved(client, small):
    response = client.post(
        f"{small.url()}edit",
        {"op": "delete_row", "args": '{"id": "R2"}', "base": 1},
        HTTP_HX_REQUEST="true",
    )
    note = response.content.decode().split('id="saved-note"')[1].split("</p>")[0]
    assert 'id="undo-saved"' in note and f'hx-post="{small.url()}undo"' in note


def test_deleting_a_handle_asks_naming_the_edges_that_go_with_it(client, flight):
    body = client.get(f"{flight.url()}?select=handle:quote_id").content.decode()
    form = body.split('id="delete-selection"')[0].rsplit("<form", 1)[1]
    assert 'hx-confirm="Delete handle quote_id? It is also taken out of ' in form
    assert "handles[seatmap_ref].derived_from" in form
