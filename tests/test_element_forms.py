"""Every workspace form round-trips its every field, and refuses a bad typed value beside it.

The round trip posts a value in every field of a form (the posts start from
what the page renders, so the hidden fields and row counts are a browser's),
then reads the stored document back: through the page's form again (what it
shows is what was posted) and through the document itself. The refusals post
one unreadable value in one typed field at a time and find the reason right
after that field's box, the typed value kept, and the head revision unchanged.
"""

from __future__ import annotations

import pytest
from django import forms as django_forms

from chains.core import formats
from chains.models import Chain, Team
from chains.views import doc_fields
from chains.views.element_forms import FORMS, AddGateForm
from chains.views.workspace_forms import (
    AddActionForm,
    AddHandleForm,
    AddRowForm,
    PolicyForm,
    VariantsForm,
    chain_data,
    element_data,
    element_model,
)
from tests.test_workspace_forms import HTMX, browser_post

pytestmark = pytest.mark.django_db

HOTEL = """
id: hotel
variants: {axis: rail, values: [NDC, EDIFACT]}
handles:
  - {id: search_id, minted_by: search}
  - {id: room_pick, minted_by: pick_room, derived_from: [search_id]}
  - {id: quote_token, minted_by: quote, derived_from: [room_pick]}
  - {id: booking_ref, minted_by: external}
actions:
  - {id: search, effect: read, output: {handles: [search_id]}}
  - {id: pick_room, effect: select, input: {handles: [search_id]}, output: {handles: [room_pick]}}
  - {id: quote, effect: mint, input: {handles: [room_pick]}, output: {handles: [quote_token]}}
  - {id: reserve, effect: commit, input: {handles: [quote_token]}}
  - {id: find_by_label, effect: read}
  - {id: cancel_reservation, effect: compensate}
gates:
  - {id: book_consent, audience: user, outcomes: {accept: ok}}
verdict_table:
  - {id: R1, signal: [timeout], verdict: reconcile}
policy:
  per_step: {reserve: {attempts: 2}}
"""
SPEC = formats.load(HOTEL, format="yaml").chains[0]


@pytest.fixture
def hotel(team: Team) -> Chain:
    return Chain.objects.store(formats.to_document(SPEC), "import", team=team).chain


@pytest.fixture
def editor(people, signed_in):
    return signed_in(people["editor"])


