"""Proposed actions from a provider's OpenAPI 3 document, with the errors it documents.

The document (OpenAPI 3.0 or 3.1, YAML or JSON) is read with our safe
loader and never reaches outside itself: every ``$ref`` must point inside
the same document (``#/components/...``), and one to a file or a URL is
refused by name and place before anything else is done with the document,
so reading an upload opens no file and no connection. Its structure is then
checked against the OpenAPI JSON Schema (openapi-spec-validator's schema,
with the references left as they are written, so this is linear in the
text), and it is walked as plain data, following references with our own
resolver. Each operation becomes an :class:`Operation`: a proposed action
id, an effect guessed from its method and path (the person importing
confirms it), idempotency read from its headers and method, the request
fields (body properties and required parameters) as intent fields, and the
error signals it documents (``http:409 && code:X`` for each code a 4xx or
5xx response's schema enumerates or its examples show, the bare status for
a response that names none).
:func:`propose_actions` turns the chosen ones into chain actions, their
documented errors kept in ``documented_errors``, which the lint rule
``table.documented-error-uncovered`` checks against the verdict table and
``known_unmatched`` (SPEC §3).

The work is bounded whatever the document's shape: the search for codes is
memoised per schema and depth, and a document that needs more than
:data:`MAX_STEPS` steps, or has more than :data:`MAX_OPERATIONS` operations,
is refused with a :class:`DocumentError` saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import ValidatorDetectError

from .errors import DocumentError, Problem
from .formats import MAX_BYTES, decode, parse_json
from .formats.yamlio import parse_yaml
from .model import COMMIT_CLASS_EFFECTS, EFFECTS, Effect
from .words import name_words

__all__ = [
    "MAX_OPERATIONS",
    "OPENAPI_MAX_BYTES",
    "MAX_STEPS",
    "Operation",
    "confirmed_effects",
    "propose_actions",
    "read_openapi",
]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# A document with more operations is refused: each page showing it reads it again whole.
MAX_OPERATIONS = 5_000
# Schema nodes and codes visited while searching error responses for codes, per document.
MAX_STEPS = 200_000
# The largest provider document read (a setting of its own on the site,
# OPENAPI_UPLOAD_MAX_BYTES): real ones are larger than any chain (Stripe's is 4 MB).
OPENAPI_MAX_BYTES = 10 * 1024 * 1024
# Keys that make a JSON Schema validator load another resource by URI.
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_KEY_HEADER = re.compile(r"idempoten", re.I)
_CODE_KEYS = ("code", "error_code", "errorCode", "type")
_DEPTH = 6  # how deep an error schema is searched for enumerated codes


@dataclass(frozen=True)
class Operation:
    """One operation of the document, as a proposed action."""

    id: str
    method: str
    path: str
    summary: str
    effect: Effect
    why: str
    idempotency: str
    key_header: str | None
    fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    operation_id: str = ""
    # Where each field goes in the request, as the action's binding writes it (``path:id``).
    places: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_openapi(
    data: bytes | str,
    filename: str | None = None,
    *,
    beside: Path | None = None,
    limit: int = OPENAPI_MAX_BYTES,
) -> list[Operation]:
    """Every operation of an OpenAPI 3 document; :class:`DocumentError` naming what is wrong.

    With ``beside`` (the command line's ``--resolve-local``, never the web), a
    ``$ref`` to a relative file path is read from that directory (see
    :func:`_bundle`); a URL, an absolute path or a way out of it is refused still.

    A reference to anything outside the document is refused, with where it is:

    >>> text = '{"openapi": "3.0.3", "components": {"schemas": {"A": {"$ref": "/etc/x"}}}}'
    >>> try:
    ...     read_openapi(text)
    ... except DocumentError as exc:
    ...     print(exc.problems[0].path, exc.problems[0].message.split(";")[0])
    /components/schemas/A `$ref: /etc/x` points outside the document
    """
    text = decode(data, limit)
    is_json = (filename or "").endswith(".json") or text.lstrip().startswith("{")
    document = _parsed(text, is_json)
    if not isinstance(document, dict) or "openapi" not in document:
        raise DocumentError([Problem("not an OpenAPI 3 document: it has no `openapi` field")])
    if beside is not None:
        _bundle(document, beside)
    _Reader(document, {}).count_operations()  # those written in place, before the whole walk
    reader = _Reader(document, _references(document))
    reader.count_operations()
    _check_structure(document)
    return reader.operations()


def confirmed_effects(effects: Mapping[str, str]) -> dict[str, Effect]:
    """The effects a person confirmed, by operation id; :class:`DocumentError` naming
    each one that is not an effect of the model.

    >>> try:
    ...     confirmed_effects({"refund": "compensate", "cancel": "undo"})
    ... except DocumentError as exc:
    ...     print(exc.problems[0].message)
    cancel: 'undo' is not an effect (read, mint, commit, compensate, select)
    """
    known: dict[str, Effect] = {}
    wrong = []
    for op, effect in effects.items():
        if effect in EFFECTS:
            known[op] = cast(Effect, effect)
        else:
            wrong.append(Problem(f"{op}: {effect!r} is not an effect ({', '.join(EFFECTS)})"))
    if wrong:
        raise DocumentError(wrong)
    return known


def propose_actions(
    operations: Iterable[Operation],
    chosen: Iterable[str],
    effects: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Chain actions (documents) for the ``chosen`` operation ids, in the document's order.

    ``effects`` overrides a guessed effect per id (what the person confirmed);
    one that is not an effect is refused (:func:`confirmed_effects`).
    """
    wanted = set(chosen)
    given = confirmed_effects(effects or {})
    actions = []
    for op in operations:
        if op.id not in wanted:
            continue
        effect = given.get(op.id, op.effect)
        action: dict[str, Any] = {
            "id": op.id,
            "description": f"{op.method.upper()} {op.path}"
            + (f": {op.summary}" if op.summary else ""),
            "effect": effect,
        }
        if op.fields:
            action["input"] = {"intent": {name: {} for name in op.fields}}
        if effect in COMMIT_CLASS_EFFECTS:
            action["idempotency"] = {"mode": op.idempotency}
        if op.errors:
            action["documented_errors"] = list(op.errors)
        action["http"] = _binding(op, keyed=effect in COMMIT_CLASS_EFFECTS)
        actions.append(action)
    unknown = sorted(wanted - {op.id for op in operations})
    if unknown:
        raise DocumentError([Problem(f"no operation {name} in the document") for name in unknown])
    return actions


def _binding(op: Operation, keyed: bool) -> dict[str, Any]:
    """The HTTP binding of the action proposed for ``op`` (docs/format.md).

    >>> op = Operation("get_order", "get", "/orders/{id}", "", "read", "", "natural", None,
    ...                ["id"], [], "getOrder", {"id": "path:id"})
    >>> _binding(op, keyed=False)["sends"], _binding(op, keyed=False)["operation_id"]
    ({'id': 'path:id'}, 'getOrder')
    """
    binding: dict[str, Any] = {"method": op.method.upper(), "path": op.path}
    if op.operation_id:
        binding["operation_id"] = op.operation_id
    if keyed and op.idempotency == "keyed" and op.key_header:
        binding["idempotency_header"] = op.key_header
    if op.places:
        binding["sends"] = dict(op.places)
    return binding


def _parsed(text: str, is_json: bool) -> Any:
    return (parse_json(text, locations=False) if is_json else parse_yaml(text))[0]


BUNDLED = "x-chain-designer-files"  # where files read beside the document are put into it
MAX_FILES = 100


def _bundle(document: dict[str, Any], directory: Path) -> None:
    """Put each file a ``$ref`` names by a relative path into ``document`` (under
    :data:`BUNDLED`), and point the ``$ref`` at it there; files refer on the same way.

    Only regular files inside ``directory`` (symbolic links resolved first, so
    none leads out), at most :data:`MAX_FILES` and :data:`MAX_BYTES` in all.
    Anything else is left as written, for :func:`_references` to refuse.
    """
    root = directory.resolve()
    files: dict[str, Any] = {}
    budget = [MAX_BYTES]
    pending: list[tuple[Any, Path, str]] = [(document, root, "#")]
    while pending:
        tree, folder, prefix = pending.pop()
        for node in _mappings(tree):
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
                    files[name] = _parsed(decode(path.read_bytes()), path.suffix == ".json")
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


def _mappings(tree: Any) -> Iterator[dict[str, Any]]:
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


def _references(document: dict[str, Any]) -> dict[int, Any]:
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
                            path=_pointer(place),
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
            problems.append(Problem(str(exc.args[0]), path=_pointer(place)))
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
        current = _follow(document, current["$ref"])
    for link in chain:
        targets[link] = current


def _follow(document: dict[str, Any], ref: str) -> Any:
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


def _pointer(place: _Place) -> str:
    """The JSON pointer of a place (``/paths/~1orders/post``)."""
    parts: list[str] = []
    while place is not None:
        place, key = place
        parts.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(reversed(parts))


def _check_structure(document: dict[str, Any]) -> None:
    """The document against the OpenAPI JSON Schema of its version, its references unexpanded.

    openapi-spec-validator's full check follows every reference without a bound
    (exponential on shared ``allOf``, a RecursionError on a long chain); its
    JSON Schema of the document is linear in the text and follows nothing.
    """
    version = document["openapi"]
    try:
        validator = (
            get_validator_cls(document).schema_validator if isinstance(version, str) else None
        )
    except ValidatorDetectError:
        validator = None
    if validator is None:
        raise DocumentError(
            [Problem(f"openapi {version!r}: not an OpenAPI version this reads (3.0, 3.1)")]
        )
    error = next(iter(validator.iter_errors(document)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        message = str(error.message).split("\n")[0]
        raise DocumentError([Problem(f"invalid OpenAPI document: {message}", path=where)])


class _Reader:
    """The operations of a document whose references all lead inside it (``targets``)."""

    def __init__(self, document: dict[str, Any], targets: dict[int, Any]):
        self.document = document
        self.targets = targets
        self.steps = 0
        self.schema_codes: dict[tuple[int, int], tuple[str, ...]] = {}
        self.example_codes: dict[tuple[int, int], tuple[str, ...]] = {}

    def at(self, node: Any) -> Any:
        """``node``, or what it refers to."""
        return self.targets.get(id(node), node)

    def mapping(self, node: Any) -> dict[str, Any]:
        found = self.at(node)
        return found if isinstance(found, dict) else {}

    def listing(self, node: Any) -> list[Any]:
        found = self.at(node)
        return found if isinstance(found, list) else []

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise DocumentError(
                [
                    Problem(
                        f"the document is too complex: its error responses take more than "
                        f"{MAX_STEPS:,} steps through schema nodes and codes to search"
                    )
                ]
            )

    def items(self) -> Iterator[tuple[str, str, dict[str, Any], list[Any]]]:
        """Each operation as (path, method, operation, the path's shared parameters)."""
        for path, item in self.mapping(self.document.get("paths")).items():
            item = self.mapping(item)
            shared = self.listing(item.get("parameters"))
            for method in METHODS:
                if method in item:
                    yield str(path), method, self.mapping(item[method]), shared

    def count_operations(self) -> None:
        count = sum(1 for _ in self.items())
        if count > MAX_OPERATIONS:
            why = (
                f"the document has {count:,} operations; at most {MAX_OPERATIONS:,} are read "
                "at once: upload the part you need (some paths or tags)"
            )
            raise DocumentError([Problem(why, path="/paths")])

    def operations(self) -> list[Operation]:
        found: list[Operation] = []
        taken: set[str] = set()
        for path, method, node, shared in self.items():
            operation = self.operation(path, method, node, shared, taken)
            taken.add(operation.id)
            found.append(operation)
        return found

    def operation(
        self, path: str, method: str, node: dict[str, Any], shared: list[Any], taken: set[str]
    ) -> Operation:
        operation_id = str(node.get("operationId") or "")
        summary = str(node.get("summary") or "")
        ident = _unique(_snake(operation_id or f"{method}_{path}"), taken)
        key_header = None
        override = ""
        places: dict[str, str] = {}
        for parameter in [*shared, *self.listing(node.get("parameters"))]:
            p = self.mapping(parameter)
            where, name = p.get("in"), str(p.get("name", ""))
            if where == "header" and name.lower() == "x-http-method-override":
                schema = self.mapping(p.get("schema"))
                given = [*self.listing(schema.get("enum")), schema.get("default"), p.get("example")]
                override = next((str(v) for v in given if isinstance(v, str)), "")
            elif where == "header" and _KEY_HEADER.search(name):
                key_header = name
            elif where in ("path", "query") and (where == "path" or p.get("required")):
                places.setdefault(_snake(name), f"{where}:{name}")
        for name in self.body_fields(node):
            places.setdefault(_snake(name), f"body:/{_escaped(name)}")
        effect, why = _effect(method, path, operation_id, override, summary)
        if key_header:
            idempotency = "keyed"
        elif method in ("get", "head", "put", "delete", "options"):
            idempotency = "natural"
        else:
            idempotency = "none"
        return Operation(
            id=ident,
            method=method,
            path=path,
            summary=summary,
            effect=effect,
            why=why,
            idempotency=idempotency,
            key_header=key_header,
            fields=list(places),
            errors=self.errors(node),
            operation_id=operation_id,
            places=places,
        )

    def body_fields(self, node: dict[str, Any]) -> list[str]:
        content = self.mapping(self.mapping(node.get("requestBody")).get("content"))
        for entry in content.values():
            schema = self.mapping(self.mapping(entry).get("schema"))
            if "properties" in schema:
                return [str(name) for name in self.mapping(schema["properties"])]
        return []

    def errors(self, node: dict[str, Any]) -> list[str]:
        """Each error response as signals: ``http:409 && code:X`` per code it names, else
        the status."""
        found: list[str] = []
        for status, response in self.mapping(node.get("responses")).items():
            text = str(status).upper()
            if re.fullmatch(r"[45]\d\d", text):
                signal = f"http:{text}"
            elif re.fullmatch(r"[45]XX", text):
                signal = f"http:{text[0]}xx"
            else:
                continue
            codes: list[str] = []
            for entry in self.mapping(self.mapping(response).get("content")).values():
                entry = self.mapping(entry)
                if "schema" in entry:
                    codes += self.codes(entry["schema"], _DEPTH)
                codes += self.examples(entry)
            found += [f"{signal} && code:{c}" for c in dict.fromkeys(codes)] or [signal]
        return list(dict.fromkeys(found))

    def codes(self, schema: Any, depth: int) -> tuple[str, ...]:
        """Codes an error schema enumerates, in properties named like a code, nested or in lists.

        Memoised per schema and depth, so a schema reached along many paths (or
        round a cycle of references) is searched once at each depth.
        """
        node = self.at(schema)
        if depth == 0 or not isinstance(node, dict):
            return ()
        key = (id(node), depth)
        if key in self.schema_codes:
            return self.schema_codes[key]
        properties = self.mapping(node.get("properties"))
        parts = [p for c in ("allOf", "oneOf", "anyOf") for p in self.listing(node.get(c))]
        self.spend(1 + len(properties) + len(parts))
        codes: list[str] = []
        for name, child in properties.items():
            child = self.at(child)
            if name in _CODE_KEYS and isinstance(child, dict) and "enum" in child:
                values = self.listing(child["enum"])
                self.spend(len(values))
                codes += [
                    str(v) for v in values if v is not None and not isinstance(v, dict | list)
                ]
            else:
                codes += self.codes(child, depth - 1)
        if "items" in node:
            codes += self.codes(node["items"], depth - 1)
        for part in parts:
            codes += self.codes(part, depth - 1)
        self.spend(len(codes))
        found = self.schema_codes[key] = tuple(dict.fromkeys(codes))
        return found

    def examples(self, entry: dict[str, Any]) -> list[str]:
        """Codes the examples of a response's media type show."""
        values = [entry["example"]] if "example" in entry else []
        for one in self.mapping(entry.get("examples")).values():
            one = self.mapping(one)
            if "value" in one:
                values.append(one["value"])
        return [code for value in values for code in self.codes_in(value, _DEPTH)]

    def codes_in(self, value: Any, depth: int) -> tuple[str, ...]:
        """Codes an example value shows, memoised per value and depth like :meth:`codes`."""
        if depth == 0 or not isinstance(value, dict | list):
            return ()
        key = (id(value), depth)
        if key in self.example_codes:
            return self.example_codes[key]
        children = list(value.values()) if isinstance(value, dict) else value
        self.spend(1 + len(children))
        codes = (
            [str(value[k]) for k in _CODE_KEYS if isinstance(value.get(k), str)]
            if isinstance(value, dict)
            else []
        )
        for child in children:
            codes += self.codes_in(child, depth - 1)
        self.spend(len(codes))
        found = self.example_codes[key] = tuple(dict.fromkeys(codes))
        return found


def _effect(
    method: str, path: str, operation_id: str, override: str = "", summary: str = ""
) -> tuple[Effect, str]:
    """The effect an operation's method and words suggest, and why.

    Its words are those of the path and the operationId, split at case and
    punctuation (``PostQuotesQuoteCancel`` is post, quotes, quote, cancel).
    A word that undoes (cancel, void, refund, reverse ...) makes a compensator;
    an operationId that starts by creating or changing (create, post, update,
    accept ...) a commit, whatever else it names (``PostPrices`` creates a
    price, it does not price); else a word that reads (search, quote,
    validate ...), or an id that starts with one, a read. An operationId that
    is only the method and the path (``post-paymentMethods``) says nothing:
    the summary's first word stands for its verb then ("Get a list of ...").

    >>> _effect("post", "/v1/refunds", "PostRefunds")
    ('compensate', 'its name says it refunds: a compensator, if it undoes a commit')
    >>> _effect("post", "/v1/prices", "PostPrices")[0], _effect("post", "/offers/search", "")[0]
    ('commit', 'read')
    >>> _effect("post", "/shopping/seatmaps", "getSeatmapFromFlightOffer", "GET")[1]
    'POST with X-HTTP-Method-Override: GET reads'
    """
    if method in ("get", "head", "options"):
        return "read", f"{method.upper()} reads"
    if override.lower() in ("get", "head"):
        return "read", f"{method.upper()} with X-HTTP-Method-Override: {override.upper()} reads"
    if method == "delete":
        return "compensate", "DELETE undoes something: a compensator, if it undoes a commit"
    words = name_words(f"{path} {operation_id}")
    verb = next(iter(name_words(operation_id)), "")
    if verb in ("", method) and summary:
        verb = next(iter(name_words(summary)), "")
    undoing = [w for w in words if w in _UNDOING]
    if undoing:
        return (
            "compensate",
            f"its name says it {_UNDOING[undoing[-1]]}: a compensator, if it undoes a commit",
        )
    if verb in _CHANGING:
        return "commit", f"its operationId starts with {verb!r}: it changes something"
    if verb in _READING_VERBS or any(w in _READING_WORDS for w in words):
        return "read", f"a {method.upper()} whose name says it searches, prices or validates"
    return "commit", f"{method.upper()} changes something at the provider"


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words that undo what a commit did, each with how a reason says it.
_UNDOING = {
    **dict.fromkeys(("cancel", "cancels", "cancellation", "cancellations"), "cancels"),
    **dict.fromkeys(("void", "voids"), "voids"),
    **dict.fromkeys(("refund", "refunds"), "refunds"),
    **dict.fromkeys(("reverse", "reversal", "reversals"), "reverses"),
    **dict.fromkeys(("revoke", "revocation"), "revokes"),
    **dict.fromkeys(("release", "unhold", "rollback", "undo"), "releases"),
}
# The first word of an operationId that creates or changes.
_CHANGING = _word_set(
    "create post put patch update add set modify accept confirm capture book issue pay "
    "finalize submit send charge"
)
_READING_VERBS = _word_set(
    "get search find list lookup retrieve fetch query check validate estimate preview price quote"
)
_READING_WORDS = _word_set(
    "search query find lookup list quote quotes price pricing availability validate "
    "validation revalidate revalidation estimate preview"
)


def _escaped(name: str) -> str:
    """``name`` as one JSON pointer token (RFC 6901: ``~`` and ``/`` escaped)."""
    return name.replace("~", "~0").replace("/", "~1")


def _snake(name: str) -> str:
    """An id from an operation id or a path: ``createOrder`` -> ``create_order``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text or "operation"


def _unique(ident: str, taken: set[str]) -> str:
    if ident not in taken:
        return ident
    n = 2
    while f"{ident}_{n}" in taken:
        n += 1
    return f"{ident}_{n}"
