"""The API: every operation asked by every role, tokens, errors as JSON, and what each returns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from chains.core import formats
from chains.models import (
    ApiToken,
    Chain,
    Comment,
    Exploration,
    HarnessRun,
    Review,
    Role,
    SavedScenario,
)
from chains.services import access
from chains.tasks import explore_shard
from designer.api import api

ROOT = Path(__file__).resolve().parent.parent
FLIGHT = ROOT / "fixtures" / "flight-roundtrip.yaml"
LOST = ROOT / "fixtures" / "scenarios" / "flight-lost-booking-response.yaml"
SMALL = "id: small\nactions:\n  - {id: look, effect: read}\n"
PEOPLE = ["outsider", "viewer", "reviewer", "editor", "owner"]
RANK = {name: n for n, name in enumerate(PEOPLE)}
K = "flight_roundtrip"

# (method, path, smallest role, JSON body) for every operation; "anyone" = any signed-in person.
API_ACCESS = [
    ("GET", "/api/chains", "anyone", None),
    ("POST", "/api/chains", "anyone", {"document": SMALL, "filename": "s.yaml"}),
    ("GET", f"/api/chains/{K}", "viewer", None),
    ("GET", f"/api/chains/{K}/revisions", "viewer", None),
    ("GET", f"/api/chains/{K}/revisions/1", "viewer", None),
    ("GET", f"/api/chains/{K}/diff?from=1", "viewer", None),
    (
        "POST",
        f"/api/chains/{K}/edits",
        "editor",
        {"op": "add_handle", "base": 1, "args": {"id": "x"}},
    ),
    ("POST", f"/api/chains/{K}/undo", "editor", {"base": 1}),
    ("POST", f"/api/chains/{K}/redo", "editor", {"base": 1}),
    ("POST", "/api/lint", "anyone", {"document": SMALL, "filename": "s.yaml"}),
    ("GET", f"/api/chains/{K}/lint", "viewer", None),
    ("GET", f"/api/chains/{K}/cascade/search_token", "viewer", None),
    ("GET", f"/api/chains/{K}/repair-scope?step=outbound_search&fields=dates", "viewer", None),
    ("POST", f"/api/chains/{K}/simulate", "viewer", {"scenario": LOST.read_text()}),
    ("POST", f"/api/chains/{K}/runs", "editor", {"scenario": LOST.read_text()}),
    ("GET", f"/api/chains/{K}/scenarios", "viewer", None),
    ("POST", f"/api/chains/{K}/scenarios", "editor", {"name": "s", "scenario": LOST.read_text()}),
    ("GET", f"/api/chains/{K}/test-vectors", "viewer", None),
    ("POST", f"/api/chains/{K}/campaigns", "editor", {"max_faults": 0}),
    ("GET", f"/api/chains/{K}/campaigns/{{campaign}}", "viewer", None),
    ("POST", f"/api/chains/{K}/campaigns/{{campaign}}/cancel", "editor", None),
    (
        "POST",
        f"/api/chains/{K}/harness-runs",
        "editor",
        {"chain": K, "clean": True, "schedules": []},
    ),
    ("GET", f"/api/chains/{K}/harness-runs", "viewer", None),
    ("GET", f"/api/chains/{K}/harness-runs/{{harness}}", "viewer", None),
    ("GET", f"/api/chains/{K}/revisions/1/export?format=yaml", "viewer", None),
    ("GET", f"/api/chains/{K}/comments", "viewer", None),
    (
        "POST",
        f"/api/chains/{K}/comments",
        "reviewer",
        {"body": "why?", "anchor": "handle:quote_id"},
    ),
    ("GET", f"/api/chains/{K}/comments/{{comment}}/replies", "viewer", None),
    ("POST", f"/api/chains/{K}/comments/{{comment}}/resolve", "reviewer", None),
    ("GET", f"/api/chains/{K}/reviews", "viewer", None),
    ("POST", f"/api/chains/{K}/reviews", "editor", {"reviewers": ["reviewer"]}),
    (
        "POST",
        f"/api/chains/{K}/reviews/{{review}}/vote",
        "reviewer",
        {"vote": "request_changes", "note": "x"},
    ),
    ("GET", "/api/schema", "public", None),
]


def template(path: str) -> str:
    """``/api/chains/{key}/...`` from a concrete path: how OpenAPI names the operation."""
    parts = path.split("?")[0].split("/")
    names = {3: "{key}", 5: "{number}" if "revisions" in parts else "{pk}"}
    if "{" in path:  # the fixtures' pks, named {campaign}, {comment}, {review}
        parts = ["{pk}" if p.startswith("{") and p not in ("{key}",) else p for p in parts]
    if "cascade" in parts:
        names[5] = "{handle}"
    return "/".join(
        names.get(i, p) if i in names and len(parts) > i else p for i, p in enumerate(parts)
    )


@pytest.fixture
def sent(monkeypatch):
    calls: list = []
    monkeypatch.setattr(explore_shard, "delay", lambda *args: calls.append(args))
    return calls


@pytest.fixture
def campaign(flight, sent) -> Exploration:
    return Exploration.objects.launch(flight.head(), {"max_faults": 0})


@pytest.fixture
def ids(flight, campaign, people) -> dict[str, int]:
    """The pks the operations' paths need: a campaign, a comment, a review."""
    comment = Comment.objects.post(flight.head(), people["reviewer"], "why?", anchor="chain")
    review = Review.objects.request(flight.head(), people["owner"], ["reviewer"])
    harness = HarnessRun.objects.create(chain=flight, revision=flight.head())
    return {
        "campaign": campaign.pk,
        "comment": comment.pk,
        "review": review.pk,
        "harness": harness.pk,
    }


