"""People: sign-up, teams and their members, and the roles on one chain.

A member's team role holds on every chain of the team; a grant on one chain
replaces it there (``Chain.role_of``), for members only and never for an
owner, and it ends when the member leaves. Only a team's owners change its
members, only a chain's owners change its grants, and a team always keeps an
owner. Nobody joins a team without accepting an invitation
(``views.invitations``): an owner naming someone invites them. Everything else
about permissions is ``views.common.get_access``.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import AfterValidator, BaseModel, Field, ValidationInfo, field_validator

from chains.models import (
    ApiToken,
    GrantRefused,
    LastOwner,
    Membership,
    ReviewError,
    Role,
    Team,
    TeamTaken,
    TooManyTeams,
    at_least,
)
from chains.services import invitations
from chains.services.accounts import lookalike_taken
from chains.services.invitations import InvitationRefused
from chains.views.common import get_access
from chains.views.forms import SchemaForm, bound, posted
from chains.views.limits import rate_limited

ROLES = list(Role.values)


def _a_name(most: int, of: str) -> AfterValidator:
    """A name field: stripped, 1 to ``most`` characters."""

    def check(name: str) -> str:
        name = name.strip()
        if not 0 < len(name) <= most:
            raise ValueError(f"give the {of} a name of 1 to {most} characters")
        return name

    return AfterValidator(check)


class TeamIn(BaseModel):
    """The form that founds a team: its name and, if chosen, its slug (else from the name)."""

    name: Annotated[str, _a_name(200, "team")] = Field("", validate_default=True)
    slug: str = Field("", validate_default=True)

    @field_validator("slug")
    @classmethod
    def _slug(cls, slug: str, info: ValidationInfo) -> str:
        slug = slugify(slug or info.data.get("name", ""))[:60]
        if not slug and "name" in info.data:
            raise ValueError("give the team a name or slug with a letter or digit")
        return slug


class MemberIn(BaseModel):
    """The member and grant forms: who, and which role they get (or ``remove``)."""

    username: str = ""
    role: str = Field("", validate_default=True)

    @field_validator("role")
    @classmethod
    def _known(cls, role: str) -> str:
        if role not in (*ROLES, "remove"):
            raise ValueError(f"expected {' | '.join(ROLES)} or remove, got {role!r}")
        return role


class TokenIn(BaseModel):
    name: Annotated[str, _a_name(100, "token")] = Field("", validate_default=True)


class BadMember(Exception):
    """The member or grant form names nobody it can act on."""


class SignUpForm(UserCreationForm):
    """Django's sign-up form, refusing also a username that looks like one in use."""

    def clean_username(self) -> str:
        username = super().clean_username()
        if username and not self.has_error("username") and lookalike_taken(username):
            raise ValidationError(
                "This looks like a username already in use (a letter of another alphabet, "
                "or a digit, where the other has a letter); choose another.",
                code="lookalike",
            )
        return username


