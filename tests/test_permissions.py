"""Who may do what: every URL of the app, asked by every role.

``ACCESS`` lists each route with the smallest role that may use it per
method; a test fails when a route is added without an entry here, so no page
or htmx endpoint goes out unchecked. Someone with no role on a chain gets 404
(the chain is not revealed), someone with too small a role 403, and a visitor
who is not signed in is sent to sign in.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from chains.core.sim.explorer import Bounds
from chains.models import ApiToken, Comment, Exploration, HarnessRun, Review, Role
from chains.services import invitations

PEOPLE = ["outsider", "viewer", "reviewer", "editor", "owner"]
RANK = {name: n for n, name in enumerate(PEOPLE)}
SIGNED_IN = "outsider"  # any signed-in person

# route name -> {method: the smallest role that may use it}; "public" needs no sign-in.
ACCESS: dict[str, dict[str, str]] = {
    "login": {"GET": "public", "POST": "public"},
    "logout": {"POST": "public"},  # it signs out whoever asks, then shows the sign-in page
    "signup": {"GET": "public", "POST": "public"},
    "healthz": {"GET": "public"},
    "chains:home": {"GET": SIGNED_IN},
    "chains:tokens": {"GET": SIGNED_IN, "POST": SIGNED_IN},
    "chains:revoke_token": {"POST": "self"},  # one's own tokens only: see test_api_tokens
    "chains:inbox": {"GET": SIGNED_IN},
    "chains:audit": {"GET": "viewer", "POST": "viewer"},
    "chains:harness": {"GET": "viewer", "POST": "editor"},
    "chains:harness_run": {"GET": "viewer"},
    "chains:openapi": {"GET": "editor", "POST": "editor"},
    # one's own upload only (another's is 404, a viewer's 403): see test_openapi_page
    "chains:openapi_upload": {"GET": "self", "POST": "self"},
    "chains:openapi_add": {"POST": "self"},
    "chains:open_notification": {"POST": "self"},  # one's own only: see test_notifications
    "chains:read_all": {"POST": SIGNED_IN},
    "chains:teams": {"GET": SIGNED_IN, "POST": SIGNED_IN},
    "chains:team": {"GET": "viewer", "POST": "owner"},
    "chains:invite": {"POST": "owner"},
    "chains:vouch": {"POST": "owner"},
    "chains:revoke_invitation": {"POST": "owner"},
    "chains:answer_invitation": {"POST": "self"},  # its invitee only: see test_invitations
    "chains:invitation": {"GET": "public", "POST": "public"},  # whoever holds the link
    "chains:invitation_account": {"POST": "public"},
    "chains:new": {"GET": SIGNED_IN, "POST": SIGNED_IN},
    "chains:import": {"GET": SIGNED_IN, "POST": SIGNED_IN},
    "chains:chain": {"GET": "viewer"},
    "chains:edit": {"POST": "editor"},
    "chains:undo": {"POST": "editor"},
    "chains:redo": {"POST": "editor"},
    "chains:tidy_layout": {"POST": "editor"},
    "chains:diff": {"GET": "viewer"},
    "chains:fixes": {"GET": "viewer"},
    "chains:people": {"GET": "viewer", "POST": "owner"},
    "chains:simulate": {"GET": "viewer", "POST": "viewer"},
    "chains:save_scenario": {"POST": "editor"},
    "chains:campaigns": {"GET": "viewer", "POST": "editor"},
    "chains:campaign": {"GET": "viewer"},
    "chains:cancel_campaign": {"POST": "editor"},
    "chains:comments": {"GET": "viewer", "POST": "reviewer"},
    "chains:resolve_comment": {"POST": "reviewer"},
    "chains:reviews": {"GET": "viewer", "POST": "editor"},
    "chains:review": {"GET": "viewer"},
    "chains:vote": {"POST": "reviewer"},  # only the named reviewers: see test_review
    "chains:vectors": {"GET": "viewer"},
    "chains:record_scenario": {"POST": "editor"},
    "chains:delete_scenario": {"POST": "editor"},
    "chains:open_scenario": {"GET": "viewer"},
    "chains:export": {"GET": "viewer"},
    "chains:check": {"GET": "viewer"},
    "chains:save_check": {"GET": "viewer"},
    "chains:glossary": {"GET": SIGNED_IN},
    "chains:rule": {"GET": SIGNED_IN},
}


def route_names(resolver: URLResolver, prefix: str = "") -> set[str]:
    names = set()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{prefix}{entry.namespace}:" if entry.namespace else prefix
            names |= route_names(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(prefix + entry.name)
    return names


@pytest.fixture
def urls(flight, team) -> dict[str, str]:
    campaign = Exploration.objects.create(
        revision=flight.head(), bounds={**Bounds().__dict__}, shard_count=1, status="done"
    )
    owner = team.memberships.get(role=Role.OWNER).user
    comment = Comment.objects.post(flight.head(), owner, "a first thought")
    review = Review.objects.request(flight.head(), owner, ["reviewer"])
    key = flight.key
    harness_run = HarnessRun.objects.create(chain=flight, revision=flight.head())
    link, secret = invitations.invite(team, owner, Role.VIEWER)
    get_user_model().objects.create_user("guest")
    addressed, _ = invitations.invite(team, owner, Role.VIEWER, username="guest")
    args = {
        "chains:team": [team.slug],
        "chains:invite": [team.slug],
        "chains:vouch": [team.slug, team.memberships.get(user__username="reviewer").pk],
        "chains:revoke_invitation": [team.slug, link.pk],
        "chains:answer_invitation": [addressed.pk],
        "chains:invitation": [secret],
        "chains:invitation_account": [secret],
        "chains:campaign": [key, campaign.pk],
        "chains:harness_run": [key, harness_run.pk],
        "chains:cancel_campaign": [key, campaign.pk],
        "chains:export": [key, 1, "yaml"],
        "chains:resolve_comment": [key, comment.pk],
        "chains:review": [key, review.pk],
        "chains:vote": [key, review.pk],
        "chains:revoke_token": [ApiToken.objects.issue(team.memberships.first().user, "t")[0].pk],
        "chains:open_notification": [1],
        "chains:rule": ["commit.unkeyed-retried"],
        "chains:openapi_upload": [key, 1],
        "chains:openapi_add": [key, 1],
    }
    return {
        name: reverse(
            name,
            args=args.get(name, [key] if name.startswith("chains:") and name not in NO_KEY else []),
        )
        for name in ACCESS
    }


NO_KEY = {
    "chains:home",
    "chains:teams",
    "chains:new",
    "chains:import",
    "chains:tokens",
    "chains:inbox",
    "chains:read_all",
    "chains:glossary",
}


def test_every_route_of_the_app_has_an_access_rule():
    # The API's operations have their own table (tests/test_api.py).
    pages = {name for name in route_names(get_resolver()) if not name.startswith("api:")}
    assert pages == set(ACCESS)


def cases():
    for name, methods in ACCESS.items():
        for method, needed in methods.items():
            if needed in ("public", "self"):
                continue
            for person in PEOPLE:
                yield pytest.param(
                    name,
                    method,
                    person,
                    RANK[person] >= RANK[needed],
                    id=f"{name}-{method}-{person}",
                )


def ask(client, method: str, url: str):
    return client.get(url) if method == "GET" else client.post(url, {})


def refused_sign_in(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize(("name", "method", "person", "allowed"), list(cases()))
def test_each_role_may_use_exactly_the_routes_its_rank_allows(
    urls, people, signed_in, name, method, person, allowed
):
    response = ask(signed_in(people[person]), method, urls[name])
    if allowed:
        assert response.status_code not in (403, 404), response.content[:300]
        assert not refused_sign_in(response)
    elif person == "outsider":
        assert response.status_code == 404
    else:
        assert response.status_code == 403


@pytest.mark.parametrize(
    ("name", "method"),
    [
        (n, m)
        for n, methods in ACCESS.items()
        for m, needed in methods.items()
        if needed != "public"
    ],
)
def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(urls, anonymous, name, method):
    assert refused_sign_in(ask(anonymous, method, urls[name]))


@pytest.mark.parametrize("name", ["login", "signup"])
def test_sign_in_and_sign_up_need_no_account(urls, anonymous, name):
    assert anonymous.get(urls[name]).status_code == 200


def test_a_refusal_names_the_role_needed_and_changes_nothing(flight, people, signed_in):
    head = flight.head().number
    response = signed_in(people["viewer"]).post(
        f"/chains/{flight.key}/edit",
        {"op": "add_handle", "base": head, "form": "add-handle", "id": "x"},
    )
    assert response.status_code == 403
    assert (
        "This needs the editor role on flight_roundtrip; yours is viewer"
        in response.content.decode()
    )
    assert flight.head().number == head


def test_the_chain_list_shows_only_the_chains_one_may_see(flight, people, signed_in):
    assert flight.key in signed_in(people["viewer"]).get("/").content.decode()
    assert flight.key not in signed_in(people["outsider"]).get("/").content.decode()


def test_a_grant_on_one_chain_replaces_the_team_role_there(flight, people, signed_in):
    flight.grant(people["viewer"], Role.REVIEWER)
    viewer = signed_in(people["viewer"])
    assert viewer.post(f"/chains/{flight.key}/comments", {"body": "hm"}).status_code != 403
    assert viewer.post(f"/chains/{flight.key}/undo", {"base": "1"}).status_code == 403
    flight.grant(people["editor"], Role.VIEWER)
    assert (
        signed_in(people["editor"]).post(f"/chains/{flight.key}/undo", {"base": "1"}).status_code
        == 403
    )


def test_a_removed_members_token_no_longer_reads_or_writes_the_chain(flight, team, people):
    flight.grant(people["editor"], Role.EDITOR)
    _, secret = ApiToken.objects.issue(people["editor"], "ci")
    team.remove(people["editor"])
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.get(f"/api/chains/{flight.key}").status_code == 404
    undo = api.post(f"/api/chains/{flight.key}/undo", {"base": 1}, content_type="application/json")
    assert undo.status_code == 404
    assert flight.revisions.count() == 1


def test_a_removed_member_who_had_an_owner_grant_cannot_grant_others(
    flight, team, people, signed_in
):
    flight.grant(people["editor"], Role.OWNER)
    team.remove(people["editor"])
    response = signed_in(people["editor"]).post(
        f"/chains/{flight.key}/people", {"username": "viewer", "role": "owner"}
    )
    assert response.status_code == 404
    assert flight.role_of(people["viewer"]) == Role.VIEWER
