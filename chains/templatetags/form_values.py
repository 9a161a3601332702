"""What a workspace form shows in each field: what was typed, or else what is stored.

A form names itself with a hidden ``form`` field. When the server refuses
its post, the page is rendered again and this form's fields show exactly
what was posted, with the error beside the field it names; every other form
shows the stored document. Fields are addressed by their path under the
form's argument prefix (``timeout``, ``outcomes.0.verdict``), the same path
``chains.views.edit_form`` reads them at, whatever the field's family.

    {% form_values "gate-form" element.data "fields." as fv %}
    <input name="set.fields.description" value="{{ fv|val:'description' }}">
    {% for row in fv|rows:"outcomes" %}<input name="set.{{ row.at }}name" ...>{% endfor %}
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from django import template

from chains.views.edit_form import FAMILIES, MARKERS

register = template.Library()

_FAMILIES = (*FAMILIES, *MARKERS, "verdict")
# The element part of a refusal's path: ``gates.consent.``, ``actions[2].``, ``policy.``.
_ELEMENT = re.compile(
    r"^(?:(?:actions|handles|gates|verdict_table)(?:\.[^.\[]+|\[[^\]]*\])|policy|chain)\.?"
)


class FormValues:
    """One form's values: ``typed`` (the refused post) when it is this form's, else ``data``."""

    def __init__(
        self, form: str, data: Any, prefix: str, typed: dict | None, base: str = "", alias: str = ""
    ):
        self.form, self.data, self.prefix, self.base, self.alias = form, data, prefix, base, alias
        self.typed = typed if typed and typed.get("form") == form else None
        self.post = self.typed["post"] if self.typed else None

    @property
    def at(self) -> str:
        """The posted name of this scope after its family: ``fields.outcomes.0.``."""
        return self.prefix + self.base

    @property
    def here(self) -> str:
        """The posted name of the scope itself (a row): ``fields.outcomes.0``."""
        return self.at.rstrip(".")

    @property
    def error(self) -> str:
        return self.typed["error"] if self.typed else ""

    def posted(self, path: str, families: tuple[str, ...] = _FAMILIES) -> list[str] | None:
        if self.post is None:
            return None
        for family in families:
            name = f"{family}.{self.at}{path}".rstrip(".")
            if name in self.post:
                return self.post.getlist(name)
        return []

    def stored(self, path: str) -> Any:
        node = self.data
        for part in (self.base + path).split("."):
            if not part:
                continue
            if isinstance(node, list):
                node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
            elif isinstance(node, dict) and part not in node and part.isdigit():
                items = list(node.items())  # a mapping edited as numbered rows: name first
                if int(part) >= len(items):
                    return None
                name, body = items[int(part)]
                node = {"name": name, **(body if isinstance(body, dict) else {})}
            elif isinstance(node, dict):
                node = node.get(part)
            else:
                return None
        return node

    def scoped(self, base: str, alias: str = "") -> FormValues:
        inner = FormValues(self.form, self.data, self.prefix, None, base, alias)
        inner.typed, inner.post = self.typed, self.post
        return inner


@register.simple_tag(takes_context=True)
def form_values(
    context: Any, form: str, data: Any = None, prefix: str = "", op: str = ""
) -> FormValues:
    """``op``: a post naming no form but this op counts as this form's (a script's post)."""
    typed = context.get("typed")
    if typed and op and not typed.get("form") and typed.get("op") == op:
        typed = {**typed, "form": form}
    return FormValues(form, data, prefix, typed)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, (dict, list)):
        return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return str(value)


@register.filter
def val(fv: FormValues, path: str) -> str:
    """The text of one field."""
    typed = fv.posted(path)
    if typed is not None:
        return typed[-1] if typed else ""
    return _text(fv.stored(path))


@register.filter
def vals(fv: FormValues, path: str) -> list[str]:
    """The chosen values of a multi-select."""
    typed = fv.posted(path)
    if typed is not None:
        return [v for v in typed if v]
    stored = fv.stored(path)
    return [str(v) for v in stored] if isinstance(stored, list) else ([stored] if stored else [])


@register.filter
def checked(fv: FormValues, path: str) -> bool:
    typed = fv.posted(path)
    if typed is not None:
        return "true" in typed
    return bool(fv.stored(path))


@register.filter
def keep(fv: FormValues, path: str) -> str:
    """The JSON a ``keep.`` field carries: the section as stored (or as posted)."""
    typed = fv.posted(path, ("keep",))
    if typed:
        return typed[-1]
    return json.dumps(fv.stored(path))


@register.filter
def rows(fv: FormValues, path: str) -> list[FormValues]:
    """The numbered rows of a list or mapping, and one blank row to add with.

    ``path:n`` shows at least ``n`` rows (a new gate's accept and decline).
    """
    path, _, least = path.partition(":")
    stored = fv.stored(path)
    count = len(stored) if isinstance(stored, (list, dict)) else 0
    numbers = set(range(max(count + 1, int(least or 0))))
    if fv.post is not None:
        # The rows as posted, by their numbers (the last is the blank row again): a
        # hand-made post may number a row 999999, which must not draw the rows between.
        head = f"{fv.at}{path}."
        posted = [n.partition(".")[2][len(head) :].partition(".")[0] for n in fv.post]
        numbers = {int(n) for n in posted if n.isascii() and n.isdigit() and len(n) <= 9}
        numbers |= set(range(max(1, int(least or 0))))
    scoped = []
    for n in sorted(numbers):
        row = fv.scoped(f"{fv.base}{path}.{n}.")
        name = row.stored("name")
        row.alias = f"{fv.base}{path}.{name}." if name else ""
        row.n = n  # type: ignore[attr-defined]
        scoped.append(row)
    return scoped


@register.filter
def within(fv: FormValues, path: str) -> FormValues:
    """The fields under ``path`` as one scope, like a row: ``b.at``, ``b|val:'base'``.

    For a section shown several times through one partial (a backoff per step).
    """
    return fv.scoped(f"{fv.base}{path}.")


@register.filter
def err(fv: FormValues, path: str) -> str:
    """The refusal, when it names this field (its document path or its posted name)."""
    if fv.typed is None:
        return ""
    where = str(fv.typed.get("path") or "")
    # ``[#n]`` (1-based, chains.core.paths) is the form's ``.n-1``.
    counted = re.sub(r"\[#(\d+)\]", lambda m: f".{int(m[1]) - 1}", where)
    rest = _ELEMENT.sub("", re.sub(r"\[(\d+)\]", r".\1", counted), count=1)
    for full in (fv.base + path, fv.alias + path if fv.alias else None):
        full = full.rstrip(".") if full else None  # a whole row or section: ``row|err:""``
        if full and (rest == full or rest.startswith(full + ".")):
            return fv.error
        if full and where.endswith(f".{fv.prefix}{full}"):  # a posted field name
            return fv.error
    return ""


@register.filter
def choices(chosen: Any, items: Any) -> list[tuple[str, bool]]:
    """A picker's options as (id, selected): the chosen ones first, in their stored order.

    A chosen id the chain does not define (a dangling reference, an
    ``external(...)`` minter) stays an option, so saving the form unchanged
    keeps it; the rest follow in document order.
    """
    picked = [chosen] if isinstance(chosen, str) else list(chosen or [])
    picked = [p for p in picked if p]
    ids = [getattr(item, "id", item) for item in items or []]
    return [(p, True) for p in picked] + [(i, False) for i in ids if i not in picked]
