"""One rule's bad and good example, and the lines that differ between them."""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass

__all__ = ["Example", "changed_lines"]


@dataclass(frozen=True)
class Example:
    bad: str
    good: str
    why: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "bad", textwrap.dedent(self.bad).strip("\n") + "\n")
        object.__setattr__(self, "good", textwrap.dedent(self.good).strip("\n") + "\n")


def changed_lines(example: Example) -> tuple[set[int], set[int]]:
    """The 0-based lines of ``bad`` and of ``good`` that the other does not have.

    >>> changed_lines(Example(bad="a: 1\\nb: 2\\n", good="a: 1\\nb: 3\\n", why=""))
    ({1}, {1})
    """
    bad, good = example.bad.splitlines(), example.good.splitlines()
    removed: set[int] = set()
    added: set[int] = set()
    matcher = difflib.SequenceMatcher(a=bad, b=good, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.update(range(i1, i2))
            added.update(range(j1, j2))
    return removed, added
