"""The in-app glossary: the words of the discipline, and a page per lint rule.

The glossary page is ``docs/glossary.md`` rendered with an anchor per entry
(``chains.core.glossary``), followed by the lint rules by family; a rule's
page shows its severity, the section it enforces, what it says and how to
fix it, and its bad and good example side by side with the changed lines
marked. Every form box's "?" and every finding's rule id link here.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from chains.core.glossary import glossary_html
from chains.core.lint import RULES
from chains.core.lint.docs import FAMILY_TITLES
from chains.core.lint.examples import EXAMPLES, changed_lines

__all__ = ["glossary", "rule"]


@functools.cache
def _glossary() -> str:
    text = (settings.BASE_DIR / "docs" / "glossary.md").read_text(encoding="utf-8")
    return glossary_html(text, link=_link)


def _link(href: str) -> str | None:
    """Another document of docs/ is not served here: its link becomes plain text."""
    return href if href.startswith(("http://", "https://", "#")) else None


def _families() -> list[tuple[str, list[Any]]]:
    order = list(FAMILY_TITLES)
    families: dict[str, list[Any]] = {}
    for r in sorted(RULES.values(), key=lambda r: r.id):
        families.setdefault(r.family, []).append(r)
    ranked = sorted(families, key=lambda f: order.index(f) if f in order else len(order))
    return [(FAMILY_TITLES.get(f, f), families[f]) for f in ranked]


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    context = {"entries": mark_safe(_glossary()), "families": _families()}  # noqa: S308
    return render(request, "chains/glossary.html", context)


@require_GET
def rule(request: HttpRequest, rule_id: str) -> HttpResponse:
    found = RULES.get(rule_id)
    if found is None:
        raise Http404(f"no lint rule {rule_id}")
    example = EXAMPLES.get(rule_id)
    sides = []
    if example is not None:
        removed, added = changed_lines(example)
        sides = [
            ("Bad", "fires", "del", _lines(example.bad, removed)),
            ("Good", "is quiet", "ins", _lines(example.good, added)),
        ]
    context = {"rule": found, "example": example, "sides": sides}
    return render(request, "chains/rule.html", context)


def _lines(text: str, marked: set[int]) -> list[tuple[str, bool]]:
    return [(line, n in marked) for n, line in enumerate(text.splitlines())]