# Each form: its ``form`` name, its op, the page that shows it (query), its HTML id,
# and a value for every one of its fields (a formset's by its row's name).
ACTION = {
    "id": "reserve",
    "effect": "commit",
    "entry_gate": "book_consent",
    "timeout": "45s",
    "latency_hint": "2s",
    "probe_only": "on",
    "input__handles": ["quote_token"],
    "input__intent-0-name": "check_in",
    "input__intent-0-type": "date",
    "input__intent-0-required": "on",
    "output__handles": ["booking_ref"],
    "output__business_expiry__field": "quote.expires_at",
    "output__business_expiry__on_expiry": "rewind(to: quote)",
    "idempotency__mode": "keyed",
    "idempotency__key_scope": "run",
    "idempotency__key_retention": "24h",
    "idempotency__replay_semantics": "returns_cached",
    "confirmation__probe": "find_by_label",
    "confirmation__signal": "a reservation with our label",
    "confirmation__by_key_replay": "on",
    "confirmation__async__channel": "webhook",
    "confirmation__async__deadline": "24h",
    "confirmation__sweep__interval": "5m",
    "confirmation__sweep__escalate_after": "1h",
    "compensation__action": "cancel_reservation",
    "compensation__chain-0-step": "cancel_reservation",
    "compensation__ladder-0-when": "instance.state == 'held'",
    "compensation__ladder-0-action": "cancel_reservation",
    "compensation__ladder-0-chain": "cancel_reservation",
    "compensation__ladder-0-else": "escalate(operator)",
    "compensation__window": "until check-in",
    "compensation__ordering_note": "before the refund",
    "revocation__watch": "webhook:refund.failed, http:410",
    "revocation__window": "30d",
    "revocation__route": "escalate(operator)",
    "request_invariants": "{capture_method: manual}",
    "http__method": "POST",
    "http__path": "/hotels/{hotel_id}/reservations",
    "http__operation_id": "createReservation",
    "http__idempotency_header": "Idempotency-Key",
    "http__sends": "{hotel_id: 'path:hotel_id', quote_token: 'body:/quote'}",
    "http__reads": "{booking_ref: 'body:/data/id'}",
    "preconditions-0-when": "price changed since quote",
    "preconditions-0-verdict": "gate(book_consent)",
    "preconditions-0-reason": "the price moved",
    "auto_repairs-0-trigger": "code:DATES_IN_PAST",
    "auto_repairs-0-fields": "shift dates by a day",
    "auto_repairs-0-once": "on",
    "only": ["NDC"],
    "description": "Hold the room.",
}
HANDLE = {
    "id": "quote_token",
    "minted_by": "quote",
    "derived_from": ["room_pick"],
    "single_use": "on",
    "staleness__detect": "http:410, code:QUOTE_EXPIRED",
    "staleness__ttl_hint": "15m",
    "staleness__refresh": "quote",
    "staleness__contractual": "on",
    "rematch__key": "room_type, board",
    "rematch__on_ambiguous": "gate",
    "only": ["NDC"],
    "description": "The quote.",
}
GATE = {
    "id": "book_consent",
    "audience": "operator",
    "outcomes-0-name": "accept",
    "outcomes-0-verdict": "ok",
    "outcomes-0-bind": "room_pick",
    "outcomes-0-params": "{note: string}",
    "outcomes-0-set": "{consent: true}",
    "timeout__after": "10m",
    "timeout__outcome": "accept",
    "timeout__verdict": "",
    "payload_expiry__field": "quote.expires_at",
    "payload_expiry__verdict": "rewind(to: quote)",
    "payload": "{price: string}",
    "only": ["NDC"],
    "description": "Ask before booking.",
}
ROW = {
    "id": "R1",
    "signal": "http:410, code:GONE",
    "verdict_type": "repair",
    "verdict_to": "quote",
    "verdict_fields": "dates",
    "verdict_gate": "",  # a repair names no gate, and none of a dead end's parts
    "verdict_reason": "",
    "verdict_permanent": "",
    "verdict_retry_after_hint": "",
    "scope__steps": ["reserve"],
    "scope__consumers_of": ["quote_token"],
    "no_side_effect": "on",
    "only": ["NDC"],
    "description": "Gone.",
}
STEPS = {
    f"per_step__{place}__{name}": value
    for place in ("read", "mint", "select", "commit__keyed", "commit__unkeyed")
    + ("compensate__keyed", "compensate__unkeyed", "reserve")
    for name, value in (
        ("attempts", "2"),
        ("backoff__base", "500ms"),
        ("backoff__factor", "2"),
        ("backoff__jitter", "full"),
        ("backoff__max", "8s"),
    )
}
POLICY = {
    "per_chain__max_rewinds": "3",
    "per_chain__max_repairs": "2",
    "per_chain__wall_clock": "30m",
    "per_chain__gate_timeout": "24h",
    "per_chain__compensation_order-0-step": "cancel_reservation",
    "order": "",
    "per_step__reserve__timeout": "60s",
    "escalation-0-audience": "user",
    "escalation-0-may": "approve a price change",
    **STEPS,
}
VARIANTS = {"variants__axis": "channel", "variants__values": "NDC, EDIFACT, GDS"}
SHOWN = [
    ("update_action", "element-form", "?select=action:reserve", "element-fields", ACTION),
    ("update_handle", "element-form", "?select=handle:quote_token", "element-fields", HANDLE),
    ("update_gate", "element-form", "?select=gate:book_consent", "element-fields", GATE),
    ("update_row", "element-form", "?select=row:R1&tab=table", "element-fields", ROW),
    ("update_policy", "policy-form", "?tab=policy", "policy-form", POLICY),
    ("update_chain", "variants-form", "?tab=policy", "variants-form", VARIANTS),
]
FORM_CLASSES = {
    "update_action": FORMS["update_action"],
    "update_handle": FORMS["update_handle"],
    "update_gate": FORMS["update_gate"],
    "update_row": FORMS["update_row"],
    "update_policy": PolicyForm,
    "update_chain": VariantsForm,
}
STATE = {"csrfmiddlewaretoken", "base", "tab", "view", "select", "wide", "sev", "target"}


