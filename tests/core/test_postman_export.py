"""The Postman export: a chain's bound calls as a collection v2.1 that carries handles along.

The shape is checked structurally (the keys a v2.1 collection requires); the
test scripts run in Node with a stand-in ``pm`` object when Node is there, so
a handle a step reads is shown to reach the next step's request. No network.
"""

from __future__ import annotations

import doctest
import json
import re
import shutil
import subprocess

import pytest

from chains.core import postman
from chains.core.export import export
from chains.core.model import ChainSpec, main_steps
from chains.core.postman import POSTMAN_SCHEMA, to_postman
from tests.conftest import fixture_chains
from tests.core.test_openapi_export import bound

NODE = shutil.which("node")
# Runs one request's test script against a canned answer; prints the variables it set.
_RUNNER = """
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const vars = {}, results = [];
const pm = {
  test: (name, fn) => {
    try { fn(); results.push([name, true]); } catch (e) { results.push([name, false]); }
  },
  expect: (v) => ({ to: { not: { equal: (x) => { if (v === x) throw new Error('equal'); } } } }),
  response: {
    json: () => input.body,
    headers: { get: (k) => input.headers[k] },
    to: { be: { success: true } },
  },
  collectionVariables: { set: (k, v) => { vars[k] = v; } },
};
new Function('pm', input.script)(pm);
console.log(JSON.stringify({ vars, results }));
"""


@pytest.fixture(scope="module")
def flight() -> ChainSpec:
    return bound(fixture_chains("flight-roundtrip.yaml")[0])


@pytest.fixture(scope="module")
def collection(flight) -> dict:
    return json.loads(export(flight, "postman"))


def _requests(folder: dict) -> list[dict]:
    return folder["item"]


def _folder(collection: dict, name: str) -> dict:
    return next(f for f in collection["item"] if f["name"] == name)


def test_the_module_doctests_pass():
    assert doctest.testmod(postman).failed == 0


def test_the_collection_has_the_keys_a_v2_1_collection_requires(collection):
    assert collection["info"]["schema"] == POSTMAN_SCHEMA
    assert collection["info"]["name"]
    for folder in collection["item"]:
        assert {"name", "item"} <= set(folder)
        for item in _requests(folder):
            assert {"name", "request", "event"} <= set(item)
            request = item["request"]
            assert {"method", "header", "url"} <= set(request)
            assert {"raw", "host", "path"} <= set(request["url"])
            assert all({"key", "value"} <= set(h) for h in request["header"])
            assert item["event"][0]["listen"] == "test"
            assert all(isinstance(line, str) for line in item["event"][0]["script"]["exec"])


def test_the_happy_path_folder_holds_the_main_steps_in_order(flight, collection):
    names = [item["name"] for item in _requests(_folder(collection, "happy path"))]
    assert names == main_steps(flight)


def test_probes_and_compensators_come_after_in_their_own_folder(flight, collection):
    names = [item["name"] for item in _requests(_folder(collection, "other calls"))]
    assert names == ["find_trips_by_reference", "get_cancel_options", "cancel_trip"]


def test_an_unbound_action_is_no_request():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {"id": "pick", "effect": "select"},
                {"id": "get", "effect": "read", "http": {"method": "GET", "path": "/x"}},
            ],
        }
    )
    (folder,) = to_postman(chain)["item"]
    assert [item["name"] for item in folder["item"]] == ["get"]


def test_a_chain_with_variants_gets_a_happy_path_per_variant():
    chain = ChainSpec.model_validate(
        {
            "id": "c",
            "variants": {"axis": "rail", "values": ["GDS", "NDC"]},
            "actions": [
                {"id": "a", "effect": "read", "http": {"method": "GET", "path": "/a"}},
                {
                    "id": "g",
                    "effect": "read",
                    "only": ["GDS"],
                    "http": {"method": "GET", "path": "/g"},
                },
                {
                    "id": "n",
                    "effect": "read",
                    "only": ["NDC"],
                    "http": {"method": "GET", "path": "/n"},
                },
            ],
        }
    )
    folders = {f["name"]: [i["name"] for i in f["item"]] for f in to_postman(chain)["item"]}
    assert folders == {"happy path (rail: GDS)": ["a", "g"], "happy path (rail: NDC)": ["a", "n"]}


def _one_request(binding: dict, **action) -> dict:
    chain = ChainSpec.model_validate(
        {"id": "c", "actions": [{"id": "call", "effect": "read", **action, "http": binding}]}
    )
    return to_postman(chain)["item"][0]["item"][0]


def test_a_path_parameter_segment_becomes_a_path_variable_filled_from_the_handle():
    request = _one_request(
        {"method": "GET", "path": "/orders/{id}", "sends": {"order_id": "path:id"}}
    )["request"]
    assert request["url"]["raw"] == "{{baseUrl}}/orders/:id"
    assert request["url"]["variable"] == [{"key": "id", "value": "{{order_id}}"}]


def test_a_parameter_inside_a_segment_becomes_a_variable_in_the_path():
    url = _one_request({"method": "GET", "path": "/files/{name}.json"})["request"]["url"]
    assert url["path"] == ["files", "{{name}}.json"]
    assert "variable" not in url


