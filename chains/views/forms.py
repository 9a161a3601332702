"""Posted forms read through the same pydantic schemas the API takes.

``read_form(Schema, request.POST)`` fills a schema from a form the way a
browser sends it: one value per field, every value for list fields (a
multi-select, repeated checkboxes), and an empty box counted as left out so
the schema's default applies. A value the schema refuses raises
:class:`FormError` naming the field, which the views answer with a 400 that
keeps what was typed.
"""

from __future__ import annotations

import typing
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest
from pydantic import BaseModel, ValidationError

from chains.core.errors import ChainError, DocumentError, Problem

__all__ = ["FormError", "plain_number", "read_form"]

S = TypeVar("S", bound=BaseModel)


class FormError(ChainError):
    """A posted field is missing or has a value its schema refuses; ``fields`` names them."""

    def __init__(self, message: str, fields: tuple[str, ...] = ()):
        self.fields = fields
        super().__init__(message)


def read_form(schema: type[S], post: Any) -> S:
    """The form ``post`` (a QueryDict) as an instance of ``schema``."""
    data: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        key = field.alias or name
        if _is_list(field.annotation):
            values = [v for v in post.getlist(key) if v != ""]
            if values or key in post:
                data[key] = values
        elif post.get(key, "") != "":
            data[key] = post[key]
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        fields = tuple(str(e["loc"][0]) if e["loc"] else "form" for e in exc.errors())
        raise FormError(_described(exc), fields) from None


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
        reason = "required" if err["type"] == "missing" else err["msg"]
        parts.append(f"{where}: {reason.removeprefix('Value error, ')}")
    return "; ".join(parts)


def uploaded_text(request: HttpRequest, field: str, what: str) -> tuple[str, str]:
    """The text of the file uploaded as ``field``, else of the pasted ``text``; and its name.

    Refused (``DocumentError``, saying what and why) before reading a file
    over ``CHAIN_UPLOAD_MAX_BYTES``, and for nothing given or text not UTF-8.
    """
    upload = request.FILES.get(field)
    limit = settings.CHAIN_UPLOAD_MAX_BYTES
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
