"""Importing a chain document: the one path the import page, the API and ``chain import`` take.

The core reads the document (``formats.load`` reports every problem at its
line instead of raising). This module decides what is stored: the chains the
import produced, that validate, and that the person may write. When the
import lost something (an error problem), those chains are stored only once
the caller confirms; otherwise at once. Storing is one transaction through
``store_all``, so a document's usable chains are stored together or not at all.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from chains.core import formats
from chains.core.errors import DocumentError, Problem
from chains.core.formats import Format
from chains.core.model import ChainSpec
from chains.models import Chain, Role, Team, at_least, store_all

__all__ = ["Imported", "digest", "import_document"]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Imported:
    """What an import found and did: the usable chains, the problems, what was stored.

    ``stored`` is None until the chains are stored (a dry run, or an import
    waiting for confirmation); then one ``{"id", "revision", "created"}`` per chain.
    """

    format: str | None
    text: str | None
    chains: list[ChainSpec] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    stored: list[dict[str, Any]] | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def awaits_confirmation(self) -> bool:
        """Usable chains, not stored, because the import lost something."""
        return self.stored is None and bool(self.chains) and bool(self.errors)

    @property
    def digest(self) -> str:
        return digest(self.text or "")

    def report(self) -> dict[str, Any]:
        """The JSON report: the format, each usable chain's size, problems, what was stored."""
        report = formats.ImportResult(self.chains, self.problems, self.format).report()
        if self.stored is not None:
            report["stored"] = self.stored
        return report


def digest(data: bytes | str) -> str:
    """The fingerprint of a document as a person saw it, to confirm exactly that text.

    Line endings do not count: a browser sends a textarea back with CRLF.

    >>> digest("a\\r\\nb\\n") == digest(b"a\\nb\\n")
    True
    """
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else bytes(data)
    return hashlib.sha256(raw.replace(b"\r\n", b"\n")).hexdigest()


def import_document(
    data: bytes | str,
    *,
    filename: str | None = None,
    format: Format = "auto",
    author: Any = None,
    team: Team | None = None,
    confirm: bool = False,
    store: bool = True,
    message: str = "import",
) -> Imported:
    """Read ``data`` and store its usable chains; return what was found and stored.

    ``author`` is the person importing: a chain that exists already and that
    they may not edit is refused as an error problem. None is the operator at
    the command line, who may write any chain. ``team`` owns the chains this
    creates. Usable chains are stored when the import has no error, or when
    ``confirm`` says the caller accepts the errors; never when ``store`` is False.
    """
    try:
        text = formats.decode(data)
    except DocumentError as exc:
        return Imported(format=None, text=None, problems=exc.problems)
    result = formats.load(text, format=format, filename=filename)
    refused = _not_writable(author, [c.id for c in result.chains])
    chains = [c for c in result.chains if c.id not in refused]
    problems = [*result.problems, *refused.values()]
    if not result.chains and not problems:
        problems.append(Problem("the document holds no chain"))
    imported = Imported(result.format, text, chains, _errors_first(problems))
    if store and chains and (confirm or not imported.errors):
        imported.stored = store_all(chains, message, author=author, team=team)
    return imported


def _not_writable(author: Any, keys: list[str]) -> dict[str, Problem]:
    """Of the chain ids ``keys``, those that exist and ``author`` may not edit, each with why."""
    if author is None:
        return {}
    found = {}
    for chain in Chain.objects.filter(key__in=keys).select_related("team"):
        if not at_least(chain.role_of(author), Role.EDITOR):
            why = f"chain {chain.key!r} exists already and you may not edit it"
            found[chain.key] = Problem(why)
    return found


def _errors_first(problems: list[Problem]) -> list[Problem]:
    """Errors, then warnings, then notes; each group in the order of the document's lines."""

    def place(p: Problem) -> tuple[int, bool, int]:
        return SEVERITY_ORDER.get(p.severity, 3), p.line is None, p.line or 0

    return sorted(problems, key=place)
