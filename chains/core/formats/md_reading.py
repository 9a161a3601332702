"""Reading a compile document's content into the contexts its layout names.

:func:`read_content` files every fenced ``yaml`` block (read by
:mod:`.md_blocks`), every verdict table and every ``known_unmatched`` list
(:mod:`.md_tables`) of a document into the :class:`~.md_items.Context` that
:class:`~.md_layout.Layout` says holds it, and reports what it does not
take in: unreadable blocks, SPEC grammar illustrations and blocks in a
section of them, a ``known_unmatched`` label with no list.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..errors import DocumentError
from .md_blocks import BlockReader, is_grammar
from .md_items import Context, Item
from .md_layout import Layout, Parsed
from .md_outline import Node, bare_title
from .md_step_scope import probes_of
from .md_tables import after_label, inline_entries, read_verdict_table, unmatched_entry

__all__ = ["read_content"]


def read_content(
    layout: Layout, blocks: dict[int, Parsed], names: frozenset[str], steps: dict[str, dict]
) -> None:
    """File the blocks, tables and ``known_unmatched`` lists of ``layout``'s document.

    ``blocks`` are its parsed YAML blocks by line; ``names`` the element ids
    they define and ``steps`` their actions (id to data as written), which
    tell a verdict table's step columns apart.
    """
    reader = BlockReader(layout.problems)
    reference_sections = _grammar_sections(layout, blocks)
    for node in layout.nodes:
        context = layout.context_of(node.line)
        if node.kind == "code" and node.line in blocks:
            _take_block(layout, reader, node, blocks[node.line], context, reference_sections)
        elif node.kind == "table":
            _take_table(layout, node, context, names, steps)
    _take_known_unmatched(layout)


def _grammar_sections(layout: Layout, blocks: dict[int, Parsed]) -> set[int]:
    """Top-level sections holding SPEC grammar illustrations (placeholders)."""
    found = set()
    for node in layout.nodes:
        parsed = blocks.get(node.line)
        if node.kind == "code" and isinstance(parsed, tuple) and is_grammar(node, parsed[0]):
            top = _top_section(layout, node.line)
            if top is not None:
                found.add(top)
    return found


def _top_section(layout: Layout, line: int) -> int | None:
    top = None
    for h in layout.headings:
        if h.line <= line <= h.end and h.level <= 2 and (top is None or h.level >= top.level):
            top = h
    return top.line if top else None


def _take_block(
    layout: Layout,
    reader: BlockReader,
    node: Node,
    parsed: Parsed,
    context: Context,
    reference: set[int],
) -> None:
    what = f"YAML block at line {node.line}"
    if isinstance(parsed, DocumentError):
        for p in parsed.problems:
            layout.problems.append(replace(p, message=f"{p.message} (not imported)"))
        return
    data = parsed[0]
    if is_grammar(node, data):
        layout.problem(
            f"{what} is a grammar illustration (placeholders, not values); not a chain definition",
            node.line,
            "info",
        )
        return
    if context is layout.shared and _top_section(layout, node.line) in reference:
        message = f"{what} sits in a section of grammar illustrations; not imported"
        layout.problem(message, node.line, "info")
        return
    reader.read(node, parsed, context, layout.router(node, context))


def _take_table(
    layout: Layout, node: Node, ctx: Context, names: frozenset[str], steps: dict[str, dict]
) -> None:
    section = None
    for h in layout.headings:
        if h.line < node.line <= h.end and (section is None or h.level >= section.level):
            section = h
    title = section.title if section else ""
    # "probes" in a scope's own table are that scope's probes
    own = {i.key: i.data for i in ctx.items["actions"] if i.key in steps}
    probes = probes_of(own, steps) if ctx is not layout.shared else None
    for draft in read_verdict_table(node, title, layout.problems, names, steps, probes or None):
        item = Item("verdict_table", draft.data, draft.where, (), draft.line, draft.id)
        item.per_scope = draft.per_scope
        ctx.items["verdict_table"].append(item)


def _take_known_unmatched(layout: Layout) -> None:
    """``known_unmatched`` lists: under such a heading, or after such a label."""
    for h in layout.headings:
        title = re.sub(r"\([^)]*\)", "", bare_title(h.title)).strip().strip("`*")
        if re.search(r"^`?known[_ ]unmatched\b|\bknown[_ ]unmatched`?$", title, re.I):
            for node in layout.nodes:
                if h.line < node.line <= h.end and node.kind == "bullets":
                    _take_bullets(layout, node)
    label = re.compile(r"^(?:\*\*)?`?known[_ ]unmatched`?(?:\*\*)?", re.I)
    for k, node in enumerate(layout.nodes):
        if node.kind != "para" or not label.match(node.text) or _under_label(layout, node):
            continue
        after = after_label(node.text)
        following = layout.nodes[k + 1] if k + 1 < len(layout.nodes) else None
        if after.strip():
            _take_inline(layout, node, after)
        elif following is not None and following.kind == "bullets":
            _take_bullets(layout, following)
        else:
            layout.problem("known_unmatched label with no list after it", node.line)


def _under_label(layout: Layout, node: Node) -> bool:
    """A label paragraph inside a ``known_unmatched`` section is taken with its heading."""
    return any(
        h.line < node.line <= h.end
        and re.search("known[_ ]unmatched", h.title, re.I)
        and not re.search(r"\(.*known[_ ]unmatched.*\)", h.title, re.I)
        for h in layout.headings
    )


def _take_bullets(layout: Layout, node: Node) -> None:
    ctx = layout.context_of(node.line)
    for line, text in node.items:
        item = Item("known_unmatched", unmatched_entry(text), {(): (line, 1)}, (), line)
        ctx.items["known_unmatched"].append(item)


def _take_inline(layout: Layout, node: Node, text: str) -> None:
    ctx = layout.context_of(node.line)
    entries = inline_entries(text)
    for entry in entries:
        item = Item("known_unmatched", entry, {(): (node.line, 1)}, (), node.line)
        ctx.items["known_unmatched"].append(item)
    message = f"known_unmatched written as a paragraph; read {len(entries)} entries from it"
    layout.problem(message, node.line, "info")
