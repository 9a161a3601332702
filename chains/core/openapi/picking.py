"""Choosing operations of a provider's document by id, tag or path, and the page's search.

A real document has hundreds of operations (Stripe's has 468), so a person
names the ones they want by pattern rather than one by one. Three kinds of
pattern, each a tuple of strings:

- ``ids``: an action id or ``operationId``, or a glob over either
  (``book_order``, ``createHold``, ``*refund*``); case does not matter;
- ``tags``: a tag of the document, exactly, case not mattering (``Refunds``);
- ``paths``: a glob over the path template, case mattering as in a URL
  (``/v1/payment_intents*``, ``/air/orders/{order_id}``).

Globs are :mod:`fnmatch`'s: ``*`` matches any run of characters, ``/``
included, ``?`` one character, ``[abc]`` one of those. Patterns of one kind
are a union (an operation that any of them matches); kinds are an
intersection (an operation must match some pattern of every kind given).
:func:`pick` refuses a pattern that matches no operation of the document,
and a combination that leaves none, with a :class:`DocumentError` naming it:
a typo must not quietly choose nothing. :func:`search` is the page's looser
filter box, and :func:`document_tags` the tags its menu offers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from ..errors import DocumentError, Problem
from .reading import Operation

__all__ = ["document_tags", "has_tag", "is_glob", "pick", "search"]

_GLOB = frozenset("*?[")
_HINT_TAGS = 12  # tags named in the refusal of one that matches nothing


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` is a glob rather than a name.

    >>> is_glob("*refund*"), is_glob("book_order")
    (True, False)
    """
    return any(c in _GLOB for c in pattern)


def has_tag(op: Operation, tag: str) -> bool:
    """Whether ``op`` carries ``tag``, case not mattering."""
    wanted = tag.casefold()
    return any(t.casefold() == wanted for t in op.tags)


def _id_matches(op: Operation, pattern: str) -> bool:
    wanted = pattern.casefold()
    names = [op.id.casefold()] + ([op.operation_id.casefold()] if op.operation_id else [])
    return any(fnmatchcase(name, wanted) for name in names)


def _path_matches(op: Operation, pattern: str) -> bool:
    return fnmatchcase(op.path, pattern)


def pick(
    operations: Sequence[Operation],
    *,
    ids: Iterable[str] = (),
    tags: Iterable[str] = (),
    paths: Iterable[str] = (),
) -> list[Operation]:
    """The operations the patterns choose, in the document's order (the module says how).

    With no pattern at all, every operation. A pattern that matches nothing
    is refused by name, and so is a combination that leaves nothing:

    >>> from chains.core.openapi import read_openapi
    >>> ops = read_openapi('''{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    ...   "paths": {"/refunds": {"post": {"operationId": "createRefund", "tags": ["Refunds"],
    ...                                   "responses": {"200": {"description": "ok"}}}},
    ...             "/orders/{id}": {"get": {"operationId": "getOrder", "tags": ["Orders"],
    ...                                      "responses": {"200": {"description": "ok"}}}}}}''')
    >>> [op.id for op in pick(ops, ids=["*refund*"])]
    ['create_refund']
    >>> [op.id for op in pick(ops, tags=["orders"], paths=["/orders/*"])]
    ['get_order']
    >>> try:
    ...     pick(ops, tags=["Payments"])
    ... except DocumentError as exc:
    ...     print(exc.problems[0].message)
    no operation has the tag `Payments` (the document's tags: Refunds, Orders)
    """
    kinds = [
        ("ids", list(dict.fromkeys(ids)), _id_matches),
        ("tags", list(dict.fromkeys(tags)), has_tag),
        ("paths", list(dict.fromkeys(paths)), _path_matches),
    ]
    problems = [
        Problem(_matches_nothing(kind, pattern, operations))
        for kind, patterns, matches in kinds
        for pattern in patterns
        if not any(matches(op, pattern) for op in operations)
    ]
    if problems:
        raise DocumentError(problems)
    chosen = [
        op
        for op in operations
        if all(any(matches(op, p) for p in patterns) for _, patterns, matches in kinds if patterns)
    ]
    if not chosen:
        given = " and ".join(_described(kind, patterns) for kind, patterns, _ in kinds if patterns)
        why = f"no operation has {given}, though each matches some on its own"
        raise DocumentError([Problem(why)])
    return chosen


def _matches_nothing(kind: str, pattern: str, operations: Sequence[Operation]) -> str:
    if kind == "tags":
        known = document_tags(operations)
        listed = ", ".join(known[:_HINT_TAGS]) + (", …" if len(known) > _HINT_TAGS else "")
        hint = f"the document's tags: {listed}" if known else "the document tags no operation"
        return f"no operation has the tag `{pattern}` ({hint})"
    if kind == "paths":
        return f"no operation's path matches `{pattern}`"
    if is_glob(pattern):
        return f"no operation id matches `{pattern}`"
    return f"no operation {pattern} in the document"


def _described(kind: str, patterns: list[str]) -> str:
    listed = " or ".join(f"`{p}`" for p in patterns)
    if kind == "tags":
        return f"the tag {listed}"
    if kind == "paths":
        return f"a path matching {listed}"
    return f"an id matching {listed}"


def search(operations: Sequence[Operation], text: str) -> list[Operation]:
    """The operations that hold every word of ``text`` in their id, method, path, summary
    or tags, case not mattering; a word that begins with ``/`` is a path prefix
    (``/v1/charges``), and one that is a glob (``*refund*``) must match the whole
    id, ``operationId`` or path.

    >>> from chains.core.openapi import read_openapi
    >>> ops = read_openapi('''{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    ...   "paths": {"/v1/charges/{charge}/refund": {"post": {
    ...               "responses": {"200": {"description": "ok"}}}},
    ...             "/v1/charges": {"get": {"responses": {"200": {"description": "ok"}}}}}}''')
    >>> [op.path for op in search(ops, "refund")]
    ['/v1/charges/{charge}/refund']
    >>> [op.path for op in search(ops, "/v1/charges")]
    ['/v1/charges/{charge}/refund', '/v1/charges']
    >>> [op.path for op in search(ops, "/v1/*s")]
    ['/v1/charges']
    """
    words = text.split()
    return [op for op in operations if all(_holds(op, word) for word in words)]


def _holds(op: Operation, word: str) -> bool:
    if is_glob(word):
        return _id_matches(op, word) or _path_matches(op, word)
    if word.startswith("/"):
        return op.path.startswith(word)
    searched = f"{op.id} {op.operation_id} {op.method} {op.path} {op.summary} {' '.join(op.tags)}"
    return word.casefold() in searched.casefold()


def document_tags(operations: Iterable[Operation]) -> list[str]:
    """Every tag the operations carry, once each (case not mattering), in the document's order.

    >>> import json
    >>> from chains.core.openapi import read_openapi
    >>> ok = {"200": {"description": "ok"}}
    >>> ops = read_openapi(json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    ...   "paths": {"/a": {"get": {"tags": ["Orders", "Air"], "responses": ok}},
    ...             "/b": {"get": {"tags": ["air", "Refunds"], "responses": ok}}}}))
    >>> document_tags(ops)
    ['Orders', 'Air', 'Refunds']
    """
    seen: dict[str, str] = {}
    for op in operations:
        for tag in op.tags:
            seen.setdefault(tag.casefold(), tag)
    return list(seen.values())
