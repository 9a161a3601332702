"""People: sign-up, teams and their members, and the roles on one chain.

A member's team role holds on every chain of the team; a grant on one chain
replaces it there (``Chain.role_of``). Only a team's owners change its
members, only a chain's owners change its grants, and a team always keeps an
owner. Everything else about permissions is ``views.common.get_chain``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods, require_POST

from chains.models import ApiToken, LastOwner, Role, Team
from chains.views.common import get_chain

ROLES = [role.value for role in Role]


class BadMember(Exception):
    """The member form names no user, an unknown one, or an unknown role."""


@login_not_required
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """A new account, with a team of its own so the first chain has a home."""
    if not settings.ALLOW_SIGNUP:
        raise Http404("sign-up is closed here; ask an administrator for an account")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        Team.objects.found(f"{user.username}'s team", owner=user)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("chains:home")
    status = 400 if request.method == "POST" else 200
    return render(request, "registration/signup.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
def teams(request: HttpRequest) -> HttpResponse:
    """The teams you belong to, and a form to found one (you become its owner)."""
    context: dict[str, Any] = {"teams": Team.objects.of(request.user), "typed": {}}
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        slug = slugify(request.POST.get("slug", "") or name)[:60]
        context["typed"] = {"name": name, "slug": request.POST.get("slug", "")}
        if not name or len(name) > 200 or not slug:
            context["error"] = "name: give the team a name of 1 to 200 characters"
        elif Team.objects.filter(slug=slug).exists():
            context["error"] = f"slug: a team called {slug!r} exists already; choose another"
        else:
            team = Team.objects.found(name, owner=request.user, slug=slug)
            return redirect("chains:team", slug=team.slug)
        return render(request, "chains/teams.html", context, status=400)
    return render(request, "chains/teams.html", context)


@require_http_methods(["GET", "POST"])
def team(request: HttpRequest, slug: str) -> HttpResponse:
    """A team's members and chains; its owners add, re-role and remove members."""
    team = get_object_or_404(Team, slug=slug)
    role = team.role_of(request.user)
    if role is None:
        raise Http404(f"no team {slug!r} that you belong to")
    error, status = "", 200
    if request.method == "POST":
        if role != Role.OWNER:
            raise PermissionDenied(f"only an owner of {team.name} changes its members")
        try:
            user, new_role = _member(request.POST)
            if new_role == "remove":
                team.remove(user)
            else:
                team.add(user, new_role)
            return redirect("chains:team", slug=team.slug)
        except (BadMember, LastOwner) as exc:
            error, status = str(exc), 400
    context = {
        "team": team,
        "role": role,
        "members": team.memberships.select_related("user"),
        "chains": team.chains.order_by("key"),
        "roles": ROLES,
        "error": error,
    }
    return render(request, "chains/team.html", context, status=status)


@require_http_methods(["GET", "POST"])
def chain_people(request: HttpRequest, key: str) -> HttpResponse:
    """Who may do what on one chain; its owners grant and take back roles here."""
    chain = get_chain(request, key, Role.OWNER if request.method == "POST" else Role.VIEWER)
    error, status = "", 200
    if request.method == "POST":
        try:
            user, new_role = _member(request.POST)
            chain.grant(user, None if new_role == "remove" else new_role)
            return redirect("chains:people", key=chain.key)
        except BadMember as exc:
            error, status = str(exc), 400
    context = {
        "chain": chain,
        "can_grant": chain.viewer_may(Role.OWNER),
        "team_members": chain.team.memberships.select_related("user") if chain.team else [],
        "grants": chain.roles.select_related("user"),
        "roles": ROLES,
        "error": error,
    }
    return render(request, "chains/people.html", context, status=status)


@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """Your personal API tokens; a new one's secret is shown on this answer only."""
    context: dict[str, Any] = {"tokens": request.user.api_tokens.all()}  # type: ignore[union-attr]
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name or len(name) > 100:
            context["error"] = "name: give the token a name of 1 to 100 characters"
            return render(request, "chains/tokens.html", context, status=400)
        context["new"], context["secret"] = ApiToken.objects.issue(request.user, name)
    return render(request, "chains/tokens.html", context)


@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of your tokens; tools using it get 401 from then on."""
    get_object_or_404(ApiToken, pk=pk, user=request.user).revoke()
    return redirect("chains:tokens")


def _member(post: Any) -> tuple[Any, str]:
    """The user and the role (or ``remove``) the member form names."""
    username = post.get("username", "").strip()
    new_role = post.get("role", "")
    if new_role not in (*ROLES, "remove"):
        raise BadMember(f"role: expected {' | '.join(ROLES)} or remove, got {new_role!r}")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise BadMember(f"username: nobody is called {username!r} here")
    return user, new_role
