"""Security headers on every response, and CSRF on every unsafe request, htmx's included.

The CSRF tests walk every POST route of ``ACCESS`` (tests/test_permissions.py),
so a route added there is checked here too: without a token it is refused by
Django's CSRF check (our 403_csrf.html), with the token of a page, as a form
field or as the header htmx sends from ``hx-headers``, it gets past it.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from test_permissions import ACCESS, urls  # noqa: F401 (a fixture)

from chains.models import ApiToken, Chain, Review

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
FIXED_HEADERS = {
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
POSTS = [name for name, methods in ACCESS.items() if "POST" in methods]


def security_headers(response) -> dict[str, str]:
    return {name: response.headers.get(name) for name in FIXED_HEADERS}


@pytest.mark.parametrize("path", ["/", "/chains/import/", "/chains/new/", "/teams/"])
def test_pages_carry_the_security_headers(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert security_headers(response) == FIXED_HEADERS


def test_the_sign_in_page_carries_them_before_anyone_signs_in(anonymous):
    assert security_headers(anonymous.get("/accounts/login/")) == FIXED_HEADERS


def test_error_pages_carry_them_too(client):
    response = client.get("/chains/no-such-chain/")
    assert response.status_code == 404
    assert security_headers(response) == FIXED_HEADERS


def test_powerful_browser_features_are_denied(client):
    policy = client.get("/").headers["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in policy.split(", ")


def test_report_only_sends_the_policy_under_the_report_only_header(client, settings):
    settings.SECURE_CSP_REPORT_ONLY, settings.SECURE_CSP = settings.SECURE_CSP, {}
    response = client.get("/")
    assert "Content-Security-Policy" not in response.headers
    assert response.headers["Content-Security-Policy-Report-Only"] == CSP


def test_with_debug_on_error_pages_go_without_a_policy_so_djangos_debug_pages_keep_styles(
    client, settings
):
    settings.DEBUG = True
    assert "Content-Security-Policy" not in client.get("/chains/no-such-chain/").headers
    assert client.get("/").headers["Content-Security-Policy"] == CSP


def test_no_template_has_an_inline_script_or_style():
    from django.conf import settings

    for template in (settings.BASE_DIR / "templates").rglob("*.html"):
        text = re.sub(r"\{#.*?#\}", "", template.read_text())
        assert not re.search(r"\sstyle\s*=|<style|\son[a-z]+\s*=", text, re.I), template
        for script in re.findall(r"<script\b[^>]*>", text, re.I):
            assert "src=" in script, (template, script)


# --- CSRF ------------------------------------------------------------------------------


@pytest.fixture
def strict(admin_user) -> Client:
    """A superuser whose requests go through Django's CSRF check, as a browser's do."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    return client


def refused_by_csrf(response) -> bool:
    return response.status_code == 403 and 'id="csrf-failure"' in response.content.decode()


def page_tokens(client: Client) -> tuple[str, str]:
    """The form token and the htmx header token of a page."""
    body = client.get("/").content.decode()
    form = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    header = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", body)
    assert form and header, "the page lost its CSRF token"
    return form[1], header[1]


def test_every_post_route_is_listed():
    assert {"login", "logout", "chains:edit", "chains:simulate", "chains:import"} <= set(POSTS)


@pytest.mark.parametrize("name", POSTS)
def test_a_post_without_a_token_is_refused(strict, urls, name):  # noqa: F811
    response = strict.post(urls[name], {})
    assert refused_by_csrf(response), (response.status_code, response.content[:200])


@pytest.mark.parametrize("name", POSTS)
def test_a_post_with_the_pages_form_token_gets_past_the_check(strict, urls, name):  # noqa: F811
    form_token, _ = page_tokens(strict)
    response = strict.post(urls[name], {"csrfmiddlewaretoken": form_token})
    assert not refused_by_csrf(response)


@pytest.mark.parametrize("name", POSTS)
def test_an_htmx_post_with_the_header_from_hx_headers_gets_past_the_check(
    strict,
    urls,  # noqa: F811
    name,
):
    _, header_token = page_tokens(strict)
    response = strict.post(urls[name], {}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=header_token)
    assert not refused_by_csrf(response)


def test_an_htmx_post_with_a_made_up_token_is_refused(strict, urls):  # noqa: F811
    page_tokens(strict)  # the cookie is set; only the header is wrong
    response = strict.post(
        urls["chains:edit"], {}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN="x" * 64
    )
    assert refused_by_csrf(response)


# --- NUL characters -----------------------------------------------------------------------


def test_a_nul_in_a_form_field_is_a_400_naming_the_field(flight, people, signed_in):
    response = signed_in(people["owner"]).post("/teams/", {"name": "bad\x00name"})
    assert response.status_code == 400
    assert "the form field &#x27;name&#x27; contains a NUL character" in response.content.decode()


def test_a_nul_in_the_address_is_a_400(flight, people, signed_in):
    assert signed_in(people["viewer"]).get("/chains/flight%00roundtrip/").status_code == 400


def test_a_nul_in_a_json_body_is_a_400_in_the_apis_shape(flight, people):
    _, secret = ApiToken.objects.issue(people["owner"], "t")
    body = '{"reviewers": ["reviewer"], "note": "a\\u0000b"}'
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").post(
        "/api/chains/flight_roundtrip/reviews", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"
    assert not Review.objects.exists()


def test_a_document_with_a_nul_escape_is_refused_where_it_is(client):
    text = 'id: n\ndescription: "a\\0b"\nactions:\n  - {id: a, effect: read}\n'
    response = client.post("/chains/import/", {"text": text, "name": "n.yaml"})
    assert response.status_code == 400
    assert "line 2, column 14" in response.content.decode()
    assert not Chain.objects.filter(key="n").exists()