def bound_names(form_class: type, op: str) -> set[str]:
    """Every field a form shows, its rows' as row 0's (``preconditions-0-when``)."""
    kind = op.removeprefix("update_")
    if kind in ("action", "handle", "gate", "row"):
        ident = {"action": "reserve", "handle": "quote_token", "gate": "book_consent"}
        target = ident.get(kind, "R1")
        form = form_class(SPEC, element_data(SPEC, kind, element_model(SPEC, kind, target)), target)
    elif form_class is PolicyForm:
        form = form_class(SPEC, formats.to_document(SPEC)["policy"])
    else:
        form = form_class(SPEC, chain_data(SPEC))
    names = {n for n in form.fields if n != "target"}
    for prefix, rows in form.formsets.items():
        names |= {f"{prefix}-0-{n}" for n in rows.form.base_fields}
    return names


_FIRST_SHOWN: dict[tuple[str, str], dict[str, list[str]]] = {}


def first_shown(client, chain: Chain, query: str, html_id: str) -> dict[str, list[str]]:
    """What a browser posts from ``html_id`` as the page first shows it on a fresh ``hotel``.

    Every test starts from the same stored chain, so the page is read once per
    form rather than once per test (a copy is handed out: free to change).
    """
    if (query, html_id) not in _FIRST_SHOWN:
        assert chain.head().number == 1
        page = client.get(f"{chain.url()}{query}").content.decode()
        _FIRST_SHOWN[query, html_id] = browser_post(page, html_id)
    return {name: list(values) for name, values in _FIRST_SHOWN[query, html_id].items()}


def post(client, chain: Chain, form: str, op: str, fields: dict):
    data = {"base": str(chain.head().number), "op": op, "form": form, **fields}
    return client.post(f"{chain.url()}edit", data, **HTMX)


@pytest.mark.parametrize("op, form, query, html_id, values", SHOWN, ids=[s[0] for s in SHOWN])
def test_every_field_of_a_form_is_stored_and_shown_again(
    editor, hotel, op, form, query, html_id, values
):
    assert set(values) >= bound_names(FORM_CLASSES[op], op)  # every field has a value here
    posted = {**first_shown(editor, hotel, query, html_id), **values}
    response = post(editor, hotel, form, op, posted)
    assert response.status_code == 200, response.content.decode()[:2000]
    assert hotel.head().number == 2
    again = browser_post(editor.get(f"{hotel.url()}{query}").content.decode(), html_id)
    for name, value in values.items():
        typed = value if isinstance(value, list) else [value]
        if typed == [""]:
            assert again.get(name, [""]) == [""], name
        else:
            assert again[name] == typed, name


def test_the_action_form_stores_what_it_shows_in_the_document(editor, hotel):
    page = editor.get(f"{hotel.url()}?select=action:reserve").content.decode()
    post(
        editor,
        hotel,
        "element-form",
        "update_action",
        {**browser_post(page, "element-fields"), **ACTION},
    )
    reserve = next(a for a in hotel.head().document["actions"] if a["id"] == "reserve")
    assert reserve["timeout"] == "45s"
    assert reserve["idempotency"] == {
        "mode": "keyed",
        "key_scope": "run",
        "key_retention": "24h",
        "replay_semantics": "returns_cached",
    }
    assert reserve["confirmation"]["async"] == {"channel": "webhook", "deadline": "24h"}
    assert "by_key_replay" in reserve["confirmation"]
    assert reserve["compensation"]["ladder"] == [
        {
            "when": "instance.state == 'held'",
            "else": "escalate(operator)",
            "chain": ["cancel_reservation"],
            "action": "cancel_reservation",
        }
    ]
    assert reserve["input"]["intent"] == {"check_in": {"type": "date"}}
    assert reserve["request_invariants"] == {"capture_method": "manual"}
    assert reserve["http"] == {
        "method": "POST",
        "path": "/hotels/{hotel_id}/reservations",
        "operation_id": "createReservation",
        "idempotency_header": "Idempotency-Key",
        "sends": {"quote_token": "body:/quote", "hotel_id": "path:hotel_id"},
        "reads": {"booking_ref": "body:/data/id"},
    }


