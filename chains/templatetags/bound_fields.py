"""``form|field:"name"``: a form's bound field by name, for names a template cannot write.

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
