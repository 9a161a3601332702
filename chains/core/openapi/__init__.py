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

from .proposing import confirmed_effects, edits_onto, propose_actions, propose_chain
from .reading import (
    MAX_OPERATIONS,
    MAX_STEPS,
    OPENAPI_MAX_BYTES,
    STATED_KEY,
    Operation,
    Provider,
    read_openapi,
    read_provider,
)

__all__ = [
    "MAX_OPERATIONS",
    "OPENAPI_MAX_BYTES",
    "MAX_STEPS",
    "Operation",
    "Provider",
    "STATED_KEY",
    "confirmed_effects",
    "edits_onto",
    "propose_actions",
    "propose_chain",
    "read_openapi",
    "read_provider",
]
