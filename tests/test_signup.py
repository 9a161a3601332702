"""Signing up: closed unless the installation opens it; when open, limited and lookalike-proof.

With ``ALLOW_SIGNUP`` off (the default) the page says so and sends people to
a team owner; the demo and setup commands make accounts all the same. With it
on, sign-ups are counted per client address (``RATE_LIMITS["signup"]``), and a
username is refused when it looks like one already in use: ``oа`` with a
Cyrillic ``а`` beside ``oa``.
"""

from __future__ import annotations

import doctest

import pytest
from django.contrib.auth import get_user_model

from chains.models import Role, Team
from chains.services import accounts
from chains.services.accounts import lookalike_taken, skeleton

PASSWORD = "a-long-passphrase-7"


@pytest.fixture
def open_signup(settings):
    settings.ALLOW_SIGNUP = True


def sign_up(client, username: str, **extra):
    form = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post("/accounts/signup/", form, **extra)


def usernames() -> set[str]:
    return set(get_user_model().objects.values_list("username", flat=True))


# --- closed by default ------------------------------------------------------------------


def test_sign_up_is_closed_unless_the_installation_opens_it(anonymous):
    page = anonymous.get("/accounts/signup/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="signup-closed"' in text
    assert "ask an owner of a team" in text
    assert 'id="signup-form"' not in text


def test_a_sign_up_sent_while_closed_creates_nothing(anonymous):
    response = sign_up(anonymous, "ada")
    assert response.status_code == 403
    assert 'id="signup-closed"' in response.content.decode()
    assert not get_user_model().objects.exists()


def test_the_sign_in_page_offers_sign_up_only_when_it_is_open(anonymous, settings):
    assert 'href="/accounts/signup/"' not in anonymous.get("/accounts/login/").content.decode()
    settings.ALLOW_SIGNUP = True
    assert 'href="/accounts/signup/"' in anonymous.get("/accounts/login/").content.decode()


# --- open ---------------------------------------------------------------------------------


def test_signing_up_creates_the_account_a_team_it_owns_and_signs_in(anonymous, open_signup):
    response = sign_up(anonymous, "ada")
    assert response.status_code == 302
    ada = get_user_model().objects.get(username="ada")
    (team,) = Team.objects.of(ada)
    assert team.role_of(ada) == Role.OWNER
    assert anonymous.get("/").status_code == 200


def test_a_refused_sign_up_says_why_and_creates_nothing(anonymous, open_signup):
    response = anonymous.post(
        "/accounts/signup/", {"username": "ada", "password1": "x", "password2": "y"}
    )
    assert response.status_code == 400
    assert (
        "Password confirmation: The two password fields didn’t match." in response.content.decode()
    )
    assert not get_user_model().objects.exists()


def test_sign_ups_from_one_address_are_limited(anonymous, open_signup, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "signup": (2, 3600)}
    assert sign_up(anonymous, "ada").status_code == 302
    assert sign_up(anonymous, "bob").status_code == 302
    refused = sign_up(anonymous, "cy")
    assert refused.status_code == 429
    assert 'id="rate-limited"' in refused.content.decode()
    assert "cy" not in usernames()
    assert sign_up(anonymous, "cy", REMOTE_ADDR="192.0.2.9").status_code == 302


def test_usernames_are_stored_in_nfkc(anonymous, open_signup):
    assert sign_up(anonymous, "ｂｏｂ").status_code == 302  # fullwidth letters
    assert usernames() == {"bob"}


@pytest.mark.parametrize(
    ("existing", "lookalike"),
    [
        ("oa", "o\u0430"),  # Cyrillic a
        ("paypal", "\u0440\u0430\u0443\u0440\u0430l"),  # Cyrillic p, a, y
        ("ada", "\u0391da"),  # Greek capital alpha
        ("lola", "l0la"),  # digit zero
        ("bill", "bi1l"),  # digit one
        ("Ivan", "lvan"),  # capital i and small L
        ("mary", "rnary"),  # r n
        ("ada", "ADA"),  # case
    ],
)
def test_a_username_that_looks_like_one_in_use_is_refused(
    anonymous, open_signup, existing, lookalike
):
    get_user_model().objects.create_user(existing)
    response = sign_up(anonymous, lookalike)
    assert response.status_code == 400
    assert "Username:" in response.content.decode()
    assert usernames() == {existing}


def test_the_lookalike_refusal_says_why(anonymous, open_signup):
    get_user_model().objects.create_user("oa")
    page = sign_up(anonymous, "o\u0430").content.decode()
    assert "looks like a username already in use" in page


def test_names_that_only_differ_are_still_free(anonymous, open_signup):
    get_user_model().objects.create_user("ada")
    assert sign_up(anonymous, "ana").status_code == 302


@pytest.mark.parametrize(
    ("one", "other"),
    [("o\u0430", "oa"), ("ＡＤＡ", "ada"), ("rn", "m"), ("0", "o"), ("I", "l"), ("1", "l")],
)
def test_lookalikes_share_a_skeleton(one, other):
    assert skeleton(one) == skeleton(other)


@pytest.mark.parametrize(("one", "other"), [("ada", "ana"), ("é", "e"), ("ada", "adam")])
def test_different_names_have_different_skeletons(one, other):
    assert skeleton(one) != skeleton(other)


def test_lookalike_taken_names_the_account_it_looks_like(db):
    get_user_model().objects.create_user("oa")
    assert lookalike_taken("o\u0430") == "oa"
    assert lookalike_taken("ob") is None


def test_the_examples_in_the_docstrings_hold():
    assert doctest.testmod(accounts).failed == 0
