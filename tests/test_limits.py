"""Rate limits: each person may ask for expensive work only so often, at every door.

Import, lint, simulate, campaign launch and comment have a limit each
(``RATE_LIMITS``): so many requests per window, counted per person across the
pages and the API. Past it the API answers 429 in the error shape with
``Retry-After``, and the pages a readable message. The tests lower one limit
with the ``settings`` fixture; the suite's own requests stay under the defaults.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from chains.models import ApiToken, Comment, Exploration
from chains.services import limits
from chains.services.limits import RateLimited, spend
from designer.api import api

ROOT = Path(__file__).resolve().parent.parent
SMALL = "id: small\nactions:\n  - {id: look, effect: read}\n"
LOST = (ROOT / "fixtures" / "scenarios" / "flight-lost-booking-response.yaml").read_text()
K = "flight_roundtrip"

# action -> (who, path, JSON body) of the API operation that does it
API_DOORS = {
    "import": ("editor", "/api/chains", {"document": SMALL, "filename": "s.yaml"}),
    "lint": ("viewer", "/api/lint", {"document": SMALL, "filename": "s.yaml"}),
    "simulate": ("viewer", f"/api/chains/{K}/simulate", {"scenario": LOST}),
    "campaign": ("editor", f"/api/chains/{K}/campaigns", {"max_faults": 0}),
    "comment": ("reviewer", f"/api/chains/{K}/comments", {"body": "why?", "anchor": "chain"}),
}
# action -> (who, method, path, form) of the page that does it
PAGE_DOORS = {
    "import": ("editor", "POST", "/chains/import/", {"text": SMALL, "name": "s.yaml"}),
    "simulate": ("viewer", "GET", f"/chains/{K}/simulate", {}),
    "campaign": ("editor", "POST", f"/chains/{K}/campaigns/", {"max_faults": "0"}),
    "comment": ("reviewer", "POST", f"/chains/{K}/comments", {"body": "why?", "anchor": "chain"}),
}


@pytest.fixture
def once(settings):
    """Lower one action's limit to a single request a minute."""

    def lower(action: str) -> None:
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, action: (1, 60)}

    return lower


def bearer(user) -> Client:
    _, secret = ApiToken.objects.issue(user, "test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def post_json(client: Client, path: str, body: dict):
    return client.post(path, json.dumps(body), content_type="application/json")


def ask(client: Client, method: str, path: str, form: dict, **headers):
    return getattr(client, method.lower())(path, form, **headers)


# --- the limiter --------------------------------------------------------------------------


def test_the_request_past_the_limit_is_refused_saying_when_to_come_back(people, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (3, 600)}
    for _ in range(3):
        spend("lint", user=people["viewer"])
    with pytest.raises(RateLimited) as refused:
        spend("lint", user=people["viewer"])
    assert 540 <= refused.value.retry_after <= 660  # ten minutes, to within a tenth
    assert "at most 3 lint requests per 10 minutes" in str(refused.value)


def test_each_person_and_each_action_has_a_count_of_its_own(people, once):
    once("lint")
    spend("lint", user=people["viewer"])
    spend("lint", user=people["editor"])
    spend("import", user=people["viewer"])
    with pytest.raises(RateLimited):
        spend("lint", user=people["viewer"])


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """The limiter's time, set by the test: ``clock[0]`` seconds since the epoch."""
    now = [1_000_020.0]  # a multiple of 60, 600 and 3600: a window starts here
    monkeypatch.setattr(limits.time, "time", lambda: now[0])
    return now


def spent(action: str, user, times: int) -> int:
    """How many of ``times`` requests the limiter lets through."""
    passed = 0
    for _ in range(times):
        try:
            spend(action, user=user)
            passed += 1
        except RateLimited:
            pass
    return passed


def test_the_limit_lifts_when_retry_after_has_passed(people, once, clock):
    once("lint")
    spend("lint", user=people["viewer"])
    with pytest.raises(RateLimited) as refused:
        spend("lint", user=people["viewer"])
    clock[0] += refused.value.retry_after - 1
    with pytest.raises(RateLimited):
        spend("lint", user=people["viewer"])
    clock[0] += 1
    spend("lint", user=people["viewer"])


def test_a_burst_across_the_turn_of_a_window_gets_no_more_than_the_count(people, settings, clock):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (10, 60)}
    clock[0] += 59
    first = spent("lint", people["viewer"], 10)
    clock[0] += 2  # the next window began a second ago
    second = spent("lint", people["viewer"], 10)
    assert (first, second) == (10, 0)


def test_the_count_comes_back_as_requests_leave_the_window(people, settings, clock):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (10, 60)}
    clock[0] += 10
    assert spent("lint", people["viewer"], 5) == 5
    clock[0] += 30
    assert spent("lint", people["viewer"], 5) == 5
    clock[0] += 35  # the first five are more than a minute old, the others not
    assert spent("lint", people["viewer"], 10) == 5