def test_ticking_only_by_key_replay_on_a_keyed_commit_stores_it(editor, hotel):
    page = editor.get(f"{hotel.url()}?select=action:reserve").content.decode()
    posted = browser_post(page, "element-fields")
    assert "confirmation__by_key_replay" not in posted  # unticked: nothing stored yet
    posted["confirmation__by_key_replay"] = "on"
    response = post(editor, hotel, "element-form", "update_action", posted)
    assert response.status_code == 200
    assert "Saved revision 2" in response.content.decode()
    reserve = next(a for a in hotel.head().document["actions"] if a["id"] == "reserve")
    assert "by_key_replay" in reserve["confirmation"]


def test_a_timeout_of_ten_seconds_is_refused_beside_the_timeout_box(editor, hotel):
    page = editor.get(f"{hotel.url()}?select=action:reserve").content.decode()
    posted = {**browser_post(page, "element-fields"), "timeout": "ten seconds"}
    response = post(editor, hotel, "element-form", "update_action", posted)
    assert response.status_code == 400
    beside = response.content.decode().split('name="timeout"')[1].split("<label")[0]
    assert 'value="ten seconds"' in beside
    assert "is not a duration" in beside.split('class="field-error"')[1]
    assert hotel.head().number == 1


ADDERS = [
    ("add-action", "add_action", {"id": "refund", "effect": "compensate"}, ("actions", "refund")),
    (
        "add-handle",
        "add_handle",
        {"id": "refund_id", "minted_by": "reserve", "single_use": "on"},
        ("handles", "refund_id"),
    ),
    (
        "add-gate",
        "add_gate",
        {
            "id": "pay_consent",
            "audience": "user",
            "outcomes-0-name": "accept",
            "outcomes-0-verdict": "ok",
            "outcomes-0-bind": "room_pick",
            "outcomes-0-params": "{note: string}",
            "outcomes-0-set": "{consent: true}",
            "outcomes-1-name": "decline",
            "outcomes-1-verdict": "dead_end",
            "timeout__after": "10m",
            "timeout__outcome": "decline",
            "payload_expiry__field": "quote.expires_at",
            "payload_expiry__verdict": "rewind(to: quote)",
            "payload": "{price: string}",
            "only": ["NDC"],
            "description": "Ask to pay.",
        },
        ("gates", "pay_consent"),
    ),
    (
        "add-row",
        "add_row",
        {
            "id": "R9",
            "signal": "http:410, code:GONE",
            "scope__steps": ["reserve"],
            "scope__consumers_of": ["quote_token"],
            "only": ["NDC"],
            "verdict_type": "repair",
            "verdict_to": "quote",
            "verdict_fields": "dates",
            "no_side_effect": "on",
            "fragile": "on",
            "source__tag": "documented",
            "source__urls": "https://docs.example.com/errors",
        },
        ("verdict_table", "R9"),
    ),
]


@pytest.mark.parametrize("form, op, values, stored", ADDERS, ids=[a[0] for a in ADDERS])
def test_an_adder_stores_every_field_it_shows(editor, hotel, form, op, values, stored):
    posted = {**first_shown(editor, hotel, "?tab=table", f"{form}-form"), **values}
    assert post(editor, hotel, form, op, posted).status_code == 200
    section, ident = stored
    found = next(e for e in hotel.head().document[section] if e.get("id") == ident)
    expected = {
        "add-action": {"id": "refund", "effect": "compensate"},
        "add-handle": {"id": "refund_id", "minted_by": "reserve", "single_use": True},
        "add-gate": {
            "id": "pay_consent",
            "description": "Ask to pay.",
            "audience": "user",
            "payload": {"price": "string"},
            "outcomes": {
                "accept": {
                    "verdict": "ok",
                    "bind": ["room_pick"],
                    "params": {"note": "string"},
                    "set": {"consent": True},
                },
                "decline": {"verdict": "dead_end"},
            },
            "timeout": {"after": "10m", "outcome": "decline"},
            "payload_expiry": {"field": "quote.expires_at", "verdict": "rewind(to: quote)"},
            "only": ["NDC"],
        },
        "add-row": {
            "id": "R9",
            "signal": ["http:410", "code:GONE"],
            "scope": {"steps": ["reserve"], "consumers_of": ["quote_token"]},
            "verdict": "repair(to: quote, fields: [dates])",
            "no_side_effect": True,
            "fragile": "prose-match",
            "source": {"tag": "documented", "urls": ["https://docs.example.com/errors"]},
            "only": ["NDC"],
        },
    }[form]
    assert found == expected


