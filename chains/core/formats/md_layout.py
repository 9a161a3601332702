"""Where each part of a compile document belongs: the scopes that become chains.

:class:`Layout` outlines a compile document (:mod:`.md_outline`) and decides
which scope headings and marker comments start a chain (see
:mod:`.markdown` for the rules), which headings route their content to a
chain of that name, and so which :class:`~.md_items.Context` (a chain's, or
the shared part) holds any line. It reads no content: :mod:`.md_reading`
files blocks, tables and ``known_unmatched`` lists into the contexts it
names, and :mod:`.md_assembly` builds the chains from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import DocumentError, Problem
from .md_blocks import defines_actions, is_grammar, markers
from .md_items import Context
from .md_outline import (
    Heading,
    Node,
    chain_id_from_heading,
    is_scope_heading,
    outline,
    scope_label,
    scope_notes,
    slug,
)

__all__ = ["Layout", "Parsed"]

Parsed = tuple[Any, dict, list] | DocumentError
"""A YAML block as :func:`~.md_blocks.parse_block` read it, or why it could not."""


class Layout:
    """The outline of one document and the contexts its lines belong to."""

    def __init__(self, text: str):
        self.headings, self.nodes, self.problems = outline(text)
        self.shared = Context("shared")
        self.contexts: list[Context] = []
        self.regions: list[tuple[Heading, Context]] = []  # heading sections owned by a chain

    def problem(self, message: str, line: int | None, severity: str = "warning", **kw) -> None:
        self.problems.append(Problem(message, line, severity=severity, **kw))  # type: ignore[arg-type]

    def find_scopes(self, blocks: dict[int, Parsed]) -> None:
        """Decide which scopes become chains (see the module docstring)."""
        candidates: list[Heading] = []
        for h in self.headings:
            nested = any(c.line < h.line <= c.end and c.level < h.level for c in candidates)
            if is_scope_heading(h.title, nested):
                candidates.append(h)
        chains: list[Heading] = []
        empty: list[Heading] = []
        for h in sorted(candidates, key=lambda c: -c.level):  # innermost first
            if any(h.line < c.line <= h.end for c in chains):
                continue  # a group of sub-chains; its own content is shared
            (chains if self.defines_actions(h, blocks) else empty).append(h)
        for h in chains:
            ctx = Context(chain_id_from_heading(h.title), heading=h, line=h.line)
            ctx.label = scope_label(h.title)
            self.contexts.append(ctx)
            self.regions.append((h, ctx))
        self.add_marked_scopes(blocks)
        self.contexts.sort(key=lambda c: c.line or 0)
        for h in sorted(empty, key=lambda c: c.line):
            self.route_heading(h)

    def defines_actions(self, heading: Heading, blocks: dict[int, Parsed]) -> bool:
        for node in self.nodes:
            if node.kind == "code" and heading.line <= node.line <= heading.end:
                parsed = blocks.get(node.line)
                if isinstance(parsed, tuple) and defines_actions(parsed[0]):
                    return True
        return False

    def add_marked_scopes(self, blocks: dict[int, Parsed]) -> None:
        """Scopes named only by marker comments inside YAML blocks become chains."""
        known = {c.label for c in self.contexts if c.label}
        notes = scope_notes(self.nodes)
        for node in self.nodes:
            parsed = blocks.get(node.line)
            if node.kind != "code" or not isinstance(parsed, tuple) or is_grammar(node, parsed[0]):
                continue
            for line, label in markers(node):
                if not label or label in known:
                    continue
                known.add(label)
                note = notes.get(label)
                kind = note.kind if note else "Chain"
                words = note.phrase if note and note.phrase else None
                if words is None and note and note.summary:
                    words = " ".join(re.split(r"[.;:(]", note.summary)[0].split()[:4])
                title = f"{kind} {label}" + (f" — {words}" if words else "")
                self.contexts.append(Context(slug(title), label=label, line=line, title=title))
        for ctx in self.contexts:
            note = notes.get(ctx.label or "")
            if note and note.summary:
                ctx.description = note.summary

    def route_heading(self, heading: Heading) -> None:
        label = scope_label(heading.title)
        target = next((c for c in self.contexts if label and c.label == label), None)
        if target is None:
            self.problem(
                f"heading {heading.title!r} names a scope but defines no actions; "
                "its content is shared by the document's chains",
                heading.line,
                "info",
            )
            return
        self.regions.append((heading, target))
        self.problem(
            f"heading {heading.title!r} defines no actions; its content goes to "
            f"chain {target.name!r} (scope {label})",
            heading.line,
            "info",
        )

    def context_of(self, line: int) -> Context:
        """The chain whose section holds ``line`` (the innermost), else the shared part."""
        inside = [(h.line, ctx) for h, ctx in self.regions if h.line <= line <= h.end]
        return max(inside, key=lambda x: x[0])[1] if inside else self.shared

    def router(self, node: Node, context: Context) -> Callable[[int | None], Context]:
        """Where an item at a line of ``node`` goes, following its marker comments."""
        marks = markers(node)
        by_label = {c.label: c for c in self.contexts if c.label}

        def route(line: int | None) -> Context:
            label = ""
            for at, name in marks:
                if line is not None and at < line:
                    label = name
            return by_label.get(label, context) if label else context

        return route
