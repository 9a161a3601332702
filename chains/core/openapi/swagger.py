"""Swagger 2.0 documents converted to OpenAPI 3.0, in-process, so the rest of the package
reads one shape.

Many providers still publish Swagger 2.0 (most of Amadeus's self-service
APIs). Only what the import reads is carried over with care: paths and
operations, parameters (``body`` and ``formData`` ones become the request
body), responses with their schemas, headers and examples, and the shared
``definitions``, ``parameters`` and ``responses``, each ``$ref`` re-pointed
at its new place. Security definitions are left out: nothing here reads
them. The walk is without recursion; references are only re-pointed, never
followed, so the work is linear in the document.
"""

from __future__ import annotations

import copy
from typing import Any

from .references import mappings

__all__ = ["from_swagger", "is_swagger"]

_MOVED = {
    "#/definitions/": "#/components/schemas/",
    "#/responses/": "#/components/responses/",
    "#/parameters/": "#/components/parameters/",
}
# Parameter fields that describe the value: in OpenAPI 3 they move into its ``schema``.
_VALUE_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
)
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def is_swagger(document: Any) -> bool:
    """Whether ``document`` is a Swagger 2.0 document (``swagger: "2.0"``)."""
    return isinstance(document, dict) and str(document.get("swagger", "")).startswith("2")


