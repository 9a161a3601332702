"""Where an element named by a lint path stands in the document it was read from.

Lint findings name elements by readable paths built from ids
(``actions[book].idempotency``, ``verdict_table[D3]``); a code-review tool
wants a line. For a YAML or JSON document the path is walked through the
parsed data (:meth:`~chains.core.paths.ElementPath.location`: a bracketed
id picks the list element with that id, ``#n`` the n-th) and the line is the
one the parser recorded for the nearest value it reaches. A Markdown
compile spreads a chain over tables and blocks, so there the line is the
first that names the element (its id, else the section it is in).
"""

from __future__ import annotations

import re

from ..errors import DocumentError
from ..paths import ElementPath, PathError
from .jsonio import parse_json
from .load import Format, detect_format
from .validation import locate
from .yamlio import parse_yaml

__all__ = ["element_line"]


def element_line(text: str, element: str, format: Format = "auto") -> int | None:
    """The line ``element`` starts on in ``text``, or None when it cannot be placed.

    >>> doc = "id: c\\nactions:\\n  - id: search\\n    effect: read\\n"
    >>> doc += "  - id: book\\n    effect: commit\\n"
    >>> element_line(doc, "actions[book].effect")
    6
    >>> element_line(doc, "actions[missing]")
    2
    """
    fmt = detect_format(text) if format == "auto" else format
    try:
        path = ElementPath.parse(element)
    except PathError:
        return None
    if fmt == "md":
        return _first_mention(text, list(path.names))
    try:
        data, where = parse_json(text) if fmt == "json" else parse_yaml(text)
    except DocumentError:
        return None
    return locate(where, path.location(data))[0]


def _first_mention(text: str, parts: list[str]) -> int | None:
    """Where the element's id is defined (``id: book``), else first named, else None.

    The id is the second part (``actions[book]``); a top-level path
    (``policy.per_chain``) looks for its first part.
    """
    lines = text.splitlines()
    for part in reversed(parts[:2]):
        name = re.escape(part)
        for pattern in (
            rf"\bid:\s*[\"']?{name}[\"']?\s*(?:[,}}#]|$)",
            rf"(?<![\w-]){name}(?![\w-])",
        ):
            found = re.compile(pattern)
            for n, line in enumerate(lines, 1):
                if found.search(line):
                    return n
    return None
