"""A chain written out in the format a person asked for.

The downloads, ``chain-designer export`` and ``manage.py chain export``
offer three formats: canonical YAML and JSON, which :mod:`chains.core.formats`
writes, and the Markdown design document, a report that prints the lint
report, the fit test and the handle graph (:mod:`chains.core.design_doc`).
This module picks between them, so that ``formats`` only reads and writes
and never reaches up to the linter.
"""

from __future__ import annotations

from typing import Literal, get_args

from . import formats
from .design_doc import design_document
from .model import ChainSpec

__all__ = ["EXPORT_FORMATS", "ExportFormat", "export"]

ExportFormat = Literal["yaml", "json", "md"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)


def export(spec: ChainSpec, format: ExportFormat = "yaml", *, drawn: bool = False) -> str:
    """``spec`` as canonical YAML or JSON, or as its Markdown design document.

    Re-importing any of them gives an equal chain. ``drawn``: the design
    document embeds its handle graph as an inline SVG (laid out by Graphviz).

    >>> from chains.core.model import ChainSpec
    >>> export(ChainSpec(id="tiny"), "yaml")
    'id: tiny\\n'
    >>> export(ChainSpec(id="tiny"), "md").splitlines()[0]
    '# Design document: `tiny`'
    """
    if format == "md":
        return design_document(spec, drawn=drawn)
    if format in ("yaml", "json"):
        return formats.dump(spec, format)
    raise ValueError(f"cannot export to {format!r}; expected yaml, json or md")