def test_query_and_header_places_are_filled_from_variables():
    request = _one_request(
        {"method": "GET", "path": "/s", "sends": {"page": "query:p", "session": "header:X-Session"}}
    )["request"]
    assert request["url"]["query"] == [{"key": "p", "value": "{{page}}"}]
    assert request["url"]["raw"] == "{{baseUrl}}/s?p={{page}}"
    assert {"key": "X-Session", "value": "{{session}}"} in request["header"]


def test_a_keyed_commit_sends_a_fresh_guid_in_its_idempotency_header():
    request = _one_request(
        {"method": "POST", "path": "/orders", "idempotency_header": "Idempotency-Key"},
        effect="commit",
        idempotency={"mode": "keyed"},
    )["request"]
    assert {"key": "Idempotency-Key", "value": "{{$guid}}"} in request["header"]


def test_the_body_is_a_skeleton_of_the_body_pointers():
    sends = {"offer_id": "body:/data/selected_offers/0", "pax": "body:/data/passengers"}
    request = _one_request({"method": "POST", "path": "/orders", "sends": sends})["request"]
    assert json.loads(request["body"]["raw"]) == {
        "data": {"selected_offers": ["{{offer_id}}"], "passengers": "{{pax}}"}
    }
    assert {"key": "Content-Type", "value": "application/json"} in request["header"]


def test_every_sent_or_read_name_is_a_collection_variable(flight, collection):
    variables = [v["key"] for v in collection["variable"]]
    assert variables[0] == "baseUrl"
    for action in flight.actions:
        assert set(action.http.sends) | set(action.http.reads) <= set(variables)
    assert len(variables) == len(set(variables))


def test_each_read_handle_is_stored_in_a_collection_variable(flight, collection):
    items = {item["name"]: item for folder in collection["item"] for item in folder["item"]}
    for action in flight.actions:
        script = "\n".join(items[action.id]["event"][0]["script"]["exec"])
        stored = re.findall(r'pm\.collectionVariables\.set\("([^"]+)"', script)
        assert stored == list(action.http.reads)


def test_a_handle_an_earlier_step_stores_is_the_variable_a_later_step_sends(flight, collection):
    stored: set[str] = set()
    carried = 0
    for item in _requests(_folder(collection, "happy path")):
        sent = json.dumps(item["request"])
        for handle in flight.action(item["name"]).input.handles:
            if handle in stored:
                assert "{{" + handle + "}}" in sent
                carried += 1
        script = "\n".join(item["event"][0]["script"]["exec"])
        stored.update(re.findall(r'pm\.collectionVariables\.set\("([^"]+)"', script))
    assert carried > 0


def _run_script(item: dict, body: object, headers: dict) -> dict:
    script = "\n".join(item["event"][0]["script"]["exec"])
    given = json.dumps({"script": script, "body": body, "headers": headers})
    done = subprocess.run(
        [NODE, "-e", _RUNNER], input=given, capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="Node is not installed: the scripts cannot run")
def test_running_a_script_stores_the_handles_its_answer_holds():
    item = _one_request(
        {
            "method": "POST",
            "path": "/orders",
            "reads": {"order_id": "body:/data/id", "session": "header:X-Session"},
        },
        effect="mint",
        output={"handles": ["order_id", "session"]},
    )
    ran = _run_script(item, {"data": {"id": "ord_1"}}, {"X-Session": "s-9"})
    assert ran["vars"] == {"order_id": "ord_1", "session": "s-9"}
    assert all(passed for _, passed in ran["results"])


@pytest.mark.skipif(NODE is None, reason="Node is not installed: the scripts cannot run")
def test_running_a_script_on_an_answer_without_the_handle_fails_its_test_and_stores_nothing():
    item = _one_request(
        {"method": "POST", "path": "/orders", "reads": {"order_id": "body:/data/id"}},
        effect="mint",
        output={"handles": ["order_id"]},
    )
    ran = _run_script(item, {"data": {}}, {})
    assert ran["vars"] == {}
    assert ["order_id is in the answer (body:/data/id)", False] in ran["results"]


@pytest.mark.skipif(NODE is None, reason="Node is not installed: the scripts cannot run")
def test_running_the_happy_path_in_order_carries_each_handle_to_the_step_that_sends_it(
    flight, collection
):
    kept: dict[str, str] = {}
    for item in _requests(_folder(collection, "happy path")):
        action = flight.action(item["name"])
        sent = json.dumps(item["request"])
        for handle in action.input.handles:
            if handle in kept:  # an earlier step read it: this request sends that variable
                assert "{{" + handle + "}}" in sent
        answer, headers = {}, {}
        for handle, place in action.http.reads.items():
            kind, where = place.split(":", 1)
            if kind == "header":
                headers[where] = f"{handle}-value"
            else:
                answer.setdefault("data", {})[where.rsplit("/", 1)[-1]] = f"{handle}-value"
        kept.update(_run_script(item, answer, headers)["vars"])
    assert kept == {
        handle: f"{handle}-value"
        for step in main_steps(flight)
        for handle in flight.action(step).http.reads
    }
