"""``{% term "anchor" "label" "explanation" %}``: a word of the discipline on the page.

The word links to its glossary entry (a new tab, so nothing typed is lost)
and holds its explanation, which the stylesheet shows while the link has
the pointer or focus; ``effect_meaning`` gives an effect class's.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from chains.core.model import EFFECT_MEANINGS

register = template.Library()


@register.simple_tag
def term(anchor: str, label: str, explanation: str) -> SafeString:
    return format_html(
        '<a class="termed" href="{}#{}" target="_blank" rel="noopener">{}'
        '<span class="tip" role="tooltip">{}</span></a>',
        reverse("chains:glossary"),
        anchor,
        label,
        explanation,
    )


@register.filter
def effect_meaning(effect: str) -> str:
    return EFFECT_MEANINGS.get(effect, "")  # type: ignore[call-overload]
