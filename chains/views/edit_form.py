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

Structured forms (a gate's outcomes, an action's idempotency) post nested
objects with three marker families, applied around the value families:
``keep.<path>`` carries the object's current value as JSON (so the keys a
form does not show survive), and an object that ends up empty is removed;
``rows.<path>`` turns the numbered entries posted under it (``<path>.0.when``)
into a list, dropping empty ones (none left: null, which removes the list);
``named.<path>`` turns them into a mapping keyed by each entry's ``name``
(a gate's outcomes, an action's intent fields), dropping entries without one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import QueryDict

from chains.core.verdicts import build_verdict
from chains.services.editing import EditIn, parse_args, parse_value
from chains.views.forms import FormError, plain_number, read_form

__all__ = ["FAMILIES", "read_edit", "renamed_selection"]

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


def _csv(post: QueryDict, name: str) -> Any:
    """A comma-separated list (signals, rematch keys); an empty box sets null.

    A comma inside brackets or quotes belongs to its item: a signal such as
    ``code in ['a', 'b']`` stays one.
    """
    items, depth, quote, start, text = [], 0, "", 0, post[name]
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
    return [item for item in items if item] or None


def _int(post: QueryDict, name: str) -> Any:
    """A whole number (a budget); an empty box sets null."""
    text = post[name].strip()
    if text == "":
        return None
    if plain_number(text.removeprefix("-")) is None or len(text) > 12:
        raise FormError(f"{name}: expected a whole number, got {text!r}", (name,))
    return int(text)


# Each family: how one posted field becomes the argument at its path.
FAMILIES: dict[str, Callable[[QueryDict, str], Any]] = {
    "arg": _arg,
    "set": _set,
    "list": _list,
    "setlist": _setlist,
    "yaml": _yaml,
    "csv": _csv,
    "int": _int,
}
MARKERS = ("keep", "rows", "named")
# ``verdict.<part>`` fields (type, to, gate, fields, reason) build one verdict
# expression, stored at the path ``verdict.into`` names.
VERDICT_AT = "fields.verdict"


def read_edit(post: QueryDict) -> EditIn:
    """The edit ``post`` asks for; raises ``FormError`` or ``EditError`` naming a bad field."""
    plain = read_form(EditIn, _without(post, "args"))
    args = parse_args(post["args"]) if post.get("args") else {}
    verdict: dict[str, str] = {}
    marked = _marked(post)
    for family, path, name in marked:  # shallow first: a row's keep lands in its reset list
        if family == "keep":
            _put(args, path, parse_value(post[name], name, "JSON"), name)
        else:
            _put(args, path, {}, name)
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
    for family, path, _name in reversed(marked):  # deep first: a row empties before its list
        _shape(args, family, path)
    return plain.model_copy(update={"args": args})


def renamed_selection(posted: EditIn, select: str) -> str:
    """The selection once ``posted`` is saved: a renamed selected element keeps its panel.

    An update with a new ``fields.id`` (the form's Id box, or the YAML editor)
    renames the element; the workspace's ``select`` still names the old id.
    """
    kind = posted.op.removeprefix("update_")
    old, fields = posted.args.get("id"), posted.args.get("fields")
    new = fields.get("id") if isinstance(fields, dict) else None
    if kind not in RENAMED or not isinstance(new, str) or not new or select != f"{kind}:{old}":
        return select
    return f"{kind}:{new}"


RENAMED = ("action", "handle", "gate", "row")


def _marked(post: QueryDict) -> list[tuple[str, str, str]]:
    """The marker fields as (family, path, field name), shallow paths first."""
    found = []
    for name in post:
        family, _, path = name.partition(".")
        if family in MARKERS:
            found.append((family, path, name))
    return sorted(found, key=lambda item: (item[1].count("."), item[0] != "keep"))


def _shape(args: dict[str, Any], family: str, path: str) -> None:
    """Apply a marker once every value is in: make a list or a mapping, or drop an empty object."""
    *parents, last = path.split(".")
    node: Any = args
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not isinstance(node.get(last), dict):
        return
    value = {k: v for k, v in node[last].items() if v is not None}
    if family == "rows":
        entries = _numbered(value)
        # No rows is no list: null removes it, as an empty section is removed.
        node[last] = [e for e in entries if not _empty(e)] or None
    elif family == "named":
        entries = _numbered(value)
        named = [e for e in entries if isinstance(e, dict) and e.get("name")]
        node[last] = {e.pop("name"): e for e in named}
    elif _empty(value):
        # A section with nothing in it is no section: null removes it from the element.
        if path.count(".") <= 1:
            node[last] = None
        else:
            del node[last]
    else:
        node[last] = value


def _numbered(value: dict[str, Any]) -> list[Any]:
    """The rows posted as ``path.0``, ``path.1``, ... in their order; other keys are no rows."""
    rows = {n: v for k, v in value.items() if (n := plain_number(k)) is not None}
    return [rows[n] for n in sorted(rows)]


def _empty(value: Any, top: bool = True) -> bool:
    """Nothing worth keeping: no value, or only unset ones and ticks.

    A box is posted ticked or not on every row, the blank one included, so a
    tick alone does not make a row or a section; deeper down (an intent field
    under a kept ``input``) every key counts.
    """
    if isinstance(value, dict):
        if not top:  # kept as stored: even ``{}`` says something (by_key_replay: true)
            return bool(value) and all(v is None for v in value.values())
        return all(_empty(v, False) or isinstance(v, bool) for v in value.values())
    return value is None or value in ("", [])


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
        if node.get(part) is None:  # a kept section that was absent (JSON null)
            node[part] = {}
        node = node[part]
        if not isinstance(node, dict):
            raise FormError(f"{field}: {part} is not an object")
    node[last] = value