NUL_ESCAPE = '{"reviewers": ["reviewer"], "note": "a\\u0000b"}'


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-yaml", "application/vnd.api+json", "application/octet-stream"],
)
def test_a_nul_escape_in_a_body_of_any_content_type_is_a_400(flight, people, content_type):
    _, secret = ApiToken.objects.issue(people["owner"], "t")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").post(
        "/api/chains/flight_roundtrip/reviews", NUL_ESCAPE, content_type=content_type
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"
    assert "the body contains a NUL character" in response.json()["error"]["message"]
    assert not Review.objects.exists()


def test_a_raw_nul_in_a_body_without_a_content_type_is_a_400(flight, people):
    _, secret = ApiToken.objects.issue(people["owner"], "t")
    body = b'{"reviewers": ["reviewer"], "note": "a\x00b"}'
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").generic(
        "POST", "/api/chains/flight_roundtrip/reviews", body, content_type=""
    )
    assert response.status_code == 400
    assert "the body contains a NUL character" in response.json()["error"]["message"]
    assert not Review.objects.exists()


def test_a_nul_in_a_form_sent_with_put_is_a_400(flight, people, signed_in):
    response = signed_in(people["owner"]).generic(
        "PUT", "/teams/", "name=bad%00name", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400


def test_a_json_body_sent_as_a_form_is_checked_too(flight, people):
    _, secret = ApiToken.objects.issue(people["owner"], "t")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").post(
        "/api/chains/flight_roundtrip/reviews",
        NUL_ESCAPE,
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400
    assert not Review.objects.exists()


def test_a_multipart_body_sent_to_the_api_is_a_400_not_a_500(flight, people):
    _, secret = ApiToken.objects.issue(people["owner"], "t")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", raise_request_exception=False)
    response = client.post("/api/lint", {"document": "id: a"})  # a multipart form
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


# --- errors are seen ----------------------------------------------------------------------


@pytest.fixture
def log_output():
    """What the configured log handlers write, from here on (their streams are swapped)."""
    import io
    import logging

    out = io.StringIO()
    handlers = {
        handler
        for name in ("django.request", "django", "")
        for handler in logging.getLogger(name).handlers
        if type(handler) is logging.StreamHandler
    }
    streams = {handler: handler.setStream(out) for handler in handlers}
    yield out
    for handler, stream in streams.items():
        handler.setStream(stream)


@pytest.fixture
def broken_lint(monkeypatch):
    """Lint that fails as a bug would: with an exception nobody expects."""

    def fail(*args, **kwargs):
        raise RuntimeError("lint fell over")

    monkeypatch.setattr("chains.api.lint", fail)


def test_an_api_500_answers_json_in_the_error_shape(people, broken_lint, settings):
    settings.DEBUG = False
    _, secret = ApiToken.objects.issue(people["viewer"], "t")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", raise_request_exception=False)
    response = client.post(
        "/api/lint", '{"document": "id: a\\nactions: []\\n"}', content_type="application/json"
    )
    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == "server_error"
    assert error["location"] is None
    assert "lint fell over" not in error["message"]  # a bug's details stay in the log


def test_an_api_500_with_debug_off_writes_its_traceback_to_the_log(
    people, broken_lint, settings, log_output
):
    settings.DEBUG = False
    _, secret = ApiToken.objects.issue(people["viewer"], "t")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", raise_request_exception=False)
    client.post(
        "/api/lint", '{"document": "id: a\\nactions: []\\n"}', content_type="application/json"
    )
    logged = log_output.getvalue()
    assert "Traceback" in logged and "RuntimeError: lint fell over" in logged
    assert "/api/lint" in logged


def test_a_page_500_with_debug_off_writes_its_traceback_to_the_log(
    people, monkeypatch, settings, log_output
):
    settings.DEBUG = False

    def fail(*args, **kwargs):
        raise RuntimeError("the list fell over")

    monkeypatch.setattr("chains.views.home.render", fail)
    client = Client(raise_request_exception=False)
    client.force_login(people["viewer"])
    assert client.get("/").status_code == 500
    logged = log_output.getvalue()
    assert "Traceback" in logged and "RuntimeError: the list fell over" in logged


def test_an_api_500_outside_the_operations_answers_json_too(people, monkeypatch, settings):
    settings.DEBUG = False

    def fail(self, request):
        raise RuntimeError("a middleware fell over")

    monkeypatch.setattr("designer.security.RefuseNulMiddleware._nul", fail)
    response = Client(raise_request_exception=False).get("/api/chains")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"


def test_the_new_token_page_is_never_stored_by_a_cache(people, signed_in):
    response = signed_in(people["viewer"]).post("/account/tokens/", {"name": "ci"})
    assert response.status_code == 200
    assert 'id="token-secret"' in response.content.decode()
    assert "no-store" in response["Cache-Control"]


def test_an_unknown_api_address_is_a_404_in_the_error_shape(people):
    _, secret = ApiToken.objects.issue(people["viewer"], "t")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/no-such-operation")
    assert response.status_code == 404
    assert response.json()["error"] == {
        "code": "not_found",
        "message": "no API operation answers /api/no-such-operation",
        "location": None,
    }


def test_a_method_an_api_operation_does_not_take_is_a_405_in_the_error_shape(people):
    _, secret = ApiToken.objects.issue(people["viewer"], "t")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get("/api/lint")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    error = response.json()["error"]
    assert error["code"] == "method_not_allowed"
    assert error["message"] == "/api/lint does not take GET; it takes POST"
