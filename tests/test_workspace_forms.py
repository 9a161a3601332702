"""The workspace's structured forms: each stores what it shows; a refusal keeps what was typed.

The posts below carry the field names the templates render (a test reads
them off the page where the name is built from a row number), so what is
tested is what a browser without JavaScript sends.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings

from chains.core import formats
from chains.models import Chain, Team

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
SENT = {"csrfmiddlewaretoken", "form", "op", "base"}  # what post() sends itself

HOTEL = """
id: hotel
handles:
  - {id: search_id, minted_by: search}
  - {id: room_pick, minted_by: pick_room, derived_from: [search_id]}
  - {id: quote_token, minted_by: quote, derived_from: [room_pick]}
actions:
  - {id: search, effect: read, output: {handles: [search_id]}}
  - {id: pick_room, effect: select, input: {handles: [search_id]}, output: {handles: [room_pick]}}
  - {id: quote, effect: mint, input: {handles: [room_pick]}, output: {handles: [quote_token]}}
  - id: reserve
    effect: commit
    input: {handles: [quote_token]}
    compensation: {action: cancel_reservation, ordering_note: before the refund}
    notes: [stale quick-fix note]
  - {id: find_by_label, effect: read}
  - {id: cancel_reservation, effect: compensate}
gates:
  - id: book_consent
    audience: user
    source: {tag: documented, urls: ["https://example.com/consent"]}
    outcomes: {accept: ok}
"""


@pytest.fixture
def hotel(team: Team) -> Chain:
    chain = formats.load(HOTEL, format="yaml").chains[0]
    return Chain.objects.store(formats.to_document(chain), "import", team=team).chain


@pytest.fixture
def editor(people, signed_in):
    return signed_in(people["editor"])


def post(client, chain: Chain, form: str, op: str, **fields):
    data = {"base": str(chain.head().number), "op": op, "form": form, **fields}
    return client.post(f"{chain.url()}edit", data, **HTMX)


def rows(prefix: str, total: int, stored: int = 0) -> dict[str, str]:
    """The management fields of a formset posted by hand: how many rows, how many stored."""
    return {f"{prefix}-TOTAL_FORMS": str(total), f"{prefix}-INITIAL_FORMS": str(stored)}


POLICY_ROWS = {**rows("per_chain__compensation_order", 1), **rows("escalation", 1)}


def element(chain: Chain, section: str, ident: str) -> dict:
    return next(e for e in chain.head().document.get(section, []) if e["id"] == ident)


class _Form(HTMLParser):
    """What a browser posts from one form: inputs, ticked boxes, chosen options, textareas."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.fields = form_id, False, []
        self.select: str | None = None
        self.first: tuple[str, str] | None = None
        self.chosen = False
        self.option: dict | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag == "input" and a.get("name"):
            if a.get("type") == "checkbox" and "checked" in a:
                self.fields.append((a["name"], a.get("value") or "on"))  # as a browser posts it
            elif a.get("type") != "checkbox":
                self.fields.append((a["name"], a.get("value") or ""))
        elif tag == "select":
            self.select, self.first, self.chosen = a["name"], None, False
        elif tag == "option" and self.select:
            self.option = a
        elif tag == "textarea":
            self.textarea = a["name"]
            self.fields.append((a["name"], ""))

    def handle_data(self, data):
        if self.option is not None:
            value = self.option.get("value", data.strip())
            if self.first is None:
                self.first = (self.select, value)
            if "selected" in self.option:
                self.fields.append((self.select, value))
                self.chosen = True
            self.option = None
        elif self.textarea:
            self.fields[-1] = (self.textarea, data.removeprefix("\n"))  # as a browser reads it

    def handle_endtag(self, tag):
        if tag == "select" and self.select:
            if not self.chosen and self.first and self.option is None:
                pass  # a multi-select with nothing chosen posts nothing
            self.select = None
        elif tag == "textarea":
            self.textarea = None
        elif tag == "form":
            self.inside = False


def browser_post(body: str, form_id: str) -> dict[str, list[str]]:
    """The fields a browser would post from ``form_id`` (less what post() sends itself)."""
    parser = _Form(form_id)
    parser.feed(body)
    posted: dict[str, list[str]] = {}
    for name, value in parser.fields:
        if name not in SENT:
            posted.setdefault(name, []).append(value)
    return posted


def fields_of(body: str, form_id: str) -> dict[str, str]:
    """Every field of one form with its last value (the one Django reads)."""
    return {name: values[-1] for name, values in browser_post(body, form_id).items()}


# --- gates ----------------------------------------------------------------------------


def test_the_add_gate_form_stores_a_gate_with_its_outcomes_and_timeout(editor, hotel):
    response = post(
        editor,
        hotel,
        "add-gate",
        "add_gate",
        **{
            "id": "pay_consent",
            "audience": "user",
            **rows("outcomes", 3),
            "outcomes-0-name": "accept",
            "outcomes-0-verdict": "ok",
            "outcomes-0-bind": "room_pick",
            "outcomes-1-name": "decline",
            "outcomes-1-verdict": "dead_end",
            "outcomes-2-name": "",
            "outcomes-2-verdict": "",
            "timeout__after": "10m",
            "timeout__outcome": "decline",
            "timeout__verdict": "",
            "payload_expiry__field": "",
            "payload_expiry__verdict": "",
            "description": "",
        },
    )
    assert response.status_code == 200
    assert element(hotel, "gates", "pay_consent") == {
        "id": "pay_consent",
        "audience": "user",
        "outcomes": {
            "accept": {"bind": ["room_pick"], "verdict": "ok"},
            "decline": {"verdict": "dead_end"},
        },
        "timeout": {"after": "10m", "outcome": "decline"},
    }


def test_the_adders_offer_a_gate_form(editor, hotel):
    body = editor.get(hotel.url()).content.decode()
    assert 'id="add-gate-form"' in body
    assert '<input type="hidden" name="op" value="add_gate">' in body


