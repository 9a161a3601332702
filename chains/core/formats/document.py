"""The chain document: the plain data that is stored and exported.

A chain is stored as its canonical document (:func:`to_document`, see
:mod:`.canonical`) and read back through validation (:func:`from_document`).
:func:`dump` writes a chain as canonical YAML or JSON; :func:`json_schema`
describes the document for other tooling. The Markdown design document is a
report built above this package (:mod:`chains.core.design_doc`, and
:func:`chains.core.export.export` for any of the three).
"""

from __future__ import annotations

from typing import Any, Literal

from ..model import ChainSpec
from .canonical import canonical_document, dump_json, dump_yaml
from .validation import validate_chain

__all__ = ["dump", "from_document", "json_schema", "to_document"]


def to_document(spec: ChainSpec) -> dict[str, Any]:
    """The JSON-ready document of ``chain`` (what is stored and exported).

    Canonical: key order fixed, defaults left out (see :mod:`.canonical`).
    """
    return canonical_document(spec)


def from_document(document: dict[str, Any]) -> ChainSpec:
    """Validate a stored document; raises :class:`DocumentError`."""
    return validate_chain(document)


def dump(spec: ChainSpec, format: Literal["yaml", "json"] = "yaml") -> str:
    """Write ``chain`` as canonical YAML or JSON; re-importing it gives an equal chain."""
    if format == "json":
        return dump_json(spec)
    if format == "yaml":
        return dump_yaml(spec)
    raise ValueError(f"cannot dump to {format!r}; expected yaml or json")


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a chain document, from the pydantic models."""
    schema = ChainSpec.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Chain document (chain-re-action SPEC v0.4)"
    return schema
