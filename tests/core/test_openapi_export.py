"""The OpenAPI export: a chain as OpenAPI 3.1 with x-chain extensions, and back, losing nothing.

Every fixture chain and the 13 public chains (SPEC §6-§7 and compiles/*.chain.md,
read from the spec mirror as bench/real_chains.py reads them) go out and come
back with the same canonical document, as they are and with a synthetic binding
on every action, so that each action travels as an operation.
"""

from __future__ import annotations

import copy
import doctest
import importlib.util
import json
import os
from functools import cache
from pathlib import Path

import pytest

from chains.core import formats
from chains.core.export import export
from chains.core.formats import http_places, openapi_chain, openapi_operation
from chains.core.formats.openapi_chain import is_chain_openapi, to_openapi
from chains.core.model import ChainSpec, is_keyed
from tests.conftest import FIXTURES, fixture_chains

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(
    os.environ.get("CHAIN_RE_ACTION_GIT", "/work/.mirror/ottotheagent+chain-re-action/repo")
)
FIXTURE_FILES = sorted(p.name for p in [*FIXTURES.glob("*.yaml"), *FIXTURES.glob("*.md")])
FIXTURE_FILES.remove("README.md")
PUBLIC_SOURCES = ("spec-6", "spec-7", "duffel", "stripe", "travelport", "bookingcom")


@cache
def public_chains() -> dict[str, ChainSpec]:
    """The public chains by id, read from the spec mirror once (empty when it is absent)."""
    if not (MIRROR / "HEAD").exists():
        return {}
    where = ROOT / "bench" / "real_chains.py"
    loader = importlib.util.spec_from_file_location("bench_real_chains", where)
    assert loader is not None and loader.loader is not None
    bench = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(bench)
    found = {}
    for name, text in bench.sources(str(MIRROR)).items():
        for chain in formats.load(text, filename=f"{name}.md").chains:
            found[chain.id] = chain
    return found


def _public(chain_id: str) -> ChainSpec:
    chains = public_chains()
    if not chains:
        pytest.skip(f"the chain-re-action mirror is absent ({MIRROR}); set CHAIN_RE_ACTION_GIT")
    return chains[chain_id]


# The ids of the public chains, as the compile importer names them today.
PUBLIC_IDS = (
    "worked_example_a_flight_booking_chain",
    "worked_example_b_card_payment_capture_chain",
    "duffel_instant_order",
    "duffel_hold_order",
    "duffel_order_change",
    "chain_m_manual_capture_payment",
    "chain_r_refund",
    "chain_a_book_ticket",
    "chain_b_void_refund",
    "chain_c_exchange",
    "scope_a_stay_booking_chain",
    "modify_chain",
    "cancel_chain",
)

_METHOD = {"read": "GET", "mint": "POST", "commit": "POST", "compensate": "DELETE"}


def bound(spec: ChainSpec) -> ChainSpec:
    """``spec`` with an HTTP binding on every action, using every kind of place.

    The first handle an action sends is a path parameter, the second a
    header, the rest body fields; the first intent field is a query
    parameter, the rest body fields; the first minted handle is read from
    the body, the rest from headers; keyed actions name their key's header.
    """
    document = formats.to_document(spec)
    for n, action in enumerate(document.get("actions", [])):
        handles = action.get("input", {}).get("handles", [])
        intent = list(action.get("input", {}).get("intent", {}))
        minted = action.get("output", {}).get("handles", [])
        sends = {}
        path = f"/steps/{n}"
        for k, handle in enumerate(handles):
            if k == 0:
                sends[handle] = f"path:{handle}"
                path += f"/{{{handle}}}"
            else:
                sends[handle] = f"header:X-{handle}" if k == 1 else f"body:/handles/{handle}"
        for k, field in enumerate(intent):
            sends[field] = f"query:{field}" if k == 0 else f"body:/data/{k - 1}/{field}"
        reads = {h: f"body:/data/{h}" if k == 0 else f"header:X-{h}" for k, h in enumerate(minted)}
        http = {"method": _METHOD.get(action["effect"], "POST"), "path": path, "sends": sends}
        if reads:
            http["reads"] = reads
        if n % 2:
            http["operation_id"] = f"op{n}{action['id'].title()}"
        if is_keyed(spec.actions[n]):
            http["idempotency_header"] = "Idempotency-Key"
        action["http"] = http
    return formats.from_document(document)