def test_the_gate_form_edits_an_outcome_and_keeps_the_evidence_it_does_not_show(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=gate:book_consent").content.decode()
    shown = fields_of(body, "element-fields")
    assert shown["outcomes-0-name"] == "accept"
    posted = browser_post(body, "element-fields")
    posted.update({"outcomes-0-verdict": "rewind(to: quote)", "timeout__after": "5m"})
    response = post(editor, hotel, "element-form", "update_gate", **posted)
    assert response.status_code == 200
    gate = element(hotel, "gates", "book_consent")
    assert gate["outcomes"] == {"accept": {"verdict": "rewind(to: quote)"}}
    assert gate["timeout"] == {"after": "5m"}
    assert gate["source"]["tag"] == "documented"


def test_a_refused_gate_save_shows_what_was_typed_and_the_error_beside_it(editor, hotel):
    response = post(
        editor,
        hotel,
        "add-gate",
        "add_gate",
        **{
            "id": "pay_consent",
            "audience": "user",
            **rows("outcomes", 1),
            "outcomes-0-name": "accept",
            "outcomes-0-verdict": "rewind(to:",
            "description": "typed by hand",
        },
    )
    assert response.status_code == 400
    body = response.content.decode()
    form = body.split('id="add-gate-form"')[1].split("</form>")[0]
    assert 'value="pay_consent"' in form
    assert 'value="rewind(to:"' in form
    assert "typed by hand" in form
    assert 'class="field-error"' in form.split('value="rewind(to:"')[1].split("</div>")[0]
    assert '<details class="add-gate" id="add-gate" open>' in body
    assert element_ids(hotel, "gates") == ["book_consent"]


def element_ids(chain: Chain, section: str) -> list[str]:
    return [e["id"] for e in chain.head().document.get(section, [])]


def test_a_viewer_cannot_add_a_gate(people, signed_in, hotel):
    response = post(
        signed_in(people["viewer"]),
        hotel,
        "add-gate",
        "add_gate",
        **{"id": "g", "audience": "user"},
    )
    assert response.status_code == 403
    assert element_ids(hotel, "gates") == ["book_consent"]


# --- actions --------------------------------------------------------------------------


def action_form(editor, chain: Chain, action: str) -> dict:
    body = editor.get(f"{chain.url()}?select=action:{action}").content.decode()
    return browser_post(body, "element-fields")


def test_the_action_form_sets_idempotency_confirmation_and_an_intent_field(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted.update(
        {
            "idempotency__mode": "none",
            "confirmation__probe": "find_by_label",
            "input__intent-0-name": "guest_name",
            "input__intent-0-required": "true",
            "timeout": "30s",
        }
    )
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    reserve = element(hotel, "actions", "reserve")
    assert reserve["idempotency"] == {"mode": "none"}
    assert reserve["confirmation"] == {"probe": "find_by_label"}
    assert reserve["input"]["intent"] == {"guest_name": {}}
    assert reserve["input"]["handles"] == ["quote_token"]
    assert reserve["timeout"] == "30s"


def test_the_action_form_keeps_the_compensation_keys_it_does_not_change(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    assert posted["compensation__ordering_note"] == ["before the refund"]
    posted["compensation__window"] = "until check-in"
    post(editor, hotel, "element-form", "update_action", **posted)
    assert element(hotel, "actions", "reserve")["compensation"] == {
        "action": "cancel_reservation",
        "window": "until check-in",
        "ordering_note": "before the refund",
    }


def test_an_empty_section_removes_it_from_the_action(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted.update({"compensation__ordering_note": ""})
    posted["compensation__action"] = ""
    post(editor, hotel, "element-form", "update_action", **posted)
    assert "compensation" not in element(hotel, "actions", "reserve")


def test_a_precondition_row_is_added_from_the_blank_row(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted.update(
        {
            "preconditions-0-when": "price changed",
            "preconditions-0-verdict": "gate(book_consent)",
        }
    )
    post(editor, hotel, "element-form", "update_action", **posted)
    assert element(hotel, "actions", "reserve")["preconditions"] == [
        {"when": "price changed", "verdict": "gate(book_consent)"}
    ]


def test_choosing_an_output_handle_on_the_action_moves_its_minter(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["output__handles"] = ["", "quote_token"]
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    assert element(hotel, "handles", "quote_token")["minted_by"] == "reserve"


def test_a_refused_action_save_shows_what_was_typed_and_the_error_beside_the_field(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted.update({"idempotency__key_scope": "run", "timeout": "45s"})
    response = post(editor, hotel, "element-form", "update_action", **posted)
    assert response.status_code == 400
    body = response.content.decode()
    form = body.split('id="element-fields"')[1].split("</form>")[0]
    assert 'value="45s"' in form
    assert '<option value="run" selected>run</option>' in form
    section = form.split('id="idempotency-fields"')[1].split("</fieldset>")[0]
    assert 'class="field-error"' in section and "mode" in section
    assert "idempotency" not in element(hotel, "actions", "reserve")


def test_a_viewer_cannot_save_the_action_form(people, signed_in, editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["timeout"] = "1s"
    response = post(signed_in(people["viewer"]), hotel, "element-form", "update_action", **posted)
    assert response.status_code == 403
    assert "timeout" not in element(hotel, "actions", "reserve")


# --- handles --------------------------------------------------------------------------


def test_the_handle_form_sets_staleness_and_rematch(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=handle:quote_token").content.decode()
    posted = browser_post(body, "element-fields")
    posted.update(
        {
            "staleness__detect": "http:410, code:QUOTE_EXPIRED",
            "staleness__ttl_hint": "15m",
            "single_use": "true",
            "rematch__key": "room_type",
        }
    )
    assert post(editor, hotel, "element-form", "update_handle", **posted).status_code == 200
    handle = element(hotel, "handles", "quote_token")
    assert handle["staleness"] == {"detect": ["http:410", "code:QUOTE_EXPIRED"], "ttl_hint": "15m"}
    assert handle["rematch"] == {"key": ["room_type"]}
    assert handle["single_use"] is True


def test_a_refused_handle_save_keeps_the_typed_staleness(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=handle:quote_token").content.decode()
    posted = browser_post(body, "element-fields")
    posted.update({"staleness__detect": "http:410", "minted_by": "nobody"})
    response = post(editor, hotel, "element-form", "update_handle", **posted)
    assert response.status_code == 400
    form = response.content.decode().split('id="element-fields"')[1].split("</form>")[0]
    assert 'value="http:410"' in form
    assert "Not saved:" in form


# --- policy and variants ------------------------------------------------------------------


def test_the_policy_form_sets_the_budgets(editor, hotel):
    fields = {
        "per_chain__max_rewinds": "3",
        "per_chain__max_repairs": "2",
        "per_chain__wall_clock": "30m",
        "per_chain__gate_timeout": "",
        **POLICY_ROWS,
        "per_step__read__attempts": "",
        "per_step__commit__unkeyed__attempts": "1",
    }
    assert (
        post(editor, hotel, "policy-form", "update_policy", tab="policy", **fields).status_code
        == 200
    )
    assert hotel.head().document["policy"] == {
        "per_step": {"commit": {"unkeyed": {"attempts": 1}}},
        "per_chain": {"max_rewinds": 3, "max_repairs": 2, "wall_clock": "30m"},
    }


def test_a_refused_budget_shows_the_typed_number_beside_its_field(editor, hotel):
    fields = {"per_chain__max_rewinds": "three", "per_chain__wall_clock": "30m", **POLICY_ROWS}
    response = post(editor, hotel, "policy-form", "update_policy", tab="policy", **fields)
    assert response.status_code == 400
    form = response.content.decode().split('id="policy-form"')[1].split("</form>")[0]
    assert 'value="three"' in form
    assert 'value="30m"' in form
    rewinds = form.split('name="per_chain__max_rewinds"')[1].split("<label>")[0]
    assert "expected a whole number" in rewinds


def test_the_variants_form_sets_the_axis_and_values(editor, hotel):
    fields = {
        "variants__axis": "rail",
        "variants__values": "NDC, EDIFACT",
    }
    assert (
        post(editor, hotel, "variants-form", "update_chain", tab="policy", **fields).status_code
        == 200
    )
    assert hotel.head().document["variants"] == {"axis": "rail", "values": ["NDC", "EDIFACT"]}


def test_a_viewer_cannot_save_the_policy_form(people, signed_in, hotel):
    fields = {"per_chain__max_rewinds": "3"}
    response = post(signed_in(people["viewer"]), hotel, "policy-form", "update_policy", **fields)
    assert response.status_code == 403


# --- pickers, adders, the YAML editor, the verdict builder -----------------------------------


def test_the_pickers_offer_the_ids_that_exist(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=action:reserve").content.decode()
    probe = body.split('name="confirmation__probe"')[1].split("</select>")[0]
    assert '<option value="find_by_label">find_by_label</option>' in probe
    assert '<option value="reserve">' not in probe
    assert "<option>rewind(to: quote)</option>" in body.split('id="verdict-choices"')[1]
    assert "<option>gate(book_consent)</option>" in body.split('id="verdict-choices"')[1]


def test_the_adder_stays_open_after_an_add_with_the_cursor_in_its_id_box(editor, hotel):
    response = post(
        editor,
        hotel,
        "add-action",
        "add_action",
        adding="action",
        **{"id": "refund", "effect": "compensate"},
    )
    body = response.content.decode()
    assert '<details class="adders" id="adders" open>' in body
    assert re.search(r'<label>Action id <input type="text" name="id"[^>]* autofocus', body)


def test_a_plain_post_from_an_adder_comes_back_to_the_open_adder(editor, hotel):
    data = {
        "base": "1",
        "op": "add_action",
        "form": "add-action",
        "adding": "action",
        "id": "refund",
        "effect": "read",
    }
    response = editor.post(f"{hotel.url()}edit", data)
    assert response.status_code == 302
    assert "adding=action" in response["Location"]
    assert (
        '<details class="adders" id="adders" open>'
        in editor.get(response["Location"]).content.decode()
    )


def test_the_yaml_editor_removes_a_key_deleted_there(editor, hotel):
    fields = {"target": "reserve", "fields": "id: reserve\neffect: commit\n"}
    assert post(editor, hotel, "element-yaml", "update_action", **fields).status_code == 200
    assert element(hotel, "actions", "reserve") == {"id": "reserve", "effect": "commit"}


def test_a_refused_verdict_builder_add_keeps_every_typed_field(editor, hotel):
    fields = {
        "id": "R9",
        "signal": "code:QUOTE_EXPIRED, http:410",
        "scope__steps": ["reserve"],
        "verdict_type": "rewind",
        "verdict_to": "",
    }
    response = post(editor, hotel, "add-row", "add_row", tab="table", **fields)
    assert response.status_code == 400
    form = response.content.decode().split('id="add-row-form"')[1].split("</form>")[0]
    assert 'value="R9"' in form
    assert 'value="code:QUOTE_EXPIRED, http:410"' in form
    assert '<option value="reserve" selected>reserve</option>' in form
    assert '<option value="rewind" selected>rewind</option>' in form
    assert 'class="field-error"' in form.split('name="verdict_type"')[1].split("<label>")[0]


def test_the_add_row_form_reads_its_signals_comma_separated(editor, hotel):
    fields = {"id": "R9", "signal": "timeout, http:504"}
    fields["verdict_type"] = "reconcile"
    assert post(editor, hotel, "add-row", "add_row", tab="table", **fields).status_code == 200
    row = hotel.head().document["verdict_table"][0]
    assert row == {"id": "R9", "signal": ["timeout", "http:504"], "verdict": "reconcile"}


def form_in(response, form_id: str) -> str:
    return response.content.decode().split(f'id="{form_id}"')[1].split("</form>")[0]


def test_a_refused_add_action_keeps_the_typed_id_in_the_open_adder(editor, hotel):
    fields = {"id": "quote", "effect": "mint"}
    response = post(editor, hotel, "add-action", "add_action", adding="action", **fields)
    assert response.status_code == 400
    form = form_in(response, "add-action-form")
    assert 'value="quote"' in form and '<option value="mint" selected>mint</option>' in form
    assert "already exists" in form.split('class="field-error"')[1]
    assert '<details class="adders" id="adders" open>' in response.content.decode()


def test_a_refused_add_handle_keeps_the_typed_id_and_minter(editor, hotel):
    fields = {"id": "search_id", "minted_by": "quote", "single_use": "on"}
    response = post(editor, hotel, "add-handle", "add_handle", adding="handle", **fields)
    assert response.status_code == 400
    form = form_in(response, "add-handle-form")
    assert 'value="search_id"' in form and '<option value="quote" selected>quote</option>' in form
    checked = r'<input[^>]*name="single_use"[^>]*id="add-handle-single_use"[^>]*checked'
    assert re.search(checked, form)
    assert "already exists" in form


def test_a_refused_gate_edit_shows_the_error_beside_the_timeout(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=gate:book_consent").content.decode()
    posted = browser_post(body, "element-fields")
    posted["timeout__outcome"] = "accept"  # a timeout needs its "after"
    response = post(editor, hotel, "element-form", "update_gate", **posted)
    assert response.status_code == 400
    timeout = form_in(response, "element-fields").split("<legend>Timeout</legend>")[1]
    timeout = timeout.split("</fieldset>")[0]
    assert 'value="accept"' in timeout
    assert 'class="field-error"' in timeout
    assert "timeout" not in element(hotel, "gates", "book_consent")


def test_a_refused_row_edit_keeps_the_chosen_verdict_with_the_reason_beside_it(editor, hotel):
    row = {"id": "R1", "signal": "x", "verdict_type": "retry"}
    assert post(editor, hotel, "add-row", "add_row", **row).status_code == 200
    body = editor.get(f"{hotel.url()}?select=row:R1&tab=table").content.decode()
    posted = browser_post(body, "element-fields")
    posted["verdict_type"] = "rewind"  # and no step to rewind to
    response = post(editor, hotel, "element-form", "update_row", **posted)
    assert response.status_code == 400
    form = form_in(response, "element-fields")
    assert '<option value="rewind" selected>' in form
    assert "needs a target step" in beside(form, "verdict_type")
    assert element(hotel, "verdict_table", "R1")["verdict"] == "retry"


def test_a_refused_variants_save_keeps_the_typed_values(editor, hotel):
    fields = {"variants__values": "NDC, EDIFACT"}
    response = post(editor, hotel, "variants-form", "update_chain", tab="policy", **fields)
    assert response.status_code == 400
    form = form_in(response, "variants-form")
    assert 'value="NDC, EDIFACT"' in form
    assert 'class="field-error"' in form.split("<legend>")[1]
    assert "variants" not in hotel.head().document


def test_the_gate_panel_deletes_an_unused_gate(editor, hotel):
    response = post(editor, hotel, "", "delete_gate", args='{"id": "book_consent"}')
    assert response.status_code == 200
    assert element_ids(hotel, "gates") == []


def test_deleting_a_gate_still_used_names_the_place(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["entry_gate"] = "book_consent"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    response = post(editor, hotel, "", "delete_gate", args='{"id": "book_consent"}')
    assert response.status_code == 400
    assert "actions[reserve].entry_gate" in response.content.decode()
    assert element_ids(hotel, "gates") == ["book_consent"]


def test_the_row_form_sets_the_scope(editor, hotel):
    row = {"id": "R1", "signal": "timeout", "verdict_type": "reconcile"}
    post(editor, hotel, "add-row", "add_row", **row)
    body = editor.get(f"{hotel.url()}?select=row:R1&tab=table").content.decode()
    posted = browser_post(body, "element-fields")
    posted["scope__steps"] = ["", "reserve"]
    assert post(editor, hotel, "element-form", "update_row", **posted).status_code == 200
    assert hotel.head().document["verdict_table"][0]["scope"] == {"steps": ["reserve"]}


def test_an_element_is_scoped_to_a_variant_when_the_chain_has_variants(editor, hotel):
    variants = {"variants__axis": "rail"}
    post(
        editor,
        hotel,
        "variants-form",
        "update_chain",
        **variants,
        **{"variants__values": "NDC, EDIFACT"},
    )
    posted = action_form(editor, hotel, "quote")
    posted["only"] = ["", "NDC"]
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    assert element(hotel, "actions", "quote")["only"] == ["NDC"]


FIXTURE_FILES = [
    "flight-roundtrip.yaml",
    "card-payment.yaml",
    "cloud-provisioning.yaml",
    "hotel-compile.md",
    "unsafe-retry-booking.yaml",
]
KINDS = [("actions", "action"), ("handles", "handle"), ("gates", "gate"), ("verdict_table", "row")]


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_element_form_saved_unchanged_changes_nothing(client, team, name):
    """What a form shows and posts back is the element: no key, order or origin is lost.

    Each post carries the next element as the selection to show, so the page
    it answers with holds the next form to post: one page per element.
    """
    path = Path(settings.BASE_DIR) / "fixtures" / name
    for spec in formats.load(path.read_bytes(), filename=name).chains:
        chain = Chain.objects.store(formats.to_document(spec), "import", team=team).chain
        before = chain.head().document
        shown = [
            (kind, f"{kind}:{item.get('id') or f'#{n}'}")
            for section, kind in KINDS
            for n, item in enumerate(before.get(section, []), 1)
        ]
        page = client.get(f"{chain.url()}?select={shown[0][1]}").content.decode()
        for (kind, select), after in zip(shown, [*shown[1:], (None, "")], strict=True):
            posted = browser_post(page, "element-fields")
            assert posted["select"] == [select], (name, select)
            response = post(
                client, chain, "element-form", f"update_{kind}", **{**posted, "select": after[1]}
            )
            assert response.status_code == 200, (name, select)
            assert chain.head().document == before, (name, select)
            page = response.content.decode()


def test_a_comma_inside_brackets_or_quotes_stays_in_its_signal():
    from chains.views.doc_fields import Csv

    signals = Csv().clean("code in ['a', 'b'], http:402, f(x, y), 'q,r'")
    assert signals == ["code in ['a', 'b']", "http:402", "f(x, y)", "'q,r'"]


@pytest.mark.parametrize("name", FIXTURE_FILES)
@pytest.mark.parametrize(
    "form_id, op", [("policy-form", "update_policy"), ("variants-form", "update_chain")]
)
def test_the_policy_and_variants_forms_saved_unchanged_change_nothing(
    client, team, name, form_id, op
):
    path = Path(settings.BASE_DIR) / "fixtures" / name
    spec = formats.load(path.read_bytes(), filename=name).chains[0]
    chain = Chain.objects.store(formats.to_document(spec), "import", team=team).chain
    before = chain.head().document
    body = client.get(f"{chain.url()}?tab=policy").content.decode()
    response = post(client, chain, form_id, op, **browser_post(body, form_id))
    assert response.status_code == 200
    assert chain.head().document == before


def test_a_confirmation_by_key_replay_alone_survives_the_action_form(editor, team):
    pay = "{id: pay, effect: commit, confirmation: {by_key_replay: true}}"
    text = f"id: keyed\nactions:\n  - {pay}\n"
    spec = formats.load(text, format="yaml").chains[0]
    chain = Chain.objects.store(formats.to_document(spec), "import", team=team).chain
    before = chain.head().document
    posted = action_form(editor, chain, "pay")
    assert post(editor, chain, "element-form", "update_action", **posted).status_code == 200
    assert chain.head().document == before


def test_the_confirmation_section_sets_by_key_replay_async_and_sweep(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["confirmation__by_key_replay"] = ["null", "true"]
    posted["confirmation__async__channel"] = "webhook"
    posted["confirmation__async__deadline"] = "24h"
    posted["confirmation__sweep__interval"] = "5m"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    confirmation = element(hotel, "actions", "reserve")["confirmation"]
    assert confirmation["async"] == {"channel": "webhook", "deadline": "24h"}
    assert confirmation["sweep"] == {"interval": "5m"}
    assert "by_key_replay" in confirmation


@pytest.mark.parametrize(
    "form_id, op, fields",
    [
        ("add-action", "add_action", {"id": "refund"}),
        ("add-handle", "add_handle", {"id": "refund_id"}),
        ("add-row", "add_row", {"id": "R1", "verdict_type": "retry"}),
        (
            "element-form",
            "update_handle",
            {"id": "quote_token", "single_use": "true"},
        ),
        (
            "element-form",
            "update_gate",
            {"id": "book_consent", "audience": "operator"},
        ),
        ("variants-form", "update_chain", {"variants__axis": "rail"}),
    ],
)
def test_a_viewer_cannot_post_any_form(people, signed_in, hotel, form_id, op, fields):
    before = hotel.head().number
    response = post(signed_in(people["viewer"]), hotel, form_id, op, **fields)
    assert response.status_code == 403
    assert hotel.head().number == before


# --- renaming from a form, and the fields that were YAML only ------------------------


def beside(form: str, name: str) -> str:
    """What follows the field ``name`` up to the next field's label: its error, if any."""
    return form.split(f'name="{name}"')[1].split("<label")[0]


def add_row(editor, chain: Chain, **fields) -> None:
    row = {"signal": "timeout", "verdict_type": "reconcile", **fields}
    assert post(editor, chain, "add-row", "add_row", **row).status_code == 200


def test_renaming_an_action_from_its_form_rewrites_the_references_to_it(editor, hotel):
    posted = action_form(editor, hotel, "cancel_reservation")
    posted["id"] = "cancel"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    assert element(hotel, "actions", "reserve")["compensation"]["action"] == "cancel"
    assert "cancel_reservation" not in element_ids(hotel, "actions")


def test_a_renamed_element_stays_selected_under_its_new_id(editor, hotel):
    posted = action_form(editor, hotel, "cancel_reservation")
    posted["id"] = "cancel"
    response = post(editor, hotel, "element-form", "update_action", **posted)
    form = form_in(response, "element-fields")
    assert 'name="id" value="cancel"' in form
    assert 'name="select" value="action:cancel"' in form


def test_a_plain_post_rename_redirects_to_the_renamed_element(editor, hotel):
    posted = action_form(editor, hotel, "cancel_reservation")
    posted["id"] = "cancel"
    data = {"base": str(hotel.head().number), "op": "update_action", "form": "element-form"}
    response = editor.post(f"{hotel.url()}edit", {**data, **posted})
    assert response.status_code == 302
    assert "select=action%3Acancel&" in response["Location"] + "&"


@pytest.mark.parametrize(
    "kind, old, new, section, holder, path",
    [
        ("handle", "search_id", "results", "handles", "room_pick", ("derived_from", 0)),
        ("gate", "book_consent", "consent", "actions", "reserve", ("entry_gate",)),
    ],
)
def test_renaming_a_handle_or_gate_from_its_form_rewrites_the_references_to_it(
    editor, hotel, kind, old, new, section, holder, path
):
    if kind == "gate":  # a reference to rewrite
        posted = action_form(editor, hotel, "reserve")
        posted["entry_gate"] = "book_consent"
        post(editor, hotel, "element-form", "update_action", **posted)
    body = editor.get(f"{hotel.url()}?select={kind}:{old}").content.decode()
    posted = browser_post(body, "element-fields")
    posted["id" if kind == "handle" else "id"] = new
    assert post(editor, hotel, "element-form", f"update_{kind}", **posted).status_code == 200
    value = element(hotel, section, holder)
    for step in path:
        value = value[step]
    assert value == new


def test_renaming_a_row_from_its_form_gives_it_the_new_id(editor, hotel):
    add_row(editor, hotel, **{"id": "R1"})
    body = editor.get(f"{hotel.url()}?select=row:R1&tab=table").content.decode()
    posted = browser_post(body, "element-fields")
    posted["id"] = "timeout_row"
    assert post(editor, hotel, "element-form", "update_row", **posted).status_code == 200
    assert hotel.head().document["verdict_table"][0]["id"] == "timeout_row"


def test_a_row_without_an_id_gets_one_from_its_form(editor, hotel):
    add_row(editor, hotel, **{"id": "R1"})
    table = hotel.head().document["verdict_table"]
    del table[0]["id"]
    hotel = Chain.objects.store(
        {**hotel.head().document, "verdict_table": table}, "import", team=hotel.team
    ).chain
    body = editor.get(f"{hotel.url()}?select=row:%231&tab=table").content.decode()
    posted = browser_post(body, "element-fields")
    assert posted["id"] == [""]
    posted["id"] = "R2"
    assert post(editor, hotel, "element-form", "update_row", **posted).status_code == 200
    assert hotel.head().document["verdict_table"][0]["id"] == "R2"


@pytest.mark.parametrize(
    "typed, says",
    [("quote", "already exists"), ("two words", "is not a valid id"), ("", "required")],
)
def test_a_refused_rename_keeps_the_typed_id_with_the_error_beside_it(editor, hotel, typed, says):
    posted = action_form(editor, hotel, "search")
    posted["id"] = typed
    posted["timeout"] = "45s"
    response = post(editor, hotel, "element-form", "update_action", **posted)
    assert response.status_code == 400
    form = form_in(response, "element-fields")
    assert f'name="id" value="{typed}"' in form if typed else 'name="id" required' in form
    assert 'value="45s"' in form
    assert says in beside(form, "id")
    assert "search" in element_ids(hotel, "actions")


def test_a_refused_row_rename_shows_the_error_beside_the_id(editor, hotel):
    add_row(editor, hotel, **{"id": "R1"})
    add_row(editor, hotel, **{"id": "R2"})
    body = editor.get(f"{hotel.url()}?select=row:R2&tab=table").content.decode()
    posted = browser_post(body, "element-fields")
    posted["id"] = "R1"
    response = post(editor, hotel, "element-form", "update_row", **posted)
    assert response.status_code == 400
    assert "already exists" in beside(form_in(response, "element-fields"), "id")


def test_the_action_form_sets_revocation_request_invariants_and_latency_hint(editor, hotel):
    posted = action_form(editor, hotel, "cancel_reservation")
    posted["revocation__watch"] = "webhook:refund.failed, http:410"
    posted["revocation__window"] = "30d"
    posted["revocation__route"] = "escalate(operator)"
    posted["request_invariants"] = "{capture_method: manual, volume.keep: true}"
    posted["latency_hint"] = "2s"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    action = element(hotel, "actions", "cancel_reservation")
    assert action["revocation"] == {
        "watch": ["webhook:refund.failed", "http:410"],
        "window": "30d",
        "route": "escalate(operator)",
    }
    assert action["request_invariants"] == {"capture_method": "manual", "volume.keep": True}
    assert action["latency_hint"] == "2s"


def test_emptying_the_revocation_and_invariants_removes_them(editor, team):
    text = (
        "id: c\nactions:\n  - {id: refund, effect: compensate, latency_hint: 2s,"
        " revocation: {watch: [x], window: 1d}, request_invariants: {a: 1}}\n"
    )
    spec = formats.load(text, format="yaml").chains[0]
    chain = Chain.objects.store(formats.to_document(spec), "import", team=team).chain
    posted = action_form(editor, chain, "refund")
    for name in ("revocation__watch", "revocation__window"):
        posted[name] = ""
    posted["request_invariants"] = ""
    posted["latency_hint"] = ""
    assert post(editor, chain, "element-form", "update_action", **posted).status_code == 200
    assert element(chain, "actions", "refund") == {"id": "refund", "effect": "compensate"}


@pytest.mark.parametrize(
    "name, typed",
    [
        ("revocation__route", "rewind(to:"),
        ("request_invariants", "{capture_method: ["),
        ("request_invariants", "[capture_method]"),
    ],
)
def test_a_refused_new_action_field_keeps_what_was_typed_with_the_error_beside_it(
    editor, hotel, name, typed
):
    posted = action_form(editor, hotel, "reserve")
    posted[name] = typed
    response = post(editor, hotel, "element-form", "update_action", **posted)
    assert response.status_code == 400
    form = form_in(response, "element-fields")
    assert typed in form.split(f'name="{name}"')[1][:400]
    assert 'class="field-error"' in beside(form, name)
    assert element(hotel, "actions", "reserve") == before_reserve()


def before_reserve() -> dict:
    spec = formats.load(HOTEL, format="yaml").chains[0]
    return next(a for a in formats.to_document(spec)["actions"] if a["id"] == "reserve")


def policy_form(editor, chain: Chain) -> dict:
    body = editor.get(f"{chain.url()}?tab=policy").content.decode()
    return browser_post(body, "policy-form")


def save_policy(editor, chain: Chain, posted: dict):
    return post(editor, chain, "policy-form", "update_policy", **posted)


def test_the_policy_form_sets_a_backoff_per_step(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["per_step__read__backoff__base"] = "500ms"
    posted["per_step__read__backoff__factor"] = "2"
    posted["per_step__read__backoff__jitter"] = "full"
    posted["per_step__read__backoff__max"] = "8s"
    posted["per_step__commit__keyed__backoff__base"] = "2s"
    assert save_policy(editor, hotel, posted).status_code == 200
    assert hotel.head().document["policy"]["per_step"] == {
        "read": {"backoff": {"base": "500ms", "factor": 2.0, "jitter": "full", "max": "8s"}},
        "commit": {"keyed": {"backoff": {"base": "2s"}}},
    }


def test_the_policy_form_sets_the_escalation_ladder_from_its_rows(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["escalation-0-audience"] = "user"
    posted["escalation-0-may"] = "approve a new price, choose another room"
    assert save_policy(editor, hotel, posted).status_code == 200
    posted = policy_form(editor, hotel)  # a blank row to add the next rung with
    posted["escalation-1-audience"] = "operator"
    posted["escalation-1-may"] = "resolve a lost booking"
    assert save_policy(editor, hotel, posted).status_code == 200
    assert hotel.head().document["policy"]["escalation"] == [
        {"audience": "user", "may": ["approve a new price", "choose another room"]},
        {"audience": "operator", "may": ["resolve a lost booking"]},
    ]


def test_choosing_no_audience_drops_an_escalation_rung(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["escalation-0-audience"] = "user"
    posted["escalation-0-may"] = "approve"
    save_policy(editor, hotel, posted)
    posted = policy_form(editor, hotel)
    posted["escalation-0-audience"] = ""
    posted["escalation-0-may"] = ""
    assert save_policy(editor, hotel, posted).status_code == 200
    assert "policy" not in hotel.head().document


def test_the_compensation_order_is_the_steps_listed_in_its_rows(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["per_chain__compensation_order-0-step"] = "reserve"
    assert save_policy(editor, hotel, posted).status_code == 200
    posted = policy_form(editor, hotel)
    assert posted["per_chain__compensation_order-0-step"] == ["reserve"]
    posted["per_chain__compensation_order-1-step"] = "cancel_reservation"
    assert save_policy(editor, hotel, posted).status_code == 200
    order = hotel.head().document["policy"]["per_chain"]["compensation_order"]
    assert order == ["reserve", "cancel_reservation"]


def test_choosing_reverse_replaces_the_listed_steps(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["per_chain__compensation_order-0-step"] = "reserve"
    posted["order"] = "reverse"
    assert save_policy(editor, hotel, posted).status_code == 200
    assert hotel.head().document["policy"]["per_chain"] == {"compensation_order": "reverse"}


def test_no_steps_and_no_choice_leave_the_compensation_order_unset(editor, hotel):
    posted = policy_form(editor, hotel)
    posted["order"] = "reverse"
    save_policy(editor, hotel, posted)
    posted = policy_form(editor, hotel)
    assert posted["order"] == ["reverse"]
    posted["order"] = ""
    assert save_policy(editor, hotel, posted).status_code == 200
    assert "policy" not in hotel.head().document


@pytest.mark.parametrize(
    "name, typed",
    [
        ("per_step__mint__backoff__factor", "fast"),
        ("escalation-0-audience", "robot"),
    ],
)
def test_a_refused_policy_field_keeps_what_was_typed_with_the_error_beside_it(
    editor, hotel, name, typed
):
    posted = policy_form(editor, hotel)
    posted[name] = typed
    posted["escalation-0-may"] = "approve"
    posted["per_chain__compensation_order-0-step"] = "reserve"
    response = save_policy(editor, hotel, posted)
    assert response.status_code == 400
    form = form_in(response, "policy-form")
    row = form.split(f'name="{name}"')[0].rsplit('<div class="form-row', 1)[1]
    row += form.split(f'name="{name}"')[1].split("</div>")[0]
    assert 'class="field-error"' in row
    assert 'value="approve"' in form and '<option value="reserve" selected>reserve</option>' in form
    assert "policy" not in hotel.head().document


def fixture_chain(team: Team, name: str) -> Chain:
    path = Path(settings.BASE_DIR) / "fixtures" / name
    spec = formats.load(path.read_bytes(), filename=name).chains[0]
    return Chain.objects.store(formats.to_document(spec), "import", team=team).chain


def test_the_fixtures_new_fields_are_in_the_forms_saved_unchanged(editor, team):
    """So the saved-unchanged tests above carry them through the forms and back."""
    chain = fixture_chain(team, "card-payment.yaml")
    actions = chain.head().document["actions"]
    revoked = next(a["id"] for a in actions if "revocation" in a)
    pinned = next(a for a in actions if "request_invariants" in a)
    assert action_form(editor, chain, revoked)["revocation__watch"] == ["webhook:refund.failed"]
    posted = action_form(editor, chain, pinned["id"])
    assert posted["request_invariants"] == ["{capture_method: manual}"]
    assert posted["latency_hint"] == [pinned["latency_hint"]]
    assert posted["id"] == [pinned["id"]]
    posted = policy_form(editor, chain)
    assert posted["per_step__read__backoff__base"] == ["250ms"]
    assert posted["escalation-0-audience"] == ["model"]
    order = policy_form(editor, fixture_chain(team, "cloud-provisioning.yaml"))
    steps = [order[f"per_chain__compensation_order-{n}-step"] for n in range(2)]
    assert steps == [["release_address"], ["terminate_instance"]]


@pytest.mark.parametrize("kind, ident", [("gate", "book_consent"), ("action", "reserve")])
def test_an_element_form_names_itself_once(editor, hotel, kind, ident):
    """Two ``form`` boxes make ``form.form`` a list in the browser, and htmx then cannot post."""
    body = editor.get(f"{hotel.url()}?select={kind}:{ident}").content.decode()
    assert form_in_page(body, "element-fields").count('name="form"') == 1


def form_in_page(body: str, form_id: str) -> str:
    return body.split(f'id="{form_id}"')[1].split("</form>")[0]


def test_a_rename_in_the_yaml_editor_keeps_the_element_selected(editor, hotel):
    fields = {
        "target": "find_by_label",
        "select": "action:find_by_label",
        "fields": "id: lookup\neffect: read\n",
    }
    response = post(editor, hotel, "element-yaml", "update_action", **fields)
    assert 'name="id" value="lookup"' in form_in(response, "element-fields")


def test_a_refused_rename_leaves_the_old_element_selected(editor, hotel):
    posted = action_form(editor, hotel, "search")
    posted["id"] = "quote"
    response = post(editor, hotel, "element-form", "update_action", **posted)
    assert 'name="select" value="action:search"' in form_in(response, "element-fields")


# --- where a refusal is shown ---------------------------------------------------------------


def test_a_refused_form_save_shows_its_error_in_the_form_and_not_again_in_the_page_banner(
    editor, hotel
):
    body = editor.get(f"{hotel.url()}?select=handle:quote_token").content.decode()
    posted = browser_post(body, "element-fields")
    posted["minted_by"] = "nobody"
    response = post(editor, hotel, "element-form", "update_handle", **posted)
    assert response.status_code == 400
    page = response.content.decode()
    assert "Not saved:" in form_in(response, "element-fields")
    assert 'id="edit-error"' not in page


def test_a_refused_add_shows_its_error_in_the_adder_and_not_again_in_the_page_banner(editor, hotel):
    response = post(editor, hotel, "add-action", "add_action", id="search", effect="read")
    assert response.status_code == 400
    assert "Not added:" in form_in(response, "add-action-form")
    assert 'id="edit-error"' not in response.content.decode()


def test_a_refused_post_no_form_on_the_page_shows_keeps_the_page_banner(editor, hotel):
    # A script's post (the canvas connecting two nodes) names no form.
    response = post(editor, hotel, "", "update_action", args='{"id": "no_such_action"}')
    assert response.status_code == 400
    assert 'id="edit-error"' in response.content.decode()


def test_a_refused_gate_edit_says_not_saved_once(editor, hotel):
    body = editor.get(f"{hotel.url()}?select=gate:book_consent").content.decode()
    posted = browser_post(body, "element-fields")
    posted["timeout__outcome"] = "accept"  # a timeout needs its "after"
    response = post(editor, hotel, "element-form", "update_gate", **posted)
    assert response.status_code == 400
    assert response.content.decode().count("Not saved:") == 1


# --- compensation chain and ladder ----------------------------------------------------


def test_the_compensation_chain_is_the_steps_listed_in_its_rows(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__action"] = ""
    posted["compensation__chain-0-step"] = "find_by_label"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    posted = action_form(editor, hotel, "reserve")  # a blank step box to add the next with
    posted["compensation__chain-1-step"] = "cancel_reservation"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    assert element(hotel, "actions", "reserve")["compensation"] == {
        "chain": ["find_by_label", "cancel_reservation"],
        "ordering_note": "before the refund",
    }


def test_choosing_no_step_drops_it_from_the_compensation_chain(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted.update({"compensation__chain-0-step": "find_by_label"})
    posted.update({"compensation__chain-1-step": "cancel_reservation"})
    posted["compensation__chain-TOTAL_FORMS"] = "2"
    post(editor, hotel, "element-form", "update_action", **posted)
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__chain-0-step"] = ""
    post(editor, hotel, "element-form", "update_action", **posted)
    assert element(hotel, "actions", "reserve")["compensation"]["chain"] == ["cancel_reservation"]


def test_the_compensation_ladder_is_stored_from_its_rungs(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__action"] = ""
    posted["compensation__ladder-0-when"] = "state == 'held'"
    posted["compensation__ladder-0-action"] = "cancel_reservation"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__ladder-1-chain"] = "find_by_label, cancel_reservation"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__ladder-2-else"] = "escalate(operator)"
    assert post(editor, hotel, "element-form", "update_action", **posted).status_code == 200
    assert element(hotel, "actions", "reserve")["compensation"]["ladder"] == [
        {"when": "state == 'held'", "action": "cancel_reservation"},
        {"chain": ["find_by_label", "cancel_reservation"]},
        {"else": "escalate(operator)"},
    ]


def test_emptying_a_rung_drops_it_from_the_ladder(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__ladder-0-action"] = "cancel_reservation"
    posted["compensation__ladder-1-else"] = "escalate(operator)"
    posted["compensation__ladder-TOTAL_FORMS"] = "2"
    post(editor, hotel, "element-form", "update_action", **posted)
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__ladder-0-action"] = ""
    post(editor, hotel, "element-form", "update_action", **posted)
    ladder = element(hotel, "actions", "reserve")["compensation"]["ladder"]
    assert ladder == [{"else": "escalate(operator)"}]


def test_a_refused_ladder_rung_keeps_what_was_typed_with_the_error_beside_it(editor, hotel):
    posted = action_form(editor, hotel, "reserve")
    posted["compensation__ladder-0-when"] = "state == 'held'"
    posted["compensation__ladder-0-else"] = "explode(now)"
    response = post(editor, hotel, "element-form", "update_action", **posted)
    assert response.status_code == 400
    form = response.content.decode().split('id="element-fields"')[1].split("</form>")[0]
    rung = form.split('class="form-row ladder-row"')[1].split("</div>")[0]
    assert 'value="explode(now)"' in rung and 'value="state == &#x27;held&#x27;"' in rung
    assert 'class="field-error"' in rung
    assert "ladder" not in element(hotel, "actions", "reserve")["compensation"]


# --- policy: unkeyed commit and per-action backoff -------------------------------------

PER_ACTION = (
    HOTEL
    + """policy:
  per_step:
    read: {attempts: 3}
    commit: {unkeyed: {attempts: 1, safe_reject_redispatch: 0}}
    reserve: {attempts: 2, timeout: 60s}
"""
)


@pytest.fixture
def tuned(team: Team) -> Chain:
    chain = formats.load(PER_ACTION, format="yaml").chains[0]
    return Chain.objects.store(formats.to_document(chain), "import", team=team).chain


def test_the_policy_form_sets_the_unkeyed_commit_backoff(editor, tuned):
    posted = policy_form(editor, tuned)
    posted["per_step__commit__unkeyed__backoff__base"] = "3s"
    posted["per_step__commit__unkeyed__backoff__jitter"] = "none"
    assert save_policy(editor, tuned, posted).status_code == 200
    assert tuned.head().document["policy"]["per_step"]["commit"] == {
        "unkeyed": {
            "attempts": 1,
            "safe_reject_redispatch": 0,
            "backoff": {"base": "3s", "jitter": "none"},
        }
    }


def test_the_policy_form_edits_an_entry_keyed_by_an_action_id(editor, tuned):
    posted = policy_form(editor, tuned)
    assert posted["per_step__reserve__attempts"] == ["2"]
    assert "per_step__read__attempts" in posted  # an effect class is not an entry
    posted["per_step__reserve__attempts"] = "4"
    posted["per_step__reserve__timeout"] = ""
    posted["per_step__reserve__backoff__base"] = "1s"
    posted["per_step__reserve__backoff__factor"] = "1.5"
    assert save_policy(editor, tuned, posted).status_code == 200
    assert tuned.head().document["policy"]["per_step"]["reserve"] == {
        "attempts": 4,
        "backoff": {"base": "1s", "factor": 1.5},
    }


def test_the_per_action_rows_are_only_for_action_ids(editor, tuned):
    body = editor.get(f"{tuned.url()}?tab=policy").content.decode()
    rows = body.split('id="per-action-fields"')[1].split("</fieldset>")[0]
    assert '<span class="row-label">reserve</span>' in rows
    assert "per_step.read." not in rows and "per_step.commit." not in rows


def test_a_refused_per_action_entry_keeps_what_was_typed_with_the_error_beside_it(editor, tuned):
    posted = policy_form(editor, tuned)
    posted["per_step__reserve__attempts"] = "three"
    posted["per_step__reserve__backoff__base"] = "1s"
    response = save_policy(editor, tuned, posted)
    assert response.status_code == 400
    rows = response.content.decode().split('id="per-action-fields"')[1].split("</fieldset>")[0]
    entry = rows.split('class="form-row per-action-row"')[1].split("</div>")[0]
    assert 'value="three"' in entry and 'class="field-error"' in entry
    assert 'value="1s"' in rows
    assert tuned.head().document["policy"]["per_step"]["reserve"]["attempts"] == 2


# --- the toolbar's connect buttons -----------------------------------------------------


def test_the_handle_graph_offers_the_connect_buttons(editor, hotel):
    body = editor.get(f"{hotel.url()}?view=handles").content.decode()
    toolbar = body.split('class="toolbar"')[1].split("</div>")[0]
    assert toolbar.count("data-mode=") == 3 and "connect-hint" not in toolbar


def test_the_flow_view_replaces_the_connect_buttons_with_a_link_to_the_handle_graph(editor, hotel):
    body = editor.get(f"{hotel.url()}?view=flow&tab=policy").content.decode()
    toolbar = body.split('class="toolbar"')[1].split("</div>")[0]
    assert "data-mode=" not in toolbar
    assert 'class="connect-hint" href="?view=handles&amp;tab=policy"' in toolbar


def test_the_add_form_adds_an_entry_keyed_by_an_action_id(editor, tuned):
    body = editor.get(f"{tuned.url()}?tab=policy").content.decode()
    posted = browser_post(body, "per-action-form")
    assert posted["attempts"] == [""]  # a blank row, not the first entry's
    posted["action"] = "quote"
    posted["attempts"] = "2"
    assert post(editor, tuned, "per-action-form", "update_policy", **posted).status_code == 200
    per_step = tuned.head().document["policy"]["per_step"]
    assert per_step["quote"] == {"attempts": 2}
    assert per_step["reserve"] == {"attempts": 2, "timeout": "60s"}
    assert per_step["read"] == {"attempts": 3}


def test_the_add_form_with_no_action_chosen_changes_nothing(editor, tuned):
    before = tuned.head().document
    body = editor.get(f"{tuned.url()}?tab=policy").content.decode()
    posted = browser_post(body, "per-action-form")
    post(editor, tuned, "per-action-form", "update_policy", **posted)
    assert tuned.head().document["policy"] == before["policy"]


def test_a_refused_new_per_action_entry_keeps_the_typed_action_and_attempts(editor, tuned):
    body = editor.get(f"{tuned.url()}?tab=policy").content.decode()
    posted = browser_post(body, "per-action-form")
    posted["action"] = "quote"
    posted["attempts"] = "two"
    response = post(editor, tuned, "per-action-form", "update_policy", **posted)
    assert response.status_code == 400
    form = response.content.decode().split('id="per-action-form"')[1].split("</form>")[0]
    assert '<option value="quote" selected>quote</option>' in form and 'value="two"' in form
    assert 'class="field-error"' in form.split('class="form-row"')[1]
    assert "quote" not in tuned.head().document["policy"]["per_step"]


def test_a_refused_per_action_backoff_is_shown_once_beside_its_backoff_row(editor, tuned):
    posted = policy_form(editor, tuned)
    posted["per_step__reserve__backoff__factor"] = "lots"
    response = save_policy(editor, tuned, posted)
    assert response.status_code == 400
    rows = response.content.decode().split('id="per-action-fields"')[1].split("</fieldset>")[0]
    backoff = rows.split('class="form-row backoff-row"')[1].split("</div>")[0]
    assert 'value="lots"' in backoff and 'class="field-error"' in backoff
    assert rows.count('class="field-error"') == 1


def test_a_row_numbered_past_the_rows_posted_is_left_out(editor, hotel):
    response = post(
        editor,
        hotel,
        "add-gate",
        "add_gate",
        **{
            "id": "pay_consent",
            "audience": "user",
            **rows("outcomes", 1),
            "outcomes-0-name": "accept",
            "outcomes-0-verdict": "rewind(to:",
            "outcomes-99999-name": "far_ahead",
        },
    )
    assert response.status_code == 400
    form = response.content.decode().split('id="add-gate-form"')[1].split("</form>")[0]
    assert 'value="far_ahead"' not in form
    assert form.count('name="outcomes-') < 12
