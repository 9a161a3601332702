"""Reading whatever a user hands us: :func:`load`.

:func:`load` takes bytes or text, a YAML or JSON chain document (or the
OpenAPI document the export writes, :mod:`.openapi_chain`) or a Markdown
compile document holding several chains, and returns an
:class:`.result.ImportResult` listing every chain found and every fragment
that was not understood, with its line. It never raises for bad input.
:func:`decode` refuses, before any parsing, more than :data:`MAX_BYTES`
bytes and bytes that are not UTF-8 text; :func:`detect_format` picks the
reader from the file name, else from the content.
"""

from __future__ import annotations

from typing import Literal

from ..errors import DocumentError, Problem
from .arrows import read_arrow_verdicts
from .jsonio import parse_json
from .markdown import load_markdown
from .notes import with_comment_notes
from .openapi_chain import is_chain_openapi, load_openapi_chain
from .result import ImportResult
from .validation import extras_problems, unreadable_problems, validate_chain
from .yamlio import comments, parse_yaml

__all__ = ["MAX_BYTES", "Format", "decode", "detect_format", "load"]

MAX_BYTES = 2 * 1024 * 1024

Format = Literal["auto", "yaml", "json", "md"]


def decode(data: bytes | str, limit: int = MAX_BYTES) -> str:
    """Return the text of ``data``, refusing input over ``limit`` bytes or not UTF-8."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > limit:
        raise DocumentError(
            [Problem(f"document is {len(raw):,} bytes; the limit is {limit:,} bytes")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise DocumentError(
            [Problem(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} is invalid", line, column)]
        ) from None
    if "\x00" in text:
        at = text.index("\x00")
        line, column = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
        raise DocumentError([Problem("not a text document: it contains a NUL byte", line, column)])
    return text.removeprefix("\ufeff")


def detect_format(text: str, filename: str | None = None) -> Literal["yaml", "json", "md"]:
    """Guess the format from the file name, else from the content."""
    name = (filename or "").lower()
    if name.endswith((".md", ".markdown")):
        return "md"
    if name.endswith(".json"):
        return "json"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return "json"
    if stripped.startswith("#") and "```" in text or stripped.startswith("```"):
        return "md"
    return "yaml"


def load(data: bytes | str, format: Format = "auto", filename: str | None = None) -> ImportResult:
    """Read chains from ``data``; report every problem instead of raising.

    A YAML or JSON document holds one chain; a Markdown compile document may
    hold several. A chain whose document does not validate is not returned.
    """
    try:
        text = decode(data)
    except DocumentError as exc:
        return ImportResult(problems=exc.problems)
    fmt = detect_format(text, filename) if format == "auto" else format
    if fmt == "md":
        result = load_markdown(text)
        result.format = "md"
        return result
    result = ImportResult(format=fmt)
    try:
        if fmt == "json":
            data_, where = parse_json(text)
        else:
            data_, where = parse_yaml(text)
        if is_chain_openapi(data_):  # our OpenAPI export; a provider's document is no chain
            return load_openapi_chain(data_, where)
        if fmt == "yaml":
            if "→" in text or "->" in text or "=>" in text:  # else no comment gives a verdict
                result.problems.extend(read_arrow_verdicts(data_, where, comments(text)))
            data_ = with_comment_notes(data_, where, text)
        spec = validate_chain(data_, where)
    except DocumentError as exc:
        result.problems.extend(exc.problems)
        return result
    result.chains.append(spec)
    result.problems.extend(extras_problems(spec, where))
    result.problems.extend(unreadable_problems(spec, where))
    return result