def round_trip(spec: ChainSpec) -> formats.ImportResult:
    return formats.load(export(spec, "openapi"), filename=f"{spec.id}.openapi.json")


def canonical(spec: ChainSpec) -> str:
    return json.dumps(formats.to_document(spec), ensure_ascii=False)


def the_only_chain(result: formats.ImportResult) -> ChainSpec:
    assert [p for p in result.problems if p.severity != "info"] == []
    (chain,) = result.chains
    return chain


def test_the_modules_doctests_pass():
    for module in (openapi_chain, openapi_operation, http_places):
        assert doctest.testmod(module).failed == 0


# --- the round trip ------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_fixture_chain_comes_back_with_the_same_canonical_document(name):
    for chain in fixture_chains(name):
        assert canonical(the_only_chain(round_trip(chain))) == canonical(chain)


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_fixture_chain_bound_to_http_comes_back_with_the_same_canonical_document(name):
    for chain in fixture_chains(name):
        chain = bound(chain)
        assert canonical(the_only_chain(round_trip(chain))) == canonical(chain)


@pytest.mark.parametrize("chain_id", PUBLIC_IDS)
def test_every_public_chain_comes_back_with_the_same_canonical_document(chain_id):
    chain = _public(chain_id)
    assert canonical(the_only_chain(round_trip(chain))) == canonical(chain)


@pytest.mark.parametrize("chain_id", PUBLIC_IDS)
def test_every_public_chain_bound_to_http_comes_back_with_the_same_canonical_document(chain_id):
    chain = bound(_public(chain_id))
    assert canonical(the_only_chain(round_trip(chain))) == canonical(chain)


def test_the_mirror_gives_the_thirteen_public_chains():
    if not public_chains():
        pytest.skip(f"the chain-re-action mirror is absent ({MIRROR})")
    assert sorted(public_chains()) == sorted(PUBLIC_IDS)


# --- what goes where -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def flight() -> ChainSpec:
    return bound(fixture_chains("flight-roundtrip.yaml")[0])


def test_each_bound_action_is_one_operation_at_its_method_and_path(flight):
    paths = to_openapi(flight)["paths"]
    found = sorted(
        (op["x-chain-action"], method.upper(), path)
        for path, item in paths.items()
        for method, op in item.items()
    )
    assert found == sorted((a.id, a.http.method, a.http.path) for a in flight.actions)


def test_the_operation_id_is_the_bindings_else_the_action_id(flight):
    operations = {
        op["x-chain-action"]: op
        for item in to_openapi(flight)["paths"].values()
        for op in item.values()
    }
    for action in flight.actions:
        assert operations[action.id]["operationId"] == (action.http.operation_id or action.id)


def test_an_operation_carries_the_actions_effect_idempotency_and_other_fields():
    chain = bound(fixture_chains("flight-roundtrip.yaml")[0])
    book = next(a for a in chain.actions if a.id == "book_trip")
    operation = to_openapi(chain)["paths"][book.http.path]["post"]
    assert operation["x-chain-effect"] == "commit"
    written = formats.to_document(chain)["actions"][chain.actions.index(book)]
    assert operation["x-chain-idempotency"] == written["idempotency"]
    assert operation["x-chain-confirmation"]["probe"] == book.confirmation.probe
    assert operation["x-chain-input"]["handles"] == ["price_lock"]


def test_the_top_level_x_chain_lists_bound_actions_by_id_and_holds_no_operation_again(flight):
    rest = to_openapi(flight)["x-chain"]
    assert rest["actions"] == [a.id for a in flight.actions]
    assert rest["handles"] == formats.to_document(flight)["handles"]
    assert "effect" not in json.dumps(rest["actions"])


