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
from chains.models import Chain, ChainUnavailable, Team, store_all
from chains.models.chains import reserved_key

__all__ = ["Imported", "digest", "import_document"]


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
    the command line, who may write any chain. The chains are ``team``'s:
    its chains of the same ids get a new revision, others are created in it.
    Usable chains are stored when the import has no error, or when
    ``confirm`` says the caller accepts the errors; never when ``store`` is False.
    """
    try:
        text = formats.decode(data)
    except DocumentError as exc:
        return Imported(format=None, text=None, problems=exc.problems)
    result = formats.load(text, format=format, filename=filename)
    refused = _refused(author, team, [c.id for c in result.chains])
    chains = [c for c in result.chains if c.id not in refused]
    problems = [*result.problems, *refused.values()]
    if not result.chains and not problems:
        problems.append(Problem("the document holds no chain"))
    imported = Imported(result.format, text, chains, formats.errors_first(problems))
    if store and chains and (confirm or not imported.errors):
        _store(imported, message, author, team, confirm)
    return imported


def _refused(author: Any, team: Team | None, keys: list[str]) -> dict[str, Problem]:
    """Of the chain ids ``keys``, those that may not be stored in ``team``, each with why.

    Reserved ids, and ``team``'s chains that ``author`` may not edit (None:
    the operator, who may edit any). Other teams' chains do not count: a key
    is unique within its team. The store checks again when it writes.
    """
    found = {key: Problem(why) for key in keys if (why := reserved_key(key))}
    if author is None:
        return found
    for chain in Chain.objects.filter(team=team, key__in=keys).select_related("team"):
        why = chain.refusal_for(author)
        if why and chain.key not in found:
            found[chain.key] = Problem(why)
    return found


def _store(imported: Imported, message: str, author: Any, team: Team | None, confirm: bool) -> None:
    """Store the usable chains, all or none, leaving out any taken since they were checked.

    A teammate may create one of the ids between the check and the store;
    the store refuses it inside its transaction, so nothing is stored, and
    the chain is reported as refused, as if the check had found it. The rest
    are then stored only if the caller accepted errors (``confirm``), as
    after any refusal.
    """
    while imported.chains:
        try:
            imported.stored = store_all(imported.chains, message, author=author, team=team)
            return
        except ChainUnavailable as exc:
            imported.chains = [c for c in imported.chains if c.id != exc.key]
            imported.problems = formats.errors_first([*imported.problems, Problem(str(exc))])
        if not confirm:
            return
