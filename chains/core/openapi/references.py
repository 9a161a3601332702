"""References inside a provider's document: refused when they lead outside it, followed
with our own resolver when they do not.

Nothing here opens a file or a connection, except :func:`bundle`, which the
command line's ``--resolve-local`` calls to read files beside the document
(never the web). Every walk is without recursion and bounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import DocumentError, Problem
from ..formats import MAX_BYTES, decode, parse_json
from ..formats.yamlio import parse_yaml

__all__ = ["bundle", "follow", "mappings", "parsed", "pointer", "references"]

# Keys that make a JSON Schema validator load another resource by URI.
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


def parsed(text: str, is_json: bool) -> Any:
    return (parse_json(text, locations=False) if is_json else parse_yaml(text))[0]


BUNDLED = "x-chain-designer-files"  # where files read beside the document are put into it
MAX_FILES = 100


def bundle(document: dict[str, Any], directory: Path) -> None:
    """Put each file a ``$ref`` names by a relative path into ``document`` (under
    :data:`BUNDLED`), and point the ``$ref`` at it there; files refer on the same way.

    Only regular files inside ``directory`` (symbolic links resolved first, so
    none leads out), at most :data:`MAX_FILES` and :data:`MAX_BYTES` in all.
    Anything else is left as written, for :func:`references` to refuse.
    """
    root = directory.resolve()
    files: dict[str, Any] = {}
    budget = [MAX_BYTES]
    pending: list[tuple[Any, Path, str]] = [(document, root, "#")]
    while pending:
        tree, folder, prefix = pending.pop()
        for node in mappings(tree):
            ref = node.get("$ref")
            if not isinstance(ref, str):
                continue
            target, _, fragment = ref.partition("#")
            if not target:
                node["$ref"] = prefix + fragment if prefix != "#" else ref
                continue
            if urlsplit(target).scheme or target.startswith("/"):
                continue
            name = _beside(root, folder / unquote(target), ref, budget)
            if name not in files:
                if len(files) >= MAX_FILES:
                    raise DocumentError([Problem(f"more than {MAX_FILES} files are referred to")])
                path = root / name
                try:
                    files[name] = parsed(decode(path.read_bytes()), path.suffix == ".json")
                except DocumentError as exc:
                    raise DocumentError([Problem(f"{name}: {p}") for p in exc.problems]) from None
                inner = f"#/{BUNDLED}/" + name.replace("~", "~0").replace("/", "~1")
                pending.append((files[name], path.parent, inner))
            node["$ref"] = f"#/{BUNDLED}/" + name.replace("~", "~0").replace("/", "~1") + fragment
    if files:
        document[BUNDLED] = files


def _beside(root: Path, path: Path, ref: str, budget: list[int]) -> str:
    """``path`` relative to ``root``, if it is a readable file inside it within the budget."""
    found = path.resolve()
    if not found.is_relative_to(root) or not found.is_file():
        why = "is not a file in the document's directory"
        raise DocumentError([Problem(f"`$ref: {ref}` {why}")])
    size = found.stat().st_size
    if size > budget[0]:
        raise DocumentError(
            [Problem(f"`$ref: {ref}`: the files referred to are over {MAX_BYTES:,} bytes")]
        )
    budget[0] -= size
    return found.relative_to(root).as_posix()


def mappings(tree: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in ``tree``, without recursion."""
    stack = [tree]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            yield value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


# A linked path from the root: (parent, key), None at the root; cheap to extend for every node.
_Place = tuple[Any, str | int] | None
_MAX_PROBLEMS = 20


def references(document: dict[str, Any]) -> dict[int, Any]:
    """Where each ``$ref`` of the document leads (by the id of its mapping); refused by name
    and place: one to outside the document, one that points at nothing, a circle of them.

    Walks the whole document once, without recursion, before anything else reads it.
    """
    problems: list[Problem] = []
    local: list[tuple[dict[str, Any], _Place]] = []
    stack: list[tuple[Any, _Place]] = [(document, None)]
    while stack and len(problems) < _MAX_PROBLEMS:
        value, place = stack.pop()
        if isinstance(value, dict):
            for key in _REF_KEYS:
                ref = value.get(key)
                if isinstance(ref, str) and not ref.startswith("#"):
                    problems.append(
                        Problem(
                            f"`{key}: {ref}` points outside the document; "
                            "only references inside it (`#/...`) are followed",
                            path=pointer(place),
                        )
                    )
                elif isinstance(ref, str) and key == "$ref":
                    local.append((value, place))
            children: Iterable[tuple[str | int, Any]] = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            continue
        # Only mappings and lists are walked on: a scalar holds no reference.
        nested = [(v, (place, k)) for k, v in children if isinstance(v, dict | list)]
        stack.extend(reversed(nested))
    if problems:
        raise DocumentError(problems)
    targets: dict[int, Any] = {}
    for node, place in local:
        try:
            _resolve(document, node, targets)
        except LookupError as exc:
            problems.append(Problem(str(exc.args[0]), path=pointer(place)))
            if len(problems) >= _MAX_PROBLEMS:
                break
    if problems:
        raise DocumentError(problems)
    return targets


def _resolve(document: dict[str, Any], node: dict[str, Any], targets: dict[int, Any]) -> None:
    """Follow ``node``'s chain of references to what it names, recording it for each link."""
    chain: list[int] = []
    current: Any = node
    while isinstance(current, dict) and isinstance(current.get("$ref"), str):
        if id(current) in targets:
            current = targets[id(current)]
            break
        if id(current) in chain:
            raise LookupError(f"`$ref: {node['$ref']}` leads round a circle of references")
        chain.append(id(current))
        current = follow(document, current["$ref"])
    for link in chain:
        targets[link] = current


def follow(document: dict[str, Any], ref: str) -> Any:
    """The value a ``#/...`` JSON pointer names in ``document`` (RFC 6901, URI-escaped)."""
    if ref == "#":
        return document
    if not ref.startswith("#/"):
        raise LookupError(f"`$ref: {ref}` is not a JSON pointer (`#/...`)")
    value: Any = document
    for raw in unquote(ref[2:]).split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif (
            isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            raise LookupError(f"`$ref: {ref}` points at nothing in the document")
    return value


def pointer(place: _Place) -> str:
    """The JSON pointer of a place (``/paths/~1orders/post``)."""
    parts: list[str] = []
    while place is not None:
        place, key = place
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(reversed(parts))
