"""The harness runs in the API: CI posts ``chain-designer harness --json`` output, and anyone
who sees the chain lists the runs and reads one."""

from __future__ import annotations

import json

from django.test import Client

from chains.models import ApiToken, HarnessRun
from tests.test_harness_page import LOST, booking, naive, report, schedule

__all__ = ["booking"]  # the fixture, shared with the page's tests


def bearer(user) -> Client:
    _, secret = ApiToken.objects.issue(user, "ci")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def post(client: Client, body, query: str = ""):
    text = body if isinstance(body, str) else json.dumps(body)
    path = f"/api/chains/harness_booking/harness-runs{query}"
    return client.post(path, text, content_type="application/json")


def test_ci_posts_a_report_and_gets_the_run_s_id_and_page(booking, people):
    response = post(bearer(people["editor"]), naive())
    assert response.status_code == 201
    body = response.json()
    run = HarnessRun.objects.get()
    assert body["id"] == run.pk and body["url"] == run.url()
    assert (body["schedules"], body["clean"], body["diverged"]) == (2, 1, 1)
    assert run.source == "api" and run.created_by == people["editor"]


def test_a_posted_run_is_stored_against_the_revision_asked_for(booking, people):
    response = post(bearer(people["editor"]), naive(), "?r=1")
    assert response.json()["revision"] == 1
    assert post(bearer(people["editor"]), naive(), "?r=9").status_code == 404


def test_a_report_of_another_chain_is_a_400_naming_it(booking, people):
    response = post(bearer(people["editor"]), report(schedule("no fault"), chain="other"))
    assert response.status_code == 400
    assert response.json()["error"]["location"] == "chain"
    assert "'other'" in response.json()["error"]["message"]
    assert not HarnessRun.objects.exists()


def test_a_report_of_the_wrong_shape_is_refused_naming_the_field(booking, people):
    bad = naive()
    del bad["schedules"][0]["label"]
    response = post(bearer(people["editor"]), bad)
    assert response.status_code == 422
    assert response.json()["error"]["location"].endswith("schedules.0.label")
    assert not HarnessRun.objects.exists()


def test_a_report_over_the_limit_is_413(booking, people, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 500
    response = post(bearer(people["editor"]), naive())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"


def test_a_viewer_cannot_post_a_run_but_lists_and_reads_them(booking, people):
    run_id = post(bearer(people["editor"]), naive()).json()["id"]
    viewer = bearer(people["viewer"])
    assert post(viewer, naive()).status_code == 403
    listed = viewer.get("/api/chains/harness_booking/harness-runs")
    assert listed.status_code == 200 and [r["id"] for r in listed.json()] == [run_id]
    one = viewer.get(f"/api/chains/harness_booking/harness-runs/{run_id}").json()
    assert [r["label"] for r in one["results"]] == ["no fault", LOST]
    assert one["results"][1]["divergences"][1]["kind"] == "forbidden_dispatch"


def test_an_outsider_finds_no_run(booking, people):
    run_id = post(bearer(people["editor"]), naive()).json()["id"]
    outsider = bearer(people["outsider"])
    assert outsider.get(f"/api/chains/harness_booking/harness-runs/{run_id}").status_code == 404
    assert post(outsider, naive()).status_code == 404


def test_a_run_of_another_chain_is_not_found_under_this_one(booking, flight, people):
    run = HarnessRun.objects.create(chain=flight, revision=flight.head())
    response = bearer(people["viewer"]).get(f"/api/chains/harness_booking/harness-runs/{run.pk}")
    assert response.status_code == 404
