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
    """One thing in an input that could not be understood or was refused."""

    message: str
    line: int | None = None
    column: int | None = None
    path: str | None = None
    severity: Literal["error", "warning", "info"] = "error"
    # ``path`` with each list position that holds an element with an id written as that id
    # (``actions[reserve].effect`` for ``actions[2].effect``): what a person reads. ``path``
    # stays positional, since scripts and the API's ``location`` rely on it.
    label: str | None = None

    def as_dict(self) -> dict:
        data = asdict(self)
        del data["label"]  # the API's problem shape is unchanged; its message carries the label
        return data

    @property
    def shown_path(self) -> str | None:
        """The path as pages and messages show it: by element id where there is one."""
        return self.label or self.path

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}" + (f", column {self.column}" if self.column else ""))
        if self.shown_path:
            where.append(self.shown_path)
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
