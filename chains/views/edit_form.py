"""The edit form: how a workspace form posts one edit, read into the API's ``EditIn``.

``op`` and ``base`` are ``EditIn``'s own fields, read with ``read_form``. The
arguments come from ``args`` (one JSON object) and from the field families
below, so a plain HTML form (an input per argument, a multi-select, a
checkbox, a YAML textarea, the verdict builder) can post an edit without
JavaScript. A family's field is ``<family>.<path>``, where ``<path>`` is the
argument's dotted place (``arg.fields.id`` sets ``args["fields"]["id"]``).
The families are listed for people in docs/designer.md ("Posting edits from
a script"). A field that cannot be read raises ``FormError`` (``EditError``
for JSON or YAML it cannot read) naming it; the workspace answers 400 and
keeps what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import QueryDict

from chains.core.verdicts import build_verdict
from chains.services.editing import EditIn, parse_args, parse_value
from chains.views.forms import FormError, read_form

__all__ = ["FAMILIES", "read_edit"]

_LEFT_OUT = object()  # what a family reads from a field that sets no argument


def _arg(post: QueryDict, name: str) -> Any:
    """A string; an empty box sets nothing."""
    return post[name] if post[name] != "" else _LEFT_OUT


def _set(post: QueryDict, name: str) -> Any:
    """A string; an empty box sets null, which removes the field."""
    return post[name] if post[name] != "" else None


def _list(post: QueryDict, name: str) -> Any:
    """Every non-empty value of a repeated field (a multi-select); none sets nothing."""
    return [v for v in post.getlist(name) if v] or _LEFT_OUT


def _setlist(post: QueryDict, name: str) -> Any:
    """Every non-empty value, always set: nothing chosen clears the list."""
    return [v for v in post.getlist(name) if v]


def _yaml(post: QueryDict, name: str) -> Any:
    """A YAML value (a textarea, or a checkbox posting ``true`` after a hidden ``false``)."""
    return parse_value(post[name], name, "YAML")


# Each family: how one posted field becomes the argument at its path.
FAMILIES: dict[str, Callable[[QueryDict, str], Any]] = {
    "arg": _arg,
    "set": _set,
    "list": _list,
    "setlist": _setlist,
    "yaml": _yaml,
}
# ``verdict.<part>`` fields (type, to, gate, fields, reason) build one verdict
# expression, stored at the path ``verdict.into`` names.
VERDICT_AT = "fields.verdict"


def read_edit(post: QueryDict) -> EditIn:
    """The edit ``post`` asks for; raises ``FormError`` or ``EditError`` naming a bad field."""
    plain = read_form(EditIn, _without(post, "args"))
    args = parse_args(post["args"]) if post.get("args") else {}
    verdict: dict[str, str] = {}
    for name in post:
        family, _, path = name.partition(".")
        if family in FAMILIES:
            value = FAMILIES[family](post, name)
            if value is not _LEFT_OUT:
                _put(args, path, value, name)
        elif family == "verdict" and post[name] != "":
            verdict[path] = post[name]
    if verdict:
        at = verdict.pop("into", VERDICT_AT)
        _put(args, at, build_verdict(verdict), "verdict.into")
    return plain.model_copy(update={"args": args})


def _without(post: QueryDict, name: str) -> QueryDict:
    """``post`` less the field ``name`` (``args`` is JSON text here, read apart)."""
    rest = post.copy()
    rest.pop(name, None)
    return rest


def _put(args: dict[str, Any], path: str, value: Any, field: str) -> None:
    """Set ``value`` at the dotted ``path`` of ``args``, making the objects on the way."""
    if not path or "" in path.split("."):
        raise FormError(f"{field}: the field name needs a path after the family, like arg.id")
    *parents, last = path.split(".")
    node = args
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise FormError(f"{field}: {part} is not an object")
    node[last] = value
