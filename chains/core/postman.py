"""A chain's bound calls as a Postman collection (v2.1), handles carried from step to step.

:func:`to_postman` writes one request per action with an HTTP binding:
its method, ``{{baseUrl}}`` and its path (a ``{x}`` segment becomes the
path variable ``:x``, a ``{x}`` inside a segment ``{{x}}``), the query
parameters and headers its ``sends`` names, the idempotency key's header as
``{{$guid}}`` and a JSON body skeleton from its ``body:`` pointers. Every
name the requests send or read is a collection variable; a request's test
script stores each handle its ``reads`` names into one
(``pm.collectionVariables.set``), so the next request that sends it finds
it. The requests come in folders: the happy path, which is
:func:`~chains.core.model.main_steps` (the chain's order, leaving out
probes and compensators; one folder per variant when the chain has
variants), and then the other calls, to send by hand when a run needs a
probe or an undo. Actions without a binding are not in it: a handle only
they mint is a variable to fill in by hand. Nothing here reads a
collection back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .formats.http_places import body_example, in_places, split_place
from .model import Action, ChainSpec, HttpBinding, first_by_id, main_steps

__all__ = ["POSTMAN_SCHEMA", "to_postman"]

POSTMAN_SCHEMA = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"
_SEGMENT_PARAMETER = re.compile(r"\{([^}]+)\}")

# Resolves a JSON pointer (RFC 6901) in the answer; the script of every request that reads one.
_POINTER_JS = (
    "const at = (doc, pointer) => pointer.split('/').slice(1)"
    ".map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))"
    ".reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), doc);"
)


def to_postman(spec: ChainSpec) -> dict[str, Any]:
    """``spec``'s bound calls as a Postman collection v2.1 (plain JSON-ready data).

    >>> chain = ChainSpec.model_validate({"id": "c", "actions": [{"id": "get_order",
    ...     "effect": "read", "http": {"method": "GET", "path": "/orders/{id}"}}]})
    >>> collection = to_postman(chain)
    >>> collection["item"][0]["item"][0]["request"]["url"]["raw"]
    '{{baseUrl}}/orders/:id'
    """
    bound = {ident: a for ident, a in first_by_id(spec.actions).items() if a.http is not None}
    folders = []
    on_a_path: set[str] = set()
    variants = spec.variants.values if spec.variants and spec.variants.values else [None]
    for variant in variants:
        steps = [bound[step] for step in main_steps(spec, variant) if step in bound]
        name = "happy path"
        if variant is not None and spec.variants is not None:
            name += f" ({spec.variants.axis}: {variant})"
        about = "The chain's main steps in order: run this folder to carry handles along."
        folders.append(_folder(name, about, steps))
        on_a_path.update(step.id for step in steps)
    others = [action for ident, action in bound.items() if ident not in on_a_path]
    if others:
        about = "Probes, compensators and other calls no happy path makes: send them by hand."
        folders.append(_folder("other calls", about, others))
    info: dict[str, Any] = {"name": spec.title or spec.id, "schema": POSTMAN_SCHEMA}
    info["description"] = (
        spec.description + "\n\n" if spec.description else ""
    ) + f"The calls of chain {spec.id}; set baseUrl, then the variables no request reads."
    return {"info": info, "item": folders, "variable": _variables(list(bound.values()))}


def _folder(name: str, description: str, actions: list[Action]) -> dict[str, Any]:
    return {"name": name, "description": description, "item": [_request(a) for a in actions]}


def _variables(actions: list[Action]) -> list[dict[str, Any]]:
    names = ["baseUrl"]
    for action in actions:
        binding = _binding(action)
        names += binding.sends
        names += _unsent_path_parameters(binding)
        names += binding.reads
    return [{"key": name, "value": "", "type": "string"} for name in dict.fromkeys(names)]


def _binding(action: Action) -> HttpBinding:
    if action.http is None:
        raise ValueError(f"action {action.id!r} has no HTTP binding, so no request")
    return action.http


def _unsent_path_parameters(binding: HttpBinding) -> list[str]:
    sent = set(in_places(binding.sends, "path").values())
    return [name for name in binding.parameters() if name not in sent]


def _request(action: Action) -> dict[str, Any]:
    binding = _binding(action)
    request: dict[str, Any] = {
        "method": binding.method,
        "header": _headers(binding),
        "url": _url(binding),
        "description": action.description or f"{action.effect} step {action.id}",
    }
    body = body_example(binding.sends, lambda name: "{{" + name + "}}")
    if body is not None:
        raw = json.dumps(body, indent=2, ensure_ascii=False)
        request["body"] = {"mode": "raw", "raw": raw, "options": {"raw": {"language": "json"}}}
    script = {"type": "text/javascript", "exec": _test_script(action, binding)}
    return {"name": action.id, "request": request, "event": [{"listen": "test", "script": script}]}


def _headers(binding: HttpBinding) -> list[dict[str, str]]:
    headers = [
        {"key": where, "value": "{{" + name + "}}"}
        for name, where in in_places(binding.sends, "header").items()
    ]
    if binding.idempotency_header:  # a fresh key each send: a resend by hand is a new dispatch
        headers.append({"key": binding.idempotency_header, "value": "{{$guid}}"})
    if in_places(binding.sends, "body"):
        headers.append({"key": "Content-Type", "value": "application/json"})
    return headers


def _url(binding: HttpBinding) -> dict[str, Any]:
    """The request's URL: ``{x}`` segments as ``:x`` path variables filled from variables."""
    sent = {where: name for name, where in in_places(binding.sends, "path").items()}
    segments, variables = [], []
    for segment in binding.path.strip("/").split("/") if binding.path != "/" else []:
        whole = _SEGMENT_PARAMETER.fullmatch(segment)
        if whole:
            variables.append({"key": whole[1], "value": "{{" + sent.get(whole[1], whole[1]) + "}}"})
            segments.append(":" + whole[1])
        else:  # a parameter inside a segment (/files/{name}.json) cannot be a path variable
            segments.append(
                _SEGMENT_PARAMETER.sub(lambda m: "{{" + sent.get(m[1], m[1]) + "}}", segment)
            )
    query = [
        {"key": where, "value": "{{" + name + "}}"}
        for name, where in in_places(binding.sends, "query").items()
    ]
    raw = "{{baseUrl}}/" + "/".join(segments)
    if query:
        raw += "?" + "&".join(f"{q['key']}={q['value']}" for q in query)
    url: dict[str, Any] = {"raw": raw, "host": ["{{baseUrl}}"], "path": segments}
    if query:
        url["query"] = query
    if variables:
        url["variable"] = variables
    return url


def _test_script(action: Action, binding: HttpBinding) -> list[str]:
    """JavaScript lines: the answer succeeded, and each handle read is kept for later steps."""
    lines = [
        f"pm.test({json.dumps(action.id + ' succeeded')}, function () {{",
        "    pm.response.to.be.success;",
        "});",
    ]
    if not binding.reads:
        return lines
    lines.append(_POINTER_JS)
    lines.append("let body;")
    lines.append("try { body = pm.response.json(); } catch (e) { body = undefined; }")
    for handle, place in binding.reads.items():
        kind, where = split_place(place)
        if kind == "header":
            value = f"pm.response.headers.get({json.dumps(where)})"
        else:
            value = f"at(body, {json.dumps(where)})"
        lines += [
            f"pm.test({json.dumps(handle + ' is in the answer (' + place + ')')}, function () {{",
            f"    const value = {value};",
            "    pm.expect(value).to.not.equal(undefined);",
            "    const kept = typeof value === 'string' ? value : JSON.stringify(value);",
            f"    pm.collectionVariables.set({json.dumps(handle)}, kept);",
            "});",
        ]
    return lines
