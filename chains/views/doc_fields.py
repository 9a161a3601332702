"""Form fields for the values of a chain document: durations, verdicts, comma lists, YAML, ids.

Each field cleans what a person typed into the value the document stores,
and shows a stored value the way it is typed (``prepare_value``). An empty
box cleans to None, which an edit reads as "remove this key". Durations are
read by the core's parser and verdicts by the core's verdict grammar, so a
value the chain could not use (``ten seconds``) is refused beside its box
instead of being saved for lint to find. Nothing here knows about elements;
``element_forms`` builds the workspace's forms from these fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml
from django import forms
from django.core.exceptions import ValidationError
from django.forms.boundfield import BoundField
from django.forms.utils import ErrorList
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from chains.core.errors import DocumentError, VerdictSyntaxError
from chains.core.formats.yamlio import parse_yaml
from chains.core.lint.values import unreadable
from chains.core.model import parse_duration
from chains.core.verdicts import parse_verdict
from chains.services.editing import MAX_FIELD

__all__ = [
    "Chosen",
    "Csv",
    "Duration",
    "FieldErrors",
    "Helped",
    "IdChoice",
    "Ids",
    "Number",
    "Signals",
    "Text",
    "Tick",
    "Verdict",
    "Whole",
    "Yaml",
    "choice",
    "split_csv",
]


class FieldErrors(ErrorList):
    """A field's errors as the workspace shows them: a ``field-error`` paragraph each."""

    def render(self, *args: Any, **kw: Any) -> SafeString:
        # The id is the one Django names in the field's aria-describedby.
        at = getattr(self, "field_id", None)
        if at:
            return format_html_join(
                "", '<p class="field-error" id="{}_error">{}</p>', ((at, e) for e in self)
            )
        return format_html_join("", '<p class="field-error">{}</p>', ((e,) for e in self))

    __str__ = as_ul = render


class Helped(BoundField):
    """A box whose help the template puts after its label: ``{{ f.box|help }}``.

    The form puts the text in the field's ``help_text`` and the entry in
    ``form.terms``; Django then points the box's ``aria-describedby`` at
    ``<id>_helptext``, the explanation's id, so a screen reader reads it.
    The help is a "?" link to the glossary entry (a new tab: what was typed
    stays) holding the explanation, which the stylesheet shows while the box
    or the link has focus or the pointer. It stays outside the label so the
    box's accessible name is the label's words alone. A checked box
    (``data-check``) gets the ``output`` that static/js/checks.js fills.
    """

    def help_html(self) -> SafeString:
        term = getattr(self.form, "terms", {}).get(self.name)
        if not term or self.is_hidden or not self.help_text:
            return SafeString("")
        html = format_html(
            '<a class="term" href="{}#{}" target="_blank" rel="noopener"'
            ' aria-label="Glossary entry (new tab)" title="The glossary: {}">?'
            '<span class="tip" role="tooltip" id="{}_helptext">{}</span></a>',
            reverse("chains:glossary"),
            term,
            term.replace("-", " "),
            self.auto_id,
            _with_code(self.help_text),
        )
        if "data-check" in self.field.widget.attrs:
            html += format_html(
                '<output class="check" for="{}" aria-live="polite"></output>', self.auto_id
            )
        return html


def _with_code(text: str) -> SafeString:
    """``text`` with its `backticked` parts as code, the rest escaped."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: show the text as it is
        return format_html("{}", text)
    return format_html_join(
        "",
        "{}",
        ((format_html("<code>{}</code>", p) if n % 2 else p,) for n, p in enumerate(parts)),
    )


def _attrs(size: int | None, placeholder: str | None, **more: str) -> dict[str, Any]:
    attrs: dict[str, Any] = dict(more)
    if size:
        attrs["size"] = size
    if placeholder:
        attrs["placeholder"] = f"e.g. {placeholder}"
    return attrs


class Text(forms.CharField):
    """A string; an empty box removes the key."""

    def __init__(self, *, size: int | None = None, placeholder: str | None = None, **kw: Any):
        kw.setdefault("widget", forms.TextInput(attrs=_attrs(size, placeholder)))
        super().__init__(required=kw.pop("required", False), empty_value=None, **kw)


class Duration(Text):
    """A duration the core reads (``30s``, ``~5m``, ``10-15m``, ``unknown``)."""

    def __init__(self, **kw: Any):
        super().__init__(**kw)
        self.widget.attrs["list"] = "duration-choices"

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value is not None and unreadable(parse_duration(value)):
            raise ValidationError(
                f"{value!r} is not a duration: write a number and a unit "
                "(40s, 15m, 24h, ~5m, 10-15m), or unknown"
            )


class Verdict(Text):
    """A verdict expression (``rewind(to: quote)``), checked against the verdict grammar."""

    def __init__(self, **kw: Any):
        super().__init__(**kw)
        self.widget.attrs.update({"list": "verdict-choices", "data-check": "verdict"})

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value is not None:
            try:
                parse_verdict(value)
            except VerdictSyntaxError as exc:
                raise ValidationError(str(exc)) from None


def split_csv(text: str) -> list[str]:
    """A comma-separated list; a comma inside brackets or quotes belongs to its item.

    >>> split_csv("code in ['a', 'b'], http:410")
    ["code in ['a', 'b']", 'http:410']
    """
    items, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text + ","):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    return [item for item in items if item]


class Csv(Text):
    """A list typed comma-separated (signals, rematch keys); empty removes the key."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return value

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        return (split_csv(text) or None) if text is not None else None