@pytest.mark.parametrize(
    "form_class, skipped",
    [
        (AddActionForm, set()),
        (AddHandleForm, set()),
        (AddGateForm, {"timeout__verdict"}),
        (
            AddRowForm,
            {"verdict_gate", "verdict_reason", "verdict_permanent", "verdict_retry_after_hint"},
        ),
    ],
)
def test_the_adders_test_above_gives_every_field_a_value(form_class, skipped):
    """A verdict names one target and a gate timeout one outcome, so those are left out."""
    values = next(v for f, _, v, _ in ADDERS if f == form_class.form_id)
    form = form_class(SPEC)
    names = {n for n in form.fields if n != "target"}
    for prefix, rows in form.formsets.items():
        names |= {f"{prefix}-0-{n}" for n in rows.form.base_fields}
    assert names - set(values) == skipped


# --- refusals ------------------------------------------------------------------------------

BAD = {
    doc_fields.Duration: "ten seconds",
    doc_fields.Verdict: "rewind(to:",
    doc_fields.Yaml: "{a: [",
    doc_fields.Whole: "three",
    doc_fields.Number: "fast",
    doc_fields.Chosen: "no_such_choice",
    doc_fields.IdChoice: "no_such_id",
    doc_fields.Ids: "no_such_id",
    django_forms.URLField: "not a url",
}


def typed_fields() -> list[tuple[str, str, str, str, str, str]]:
    """Every typed field of every form: (op, form, query, html id, field, a bad value)."""
    found = []
    for op, form, query, html_id, values in SHOWN:
        for name in sorted(values):
            field = _field(FORM_CLASSES[op], op, name)
            bad = next((v for t, v in BAD.items() if type(field) is t), None)
            if bad is not None:
                found.append((op, form, query, html_id, name, bad))
    return found


def _field(form_class: type, op: str, name: str) -> object:
    if "-" in name:
        prefix, _, field = name.split("-", 2)
        return form_class.rows[prefix].form.base_fields[field]
    if form_class is PolicyForm and name.startswith("per_step__"):
        return PolicyForm(SPEC, formats.to_document(SPEC)["policy"]).fields[name]
    return form_class.base_fields[name]


TYPED = typed_fields()


@pytest.mark.parametrize(
    "op, form, query, html_id, name, bad", TYPED, ids=[f"{t[0]}-{t[4]}" for t in TYPED]
)
def test_a_bad_value_in_a_typed_field_is_refused_beside_it_and_nothing_is_saved(
    editor, hotel, op, form, query, html_id, name, bad
):
    posted = {**first_shown(editor, hotel, query, html_id), name: bad}
    response = post(editor, hotel, form, op, posted)
    assert response.status_code == 400
    body = response.content.decode()
    shown = body.split(f'id="{html_id}"')[1].split("</form>")[0]
    beside = shown.split(f'name="{name}"')[1].split("<label")[0]
    assert 'class="field-error"' in beside
    if not isinstance(_field(FORM_CLASSES[op], op, name), (django_forms.ChoiceField,)):
        assert bad.replace("'", "&#x27;") in shown.split(f'name="{name}"')[1][:300]
    assert hotel.head().number == 1


def test_a_per_action_entry_of_one_policy_is_no_field_of_another():
    with_entry = PolicyForm(SPEC, {"per_step": {"reserve": {"attempts": 2}}})
    without = PolicyForm(SPEC, {})
    assert "per_step__reserve__attempts" in with_entry.fields
    assert "per_step__reserve__attempts" not in without.fields
    assert "per_step__reserve__attempts" not in PolicyForm.base_fields