def test_a_whole_window_after_a_burst_the_whole_count_is_there_again(people, settings, clock):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (10, 60)}
    clock[0] += 59
    assert spent("lint", people["viewer"], 10) == 10
    clock[0] += 61
    assert spent("lint", people["viewer"], 11) == 10


def test_refused_requests_are_not_counted(people, settings, clock):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lint": (10, 60)}
    clock[0] += 5
    assert spent("lint", people["viewer"], 10) == 10
    clock[0] += 50
    assert spent("lint", people["viewer"], 100) == 0
    clock[0] += 15  # the ten allowed have left the window; the refused ones never entered it
    assert spent("lint", people["viewer"], 10) == 10


def test_retry_after_is_exact_to_within_a_tenth_of_the_window(people, once, clock):
    once("lint")
    clock[0] += 20
    spend("lint", user=people["viewer"])
    with pytest.raises(RateLimited) as refused:
        spend("lint", user=people["viewer"])
    assert 54 <= refused.value.retry_after <= 66


def test_someone_not_signed_in_is_counted_by_address(db, once):
    once("signup")
    spend("signup", user=AnonymousUser(), address="192.0.2.1")
    spend("signup", user=AnonymousUser(), address="192.0.2.2")
    with pytest.raises(RateLimited):
        spend("signup", user=AnonymousUser(), address="192.0.2.1")


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(limits).failed == 0


# --- the API ------------------------------------------------------------------------------


@pytest.mark.parametrize("action", sorted(API_DOORS))
def test_an_api_operation_past_its_limit_is_429_in_the_error_shape(flight, people, once, action):
    once(action)
    who, path, body = API_DOORS[action]
    client = bearer(people[who])
    assert post_json(client, path, body).status_code < 400
    response = post_json(client, path, body)
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert f"at most 1 {action} request per minute" in error["message"]
    assert error["location"] is None
    assert 1 <= int(response["Retry-After"]) <= 66  # a minute, and up to a tenth more


def test_a_refused_api_request_does_no_work(flight, people, once):
    once("comment")
    client = bearer(people["reviewer"])
    for _ in range(2):
        post_json(client, f"/api/chains/{K}/comments", {"body": "why?", "anchor": "chain"})
    assert Comment.objects.count() == 1


def test_the_pages_and_the_api_share_one_count(flight, people, signed_in, once):
    once("comment")
    signed_in(people["reviewer"]).post(f"/chains/{K}/comments", {"body": "a", "anchor": "chain"})
    response = post_json(
        bearer(people["reviewer"]), f"/api/chains/{K}/comments", {"body": "b", "anchor": "chain"}
    )
    assert response.status_code == 429


def test_the_openapi_document_declares_429():
    operation = api.get_openapi_schema()["paths"]["/api/lint"]["post"]
    assert {"429", "500"} <= {str(status) for status in operation["responses"]}


def test_cheap_operations_are_not_counted(flight, people, once):
    once("comment")
    client = bearer(people["reviewer"])
    for _ in range(3):
        assert client.get(f"/api/chains/{K}/comments").status_code == 200
    assert (
        post_json(client, f"/api/chains/{K}/comments", {"body": "a", "anchor": "chain"}).status_code
        == 201
    )


# --- the pages ----------------------------------------------------------------------------


@pytest.mark.parametrize("action", sorted(PAGE_DOORS))
def test_a_page_past_its_limit_is_429_with_a_readable_message(
    flight, people, signed_in, once, action
):
    once(action)
    who, method, path, form = PAGE_DOORS[action]
    client = signed_in(people[who])
    assert ask(client, method, path, form).status_code < 400
    response = ask(client, method, path, form)
    assert response.status_code == 429
    page = response.content.decode()
    assert 'id="rate-limited"' in page
    assert f"at most 1 {action} request per minute" in page
    assert "<html" in page
    assert 1 <= int(response["Retry-After"]) <= 66  # a minute, and up to a tenth more


def test_an_htmx_request_past_the_limit_gets_the_message_above_the_page(
    flight, people, signed_in, once
):
    once("comment")
    client = signed_in(people["reviewer"])
    form = {"body": "why?", "anchor": "chain"}
    client.post(f"/chains/{K}/comments", form, HTTP_HX_REQUEST="true")
    response = client.post(f"/chains/{K}/comments", form, HTTP_HX_REQUEST="true")
    assert response.status_code == 429
    assert response["HX-Retarget"] == "main"
    assert response["HX-Reswap"] == "afterbegin"
    page = response.content.decode()
    assert 'id="rate-limited"' in page and "<html" not in page


def test_looking_at_a_page_is_not_counted(flight, people, signed_in, once):
    once("campaign")
    client = signed_in(people["editor"])
    for _ in range(3):
        assert client.get(f"/chains/{K}/campaigns/").status_code == 200
    assert client.post(f"/chains/{K}/campaigns/", {"max_faults": "0"}).status_code == 303
    assert Exploration.objects.count() == 1
