"""Reading and writing chain documents.

One entry point reads anything a user may hand us (:func:`load`: a YAML or
JSON chain document, or a compile document in Markdown holding several
chains) and returns an :class:`ImportResult` that lists every chain found
and every fragment that was not understood, with its line. It never raises
for bad input. Writing is :func:`dump` (canonical YAML or JSON); the
Markdown design document is a report built above this package
(:mod:`chains.core.design_doc`). Refused outright, before any parsing: more
than :data:`MAX_BYTES` bytes and bytes that are not UTF-8. This module only
gathers the public names; the work is done in its submodules:

- :mod:`.load`: :func:`load`, :func:`decode`, :func:`detect_format`, the size limit
- :mod:`.result`: :class:`ImportResult`, what every reader returns
- :mod:`.yamlio`, :mod:`.jsonio`: safe YAML and JSON parsing with limits and
  the line and column of every value; :mod:`.notes` keeps YAML comments as notes
- :mod:`.validation`: plain data to :class:`ChainSpec`, pydantic errors to
  problems with a path and a line, unknown keys and unreadable values
- :mod:`.markdown` with the ``md_*`` modules: the compile-document importer
  (:mod:`.pseudo_yaml` rewrites the YAML-like text such documents hold)
- :mod:`.document`: :func:`to_document` / :func:`from_document` (the stored
  dict and the model), :func:`dump`, :func:`json_schema`
- :mod:`.canonical`: the canonical YAML and JSON spelling of a chain
- :mod:`.places`: :func:`element_line`, the line a lint finding's element is on
"""

from __future__ import annotations

from .document import dump, from_document, json_schema, to_document
from .jsonio import parse_json
from .load import MAX_BYTES, Format, decode, detect_format, load
from .places import element_line
from .result import ImportResult, errors_first
from .validation import validate_chain, validation_problems

__all__ = [
    "MAX_BYTES",
    "Format",
    "ImportResult",
    "decode",
    "detect_format",
    "dump",
    "element_line",
    "errors_first",
    "from_document",
    "json_schema",
    "load",
    "parse_json",
    "to_document",
    "validate_chain",
    "validation_problems",
]
