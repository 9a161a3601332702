"""Exceptions and problem records of the domain core.

Bad input is reported, not crashed on: loaders return :class:`Problem` records
naming where and what, and raise :class:`DocumentError` only when a caller
asked for a single valid document.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

__all__ = ["SEVERITY_ORDER", "ChainError", "DocumentError", "Problem", "VerdictSyntaxError"]

# Problems and lint findings, worst first.
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Problem:
    """One thing in an input that could not be understood or was refused.

    ``path`` is an element path (:class:`chains.core.paths.ElementPath`):
    ``actions[book].effect``, ``verdict_table[#2].verdict``.
    """

    message: str
    line: int | None = None
    column: int | None = None
    path: str | None = None
    severity: Literal["error", "warning", "info"] = "error"

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def shown_path(self) -> str | None:
        """The path as pages and messages show it (the one spelling, see ``paths``)."""
        return self.path

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}" + (f", column {self.column}" if self.column else ""))
        if self.path:
            where.append(self.path)
        return f"{': '.join(where)}: {self.message}" if where else self.message


class ChainError(Exception):
    """Base class of every error the domain core raises on purpose."""


class DocumentError(ChainError):
    """A document could not be loaded; ``problems`` says where and why."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems) or "invalid document")


class VerdictSyntaxError(ChainError, ValueError):
    """A verdict expression could not be parsed."""
