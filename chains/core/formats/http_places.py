"""Where a bound action's values go in a request: the places of an HTTP binding, read once.

An HTTP binding (:class:`~chains.core.model.HttpBinding`) says where each handle and intent
field goes (``sends``: ``path:x``, ``query:x``, ``header:x``,
``body:<JSON pointer>``) and where each minted handle comes from
(``reads``). The OpenAPI export sketches schemas from them and the Postman
export fills requests and test scripts; both read the places here, so a
place is split and a JSON pointer decoded in one way only. The model has
already checked every place, so nothing here validates again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["body_example", "body_schema", "in_places", "pointer_tokens", "split_place"]


def split_place(place: str) -> tuple[str, str]:
    """``"body:/data/id"`` → ``("body", "/data/id")``; ``"header:X-Key"`` → ``("header", "X-Key")``.

    >>> split_place("query:page")
    ('query', 'page')
    """
    kind, _, where = place.partition(":")
    return kind, where


def pointer_tokens(pointer: str) -> list[str]:
    """The reference tokens of a JSON pointer (RFC 6901), ``~1`` and ``~0`` decoded.

    >>> pointer_tokens("/data/selected_offers/0"), pointer_tokens("/a~1b/c~0d"), pointer_tokens("")
    (['data', 'selected_offers', '0'], ['a/b', 'c~d'], [])
    """
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def in_places(places: dict[str, str], kind: str) -> dict[str, str]:
    """Of ``places`` (a binding's ``sends`` or ``reads``), the names at a place of ``kind``.

    >>> in_places({"order_id": "path:id", "q": "query:q"}, "path")
    {'order_id': 'id'}
    """
    found = {}
    for name, place in places.items():
        place_kind, where = split_place(place)
        if place_kind == kind:
            found[name] = where
    return found


def _is_index(token: str) -> bool:
    return token.isdigit() or token == "-"


def body_example(places: dict[str, str], value: Callable[[str], Any]) -> Any:
    """A JSON body holding ``value(name)`` at each ``body:`` pointer of ``places``, else None.

    A token that is a number (or ``-``, the end of an array) makes an array;
    a later pointer into a place an earlier one filled replaces it, since a
    value cannot be both a leaf and a container.

    >>> sends = {"offer_id": "body:/data/selected_offers/0", "pax": "body:/data/passengers"}
    >>> body_example(sends, lambda name: "{{" + name + "}}")
    {'data': {'selected_offers': ['{{offer_id}}'], 'passengers': '{{pax}}'}}
    """
    pointers = in_places(places, "body")
    if not pointers:
        return None
    root: Any = None
    for name, pointer in pointers.items():
        root = _put(root, pointer_tokens(pointer), value(name))
    return root


def _put(node: Any, tokens: list[str], leaf: Any) -> Any:
    if not tokens:
        return leaf
    head, rest = tokens[0], tokens[1:]
    if _is_index(head):
        items = node if isinstance(node, list) else []
        at = len(items) if head == "-" else int(head)
        items.extend([None] * (at + 1 - len(items)))
        items[at] = _put(items[at], rest, leaf)
        return items
    fields = node if isinstance(node, dict) else {}
    fields[head] = _put(fields.get(head), rest, leaf)
    return fields


def body_schema(places: dict[str, str], describe: Callable[[str], str]) -> dict[str, Any] | None:
    """A JSON Schema sketch of the body ``places`` point into: objects, arrays, described leaves.

    Only the shape the pointers show; a leaf says which handle or field goes there.

    >>> body_schema({"offer_id": "body:/offers/0"}, lambda name: name)
    {'type': 'object', 'properties': {'offers': {'type': 'array', 'items': {'description': \
'offer_id'}}}}
    """
    pointers = in_places(places, "body")
    if not pointers:
        return None
    root: dict[str, Any] = {}
    for name, pointer in pointers.items():
        root = _sketch(root, pointer_tokens(pointer), {"description": describe(name)})
    return root


def _sketch(node: dict[str, Any], tokens: list[str], leaf: dict[str, Any]) -> dict[str, Any]:
    if not tokens:
        return leaf
    head, rest = tokens[0], tokens[1:]
    if _is_index(head):
        items = node.get("items", {}) if node.get("type") == "array" else {}
        return {"type": "array", "items": _sketch(items, rest, leaf)}
    properties = node.get("properties", {}) if node.get("type") == "object" else {}
    properties[head] = _sketch(properties.get(head, {}), rest, leaf)
    return {"type": "object", "properties": properties}
