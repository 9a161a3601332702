"""Posted forms read through the same pydantic schemas the API takes.

``read_form(Schema, request.POST)`` fills a schema from a form the way a
browser sends it: one value per field, every value for list fields (a
multi-select, repeated checkboxes), and an empty box counted as left out so
the schema's default applies. A value the schema refuses raises
:class:`FormError` naming the field.

The pages outside the workspace read their posts only through
:func:`posted`, which binds the post to a :class:`SchemaForm`: a Django form
whose fields are the schema's and whose validation is the schema's. A
refused form is re-rendered from that bound form, so the page shows what was
typed (``form.name.value``) and the reason beside each field
(``form.name.errors``, ``chains/_field_error.html``) the way Django forms do,
in the words the API uses; a use case's refusal that names a field is put
beside it with :meth:`SchemaForm.refuse`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django import forms
from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, QueryDict
from pydantic import BaseModel, ValidationError

from chains.core.errors import ChainError, DocumentError, Problem

__all__ = [
    "FormError",
    "Prefixed",
    "SchemaForm",
    "plain_number",
    "posted_data",
    "bound",
    "posted",
    "read_form",
    "read_post",
    "uploaded_text",
]

S = TypeVar("S", bound=BaseModel)
F = TypeVar("F", bound=forms.BaseForm)


@dataclass(frozen=True)
class Prefixed:
    """Marks a ``dict`` field of a schema as filled from every posted field named
    ``<prefix><key>`` (``Annotated[dict[str, str], Prefixed("effect-")]``): a form
    with one box per item of a list the page shows (an effect per operation)."""

    prefix: str


class FormError(ChainError):
    """A posted field is missing or has a value its schema refuses; ``fields`` names them."""

    def __init__(self, message: str, fields: tuple[str, ...] = (), reasons: tuple[str, ...] = ()):
        self.fields = fields
        self.reasons = reasons or (message,) * len(fields)
        super().__init__(message)


def read_form(schema: type[S], post: Any) -> S:
    """The form ``post`` (a QueryDict) as an instance of ``schema``."""
    return _validated(schema, _collected(schema, post))


def _collected(schema: type[BaseModel], post: Any, checkboxes: bool = False) -> dict[str, Any]:
    """The values ``post`` gives ``schema``'s fields; with ``checkboxes``, an absent
    ``bool`` is False (a browser sends no unticked checkbox)."""
    data: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        key = field.alias or name
        if (prefix := _prefix(field)) is not None:
            items = {k.removeprefix(prefix): v for k, v in post.items() if k.startswith(prefix)}
            data[key] = {k: v for k, v in items.items() if v != ""}
        elif _is_list(field.annotation):
            values = [v for v in post.getlist(key) if v != ""]
            if values or key in post:
                data[key] = values
        elif post.get(key, "") != "":
            data[key] = post[key]
        elif checkboxes and field.annotation is bool:
            data[key] = False
    return data


def _prefix(field: Any) -> str | None:
    return next((m.prefix for m in field.metadata if isinstance(m, Prefixed)), None)


def _validated(schema: type[S], data: dict[str, Any]) -> S:
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        fields = tuple(str(e["loc"][0]) if e["loc"] else "form" for e in errors)
        raise FormError(_described(exc), fields, tuple(_reason(e) for e in errors)) from None


class _ListField(forms.Field):
    """Every value posted under one name (repeated checkboxes, a multi-select)."""

    widget = forms.MultipleHiddenInput


class SchemaForm(forms.Form, Generic[S]):
    """A post bound to a pydantic schema: a Django bound form that the schema validates.

    One form field per schema field (by alias), so templates use Django's
    bound fields: ``form.note.value`` is what was typed (or ``initial`` on an
    unbound form), ``form.note.errors`` the reason it was refused. After
    ``is_valid()``, ``form.value`` is the schema's instance.
    """

    value: S

    def __init__(
        self,
        schema: type[S],
        data: QueryDict | None = None,
        initial: dict[str, Any] | None = None,
    ):
        super().__init__(data, initial=initial)
        self.schema = schema
        for name, field in schema.model_fields.items():
            key = field.alias or name
            if _prefix(field) is not None:
                continue  # its boxes are the page's to draw, one per item
            kind = _ListField if _is_list(field.annotation) else forms.CharField
            self.fields[key] = kind(required=False, label=name)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        try:
            self.value = _validated(self.schema, _collected(self.schema, self.data, True))
        except FormError as exc:
            for field, reason in zip(exc.fields, exc.reasons, strict=True):
                if field in self.fields:
                    self.add_error(field, reason)
                else:  # a whole-form rule, or an item of a Prefixed field
                    self.add_error(None, f"{field}: {reason}")
        return cleaned

    def refuse(self, reason: object, field: str | None = None) -> None:
        """Put a use case's refusal beside the field it names, else above the form.

        The field is ``field``, or the one the message starts with
        (``"note: say what should change"``, as the services word them).
        """
        text = str(reason)
        named, _, rest = text.partition(": ")
        if field is None and rest and named in self.fields:
            field = named
        if field in self.fields:
            self.add_error(field, text.removeprefix(f"{field}: "))
        else:
            self.add_error(None, text)

    def text(self, key: str, default: str = "") -> str:
        """A posted field as sent, unvalidated, ``default`` if absent."""
        if not self.is_bound:
            return default
        value = self.data.get(key)
        return default if value is None else str(value)

    def sent(self, key: str) -> bool:
        """Whether the post holds ``key`` at all (a submit button's name, a checkbox)."""
        return self.is_bound and key in self.data

    @property
    def message(self) -> str:
        """Every refusal as ``field: reason``, joined with ``; ``, for the summary above."""
        return "; ".join(
            reason if field == NON_FIELD_ERRORS else f"{field}: {reason}"
            for field, reasons in self.errors.items()
            for reason in reasons
        )


def posted_data(request: HttpRequest) -> QueryDict | None:
    """The request's post, the one place a page reads it; None for any other method."""
    return request.POST if request.method == "POST" else None


def posted(
    request: HttpRequest, schema: type[S], initial: dict[str, Any] | None = None
) -> SchemaForm[S]:
    """``schema``'s form, bound to the request's post (unbound for any other method)."""
    return SchemaForm(schema, posted_data(request), initial=initial)


def read_post(request: HttpRequest, schema: type[S]) -> S:
    """The request's post read into ``schema``, for forms that are not shown again
    (buttons, hidden fields, a menu): :class:`FormError` names a refused field."""
    return read_form(schema, posted_data(request) or QueryDict())


def bound(request: HttpRequest, form_class: type[F], **kwargs: Any) -> F:
    """A Django form of ours (sign-up) bound to the request's post (unbound otherwise)."""
    return form_class(posted_data(request), **kwargs)


def plain_number(text: str | None) -> int | None:
    """``text`` as a whole number when it is written in ASCII digits (at most 18), else None.

    An address's ``?r=`` or ``?finding=``: ``str.isdigit`` also accepts ``²``,
    which ``int`` refuses; 18 digits fit every database's integer.
    """
    return int(text) if text and text.isascii() and text.isdigit() and len(text) <= 18 else None


def _is_list(annotation: Any) -> bool:
    """Whether a field holds a list (``list[str]``, ``list[str] | None``)."""
    if typing.get_origin(annotation) is list:
        return True
    return any(typing.get_origin(arg) is list for arg in typing.get_args(annotation))


def _described(exc: ValidationError) -> str:
    """Every refused field as ``field: reason``, joined with ``; ``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "form"
        parts.append(f"{where}: {_reason(err)}")
    return "; ".join(parts)


def _reason(err: Any) -> str:
    """Why pydantic refused one value, in the words a form shows."""
    reason = "required" if err["type"] == "missing" else err["msg"]
    return str(reason).removeprefix("Value error, ")


def uploaded_text(
    request: HttpRequest, field: str, what: str, limit: int | None = None
) -> tuple[str, str]:
    """The text of the file uploaded as ``field``, else of the pasted ``text``; and its name.

    Refused (``DocumentError``, saying what and why) before reading a file
    over ``limit`` bytes (``CHAIN_UPLOAD_MAX_BYTES`` unless given), and for
    nothing given or text not UTF-8.
    """
    upload = request.FILES.get(field)
    limit = limit or settings.CHAIN_UPLOAD_MAX_BYTES
    if upload is not None:
        if upload.size > limit:
            why = f"{upload.name} is {upload.size:,} bytes; the limit is {limit:,}"
            raise DocumentError([Problem(why)])
        data, name = upload.read(), upload.name or ""
    else:
        data, name = request.POST.get("text", "").encode(), request.POST.get("name", "")
        if len(data) > limit:
            raise DocumentError(
                [Problem(f"the pasted {what} is over the limit of {limit:,} bytes")]
            )
    if not data.strip():
        raise DocumentError([Problem(f"choose a {what} to upload or paste one")])
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError:
        raise DocumentError([Problem(f"the {what} is not UTF-8 text")]) from None