def bearer(user) -> Client:
    _, secret = ApiToken.objects.issue(user, "test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def call(client: Client, method: str, path: str, body=None):
    if method == "GET":
        return client.get(path)
    return client.post(path, json.dumps(body or {}), content_type="application/json")


OPENAPI = api.get_openapi_schema()
# "METHOD /path": {"status": answer} for every operation of the OpenAPI document.
RESPONSES = {
    f"{method.upper()} {path}": {str(code): a for code, a in operation["responses"].items()}
    for path, methods in OPENAPI["paths"].items()
    for method, operation in methods.items()
}


def resolve(schema: dict) -> dict:
    """``schema`` with a ``$ref`` to ``#/components/schemas/...`` followed."""
    while "$ref" in schema:
        schema = OPENAPI["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_of_the_api_has_an_access_rule():
    documented = {
        (method.upper(), path)
        for path, operations in OPENAPI["paths"].items()
        for method in operations
    }
    assert documented == {(m, template(p)) for m, p, _, _ in API_ACCESS}


@pytest.mark.parametrize("operation", sorted(RESPONSES))
def test_every_operation_declares_the_shape_of_its_success(operation):
    """A JSON answer names its fields (after ``$ref`` and array items); a file says its types."""
    success = {code: a for code, a in RESPONSES[operation].items() if code.startswith("2")}
    assert success, f"{operation} declares no 2xx response"
    for answer in success.values():
        content = answer.get("content", {})
        assert content, f"{operation} declares no content for its answer"
        if list(content) != ["application/json"]:  # a file: each media type has its schema
            assert all(kind.get("schema") for kind in content.values()), operation
            continue
        schema = resolve(content["application/json"]["schema"])
        schema = resolve(schema.get("items", schema))
        assert schema.get("properties"), f"{operation} answers JSON of no declared shape"


@pytest.mark.parametrize("operation", sorted(RESPONSES))
def test_every_error_an_operation_declares_is_the_one_error_shape(operation):
    errors = {code: a for code, a in RESPONSES[operation].items() if code[0] in "45"}
    if operation != "GET /api/schema":  # the one operation without a sign-in or a parameter
        assert {"401", "404", "422"} <= set(errors), operation
    for answer in errors.values():
        schema = answer["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorOut"}, operation


# The operations on one stored chain: each must reach it through the access service.
KEYED = [(m, p, needed, b) for m, p, needed, b in API_ACCESS if p.startswith(f"/api/chains/{K}")]


def replace_chain_access(monkeypatch, stand_in) -> None:
    """Put ``stand_in`` for ``services.access.chain_access`` wherever a module of ours holds it."""
    real = access.chain_access
    for name, module in list(sys.modules.items()):
        ours = name.split(".")[0] in ("chains", "designer")
        if ours and vars(module).get("chain_access") is real:
            monkeypatch.setattr(module, "chain_access", stand_in)


@pytest.fixture
def asked(monkeypatch) -> list[tuple[str, str, str]]:
    """Every call of ``services.access.chain_access`` from now on: (username, key, role).

    The spy answers as the service does (see :func:`replace_chain_access`), so
    it hears the API however the API imports the service.
    """
    real = access.chain_access
    calls: list[tuple[str, str, str]] = []

    def spy(user, key, role=Role.VIEWER, team=None):
        calls.append((user.username, key, role))
        return real(user, key, role, team)

    replace_chain_access(monkeypatch, spy)
    return calls


@pytest.mark.parametrize(("method", "path", "needed", "body"), KEYED)
def test_every_operation_on_a_chain_asks_the_access_service_for_the_role_it_needs(
    ids, people, asked, method, path, needed, body
):
    response = call(bearer(people[needed]), method, path.format(**ids), body)
    # answered, not refused (undo at revision 1 has nothing to undo: a 400 of its own)
    assert response.status_code not in (401, 403, 404), response.content[:300]
    assert response.status_code < 500, response.content[:300]
    assert asked, "the operation reached the chain without asking the access service"
    assert {role for _, _, role in asked} == {needed}, asked
    assert {(who, key) for who, key, _ in asked} == {(needed, K)}


REFUSALS = {
    "not_found": (404, lambda chain: access.ChainNotFound(f"no chain {chain.key!r}")),
    "forbidden": (403, lambda chain: access.ChainForbidden(chain, Role.OWNER, Role.EDITOR)),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
@pytest.mark.parametrize(("method", "path", "needed", "body"), KEYED)
def test_when_the_access_service_refuses_the_owner_every_operation_refuses_and_changes_nothing(
    ids, people, flight, monkeypatch, refusal, method, path, needed, body
):
    status, raised = REFUSALS[refusal]

    def refuse(user, key, role=Role.VIEWER, team=None):
        raise raised(flight)

    replace_chain_access(monkeypatch, refuse)
    before = (flight.revisions.count(), Comment.objects.count(), Review.objects.count())
    response = call(bearer(people["owner"]), method, path.format(**ids), body)
    assert response.status_code == status, response.content[:300]
    assert response.json()["error"]["code"] == refusal
    assert (flight.revisions.count(), Comment.objects.count(), Review.objects.count()) == before


def cases():
    for method, path, needed, body in API_ACCESS:
        if needed == "public":
            continue
        for person in PEOPLE:
            allowed = needed == "anyone" or RANK[person] >= RANK[needed]
            yield pytest.param(method, path, body, person, allowed, id=f"{method}{path}-{person}")


@pytest.mark.parametrize(("method", "path", "body", "person", "allowed"), list(cases()))
def test_each_role_may_call_exactly_the_operations_its_rank_allows(
    ids, people, method, path, body, person, allowed
):
    response = call(bearer(people[person]), method, path.format(**ids), body)
    if allowed:  # and answered within its schema: a key the schema lacks would be a 500
        assert response.status_code not in (401, 403, 404), response.content[:300]
        assert response.status_code < 500, response.content[:300]
    elif person == "outsider":
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    else:
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    ("method", "path", "body"), [(m, p, b) for m, p, n, b in API_ACCESS if n != "public"]
)
def test_without_a_token_or_a_session_an_operation_is_401_in_json(ids, method, path, body):
    response = call(Client(), method, path.format(**ids), body)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_the_schema_needs_no_account():
    schema = Client().get("/api/schema").json()
    assert schema == formats.json_schema()


def test_a_revoked_or_made_up_token_is_refused(people):
    token, secret = ApiToken.objects.issue(people["viewer"], "ci")
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/chains").status_code == 200
    token.revoke()
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/chains").status_code == 401
    assert Client(HTTP_AUTHORIZATION="Bearer cd_0000_nope").get("/api/chains").status_code == 401


def test_a_token_is_stored_only_as_a_fingerprint(people):
    token, secret = ApiToken.objects.issue(people["viewer"], "ci")
    assert secret not in json.dumps(list(ApiToken.objects.values()), default=str)
    assert secret.startswith(f"cd_{token.prefix}_")


def test_a_session_post_needs_the_csrf_token(people):
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["editor"])
    response = client.post(
        "/api/lint", json.dumps({"document": SMALL}), content_type="application/json"
    )
    assert response.status_code == 403


def test_a_document_that_does_not_load_is_400_with_its_problems_and_their_places(people):
    bad = "id: broken\nactions:\n  - {id: a, effect: teleport}\n"
    response = call(
        bearer(people["editor"]), "POST", "/api/chains", {"document": bad, "filename": "b.yaml"}
    )
    assert response.status_code == 400
    error = response.json()
    assert error["error"]["code"] == "invalid_document"
    assert error["problems"][0]["line"] == 3
    assert error["problems"][0]["path"] == "actions[a].effect"
    assert not Chain.objects.filter(key="broken").exists()


def test_a_body_of_the_wrong_shape_is_422_naming_the_field(people):
    response = call(bearer(people["editor"]), "POST", "/api/lint", {"document": 5})
    assert response.status_code == 422
    assert response.json()["error"]["location"] == "body.body.document"


def test_listing_chains_costs_the_same_queries_for_one_chain_as_for_many(team, people):
    client = bearer(people["viewer"])

    def listed() -> tuple[int, list]:
        with CaptureQueriesContext(connection) as queries:
            answer = client.get("/api/chains").json()
        return len(queries), answer

    Chain.objects.store({"id": "c0", "actions": [{"id": "a", "effect": "read"}]}, team=team)
    one, _ = listed()
    for n in range(1, 5):
        Chain.objects.store({"id": f"c{n}", "actions": [{"id": "a", "effect": "read"}]}, team=team)
    many, answer = listed()
    assert many == one
    heads = {chain.key: chain.head() for chain in Chain.objects.all()}
    assert [(c["key"], c["head"], c["status"]) for c in answer] == [
        (key, 1, heads[key].lint_status()) for key in sorted(heads)
    ]


def test_importing_stores_the_chain_in_the_callers_team(team, people):
    response = call(
        bearer(people["editor"]), "POST", "/api/chains", {"document": SMALL, "filename": "s.yaml"}
    )
    assert response.status_code == 201
    assert response.json()["stored"] == [
        {"id": "small", "team": "flight-desk", "revision": 1, "created": True}
    ]
    assert Chain.objects.get(key="small").team == team


def test_lint_of_a_posted_document_gives_the_status_a_pipeline_fails_on(people):
    unsafe = (ROOT / "fixtures" / "unsafe-retry-booking.yaml").read_text()
    report = call(bearer(people["viewer"]), "POST", "/api/lint", {"document": unsafe}).json()
    assert report["status"] == "INVALID"
    assert any(
        f["rule"] == "table.no-side-effect-on-ambiguous-signal"
        for f in report["chains"][0]["findings"]
    )


def test_the_cascade_of_a_handle_lists_what_dies_and_the_facts_it_keeps(flight, people):
    found = call(bearer(people["viewer"]), "GET", f"/api/chains/{K}/cascade/search_token").json()
    assert "quote_id" in found["invalidated"]
    assert found["facts"] == ["trip_locator"]


def test_an_unknown_handle_is_404_naming_it(flight, people):
    response = call(bearer(people["viewer"]), "GET", f"/api/chains/{K}/cascade/nothing")
    assert response.status_code == 404
    assert response.json()["error"] == {
        "code": "unknown_handle",
        "message": "the chain has no handle 'nothing'",
        "location": "handle",
    }


def test_simulating_a_scenario_returns_its_trace_and_outcome(flight, people):
    result = call(
        bearer(people["viewer"]),
        "POST",
        f"/api/chains/{K}/simulate",
        {"scenario": LOST.read_text()},
    ).json()
    assert result["state"] == "done"
    assert result["dispatches"]["book_trip"] == 1
    assert result["trace"][0]["note"] == "start"


def test_a_scenario_that_does_not_fit_is_400_saying_where(flight, people):
    bad = {"events": [{"probe": "landed"}]}
    response = call(
        bearer(people["viewer"]), "POST", f"/api/chains/{K}/simulate", {"scenario": bad}
    )
    assert response.status_code == 400
    assert "event 1" in response.json()["error"]["message"]


def test_saving_a_scenario_records_its_outcome(flight, people):
    body = {"name": "lost booking", "scenario": LOST.read_text()}
    response = call(bearer(people["editor"]), "POST", f"/api/chains/{K}/scenarios", body)
    assert response.status_code == 201
    assert response.json()["expect"]["state"] == "done"
    assert SavedScenario.objects.get(name="lost booking").document["expect"]["state"] == "done"


def test_a_campaign_started_through_the_api_reports_its_progress(
    flight, people, sent, django_capture_on_commit_callbacks
):
    editor = bearer(people["editor"])
    with django_capture_on_commit_callbacks(execute=True):
        started = call(editor, "POST", f"/api/chains/{K}/campaigns", {"max_faults": 0, "shards": 2})
    assert started.status_code == 201
    assert started.json()["status"] == "queued" and len(sent) == 2
    progress = call(editor, "GET", f"/api/chains/{K}/campaigns/{started.json()['id']}").json()
    assert progress["shard_count"] == 2 and progress["result"] is None


def finished_campaign(people, bounds: dict) -> dict:
    """A campaign launched through the API, its shards run here, then read back."""
    editor = bearer(people["editor"])
    started = call(editor, "POST", f"/api/chains/{K}/campaigns", {**bounds, "shards": 2}).json()
    for index in range(2):
        explore_shard.apply(args=(started["id"], index))
    return call(editor, "GET", f"/api/chains/{K}/campaigns/{started['id']}").json()


def test_a_finished_campaign_reports_its_coverage_and_that_it_is_complete(flight, people, sent):
    result = finished_campaign(people, {"max_faults": 0})["result"]
    coverage = result["coverage"]
    assert set(coverage) == {"steps", "rows", "outcomes", "compensations"}
    assert coverage["steps"]["total"] == 9 and len(coverage["steps"]["reached"]) == 9
    assert set(coverage["outcomes"]) == {"taken", "total"}
    assert result["complete"] is True and result["warnings"] == []


def test_a_clean_campaign_that_stopped_short_reports_incomplete_with_warnings(flight, people, sent):
    result = finished_campaign(people, {"max_faults": 0, "max_events": 3})["result"]
    assert result["violations"] == [] and result["complete"] is False
    assert result["warnings"][0].startswith("the happy path does not reach done: walks at ")
    assert "book_trip" in result["not_covered"]["steps"]
    assert len(result["coverage"]["steps"]["reached"]) < result["coverage"]["steps"]["total"]


def test_campaign_bounds_out_of_range_are_422(flight, people):
    response = call(
        bearer(people["editor"]), "POST", f"/api/chains/{K}/campaigns", {"max_faults": 99}
    )
    assert response.status_code == 422
    assert response.json()["error"]["location"] == "body.body.max_faults"


def test_a_campaign_of_a_revision_the_chain_lacks_is_refused_naming_the_revision(flight, people):
    response = call(bearer(people["editor"]), "POST", f"/api/chains/{K}/campaigns", {"revision": 9})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "refused",
        "message": f"revision: {K} has no revision 9 (its head is 1)",
        "location": "revision",
    }
    assert not Exploration.objects.exists()