def test_an_unbound_action_travels_whole_in_x_chain():
    chain = fixture_chains("flight-roundtrip.yaml")[0]
    rest = to_openapi(chain)["x-chain"]
    assert rest["actions"] == formats.to_document(chain)["actions"]


def test_two_actions_at_one_method_and_path_keep_the_second_whole_in_x_chain():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {"id": "a", "effect": "read", "http": {"method": "GET", "path": "/o/{id}"}},
                {"id": "b", "effect": "read", "http": {"method": "GET", "path": "/o/{order}"}},
            ],
        }
    )
    document = to_openapi(chain)
    assert list(document["paths"]) == ["/o/{id}"]
    assert document["x-chain"]["actions"][1]["id"] == "b"
    assert canonical(the_only_chain(round_trip(chain))) == canonical(chain)


def test_parameters_come_from_sends_and_the_idempotency_header():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {
                    "id": "pay",
                    "effect": "commit",
                    "input": {"handles": ["order_id"], "intent": {"note": "string?"}},
                    "idempotency": {"mode": "keyed"},
                    "http": {
                        "method": "POST",
                        "path": "/orders/{id}/pay",
                        "idempotency_header": "Idempotency-Key",
                        "sends": {"order_id": "path:id", "note": "query:note"},
                    },
                }
            ],
        }
    )
    operation = to_openapi(chain)["paths"]["/orders/{id}/pay"]["post"]
    shown = [(p["in"], p["name"], p["required"]) for p in operation["parameters"]]
    assert shown == [
        ("path", "id", True),
        ("query", "note", False),
        ("header", "Idempotency-Key", True),
    ]


def test_the_request_body_is_sketched_from_body_pointers():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {
                    "id": "book",
                    "effect": "commit",
                    "http": {
                        "method": "POST",
                        "path": "/orders",
                        "sends": {"offer_id": "body:/data/offers/0", "pax": "body:/data/pax"},
                    },
                }
            ],
        }
    )
    schema = to_openapi(chain)["paths"]["/orders"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"]
    assert schema["properties"]["data"]["properties"]["offers"]["type"] == "array"
    assert set(schema["properties"]["data"]["properties"]) == {"offers", "pax"}


def test_responses_name_the_documented_errors_by_status():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {
                    "id": "book",
                    "effect": "read",
                    "documented_errors": ["http:409 && code:OFFER_EXPIRED", "http:4xx", "timeout"],
                    "http": {"method": "GET", "path": "/orders"},
                }
            ],
        }
    )
    responses = to_openapi(chain)["paths"]["/orders"]["get"]["responses"]
    assert list(responses) == ["200", "409", "4XX", "default"]
    assert "code:OFFER_EXPIRED" in responses["409"]["description"]


def test_x_chain_verdicts_hold_the_rows_scoped_to_the_step_then_its_generic_rows():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {"id": "search", "effect": "read", "http": {"method": "GET", "path": "/s"}},
                {"id": "book", "effect": "commit", "http": {"method": "POST", "path": "/b"}},
            ],
            "verdict_table": [
                {"id": "D1", "signal": "http:410", "scope": ["search"], "verdict": "retry"},
                {"id": "D2", "signal": "http:409", "scope": ["book"], "verdict": "reconcile"},
                {"id": "D3", "signal": "http:400", "verdict": "dead_end"},
            ],
        }
    )
    rows = to_openapi(chain)["paths"]["/b"]["post"]["x-chain-verdicts"]
    assert [r["id"] for r in rows] == [
        "D2",
        "D3",
        "#3",
        "#5",
        "#7",
        "#8",
        "#9",
        "#10",
        "#11",
        "#12",
    ]
    assert rows[0] == formats.to_document(chain)["verdict_table"][1]


# --- editing the document ------------------------------------------------------------------


def _exported(chain: ChainSpec) -> dict:
    return json.loads(export(chain, "openapi"))


def _load(document: dict) -> formats.ImportResult:
    return formats.load(json.dumps(document, indent=2), filename="edited.openapi.json")


