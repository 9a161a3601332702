"""New chain: the fit test first (is a chain config the right tool?), then an empty chain.

When a refusal condition fires the page says which one and what to use
instead; the user may still go on. The answers are kept in the first
revision's message. Both halves of the form are read through schemas: the
answers (one field per fit question; ``assess`` in core says which values a
question takes) and the new chain's id, title and team.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, Field, create_model, field_validator

from chains.core.design_doc import FIT_TEST_KEY
from chains.core.errors import ChainError
from chains.core.fit import QUESTIONS, FitResult, as_dict, assess
from chains.models import Chain, ChainUnavailable, Team
from chains.models.chains import reserved_key
from chains.services.access import NoTeam, creating_team
from chains.views.forms import read_form

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
TEMPLATE = "chains/wizard.html"

# One text field per fit question, left empty when unanswered.
FitAnswers = create_model("FitAnswers", **{q.id: (str, "") for q in QUESTIONS})


class NewChainIn(BaseModel):
    """What the wizard's create button sends besides the answers."""

    key: str = Field("", validate_default=True)
    title: str = ""
    team: str = ""

    @field_validator("key")
    @classmethod
    def _key(cls, key: str) -> str:
        key = key.strip()
        if not _KEY.match(key) or len(key) > 200:
            raise ValueError(
                "a chain id has letters, digits, '_', '.' and '-', starting with a letter or digit"
            )
        if refusal := reserved_key(key):
            raise ValueError(refusal)
        return key


@require_http_methods(["GET", "POST"])
def new_chain(request: HttpRequest) -> HttpResponse:
    answers = read_form(FitAnswers, request.POST).model_dump()
    context: dict[str, Any] = {
        "questions": QUESTIONS,
        "answers": answers,
        "teams": Team.objects.creating(request.user),
        "team": request.POST.get("team", ""),
        "typed": {k: request.POST.get(k, "") for k in ("key", "title")},
    }
    if request.method == "GET":
        return render(request, TEMPLATE, context)
    try:
        given = {k: v for k, v in answers.items() if v}
        context["result"] = assess(given)
        if "create" in request.POST:
            return _create(request, context["result"], given)
    except (ChainError, NoTeam, ChainUnavailable) as exc:
        return render(request, TEMPLATE, {**context, "error": str(exc)}, status=400)
    return render(request, TEMPLATE, context)


def _create(request: HttpRequest, result: FitResult, answers: dict[str, str]) -> HttpResponse:
    """Store the new chain's first revision, with the fit test's answers in its message.

    The answers also go into the document (``extras.fit_test``), where the
    design document's fit-test section reads them: a message is history,
    the document is what every export carries.
    """
    form = read_form(NewChainIn, request.POST)
    team = creating_team(request.user, form.team)
    document: dict[str, Any] = {"id": form.key, "title": form.title.strip() or form.key}
    if answers:
        document["extras"] = {FIT_TEST_KEY: answers}
    message = "new chain; fit test: " + json.dumps(as_dict(result), sort_keys=True)
    # new=True: the store creates the chain or refuses, in one transaction.
    revision = Chain.objects.store(document, message, author=request.user, team=team, new=True)
    return redirect(revision.chain.url())