def from_swagger(document: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI 3.0 form of a Swagger 2.0 ``document`` (which is left as it was).

    >>> doc = {"swagger": "2.0", "info": {"title": "T", "version": "1"}, "basePath": "/v1",
    ...        "paths": {"/orders": {"post": {"parameters": [
    ...            {"in": "body", "name": "body", "required": True,
    ...             "schema": {"$ref": "#/definitions/Order"}}],
    ...            "responses": {"201": {"description": "made"}}}}},
    ...        "definitions": {"Order": {"type": "object"}}}
    >>> out = from_swagger(doc)
    >>> out["openapi"], out["servers"]
    ('3.0.3', [{'url': '/v1'}])
    >>> out["paths"]["/orders"]["post"]["requestBody"]["content"]["application/json"]
    {'schema': {'$ref': '#/components/schemas/Order'}}
    """
    source = _repointed(copy.deepcopy(document))
    consumes = _media(source.get("consumes"))
    produces = _media(source.get("produces"))
    shared_parameters = _dict(source.get("parameters"))
    bodies = {
        f"#/components/parameters/{name}": p
        for name, p in shared_parameters.items()
        if isinstance(p, dict) and p.get("in") in ("body", "formData")
    }
    out: dict[str, Any] = {"openapi": "3.0.3", "info": source.get("info") or {}}
    host, base = source.get("host"), source.get("basePath") or ""
    if host or base:
        scheme = next(iter(source.get("schemes") or []), "https")
        out["servers"] = [{"url": f"{scheme}://{host}{base}" if host else base}]
    for key in ("tags", "externalDocs"):
        if key in source:
            out[key] = source[key]
    out.update({k: v for k, v in source.items() if isinstance(k, str) and k.startswith("x-")})
    paths: dict[str, Any] = {}
    for path, item in _dict(source.get("paths")).items():
        if not isinstance(item, dict):
            paths[path] = item
            continue
        paths[path] = _path_item(item, consumes, produces, bodies)
    out["paths"] = paths
    components: dict[str, Any] = {}
    if isinstance(source.get("definitions"), dict):
        components["schemas"] = {k: _schema(v) for k, v in source["definitions"].items()}
    if isinstance(source.get("responses"), dict):
        components["responses"] = {
            k: _response(v, produces) for k, v in source["responses"].items()
        }
    parameters = {
        name: _parameter(p)
        for name, p in shared_parameters.items()
        if not (isinstance(p, dict) and p.get("in") in ("body", "formData"))
    }
    if parameters:
        components["parameters"] = parameters
    if components:
        out["components"] = components
    return out


def _repointed(tree: Any) -> Any:
    """``tree`` with every ``$ref`` to a Swagger 2.0 place pointed at its OpenAPI 3 one."""
    for node in mappings(tree):
        ref = node.get("$ref")
        if isinstance(ref, str):
            old = next((o for o in _MOVED if ref.startswith(o)), None)
            if old is not None:
                node["$ref"] = _MOVED[old] + ref[len(old) :]
    return tree


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _media(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) and value else []


def _path_item(
    item: dict[str, Any], consumes: list[str], produces: list[str], bodies: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    shared = _list(item.get("parameters"))
    for key, value in item.items():
        if key in _METHODS and isinstance(value, dict):
            out[key] = _operation(value, shared, consumes, produces, bodies)
        elif key != "parameters":
            out[key] = value
    kept = [_parameter(p) for p in shared if not _is_body(p, bodies)]
    if kept:
        out["parameters"] = kept
    return out


def _is_body(parameter: Any, bodies: dict[str, Any]) -> bool:
    if not isinstance(parameter, dict):
        return False
    return parameter.get("in") in ("body", "formData") or parameter.get("$ref") in bodies


def _operation(
    node: dict[str, Any],
    shared: list[Any],
    consumes: list[str],
    produces: list[str],
    bodies: dict[str, Any],
) -> dict[str, Any]:
    out = {
        k: v
        for k, v in node.items()
        if k not in ("parameters", "responses", "consumes", "produces", "security", "schemes")
    }
    mine = _list(node.get("parameters"))
    given = [bodies.get(str(p.get("$ref")), p) if isinstance(p, dict) else p for p in mine]
    inherited = [bodies.get(str(p.get("$ref")), p) if isinstance(p, dict) else p for p in shared]
    media_in = _media(node.get("consumes")) or consumes
    body = _request_body([*inherited, *given], media_in)
    if body:
        out["requestBody"] = body
    parameters = [_parameter(p) for p in given if not _is_body(p, bodies)]
    if parameters:
        out["parameters"] = parameters
    media_out = _media(node.get("produces")) or produces
    responses = _dict(node.get("responses"))
    out["responses"] = {str(k): _response(v, media_out) for k, v in responses.items()}
    return out


def _parameter(parameter: Any) -> Any:
    """A path, query, header or cookie parameter, its value's description in ``schema``."""
    if not isinstance(parameter, dict) or "$ref" in parameter:
        return parameter
    out = {k: v for k, v in parameter.items() if k not in _VALUE_KEYS and k != "collectionFormat"}
    schema = {k: parameter[k] for k in _VALUE_KEYS if k in parameter}
    out["schema"] = _schema(schema) if schema else {"type": "string"}
    return out


def _request_body(parameters: list[Any], media: list[str]) -> dict[str, Any] | None:
    """The request body the ``body`` parameter or the ``formData`` ones describe."""
    body = next((p for p in parameters if isinstance(p, dict) and p.get("in") == "body"), None)
    if body is not None:
        content = {
            m: {"schema": _schema(body.get("schema") or {})} for m in media or ["application/json"]
        }
        out: dict[str, Any] = {"content": content}
        if body.get("required"):
            out["required"] = True
        if body.get("description"):
            out["description"] = body["description"]
        return out
    form = [p for p in parameters if isinstance(p, dict) and p.get("in") == "formData"]
    if not form:
        return None
    properties = {
        str(p.get("name")): _schema({k: p[k] for k in _VALUE_KEYS if k in p}) for p in form
    }
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [str(p.get("name")) for p in form if p.get("required")]
    if required:
        schema["required"] = required
    uploads = any(p.get("type") == "file" for p in form)
    kind = "multipart/form-data" if uploads else "application/x-www-form-urlencoded"
    return {"content": {kind: {"schema": schema}}}


def _response(response: Any, media: list[str]) -> Any:
    if not isinstance(response, dict) or "$ref" in response:
        return response
    out: dict[str, Any] = {"description": str(response.get("description") or "")}
    examples = _dict(response.get("examples"))
    if "schema" in response or examples:
        content: dict[str, Any] = {}
        for kind in media or list(examples) or ["application/json"]:
            entry: dict[str, Any] = {}
            if "schema" in response:
                entry["schema"] = _schema(response["schema"])
            if kind in examples:
                entry["example"] = examples[kind]
            content[kind] = entry
        for kind, value in examples.items():
            content.setdefault(kind, {"example": value})
        out["content"] = content
    if isinstance(response.get("headers"), dict):
        out["headers"] = {name: _header(header) for name, header in response["headers"].items()}
    out.update({k: v for k, v in response.items() if isinstance(k, str) and k.startswith("x-")})
    return out


def _header(header: Any) -> Any:
    if not isinstance(header, dict):
        return header
    out = {k: v for k, v in header.items() if k not in _VALUE_KEYS}
    out["schema"] = {k: header[k] for k in _VALUE_KEYS if k in header} or {"type": "string"}
    return out


def _schema(schema: Any) -> Any:
    """A Swagger schema as an OpenAPI 3.0 one: ``x-nullable`` and ``type: file`` in
    their new spelling, a discriminator given by name as an object. Nested schemas
    are left as written: both versions read them alike."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out.pop("x-nullable", False) is True:
        out["nullable"] = True
    if out.get("type") == "file":
        out.update(type="string", format="binary")
    if isinstance(out.get("discriminator"), str):
        out["discriminator"] = {"propertyName": out["discriminator"]}
    return out
