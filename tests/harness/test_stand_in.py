"""The provider stand-in made from an OpenAPI document's examples (chains/harness/stand_in.py):
what it answers, what it refuses at start, its command, and a harness run through it. Every
server runs on loopback and is stopped by the test that started it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chains.core.errors import DocumentError
from chains.core.model import ChainSpec
from chains.core.sim.schedules import schedules
from chains.harness.runner import Client, Target, provider_started, run_schedules
from chains.harness.stand_in import StandIn, minimal_instance

ROOT = Path(__file__).resolve().parent.parent.parent
SKYLOOM = ROOT / "fixtures" / "openapi" / "skyloom-air.yaml"
CLI = [sys.executable, "-c", "from chains.cli import main; raise SystemExit(main())"]

# A provider documented in Swagger 2.0, with an example on one answer and only a schema on another.
SWAGGER: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "Parcels", "version": "1"},
    "basePath": "/v2",
    "produces": ["application/json"],
    "paths": {
        "/parcels": {
            "post": {
                "responses": {
                    "201": {
                        "description": "made",
                        "schema": {"$ref": "#/definitions/Parcel"},
                        "examples": {"application/json": {"id": "pcl_0001", "state": "new"}},
                    }
                }
            }
        },
        "/parcels/{parcel_id}": {
            "get": {
                "parameters": [
                    {"name": "parcel_id", "in": "path", "required": True, "type": "string"}
                ],
                "responses": {
                    "200": {"description": "one", "schema": {"$ref": "#/definitions/Parcel"}},
                    "404": {"description": "none"},
                },
            }
        },
    },
    "definitions": {
        "Parcel": {
            "type": "object",
            "required": ["id", "weight", "sent_on", "route"],
            "properties": {
                "id": {"type": "string"},
                "weight": {"type": "number"},
                "sent_on": {"type": "string", "format": "date"},
                "route": {"$ref": "#/definitions/Route"},
                "note": {"type": "string"},
            },
        },
        "Route": {
            "type": "object",
            "required": ["stops", "next"],
            "properties": {
                "stops": {"type": "array", "items": {"type": "string"}},
                "next": {"$ref": "#/definitions/Route"},
            },
        },
    },
}


def openapi(responses: dict[str, Any]) -> str:
    """A one-operation OpenAPI 3 document (``GET /things``) with these responses."""
    return json.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "T", "version": "1"},
            "paths": {"/things": {"get": {"responses": responses}}},
        }
    )


def body(stand_in: StandIn, method: str, path: str) -> tuple[int, Any]:
    answer = stand_in.answer(method, path)
    return answer.status, json.loads(answer.body) if answer.body else None


@pytest.fixture(scope="module")
def skyloom() -> StandIn:
    return StandIn(SKYLOOM.read_bytes(), SKYLOOM.name)


@pytest.fixture(scope="module")
def parcels() -> StandIn:
    return StandIn(json.dumps(SWAGGER), "parcels.json")


def test_a_documented_example_is_answered_with_its_status(parcels):
    status, found = body(parcels, "POST", "/parcels")
    assert (status, found["state"]) == (201, "new")


def test_two_posts_mint_two_ids_with_the_example_s_prefix(parcels):
    first, second = (body(parcels, "POST", "/parcels")[1]["id"] for _ in range(2))
    assert first != second and first.startswith("pcl_") and second.startswith("pcl_")


def test_the_first_of_a_media_type_s_examples_is_answered():
    stand_in = StandIn(
        openapi(
            {
                "200": {
                    "description": "ok",
                    "content": {
                        "application/json": {"examples": {"a": {"value": [1]}, "b": {"value": [2]}}}
                    },
                }
            }
        )
    )
    assert body(stand_in, "GET", "/things") == (200, [1])


def test_a_schema_without_an_example_gets_a_minimal_instance_of_its_required_properties(parcels):
    status, found = body(parcels, "GET", "/parcels/pcl_9")
    assert status == 200
    assert found["id"] == "string" and found["weight"] == 0 and found["sent_on"] == "2026-01-01"
    assert found["route"]["stops"] == [] and "note" not in found


def test_a_recursive_schema_s_instance_stops_at_the_depth_cap(parcels):
    _, found = body(parcels, "GET", "/parcels/pcl_9")
    depth, route = 0, found["route"]
    while isinstance(route, dict) and route:
        depth, route = depth + 1, route.get("next")
    assert 1 < depth < 10


def test_the_schema_s_own_example_comes_before_a_built_instance():
    schema = {"type": "object", "required": ["a"], "example": {"a": "given"}}
    assert minimal_instance(schema, {}) == {"a": "given"}


def test_the_document_s_first_server_path_may_prefix_a_request(parcels):
    assert body(parcels, "GET", "/v2/parcels/pcl_9")[0] == 200


def test_an_answer_the_document_gives_no_content_has_no_body(skyloom):
    answer = skyloom.answer("GET", "/offers/off_1?expand=fare")
    assert (answer.status, answer.body) == (200, b"")


def test_a_fixed_path_wins_over_a_template_that_also_matches(skyloom):
    assert skyloom.answer("POST", "/orders/hold").status == 201
    assert skyloom.answer("GET", "/orders/hold").status == 200  # /orders/{order_id}


def test_an_unknown_path_is_not_found(skyloom):
    assert body(skyloom, "GET", "/hotels") == (404, {"error": {"code": "not_found"}})


def test_a_known_path_with_another_method_is_not_allowed(skyloom):
    answer = skyloom.answer("PUT", "/orders")
    assert answer.status == 405 and ("Allow", "GET, POST") in answer.headers


def test_a_reference_to_a_file_is_refused_at_start(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("type: object\n")
    text = openapi(
        {
            "200": {
                "description": "ok",
                "content": {"application/json": {"schema": {"$ref": str(secret)}}},
            }
        }
    )
    with pytest.raises(DocumentError, match="points outside the document"):
        StandIn(text)


def test_a_document_that_is_no_openapi_is_refused():
    with pytest.raises(DocumentError, match="not an OpenAPI document"):
        StandIn('{"title": "a chain, not a provider"}')


@pytest.fixture
def served() -> Iterator[str]:
    with provider_started([*CLI, "stand-in", str(SKYLOOM), "--port", "0"]) as url:
        yield url


def test_the_command_prints_where_it_listens_and_serves_the_document(served):
    request = urllib.request.Request(served + "/orders", data=b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 201
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(served + "/hotels", timeout=5)
    assert refused.value.code == 404


def test_the_command_stops_on_sigterm():
    process = subprocess.Popen(
        [*CLI, "stand-in", str(SKYLOOM)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(b"listening on http://127.0.0.1:")
        process.terminate()
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()


def test_the_command_refuses_a_document_that_refers_outside_itself(tmp_path):
    document = tmp_path / "provider.json"
    document.write_text(openapi({"200": {"$ref": "other.yaml#/Ok"}}))
    done = subprocess.run(
        [*CLI, "stand-in", str(document)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and "points outside the document" in done.stderr


# One skyloom read (listEvents), bound, and a client that reads it once.
EVENTS = ChainSpec.model_validate(
    {
        "id": "skyloom_events",
        "actions": [
            {"id": "events", "effect": "read", "http": {"method": "GET", "path": "/events"}}
        ],
        "verdict_table": [
            {"id": "R1", "signal": ["http:5xx"], "verdict": "retry"},
            {"id": "R2", "signal": ["http:429"], "verdict": "retry"},
        ],
    }
)
READ_ONCE = (
    "import os, urllib.request as r; "
    "r.urlopen(os.environ['PROVIDER_URL'] + '/events', timeout=1).read()"
)


def test_a_client_reading_through_the_stand_in_keeps_to_the_chain_under_one_fault(served, tmp_path):
    client = Client([sys.executable, "-c", READ_ONCE], timeout=30)
    found = schedules(EVENTS, 1)
    results = run_schedules(EVENTS, found, client, Target(served, hold_seconds=1.2), tmp_path)
    assert len(results) > 1 and all(r.clean for r in results)
    assert results[0].exchanges == ["GET /events [events call 1]: 200"]
