"""New chain: the fit test first (is a chain config the right tool?), then an empty chain.

When a refusal condition fires the page says which one and what to use
instead; the user may still go on. The answers are kept in the first
revision's message.
"""

from __future__ import annotations

import json
import re

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from chains.core.errors import ChainError
from chains.core.fit import QUESTIONS, as_dict, assess
from chains.models import Chain, Team
from chains.views.common import NoTeam, creating_team

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@require_http_methods(["GET", "POST"])
def new_chain(request: HttpRequest) -> HttpResponse:
    answers = {q.id: request.POST.get(q.id, "") for q in QUESTIONS}
    context: dict = {
        "questions": QUESTIONS,
        "answers": answers,
        "teams": Team.objects.creating(request.user),
        "team": request.POST.get("team", ""),
    }
    if request.method == "GET":
        return render(request, "chains/wizard.html", context)
    try:
        result = assess({k: v for k, v in answers.items() if v})
    except ChainError as exc:
        return render(request, "chains/wizard.html", {**context, "error": str(exc)}, status=400)
    context["result"] = result
    if "create" not in request.POST:
        return render(request, "chains/wizard.html", context)
    key = request.POST.get("key", "").strip()
    try:
        team = creating_team(request.user, request.POST.get("team"))
        problem = _key_problem(key)
    except NoTeam as exc:
        problem = str(exc)
    if problem:
        return render(request, "chains/wizard.html", {**context, "error": problem}, status=400)
    document = {"id": key, "title": request.POST.get("title", "").strip() or key}
    message = "new chain; fit test: " + json.dumps(as_dict(result), sort_keys=True)
    Chain.objects.store(document, message, author=request.user, team=team)
    return redirect("chains:chain", key=key)


def _key_problem(key: str) -> str | None:
    if not _KEY.match(key) or len(key) > 200:
        return "chain id: letters, digits, '_', '.' and '-', starting with a letter or digit"
    if Chain.objects.filter(key=key).exists():
        return f"chain id: a chain called {key!r} exists already; open it or choose another id"
    return None
