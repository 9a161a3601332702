"""Document-wide statements about a class of actions, carried to the actions they cover.

A compile often states a mechanism once for a whole class of steps, in a
self-check or a summary, rather than in each action: "all unkeyed commits
carry a correlation record + cancellation shield" (SPEC P3, §2.1). The
grammar has no field for either, so an action holds them only in its text;
this module finds such sentences in the document's prose and copies each
into the ``notes`` of the actions it covers, citing its line and section.

A clause (a sentence, a ``;`` part, or a list item) is a statement when it
names a P3 mechanism (a correlation record or a cancellation shield) and
says whom it covers: every unkeyed commit (``all``/``every``/``each``), or
steps it names. A clause that negates (``no``, ``not``, ``without``,
``missing``) or a list item left unchecked (``- [ ]``) is not a statement.
Written outside every chain's section it covers every chain; inside one,
that chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..model import ChainSpec, is_unkeyed_commit
from .md_items import Context
from .md_layout import Layout

__all__ = ["Statement", "carry_statements", "find_statements"]

_MECHANISMS = re.compile(r"correlation[\s_-]+records?|cancell?ation[\s_-]+shields?", re.I)
_EVERY_UNKEYED = re.compile(r"\b(?:all|every|each)\s+(?:of\s+the\s+)?unkeyed\s+commits?\b", re.I)
_NEGATION = re.compile(r"\b(?:no|not|never|none|without|missing|lacks?|lacking)\b|n't\b", re.I)
_UNCHECKED = re.compile(r"^\s*\[\s\]")
_CLAUSE_END = re.compile(r";\s+|(?<=[.!?])\s+(?=[A-Z`*])")
_NAME = re.compile(r"`([A-Za-z_]\w*)`")


@dataclass(frozen=True)
class Statement:
    """One clause of the prose that says a P3 mechanism covers some commits."""

    line: int
    section: str
    text: str
    context: Context
    names: frozenset[str] = frozenset()  # empty: every unkeyed commit

    def covers(self, spec: ChainSpec) -> list[str]:
        """The actions of ``chain`` this statement speaks of."""
        if self.names:
            return [a.id for a in spec.actions if a.id in self.names]
        return [a.id for a in spec.actions if is_unkeyed_commit(a)]

    def note(self) -> str:
        where = f"line {self.line}" + (f", {self.section}" if self.section else "")
        return f"the document says ({where}): {self.text}"


def find_statements(layout: Layout, actions: set[str]) -> list[Statement]:
    """Every statement of ``layout``'s prose; ``actions`` are the ids the document defines."""
    found = []
    for node in layout.nodes:
        if node.kind == "para":
            texts = [(node.line, node.text)]
        elif node.kind == "bullets":
            texts = list(node.items)
        else:
            continue
        for line, text in texts:
            if _UNCHECKED.match(text):
                continue
            section = _section(layout, line)
            for clause in _CLAUSE_END.split(text):
                statement = _statement(clause.strip(), actions)
                if statement is not None:
                    names = frozenset(statement)
                    clean = re.sub(r"^\[[xX]\]\s*", "", clause.strip())
                    context = layout.context_of(line)
                    found.append(Statement(line, section, clean, context, names))
    return found


def _statement(clause: str, actions: set[str]) -> list[str] | None:
    """The steps a clause covers ([] for every unkeyed commit), or None if it is no statement."""
    if not _MECHANISMS.search(clause) or _NEGATION.search(clause):
        return None
    if _EVERY_UNKEYED.search(clause):
        return []
    named = [n for n in _NAME.findall(clause) if n in actions]
    return named or None


def _section(layout: Layout, line: int) -> str:
    above = [h for h in layout.headings if h.line <= line <= h.end]
    return max(above, key=lambda h: h.line).title.replace("`", "") if above else ""


def carry_statements(
    spec: ChainSpec,
    statements: list[Statement],
    problem: Callable[..., None],
) -> ChainSpec:
    """``chain`` with each statement in the notes of the actions it covers.

    Each statement that covers something here is an info at its line.
    """
    notes: dict[str, list[str]] = {}
    for statement in statements:
        covered = statement.covers(spec)
        if not covered:
            continue
        for action_id in covered:
            notes.setdefault(action_id, []).append(statement.note())
        problem(
            f"chain {spec.id!r}: the statement at this line about "
            + ("the steps it names" if statement.names else "every unkeyed commit")
            + f" is carried into the notes of {', '.join(covered)}",
            statement.line,
            "info",
        )
    if not notes:
        return spec
    actions = [
        a.model_copy(update={"notes": [*a.notes, *notes[a.id]]}) if a.id in notes else a
        for a in spec.actions
    ]
    return spec.model_copy(update={"actions": actions})