def test_an_export_names_its_revision_and_content_hash_and_reimports_equal(flight, people):
    response = call(
        bearer(people["viewer"]), "GET", f"/api/chains/{K}/revisions/1/export?format=yaml"
    )
    assert response["X-Revision"] == "1"
    assert response["X-Content-Hash"] == flight.head().content_hash
    again = formats.load(response.content, filename="r1.yaml").chains[0]
    assert formats.to_document(again) == flight.head().document


@pytest.mark.parametrize(("fmt", "starts"), [("dot", b"digraph"), ("svg", b"<svg"), ("md", b"#")])
def test_drawings_and_the_design_document_export_too(flight, people, fmt, starts):
    response = call(
        bearer(people["viewer"]), "GET", f"/api/chains/{K}/revisions/1/export?format={fmt}"
    )
    assert response.status_code == 200
    assert response.content.lstrip().startswith(starts)


# --- the tokens page --------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_works(people, signed_in):
    page = signed_in(people["viewer"])
    body = page.post("/account/tokens/", {"name": "ci"}).content.decode()
    secret = body.split('id="token-secret">')[1].split("<")[0]
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/chains").status_code == 200
    assert secret not in page.get("/account/tokens/").content.decode()


def test_a_token_without_a_name_is_refused(people, signed_in):
    response = signed_in(people["viewer"]).post("/account/tokens/", {"name": " "})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_revoking_a_token_stops_it_at_once(people, signed_in):
    token, secret = ApiToken.objects.issue(people["viewer"], "ci")
    signed_in(people["viewer"]).post(f"/account/tokens/{token.pk}/revoke")
    assert Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/chains").status_code == 401


