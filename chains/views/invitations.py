"""Invitations to a team: owners make and revoke them, the invited accept or decline.

The use cases are ``services.invitations``; these views only read the forms
and answer. A link's page is open to anyone holding the link (it is how a
person without an account gets one), and its secret is in the path, as a
password-reset link's is; the page that shows a new link is never cached.
An invitation that can no longer be answered is a 410 page saying why, an
unknown link a 404, one to a team you belong to a 409; none changes anything.
"""

from __future__ import annotations

from typing import Any, Literal

from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import BaseModel

from chains.models import Invitation, Role, Team
from chains.services import invitations
from chains.services.invitations import AlreadyMember, InvitationClosed, UnknownInvitation
from chains.views.forms import FormError, bound, read_post
from chains.views.limits import rate_limited
from chains.views.people import SignUpForm, get_team, team_page

__all__ = ["answer_invitation", "invitation", "invitation_account", "invite", "revoke_invitation"]


class InviteIn(BaseModel):
    role: Role


class AnswerIn(BaseModel):
    answer: Literal["accept", "decline"]


@never_cache  # the answer holds the new link's secret: no cache may keep it
@require_POST
@rate_limited("invite")
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    """A new link invitation to the team, shown on this answer only."""
    team = _owned_team(request, slug)
    try:
        role = read_post(request, InviteIn).role
    except FormError as exc:
        return team_page(request, team, error=str(exc), status=400)
    _, secret = invitations.invite(team, request.user, role)
    link = request.build_absolute_uri(reverse("chains:invitation", args=[secret]))
    return team_page(request, team, new_link=link, new_role=role)


@require_POST
def revoke_invitation(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    team = _owned_team(request, slug)
    try:
        invitations.revoke(get_object_or_404(Invitation, pk=pk, team=team), request.user)
    except InvitationClosed as exc:
        return team_page(request, team, error=str(exc), status=410)
    return redirect("chains:team", slug=team.slug)


@login_not_required
@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest, secret: str) -> HttpResponse:
    """A link's page: what it offers, and accept or decline (or an account, signed out)."""
    try:
        found = invitations.open_link(secret)
    except UnknownInvitation as exc:
        return _refused(request, str(exc), 404)
    if _answered_by(found, request.user):  # accepted already, by this person: nothing to do
        return redirect("chains:team", slug=found.team.slug)
    if (problem := found.problem()) is not None:
        return _refused(request, problem, 410, found)
    if request.method == "GET":
        return _link_page(request, found, secret, SignUpForm())
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return _answer(request, found)


@login_not_required
@require_POST
@rate_limited("signup", by_address=True)
def invitation_account(request: HttpRequest, secret: str) -> HttpResponse:
    """A new account through a link, whether or not sign-up is open; it joins the team."""
    try:
        found = invitations.open_link(secret)
    except UnknownInvitation as exc:
        return _refused(request, str(exc), 404)
    if (problem := found.problem()) is not None:
        return _refused(request, problem, 410, found)
    form = bound(request, SignUpForm)
    if not form.is_valid():
        return _link_page(request, found, secret, form, status=400)
    try:
        with transaction.atomic():  # no account is left behind when the link was just used
            user = form.save()
            found.accept(user)
    except InvitationClosed as exc:
        return _refused(request, str(exc), 410, found)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("chains:team", slug=found.team.slug)


@require_POST
def answer_invitation(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept or decline an invitation addressed to you (anyone else: 404)."""
    found = get_object_or_404(Invitation, pk=pk, invitee=request.user)
    if found.problem() is not None and not _answered_by(found, request.user):
        return _refused(request, found.problem(), 410, found)
    return _answer(request, found)


def _answer(request: HttpRequest, found: Invitation) -> HttpResponse:
    try:
        answer = read_post(request, AnswerIn).answer
        if _answered_by(found, request.user):
            pass  # accepting twice changes nothing
        elif answer == "accept":
            found.accept(request.user)
        else:
            found.decline(request.user)
    except FormError as exc:
        return _refused(request, str(exc), 400, found)
    except AlreadyMember as exc:
        return _refused(request, str(exc), 409, found)
    except InvitationClosed as exc:
        return _refused(request, str(exc), 410, found)
    if found.team.role_of(request.user) is None:
        return redirect("chains:teams")
    return redirect("chains:team", slug=found.team.slug)


def _answered_by(found: Invitation, user: Any) -> bool:
    return found.status == "accepted" and found.answered_by_id == getattr(user, "pk", None)


def _owned_team(request: HttpRequest, slug: str) -> Team:
    return get_team(request, slug, Role.OWNER)


def _link_page(
    request: HttpRequest, found: Invitation, secret: str, form: Any, status: int = 200
) -> HttpResponse:
    context = {"invitation": found, "secret": secret, "form": form}
    return render(request, "chains/invitation.html", context, status=status)


def _refused(
    request: HttpRequest, message: str, status: int, found: Invitation | None = None
) -> HttpResponse:
    context = {"invitation": found, "error": message}
    return render(request, "chains/invitation.html", context, status=status)
