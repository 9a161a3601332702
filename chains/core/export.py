"""A chain written out in the format a person asked for.

The downloads, the API's export, ``chain-designer export`` and ``manage.py
chain export`` offer five formats: canonical YAML and JSON, which
:mod:`chains.core.formats` writes; the Markdown design document, a report
that prints the lint report, the fit test and the handle graph
(:mod:`chains.core.design_doc`); an OpenAPI 3.1 document of the bound
actions with ``x-chain`` extensions (:mod:`chains.core.formats.openapi_chain`);
and a Postman collection of the bound calls (:mod:`chains.core.postman`).
All but the Postman collection import back as the same chain. This module
picks between them, so that ``formats`` only reads and writes and never
reaches up to the linter; each format's file suffix is here too, so every
door names a download the same way.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from . import formats
from .design_doc import design_document
from .formats.openapi_chain import to_openapi
from .model import ChainSpec
from .postman import to_postman

__all__ = ["EXPORT_FORMATS", "FILE_SUFFIXES", "ROUND_TRIP_FORMATS", "ExportFormat", "export"]

ExportFormat = Literal["yaml", "json", "md", "openapi", "postman"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)
# The formats that import back as an equal chain (formats.load reads them).
ROUND_TRIP_FORMATS: tuple[ExportFormat, ...] = ("yaml", "json", "md", "openapi")
# A download's name ends in these: <chain>-r<N>.openapi.json.
FILE_SUFFIXES: dict[ExportFormat, str] = {
    "yaml": "yaml",
    "json": "json",
    "md": "md",
    "openapi": "openapi.json",
    "postman": "postman_collection.json",
}


def export(spec: ChainSpec, format: ExportFormat = "yaml", *, drawn: bool = False) -> str:
    """``spec`` as canonical YAML or JSON, its design document, OpenAPI or a Postman collection.

    Re-importing any but the Postman collection gives an equal chain.
    ``drawn``: the design document embeds its handle graph as an inline SVG
    (laid out by Graphviz).

    >>> from chains.core.model import ChainSpec
    >>> export(ChainSpec(id="tiny"), "yaml")
    'id: tiny\\n'
    >>> export(ChainSpec(id="tiny"), "md").splitlines()[0]
    '# Design document: `tiny`'
    >>> export(ChainSpec(id="tiny"), "openapi").splitlines()[1]
    '  "openapi": "3.1.0",'
    """
    if format == "md":
        return design_document(spec, drawn=drawn)
    if format in ("yaml", "json"):
        return formats.dump(spec, format)
    if format == "openapi":
        return _json(to_openapi(spec))
    if format == "postman":
        return _json(to_postman(spec))
    raise ValueError(f"cannot export to {format!r}; expected {', '.join(EXPORT_FORMATS)}")


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