def test_editing_x_chain_effect_changes_the_reimported_actions_effect(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"][seat_map.http.path]["get"]["x-chain-effect"] = "mint"
    again = the_only_chain(_load(document))
    assert again.action("seat_map").effect == "mint"
    assert canonical(again) != canonical(flight)


def test_editing_an_operations_path_moves_the_actions_binding(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"]["/seats/{quote_id}"] = document["paths"].pop(seat_map.http.path)
    assert the_only_chain(_load(document)).action("seat_map").http.path == "/seats/{quote_id}"


def test_a_malformed_effect_is_refused_naming_the_operation_and_field(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"][seat_map.http.path]["get"]["x-chain-effect"] = "maybe"
    result = _load(document)
    assert result.chains == []
    (problem,) = result.errors
    assert f"operation GET {seat_map.http.path}: x-chain-effect: expected read" in problem.message
    assert problem.line is not None


def test_an_unknown_x_chain_extension_is_refused_naming_the_operation_and_field(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"][seat_map.http.path]["get"]["x-chain-efect"] = "read"
    (problem,) = _load(document).errors
    assert problem.message.startswith(
        f"operation GET {seat_map.http.path}: x-chain-efect: no action"
    )


def test_a_malformed_binding_place_is_refused_naming_the_operation_and_the_send(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    operation = document["paths"][seat_map.http.path]["get"]
    operation["x-chain-http"]["sends"]["quote_id"] = "cookie:q"
    (problem,) = _load(document).errors
    assert f"GET {seat_map.http.path}: x-chain-http.sends.quote_id: 'cookie:q' is no place" in (
        problem.message
    )


def test_x_chain_http_may_not_repeat_the_method_the_operations_place_gives(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"][seat_map.http.path]["get"]["x-chain-http"]["method"] = "POST"
    (problem,) = _load(document).errors
    assert "x-chain-http.method: the operation's place gives the method" in problem.message


def test_a_reference_to_no_operation_is_refused_with_its_place_in_x_chain_actions(flight):
    document = _exported(flight)
    document["x-chain"]["actions"][0] = "nowhere"
    errors = _load(document).errors
    assert "x-chain.actions[0]: 'nowhere' names no operation's x-chain-action" in [
        p.message for p in errors
    ]


def test_an_operation_the_order_does_not_list_is_added_last_with_a_warning(flight):
    document = _exported(flight)
    del document["x-chain"]["actions"][0]
    result = _load(document)
    (chain,) = result.chains
    assert [a.id for a in chain.actions][-1] == flight.actions[0].id
    assert any("does not list" in p.message and p.severity == "warning" for p in result.problems)


def test_an_edited_rendered_part_is_not_read_and_says_so(flight):
    document = _exported(flight)
    seat_map = next(a for a in flight.actions if a.id == "seat_map")
    document["paths"][seat_map.http.path]["get"]["x-chain-verdicts"] = []
    result = _load(document)
    assert canonical(result.chains[0]) == canonical(flight)
    (warning,) = [p for p in result.problems if p.severity == "warning"]
    assert warning.message.startswith(f"operation GET {seat_map.http.path}: x-chain-verdicts:")


def test_an_operation_without_x_chain_action_is_left_out_with_a_warning(flight):
    document = _exported(flight)
    document["paths"]["/extra"] = {"get": {"responses": {"200": {"description": "ok"}}}}
    result = _load(document)
    assert canonical(result.chains[0]) == canonical(flight)
    assert any(
        p.message.startswith("operation GET /extra: has no x-chain-action") for p in result.problems
    )


def test_a_plain_openapi_document_is_no_chain_export():
    provider = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    assert not is_chain_openapi(provider)
    assert formats.load(json.dumps(provider), filename="provider.json").format == "json"


def test_the_export_reads_back_from_yaml_too(flight):
    import yaml

    text = yaml.safe_dump(_exported(flight), sort_keys=False)
    result = formats.load(text, filename="flight.openapi.yaml")
    assert result.format == "openapi"
    assert canonical(the_only_chain(result)) == canonical(flight)


def test_the_export_does_not_share_state_with_the_chain(flight):
    before = copy.deepcopy(formats.to_document(flight))
    document = to_openapi(flight)
    document["x-chain"]["handles"].clear()
    assert formats.to_document(flight) == before
