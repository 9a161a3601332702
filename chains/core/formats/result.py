"""What an import found: :class:`ImportResult`.

Every reader returns one (:func:`.load.load` for YAML and JSON,
:func:`.markdown.load_markdown` for compile documents): the chains that
validated, and every problem with its place, errors and notes alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import SEVERITY_ORDER, Problem
from ..model import ChainSpec

__all__ = ["ImportResult", "errors_first"]


@dataclass
class ImportResult:
    """What an import found: the chains, and every problem with its place."""

    chains: list[ChainSpec] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    format: str | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def report(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "chains": [
                {
                    "id": c.id,
                    "handles": len(c.handles),
                    "actions": len(c.actions),
                    "gates": len(c.gates),
                    "verdict_rows": len(c.verdict_table),
                }
                for c in self.chains
            ],
            "problems": [p.as_dict() for p in self.problems],
        }


def errors_first(problems: list[Problem]) -> list[Problem]:
    """Errors, then warnings, then notes; each group in the order of the document's lines."""

    def place(p: Problem) -> tuple[int, bool, int]:
        return SEVERITY_ORDER.get(p.severity, 3), p.line is None, p.line or 0

    return sorted(problems, key=place)