def test_nobody_can_revoke_someone_elses_token(people, signed_in):
    token, _ = ApiToken.objects.issue(people["viewer"], "ci")
    assert signed_in(people["owner"]).post(f"/account/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


# --- comments, review and drawings through the API --------------------------------------


def test_a_reviewer_comments_on_an_element_and_mentions_a_teammate(flight, people):
    body = {"body": "does @editor know this dies?", "anchor": "handle:quote_id"}
    response = call(bearer(people["reviewer"]), "POST", f"/api/chains/{K}/comments", body)
    assert response.status_code == 201
    assert response.json()["mentions"] == ["editor"]
    threads = call(bearer(people["viewer"]), "GET", f"/api/chains/{K}/comments").json()
    assert threads[0]["anchor"] == "handle:quote_id"


def test_a_comment_on_an_element_the_chain_lacks_is_refused_naming_it(flight, people):
    body = {"body": "hm", "anchor": "handle:ghost"}
    response = call(bearer(people["reviewer"]), "POST", f"/api/chains/{K}/comments", body)
    assert response.status_code == 400
    assert "handle:ghost" in response.json()["error"]["message"]


def test_a_review_requested_and_approved_through_the_api_approves_the_revision(flight, people):
    review = call(
        bearer(people["editor"]), "POST", f"/api/chains/{K}/reviews", {"reviewers": ["reviewer"]}
    ).json()
    voted = call(
        bearer(people["reviewer"]),
        "POST",
        f"/api/chains/{K}/reviews/{review['id']}/vote",
        {"vote": "approve"},
    ).json()
    assert voted["state"] == "approved" and voted["approved"] == "approved-1"
    export = call(bearer(people["viewer"]), "GET", f"/api/chains/{K}/revisions/1/export")
    assert export["X-Approved"] == "approved-1"


def test_a_review_naming_someone_without_a_role_is_refused_by_name(flight, people):
    response = call(
        bearer(people["editor"]), "POST", f"/api/chains/{K}/reviews", {"reviewers": ["outsider"]}
    )
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "reviewers"
    assert "outsider" in response.json()["error"]["message"]


def test_a_comment_on_a_revision_the_chain_lacks_is_refused_naming_the_field(flight, people):
    body = {"body": "hm", "revision": 9}
    response = call(bearer(people["reviewer"]), "POST", f"/api/chains/{K}/comments", body)
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "revision"


def test_the_flow_graph_exports_as_png(flight, people):
    url = f"/api/chains/{K}/revisions/1/export?format=png&graph=flow"
    response = call(bearer(people["viewer"]), "GET", url)
    assert response["Content-Type"] == "image/png"
    assert response.content.startswith(b"\x89PNG")