class Signals(Csv):
    """Signal atoms typed comma-separated (``http:410, code:QUOTE_EXPIRED``), checked as typed."""

    def __init__(self, **kw: Any):
        super().__init__(**kw)
        self.widget.attrs["data-check"] = "signal"


class Yaml(Text):
    """A YAML value (``{capture_method: manual}``), read with the importer's limits."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, (dict, list)):
            return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
        return value

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        if text is None:
            return None
        if len(text) > MAX_FIELD:
            raise ValidationError(
                f"{len(text):,} characters is more than the {MAX_FIELD:,} allowed"
            )
        try:
            return parse_yaml(text)[0]
        except DocumentError as exc:
            raise ValidationError(f"not valid YAML: {exc}") from None


class Whole(forms.IntegerField):
    """A whole number (a budget); an empty box removes the key."""

    def __init__(self, **kw: Any):
        attrs = {"inputmode": "numeric", "size": kw.pop("size", 3)}
        invalid = {"invalid": "expected a whole number"}
        super().__init__(
            required=False, widget=forms.TextInput(attrs=attrs), error_messages=invalid, **kw
        )


class Number(forms.FloatField):
    """A number (a backoff factor); an empty box removes the key."""

    def __init__(self, **kw: Any):
        attrs = _attrs(3, kw.pop("placeholder", None), inputmode="decimal")
        invalid = {"invalid": "expected a number"}
        super().__init__(
            required=False, widget=forms.TextInput(attrs=attrs), error_messages=invalid, **kw
        )

    def clean(self, value: Any) -> Any:
        return _whole(super().clean(value))

    def prepare_value(self, value: Any) -> Any:
        return _whole(value)


def _whole(number: Any) -> Any:
    """``2.0`` as ``2``: a factor typed as 2 is stored and shown as 2."""
    return int(number) if isinstance(number, float) and number.is_integer() else number


class Tick(forms.BooleanField):
    """A checkbox: ticked is true, unticked false."""

    def __init__(self, **kw: Any):
        super().__init__(required=False, **kw)


def choice(values: Iterable[str], labels: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Choices from one of the core's lists, with ``—`` (not set) first."""
    return [("", "—"), *((v, (labels or {}).get(v, v)) for v in values)]


class Chosen(forms.TypedChoiceField):
    """One of the core's values (an effect, an audience); ``—`` removes the key."""

    def __init__(self, values: Iterable[str], labels: dict[str, str] | None = None, **kw: Any):
        required = kw.pop("required", False)
        values = list(values)
        choices = choice(values, labels) if not required else [(v, v) for v in values]
        super().__init__(choices=choices, required=required, empty_value=None, **kw)


class IdChoice(forms.TypedChoiceField):
    """An element's id, chosen among the chain's ``of`` (actions, handles, gates).

    The options are set by the form from the chain; an id stored that the
    chain no longer defines stays an option, so saving unchanged keeps it.
    ``extra`` are words allowed beside the ids (``external``, ``none``).
    """

    def __init__(self, of: str, extra: tuple[str, ...] = (), others: bool = False, **kw: Any):
        self.of, self.extra, self.others = of, extra, others  # others: not the element itself
        super().__init__(choices=[("", "—")], required=False, empty_value=None, **kw)


class Ids(forms.MultipleChoiceField):
    """Several ids of the chain's ``of`` (a multi-select); nothing chosen is an empty list."""

    def __init__(self, of: str, rows: int = 3, **kw: Any):
        self.of, self.extra, self.others = of, (), False
        widget = forms.SelectMultiple(attrs={"size": rows})
        super().__init__(choices=[], required=False, widget=widget, **kw)

    def to_python(self, value: Any) -> list[str]:
        return [v for v in super().to_python(value) if v]  # a blank option chooses nothing
