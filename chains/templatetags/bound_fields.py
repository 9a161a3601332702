"""``form|field:"name"``: a form's bound field by name, for names a template cannot write;
``box|help``: a box's help, put after its label (``chains.views.doc_fields.Helped``).

A verdict row's ``fields`` and a ladder rung's ``else`` are the document's
own keys; ``form.fields`` is the form's field table and ``else`` a template
keyword, so the template asks for them by name.
"""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def field(form: Any, name: str) -> Any:
    return form[name]


@register.filter
def help(box: Any) -> Any:
    """The "?" link and explanation of ``box``; nothing for a box without help."""
    shown = getattr(box, "help_html", None)
    return shown() if shown is not None else ""