@login_not_required
@require_http_methods(["GET", "POST"])
@rate_limited("signup", by_address=True)
def signup(request: HttpRequest) -> HttpResponse:
    """A new account, with a team of its own so the first chain has a home.

    Closed unless ``ALLOW_SIGNUP`` is on: the page then says to ask a team owner.
    """
    if not settings.ALLOW_SIGNUP:
        status = 403 if request.method == "POST" else 200
        return render(request, "registration/signup.html", {"closed": True}, status=status)
    form = bound(request, SignUpForm)
    if form.is_bound and form.is_valid():
        user = form.save()
        Team.objects.found(f"{user.username}'s team", owner=user)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("chains:home")
    status = 400 if request.method == "POST" else 200
    return render(request, "registration/signup.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
@rate_limited("team")
def teams(request: HttpRequest) -> HttpResponse:
    """The teams you belong to, and a form to found one (you become its owner)."""
    form = posted(request, TeamIn)
    context: dict[str, Any] = {
        "teams": Team.objects.of(request.user),
        "invitations": invitations.pending_for(request.user),
        "form": form,
    }
    if not form.is_bound:
        return render(request, "chains/teams.html", context)
    if form.is_valid():
        try:
            team = Team.objects.found(form.value.name, owner=request.user, slug=form.value.slug)
            return redirect("chains:team", slug=team.slug)
        except (TeamTaken, TooManyTeams) as exc:
            form.refuse(exc)
    return render(request, "chains/teams.html", context, status=400)


def get_team(request: HttpRequest, slug: str, role: str = Role.VIEWER) -> Team:
    """The team ``slug`` if the person has at least ``role`` in it: 404 outside it, else 403.

    A team that does not exist and one the person is not in answer the same
    404, word for word, so its address tells an outsider nothing.
    """
    team = Team.objects.filter(slug=slug).first()
    held = team.role_of(request.user) if team is not None else None
    if team is None or held is None:
        raise Http404(f"no team {slug!r} that you belong to")
    if not at_least(held, role):
        raise PermissionDenied(f"this needs the {role} role in {team.name}; yours is {held}")
    return team


@require_http_methods(["GET", "POST"])
@rate_limited("invite")
def team(request: HttpRequest, slug: str) -> HttpResponse:
    """A team's members and chains; its owners invite people, re-role and remove members.

    Naming someone who is not a member invites them (``services.invitations``):
    they join only when they accept. A name no account has is invited the
    same way, so the answer never says which names exist.
    """
    team = get_team(request, slug, Role.OWNER if request.method == "POST" else Role.VIEWER)
    form = posted(request, MemberIn)
    if not form.is_bound:
        return team_page(request, team)
    if form.is_valid():
        try:
            _change_member(team, request.user, form.value)
            return redirect("chains:team", slug=team.slug)
        except (BadMember, LastOwner, InvitationRefused) as exc:
            form.refuse(exc)
    return team_page(request, team, member_form=form, error=form.message, status=400)


def _change_member(team: Team, by: Any, form: MemberIn) -> None:
    """Re-role or remove the member the form names, or invite someone who is not one."""
    name = form.username.strip()
    member = team.memberships.filter(user__username=name).select_related("user").first()
    if member is not None and form.role == "remove":
        team.remove(member.user)
    elif member is not None:
        team.add(member.user, form.role)
    elif form.role == "remove":
        raise BadMember(f"username: nobody called {name!r} is a member of {team.name}")
    else:
        invitations.invite(team, by, form.role, username=name)


@require_POST
def vouch(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """An owner vouches for a member, whose approval then counts on their inviter's changes."""
    team = get_team(request, slug, Role.OWNER)
    membership = get_object_or_404(Membership, pk=pk, team=team)
    try:
        membership.vouch(by=request.user)
    except ReviewError as exc:
        return team_page(request, team, error=str(exc), status=400)
    return redirect("chains:team", slug=team.slug)


def team_page(request: HttpRequest, team: Team, status: int = 200, **extra: Any) -> HttpResponse:
    """The team page; its owners see the invitations still open too."""
    role = team.role_of(request.user)
    context = {
        "team": team,
        "role": role,
        "members": team.memberships.select_related("user", "invited_by", "vouched_by"),
        "invitations": invitations.pending_of_team(team) if role == Role.OWNER else [],
        "chains": team.chains.order_by("key"),
        "roles": ROLES,
        "invitation_days": settings.INVITATION_DAYS,
        "error": "",
        "member_form": SchemaForm(MemberIn),
        **extra,
    }
    return render(request, "chains/team.html", context, status=status)


@require_http_methods(["GET", "POST"])
def chain_people(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Who may do what on one chain; its owners grant and take back roles here."""
    access = get_access(request, team, key, Role.OWNER if request.method == "POST" else Role.VIEWER)
    chain = access.chain
    form = posted(request, MemberIn)
    if form.is_bound and form.is_valid():
        try:
            user, new_role = _grantee(chain, form.value)
            chain.grant(user, None if new_role == "remove" else new_role)
            return redirect(chain.url("people"))
        except (BadMember, GrantRefused) as exc:
            form.refuse(exc)
    context = {
        "chain": chain,
        "access": access,
        "can_grant": access.may(Role.OWNER),
        "team_members": chain.team.memberships.select_related("user") if chain.team else [],
        "grants": chain.roles.select_related("user"),
        "roles": ROLES,
        "form": form,
    }
    return render(request, "chains/people.html", context, status=400 if form.errors else 200)


@never_cache  # the answer to a POST holds a new token's secret: no cache may keep it
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """Your personal API tokens; a new one's secret is shown on this answer only."""
    form = posted(request, TokenIn)
    context: dict[str, Any] = {"tokens": request.user.api_tokens.all(), "form": form}
    if form.is_bound and not form.is_valid():
        return render(request, "chains/tokens.html", context, status=400)
    if form.is_bound:
        context["new"], context["secret"] = ApiToken.objects.issue(request.user, form.value.name)
        context["form"] = SchemaForm(TokenIn)
    return render(request, "chains/tokens.html", context)


@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of your tokens; tools using it get 401 from then on."""
    get_object_or_404(ApiToken, pk=pk, user=request.user).revoke()
    return redirect("chains:tokens")


def _grantee(chain: Any, form: MemberIn) -> tuple[Any, str]:
    """The user and the role (or ``remove``) the grant form names.

    On a team's chain, a name no account has is refused in the words
    ``Chain.grant`` uses for someone outside the team, so the form does
    not tell the two apart.
    """
    name = form.username.strip()
    user = get_user_model().objects.filter(username=name).first()
    if user is None and chain.team is not None:
        raise GrantRefused(
            f"username: {name} is not a member of {chain.team.name}; "
            "a role on one of its chains is for its members"
        )
    if user is None:
        raise BadMember(f"username: nobody is called {name!r} here")
    return user, form.role
