"""The OpenAPI parts of one bound action that are written from the chain, never read back.

An operation of the OpenAPI export (:mod:`.openapi_chain`) shows OpenAPI
tooling what the action sends and gets: ``operationId``, ``parameters``
from the binding's ``sends`` (and the idempotency key's header), a
``requestBody`` sketched from its ``body:`` pointers, ``responses`` naming
the documented errors, and ``x-chain-verdicts``, the verdict rows that apply
to the step (the chain's domain rows scoped to it, then the generic rows of
SPEC §3 that its effect class meets). All of them follow from the chain, so
the reader does not take them back: it renders them again with
:func:`rendered_parts` and warns about any that a person changed.
"""

from __future__ import annotations

import re
from typing import Any

from ..model import Action, ChainSpec, HttpBinding, is_keyed, is_unkeyed_commit
from ..signals import scope_applies_to
from ..verdicts import GENERIC_ROWS
from .http_places import body_schema, in_places

__all__ = ["RENDERED", "generic_rows_for", "rendered_parts"]

# Each rendered key of an operation, and what it is written from (said when an edit is ignored).
RENDERED = {
    "operationId": "x-chain-http.operation_id, else x-chain-action",
    "parameters": "x-chain-http.sends and idempotency_header",
    "requestBody": "the body: places of x-chain-http.sends",
    "responses": "x-chain-documented-errors and x-chain-http.reads",
    "x-chain-verdicts": "x-chain.verdict_table and the generic rows of SPEC §3",
}

_STATUS = re.compile(r"\bhttp:([1-5](?:\d\d|xx))\b", re.IGNORECASE)


def rendered_parts(spec: ChainSpec, action: Action, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The rendered keys of ``action``'s operation, in the order an operation writes them.

    ``rows`` is the chain's canonical verdict table (one document per row of
    ``spec.verdict_table``), so the rows are written as the chain writes them.
    """
    binding = action.http
    if binding is None:
        raise ValueError(f"action {action.id!r} has no HTTP binding, so no operation")
    parts: dict[str, Any] = {"operationId": binding.operation_id or action.id}
    parameters = _parameters(spec, action, binding)
    if parameters:
        parts["parameters"] = parameters
    schema = body_schema(binding.sends, lambda name: _what(spec, action, name))
    if schema is not None:
        content = {"application/json": {"schema": schema}}
        parts["requestBody"] = {"required": True, "content": content}
    parts["responses"] = _responses(spec, action, binding)
    parts["x-chain-verdicts"] = _verdict_rows(spec, action, rows)
    return parts


def _what(spec: ChainSpec, action: Action, name: str) -> str:
    """What a sent or read name is, in words: a handle or an intent field of ``action``."""
    if name in action.input.handles or name in action.output.handles or spec.handle(name):
        return f"handle {name}"
    if name in action.input.intent:
        return f"intent field {name}"
    return name


def _parameters(spec: ChainSpec, action: Action, binding: HttpBinding) -> list[dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    path_sent = {where: name for name, where in in_places(binding.sends, "path").items()}
    for where in binding.parameters():  # every template parameter is declared, bound or not
        name = path_sent.get(where)
        described = _what(spec, action, name) if name else "not bound to a handle or field"
        found["path", where] = _parameter(where, "path", True, described)
    for kind in ("query", "header"):
        for name, where in in_places(binding.sends, kind).items():
            field = action.input.intent.get(name)
            required = field.required if field is not None else True
            found.setdefault(
                (kind, where), _parameter(where, kind, required, _what(spec, action, name))
            )
    header = binding.idempotency_header
    if header and ("header", header) not in found:
        described = "the idempotency key: the same key for every attempt of one dispatch"
        found["header", header] = _parameter(header, "header", is_keyed(action), described)
    return list(found.values())


def _parameter(name: str, kind: str, required: bool, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": kind,
        "required": required,
        "description": description,
        "schema": {"type": "string"},
    }


def _responses(spec: ChainSpec, action: Action, binding: HttpBinding) -> dict[str, Any]:
    success: dict[str, Any] = {"description": f"{action.id} succeeded"}
    headers = {
        where: {"description": _what(spec, action, name), "schema": {"type": "string"}}
        for name, where in in_places(binding.reads, "header").items()
    }
    if headers:
        success["headers"] = headers
    schema = body_schema(binding.reads, lambda name: _what(spec, action, name))
    if schema is not None:
        success["content"] = {"application/json": {"schema": schema}}
    responses: dict[str, Any] = {"200": success}
    by_status: dict[str, list[str]] = {}
    for error in action.documented_errors:
        status = _STATUS.search(error)
        # OpenAPI writes a range of statuses as 4XX; a signal without a status is the default.
        key = status[1].upper() if status else "default"
        by_status.setdefault(key, []).append(error)
    for key in sorted(by_status, key=lambda k: (k == "default", k)):
        listed = "; ".join(by_status[key])
        responses[key] = {"description": f"documented error: {listed}"}
    return responses


def _verdict_rows(spec: ChainSpec, action: Action, rows: list[dict[str, Any]]) -> list[Any]:
    scoped = [
        document
        for row, document in zip(spec.verdict_table, rows, strict=True)
        if scope_applies_to(row.scope, action) is True
    ]
    return scoped + generic_rows_for(action)


def generic_rows_for(action: Action) -> list[dict[str, Any]]:
    """The generic rows of SPEC §3 that can match an attempt of ``action``, as row documents.

    Rows 4-7 split by effect class (retry for reads, mints and keyed or natural
    commits; reconcile for unkeyed commits), row 1 needs a consumed handle and
    row 2 a valid empty answer; a selection makes no call, so no transport row
    applies to it. Their signals and verdicts are SPEC §3's words, named ``#n``
    as a run's trace names generic rows.

    >>> [r["id"] for r in generic_rows_for(Action(id="pay", effect="commit"))]
    ['#3', '#5', '#7', '#8', '#9', '#10', '#11', '#12']
    """
    unkeyed = is_unkeyed_commit(action)
    skip = {5, 7} if not unkeyed else {4, 6}
    if action.effect == "select":
        skip = {4, 5, 6, 7}
    if not action.input.handles:
        skip.add(1)
    if action.output.empty is None or not action.output.empty.valid:
        skip.add(2)
    return [
        {"id": f"#{n}", "description": signal, "scope": {"text": scope}, "verdict": verdict}
        for n, signal, scope, verdict in GENERIC_ROWS
        if n not in skip
    ]
