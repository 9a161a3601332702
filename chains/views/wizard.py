"""New chain: the fit test first (is a chain config the right tool?), then an empty chain
or one started from a pattern (``chains.core.patterns``).

When a refusal condition fires the page says which one and what to use
instead; the user may still go on. The answers are kept in the first
revision's message. Both halves of the form are bound to schemas
(``views.forms.posted``): the answers (one field per fit question, taking
the values its choices list) and the new chain's id, title and team. A
refused value is shown again with the reason beside its field.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, Field, create_model, field_validator

from chains.core.design_doc import FIT_TEST_KEY
from chains.core.errors import ChainError
from chains.core.fit import QUESTIONS, FitResult, as_dict, assess
from chains.core.patterns import PATTERNS, pattern_document
from chains.models import Chain, ChainUnavailable, Team
from chains.models.chains import reserved_key
from chains.services.access import NoTeam, creating_team
from chains.views.forms import posted

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
TEMPLATE = "chains/wizard.html"

# One field per fit question, taking one of its choices; None when unanswered.
_ANSWERS: dict[str, Any] = {
    q.id: (Literal[tuple(v for v, _ in q.choices)] | None, None) for q in QUESTIONS
}
FitAnswers = create_model("FitAnswers", **_ANSWERS)


class NewChainIn(BaseModel):
    """What the wizard's create button sends besides the answers."""

    key: str = Field("", validate_default=True)
    title: str = ""
    team: str = ""
    pattern: str = ""  # empty: an empty chain

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, pattern: str) -> str:
        if pattern and pattern not in PATTERNS:
            raise ValueError(f"no pattern {pattern!r}; choose one of {', '.join(PATTERNS)}")
        return pattern

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
    answers, form = posted(request, FitAnswers), posted(request, NewChainIn)
    context: dict[str, Any] = {
        "questions": [(q, answers[q.id]) for q in QUESTIONS],
        "teams": Team.objects.creating(request.user),
        "team": form["team"].value() or "",
        "form": form,
        "patterns": PATTERNS.values(),
    }
    if request.method == "GET":
        return render(request, TEMPLATE, context)
    if not answers.is_valid():
        return render(request, TEMPLATE, {**context, "error": answers.message}, status=400)
    given = answers.value.model_dump(exclude_none=True)
    context["result"] = assess(given)
    if not form.sent("create"):  # only the fit was asked: nothing to refuse about the chain yet
        return render(request, TEMPLATE, context)
    context["creating"] = True
    if form.is_valid():
        try:
            return _create(request, context["result"], given, form.value)
        except (ChainError, NoTeam, ChainUnavailable) as exc:
            form.refuse(exc)
    return render(request, TEMPLATE, {**context, "error": form.message}, status=400)


def _create(
    request: HttpRequest, result: FitResult, answers: dict[str, str], form: NewChainIn
) -> HttpResponse:
    """Store the new chain's first revision, with the fit test's answers in its message.

    The answers also go into the document (``extras.fit_test``), where the
    design document's fit-test section reads them: a message is history,
    the document is what every export carries.
    """
    team = creating_team(request.user, form.team)
    title = form.title.strip()
    document: dict[str, Any] = (
        pattern_document(form.pattern, form.key, title)
        if form.pattern
        else {"id": form.key, "title": title or form.key}
    )
    if answers:
        document["extras"] = {FIT_TEST_KEY: answers}
    start = f"new chain from the pattern {form.pattern}" if form.pattern else "new chain"
    message = f"{start}; fit test: " + json.dumps(as_dict(result), sort_keys=True)
    # new=True: the store creates the chain or refuses, in one transaction.
    revision = Chain.objects.store(document, message, author=request.user, team=team, new=True)
    return redirect(revision.chain.url())
