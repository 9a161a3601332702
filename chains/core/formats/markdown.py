"""Import of compile documents: the Markdown files chain-compile produces.

A compile document (SKILL Step 6, SPEC §6-§7) spreads one or more chains
over headings, fenced ``yaml`` blocks written in a lenient YAML dialect
(see :mod:`.pseudo_yaml`), Markdown verdict tables and ``known_unmatched``
lists. :func:`load_markdown` reads all of it and returns an
:class:`~chains.core.formats.ImportResult`: the chains, plus a problem for
every fragment it did not take in, with its line.

How the document is cut into chains:

* A *scope heading* names a scope: ``Scope 1 — `duffel_instant_order```,
  ``Scope A — Stay booking chain``, ``Chain A — book + ticket``, ``Worked
  example B``; inside a scope, ``Modify chain`` style headings name
  sub-chains. A scope heading whose section defines actions starts a chain;
  one that only holds sub-chains groups them; one that defines no actions
  (``Chain M rows``) is not a chain and its content is shared.
* Everything outside a chain's section is shared. Shared policy, variants
  and ``known_unmatched`` apply to every chain; shared verdict rows go to
  the chains holding one of the steps they name (all chains when they name
  none); shared handles, actions and gates are copied into a chain when
  it refers to them, as are definitions given in another scope (a scope
  written as "additions/overrides" of an earlier one). A chain's own
  definition with the same id wins.
* A document without scope headings is one chain, named after its title.

Nothing is dropped silently: every YAML block either contributes or is
reported, every element that fails validation is reported with its path
and line and the rest still imports (an invalid field is dropped from its
element; an element missing a required field is left out), and unknown
keys are kept in ``extras`` and listed as info.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import DocumentError, Problem, VerdictSyntaxError
from ..model import (
    Action,
    Chain,
    Gate,
    Handle,
    KnownUnmatched,
    Policy,
    Variants,
    VerdictRow,
    scope_from_text,
)
from ..verdicts import VERDICT_TYPES, Verdict, format_verdict, parse_verdict
from . import ImportResult, _locate, _message, _source_path, extras_problems
from .pseudo_yaml import rewrite
from .yamlio import parse_yaml

__all__ = ["load_markdown"]

LIST_SECTIONS = ("handles", "actions", "gates", "verdict_table", "known_unmatched")
SECTIONS = (*LIST_SECTIONS, "policy", "variants")
CHAIN_KEYS = ("id", "title", "description", "run_key", "spec_version")
SECTION_ALIASES = {"verdict_rows": "verdict_table", "verdicts": "verdict_table"}
MODELS: dict[str, type[BaseModel]] = {
    "handles": Handle,
    "actions": Action,
    "gates": Gate,
    "verdict_table": VerdictRow,
    "known_unmatched": KnownUnmatched,
    "policy": Policy,
    "variants": Variants,
}
_SINGULAR = {"action", "handle", "gate", "verdict", "row", "outcome"}


def load_markdown(text: str) -> ImportResult:
    """Read every chain of a compile document; never raises for bad input.

    >>> doc = '''# Demo
    ... ```yaml
    ... actions:
    ...   - {id: search, effect: read}
    ... ```
    ... '''
    >>> result = load_markdown(doc)
    >>> [c.id for c in result.chains], [a.id for a in result.chains[0].actions]
    (['demo'], ['search'])
    """
    try:
        return _Importer(text).run()
    except (DocumentError, ValueError, RecursionError) as exc:  # pragma: no cover - safety net
        problems = getattr(exc, "problems", None) or [Problem(f"could not import: {exc}")]
        return ImportResult(problems=list(problems), format="md")


# --- the Markdown outline ----------------------------------------------------


@dataclass
class Heading:
    level: int
    title: str
    line: int
    end: int = 0  # last line of its section


@dataclass
class Node:
    """A block, table, list or paragraph, with the line it starts on."""

    kind: str  # code | table | bullets | para
    line: int
    text: str = ""
    lang: str = ""
    rows: list[tuple[int, str]] = field(default_factory=list)  # (line, raw row)
    items: list[tuple[int, str]] = field(default_factory=list)  # bullets


_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([\w+.-]*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")


def outline(text: str) -> tuple[list[Heading], list[Node]]:
    """Split Markdown into headings and content nodes (1-based line numbers)."""
    lines = text.split("\n")
    headings: list[Heading] = []
    nodes: list[Node] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker = fence[2]
            j = i + 1
            while j < len(lines) and not re.match(
                rf"^\s{{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$", lines[j]
            ):
                j += 1
            nodes.append(
                Node("code", i + 2, "\n".join(lines[i + 1 : j]) + "\n", lang=fence[3].lower())
            )
            i = j + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            headings.append(Heading(len(heading[1]), heading[2].strip(), i + 1))
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            node = Node("table", i + 1, rows=[(i + 1, line)])
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                node.rows.append((j + 1, lines[j]))
                j += 1
            nodes.append(node)
            i = j
            continue
        bullet = _BULLET.match(line)
        if bullet:
            node = Node("bullets", i + 1)
            j = i
            while j < len(lines):
                m = _BULLET.match(lines[j])
                if m and len(m[1]) <= len(bullet[1]):
                    node.items.append((j + 1, m[2].strip()))
                elif lines[j].strip() and node.items and (lines[j][:1] in " \t" or m):
                    ln, txt = node.items[-1]
                    node.items[-1] = (ln, txt + " " + lines[j].strip())
                else:
                    break
                j += 1
            nodes.append(node)
            i = j
            continue
        if line.strip():
            j = i
            while (
                j < len(lines)
                and lines[j].strip()
                and not _HEADING.match(lines[j])
                and not _FENCE.match(lines[j])
                and not _BULLET.match(lines[j])
                and not lines[j].lstrip().startswith("|")
            ):
                j += 1
            nodes.append(Node("para", i + 1, " ".join(s.strip() for s in lines[i:j])))
            i = max(j, i + 1)
            continue
        i += 1
    total = len(lines)
    for k, h in enumerate(headings):
        h.end = next((x.line - 1 for x in headings[k + 1 :] if x.level <= h.level), total)
    return headings, nodes


# --- scope headings ----------------------------------------------------------

_NUMBERING = re.compile(r"^(?:§\s*)?(?:\d+(?:[.\u2013-]\d+)*\.?|[A-Z]\.)\s+")
_SCOPE = re.compile(r"^(?:scope|chain|worked example)\s+(?:[A-Z]{1,2}|\d+|[ivx]+)\b", re.I)
_SUB_CHAIN = re.compile(r"^[\w+/& -]*\bchain\b\s*(?:\(|—|-|:|$)", re.I)
_BACKTICK = re.compile(r"`([^`\n]+)`")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def _bare_title(title: str) -> str:
    title = re.sub(r"[*_]{2}", "", title)
    return _NUMBERING.sub("", title).strip()


def is_scope_heading(title: str, nested: bool = False) -> bool:
    """``Scope 1 — x``, ``Chain A — ...``, ``Worked example B``; ``Modify chain`` when nested.

    >>> is_scope_heading("4. Scope A — Stay booking chain")
    True
    >>> is_scope_heading("1. Chain summaries")
    False
    >>> is_scope_heading("5.1 Modify chain", nested=True)
    True
    """
    bare = _bare_title(title)
    if _SCOPE.match(bare):
        return True
    return nested and bool(_SUB_CHAIN.match(bare)) and not bare.lower().startswith("cross")


def slug(text: str) -> str:
    """An id from a heading: ``Scope A — Stay booking chain`` → ``scope_a_stay_booking_chain``."""
    text = re.sub(r"\([^)]*\)", " ", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text[:80] or "chain"


def chain_id_from_heading(title: str) -> str:
    for token in _BACKTICK.findall(title):
        if _ID.match(token.strip()):
            return token.strip()
    return slug(_bare_title(title))


# --- collected definitions ---------------------------------------------------


@dataclass
class Item:
    """One element as written: its data and where each part of it is."""

    section: str
    data: Any
    where: dict
    path: tuple
    line: int | None
    key: str | None = None  # the id, when known
    value: Any = None  # the validated model, once validated
    checked: bool = False


@dataclass
class Context:
    """The definitions of one chain scope (or of the shared parts)."""

    name: str
    heading: Heading | None = None
    items: dict[str, list[Item]] = field(default_factory=lambda: {s: [] for s in SECTIONS})
    keys: dict[str, Any] = field(default_factory=dict)

    def ids(self, section: str) -> dict[str, Item]:
        out: dict[str, Item] = {}
        for item in self.items[section]:
            if item.value is not None and getattr(item.value, "id", None):
                out.setdefault(item.value.id, item)
        return out


# --- the importer ------------------------------------------------------------


class _Importer:
    def __init__(self, text: str):
        self.text = text
        self.problems: list[Problem] = []
        self.headings, self.nodes = outline(text)
        self.shared = Context("shared")
        self.contexts: list[Context] = []
        self.last_list: str | None = None
        self.last_map: str | None = None

    def problem(self, message: str, line: int | None, severity: str = "warning", **kw) -> None:
        self.problems.append(Problem(message, line, severity=severity, **kw))  # type: ignore[arg-type]

    # .. driver ..

    def run(self) -> ImportResult:
        blocks = self.parse_blocks()
        self.find_scopes(blocks)
        reference_sections = self.grammar_sections(blocks)
        for node in self.nodes:
            context = self.context_of(node.line)
            if node.kind == "code":
                self.take_block(node, blocks.get(node.line), context, reference_sections)
            elif node.kind == "table":
                self.take_table(node, context)
        self.take_known_unmatched()
        result = ImportResult(format="md")
        result.chains = self.assemble()
        result.problems = sorted(
            self.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0)
        )
        return result

    # .. YAML blocks ..

    def parse_blocks(self) -> dict[int, tuple[Any, dict] | DocumentError | None]:
        """Parse every YAML-looking fenced block once; keyed by its first line."""
        out: dict[int, tuple[Any, dict] | DocumentError | None] = {}
        for node in self.nodes:
            if node.kind != "code" or not self.is_yaml(node):
                continue
            rewritten, fixes = rewrite(node.text)
            try:
                data, where = parse_yaml(rewritten, first_line=node.line)
            except DocumentError as exc:
                out[node.line] = exc
                continue
            for fix in fixes:
                self.split_pairs(data, where, node.line + fix.line - 1, fix.text)
            out[node.line] = (data, where)
        return out

    def split_pairs(self, data: Any, where: dict, line: int, text: str) -> None:
        """``mode: keyed, key_scope: run`` written on one line: read it as two keys."""
        parts = [p.strip() for p in text.split(",")]
        matches = [re.fullmatch(r"([A-Za-z_][\w.\-]*):\s*(.+)", p) for p in parts[1:]]
        for path, (at, _) in list(where.items()):
            if at != line or not path:
                continue
            parent = data
            for part in path[:-1]:
                parent = parent[part]
            if not isinstance(parent, dict) or parent.get(path[-1]) != text:
                continue
            pairs = [m for m in matches if m is not None]
            if ":" in parts[0] or len(pairs) < len(matches) or any(m[1] in parent for m in pairs):
                break
            parent[path[-1]] = parts[0]
            for m in pairs:
                parent[m[1]] = m[2]
                where[(*path[:-1], m[1])] = where[path]
            self.problem(
                f"read {text!r} as {len(parts)} keys of one mapping",
                line,
                "info",
                path=".".join(map(str, path)),
            )
            return
        self.problem(f"read {text!r} as one text value (it holds 'key: value' pairs)", line, "info")

    @staticmethod
    def is_yaml(node: Node) -> bool:
        if node.lang in ("yaml", "yml"):
            return True
        if node.lang:
            return False
        return bool(
            re.match(r"^\s*(?:#.*\n\s*)*(handles|actions|gates|policy|variants):", node.text)
        )

    def grammar_sections(self, blocks: dict) -> set[int]:
        """Top-level sections holding SPEC grammar illustrations (placeholders)."""
        found = set()
        for node in self.nodes:
            parsed = blocks.get(node.line)
            if node.kind == "code" and isinstance(parsed, tuple) and self.is_grammar(node, parsed):
                top = self.top_section(node.line)
                if top is not None:
                    found.add(top)
        return found

    @staticmethod
    def is_grammar(node: Node, parsed: tuple) -> bool:
        data = parsed[0]
        if isinstance(data, dict) and data and set(data) <= _SINGULAR:
            return True
        body = re.sub(r"(^|\s)#.*", "", node.text)
        markers = len(
            re.findall(
                r"\b(?:read|mint|keyed|natural|user|operator|webhook|run|reverse|model|"
                r"reexecutes|string|int|bool|duration)\s*\|",
                body,
            )
        )
        markers += len(re.findall(r"<[a-z][\w ]* [\w ]*>", body))
        markers += len(
            re.findall(
                r":[ \t]*(?:int|bool|duration|string|action_id|handle_id|gate_id)[ \t]*$",
                body,
                re.M,
            )
        )
        return markers >= 3

    def top_section(self, line: int) -> int | None:
        top = None
        for h in self.headings:
            if h.line <= line <= h.end and h.level <= 2 and (top is None or h.level >= top.level):
                top = h
        return top.line if top else None

    def take_block(self, node: Node, parsed, context: Context, reference: set[int]) -> None:
        where_text = f"YAML block at line {node.line}"
        if parsed is None:
            return
        if isinstance(parsed, DocumentError):
            for p in parsed.problems:
                self.problems.append(replace(p, message=f"{p.message} (not imported)"))
            return
        data, where = parsed
        if self.is_grammar(node, parsed):
            self.problem(
                f"{where_text} is a grammar illustration (placeholders, not values); "
                "not a chain definition",
                node.line,
                "info",
            )
            return
        if context is self.shared and self.top_section(node.line) in reference:
            self.problem(
                f"{where_text} sits in a section of grammar illustrations; not imported",
                node.line,
                "info",
            )
            return
        if data is None:
            self.problem(f"{where_text} is empty", node.line, "info")
            return
        indented = bool(re.match(r"^(?:\s*#.*\n)*[ \t]+\S", node.text))
        if isinstance(data, list):
            section = self.last_list or ("actions" if self.looks_like_actions(data) else None)
            if section is None:
                self.problem(
                    f"{where_text} is a list but no earlier block began one; not imported",
                    node.line,
                    "warning",
                )
                return
            self.problem(
                f"{where_text} continues the '{section}' list of an earlier block",
                node.line,
                "info",
            )
            self.take_section(context, section, data, where, (), node.line)
            return
        if not isinstance(data, dict):
            self.problem(
                f"{where_text} holds a single value, not chain sections; not imported",
                node.line,
            )
            return
        known = [k for k in data if SECTION_ALIASES.get(k, k) in SECTIONS or k in CHAIN_KEYS]
        if not known and indented and self.last_map:
            self.problem(
                f"{where_text} continues the '{self.last_map}' mapping of an earlier block",
                node.line,
                "info",
            )
            self.take_section(context, self.last_map, data, where, (), node.line)
            return
        if not known:
            self.problem(
                f"{where_text} holds no chain section (keys: {', '.join(map(str, data))}); "
                "not imported",
                node.line,
            )
            return
        for key, value in data.items():
            line = where.get((key,), (node.line, None))[0]
            section = SECTION_ALIASES.get(key, key)
            if section in SECTIONS:
                self.take_section(context, section, value, where, (key,), line)
            elif key in CHAIN_KEYS:
                context.keys[key] = value
            else:
                self.problem(
                    f"unknown top-level key {key!r} in {where_text}; not imported",
                    line,
                    path=str(key),
                )

    @staticmethod
    def looks_like_actions(data: list) -> bool:
        return all(isinstance(x, dict) and "effect" in x for x in data) and bool(data)

    def take_section(self, ctx: Context, section: str, value, where, path, line) -> None:
        if value is None:
            return
        if section in ("policy", "variants"):
            ctx.items[section].append(Item(section, value, where, path, line))
            return
        if isinstance(value, dict) and section in ("handles", "gates", "actions"):
            self.last_map = section
            for key, body in value.items():
                at = where.get((*path, key), (line, None))[0]
                if body is None:
                    body = {}
                data = {"id": key, **body} if isinstance(body, dict) else body
                ctx.items[section].append(Item(section, data, where, (*path, key), at, str(key)))
            return
        if isinstance(value, list):
            self.last_list = section
            for i, body in enumerate(value):
                at = where.get((*path, i), (line, None))[0]
                key = body.get("id") if isinstance(body, dict) else None
                ctx.items[section].append(Item(section, body, where, (*path, i), at, key))
            return
        self.problem(
            f"'{section}' should be a list or mapping, got {type(value).__name__}; not imported",
            line,
            "error",
            path=section,
        )

    # .. scopes ..

    def find_scopes(self, blocks: dict) -> None:
        """Decide which scope headings start chains (see the module docstring)."""
        candidates: list[Heading] = []
        for h in self.headings:
            nested = any(c.line < h.line <= c.end and c.level < h.level for c in candidates)
            if is_scope_heading(h.title, nested):
                candidates.append(h)

        def defines_actions(lo: int, hi: int, skip: list[Heading]) -> bool:
            for node in self.nodes:
                if node.kind != "code" or not lo <= node.line <= hi:
                    continue
                if any(s.line <= node.line <= s.end for s in skip):
                    continue
                parsed = blocks.get(node.line)
                if isinstance(parsed, tuple):
                    data = parsed[0]
                    if isinstance(data, dict) and "actions" in data:
                        return True
                    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
                        return True
            return False

        chains: list[Heading] = []
        for h in sorted(candidates, key=lambda c: -c.level):  # innermost first
            inner = [c for c in chains if h.line < c.line <= h.end]
            if inner:
                continue  # a group of sub-chains; its own content is shared
            if defines_actions(h.line, h.end, []):
                chains.append(h)
            else:
                self.problem(
                    f"heading {h.title!r} names a scope but defines no actions; "
                    "its content is shared by the document's chains",
                    h.line,
                    "info",
                )
        for h in sorted(chains, key=lambda c: c.line):
            self.contexts.append(Context(chain_id_from_heading(h.title), heading=h))

    def context_of(self, line: int) -> Context:
        for ctx in self.contexts:
            if ctx.heading and ctx.heading.line <= line <= ctx.heading.end:
                return ctx
        return self.shared

    # .. verdict tables ..

    def take_table(self, node: Node, ctx: Context) -> None:
        header = _cells(node.rows[0][1])
        names = [_column(h) for h in header]
        if "verdict" not in names or not ({"signal", "scope"} & set(names)):
            return  # not a verdict table
        rows = node.rows[1:]
        if not rows:
            self.problem("verdict table has no rows", node.line)
            return
        ids = [(_cells(raw) + [""])[0].strip() for _, raw in rows]
        if self.is_generic(node, ids, rows):
            self.problem(
                f"verdict table at line {node.line} restates the SPEC §3 generic skeleton "
                f"({len(rows)} rows: {', '.join(i for i in ids if i)}); not imported as "
                "domain rows (the generic rows follow every domain table)",
                node.line,
                "info",
            )
            return
        for line, raw in rows:
            self.take_row(ctx, header, names, line, raw)

    def is_generic(self, node: Node, ids: list[str], rows) -> bool:
        section = None
        for h in self.headings:
            if h.line < node.line <= h.end and (section is None or h.level >= section.level):
                section = h
        title = (section.title if section else "").lower()
        if re.search(r"\b(generic|skeleton)\b|\bcore\b", title) and "domain" not in title:
            return True
        real = [i for i in ids if i and i not in ("—", "-", "–")]
        if real and all(re.fullmatch(r"G?\d+", i) for i in real):
            last = rows[-1][1].lower()
            return "unmatched" in last
        return False

    def take_row(self, ctx: Context, header, names, line: int, raw: str) -> None:
        cells = _cells(raw)
        if len(cells) < len(names):
            cells += [""] * (len(names) - len(cells))
        elif len(cells) > len(names):
            self.problem(
                f"table row has {len(cells)} cells, the header {len(names)}; "
                "extra cells joined to the last column",
                line,
            )
            cells = cells[: len(names) - 1] + [" | ".join(cells[len(names) - 1 :])]
        values: dict[str, str] = {}
        extra_notes = []
        columns: dict[str, int] = {}
        for h, name, cell in zip(header, names, cells, strict=True):
            if name and name not in values:
                values[name] = cell.strip()
                columns[name] = raw.find(cell) + 1 if cell else 1
            elif cell.strip():
                extra_notes.append(f"{h.strip()}: {cell.strip()}")
        row_id = values.get("id", "").strip() or None
        signal_text = values.get("signal", "")
        verdict_text = values.get("verdict", "")
        label = f"verdict row {row_id}" if row_id else "verdict row"
        if not verdict_text and not row_id or (row_id in ("—", "-", "–") and not verdict_text):
            if re.search(r"generic|skeleton|rows? 1", signal_text, re.I):
                self.problem(
                    "row points at the SPEC §3 generic rows; they follow every domain table "
                    "and are not imported",
                    line,
                    "info",
                )
            elif any(c.strip() for c in cells):
                self.problem(f"{label} has no verdict; not imported", line, "warning")
            return
        where: dict[tuple, tuple[int, int]] = {(): (line, 1)}
        for name, col in columns.items():
            where[(_FIELD_OF_COLUMN.get(name, name),)] = (line, col)
        verdict, note = self.row_verdict(verdict_text, label, line, columns.get("verdict"))
        if verdict is None:
            return
        whole = " ".join(cells)
        data: dict[str, Any] = {"verdict": verdict}
        if row_id:
            data["id"] = row_id
        if signal_text:
            data["description"] = signal_text
            data["signal"] = signal_atoms(signal_text)
        if values.get("scope"):
            data["scope"] = scope_from_text(values["scope"])
        source = values.get("source", "").strip()
        if source and source not in ("—", "-", "–"):
            data["source"] = source
        flag = no_side_effect_flag(whole)
        if flag:
            data["no_side_effect"] = True
        if re.search(r"fragile|prose[- ]match", whole, re.I):
            data["fragile"] = "prose-match"
        notes = [n for n in (note, *extra_notes) if n]
        if notes:
            data["note"] = "; ".join(notes)
        ctx.items["verdict_table"].append(Item("verdict_table", data, where, (), line, row_id))

    def row_verdict(self, text: str, label: str, line: int, column) -> tuple[str | None, str]:
        """The verdict of a Verdict cell, and the prose that goes with it."""
        stripped = text.strip().lstrip("*_ ")
        spans = list(_BACKTICK.finditer(text))
        leading = spans and text.strip().lstrip("*_ ").startswith("`") and spans[0]
        if leading:
            first = leading.group(1)
            try:
                verdict = parse_verdict(first)
                if re.search(r"<[^>]*>", first):
                    raise VerdictSyntaxError("it names a placeholder, not a step or gate")
            except VerdictSyntaxError as exc:
                if re.match(rf"^({'|'.join(VERDICT_TYPES)})\b", first.strip()):
                    self.problem(
                        f"{label}: verdict `{first}` cannot be read: {exc}; row not imported",
                        line,
                        "error",
                        column=column,
                    )
                    return None, ""
                verdict = None
            if verdict is not None:
                end = leading.end()
                chain = [first]
                while True:
                    m = re.match(r"\s*→\s*`([^`\n]+)`", text[end:])
                    if not m:
                        break
                    try:
                        verdict = parse_verdict(m[1])
                    except VerdictSyntaxError:
                        break
                    chain.append(m[1])
                    end += m.end()
                rest = text[end:].strip().lstrip("—–-:;, ").strip()
                if len(chain) > 1:
                    written = " → ".join(f"`{c}`" for c in chain)
                    rest = f"as written: {written}" + (f"; {rest}" if rest else "")
                return format_verdict(verdict), rest
        found: list[Verdict] = []
        for span in spans:
            try:
                found.append(parse_verdict(span.group(1)))
            except VerdictSyntaxError:
                continue
        if not found:
            bare = re.match(rf"^({'|'.join(VERDICT_TYPES)})\b", stripped)
            if bare:
                try:
                    verdict = parse_verdict(bare[1])
                    return format_verdict(verdict), stripped[bare.end() :].strip()
                except VerdictSyntaxError:
                    pass
            self.problem(
                f"{label}: no verdict expression in the Verdict cell ({_short(text)}); "
                "row not imported",
                line,
                "error",
                column=column,
            )
            return None, ""
        chosen = found[-1]
        distinct = {format_verdict(v) for v in found}
        self.problem(
            f"{label}: the Verdict cell starts with prose; took `{format_verdict(chosen)}`"
            + (f" (of {len(distinct)} verdicts named)" if len(distinct) > 1 else ""),
            line,
            "warning" if len(distinct) > 1 else "info",
            column=column,
        )
        return format_verdict(chosen), text.strip()

    # .. known_unmatched ..

    def take_known_unmatched(self) -> None:
        """``known_unmatched`` lists: under such a heading, or after such a label."""
        label = re.compile(r"^(?:\*\*)?`?known[_ ]unmatched`?(?:\*\*)?", re.I)
        for h in self.headings:
            title = re.sub(r"\([^)]*\)", "", _bare_title(h.title)).strip().strip("`*")
            if not re.search(r"^`?known[_ ]unmatched\b|\bknown[_ ]unmatched`?$", title, re.I):
                continue
            inside = [n for n in self.nodes if h.line < n.line <= h.end]
            for node in inside:
                if node.kind == "bullets":
                    self.take_bullets(node)
        for k, node in enumerate(self.nodes):
            if node.kind != "para" or not label.match(node.text):
                continue
            heading = next(
                (
                    h
                    for h in reversed(self.headings)
                    if h.line < node.line
                    and re.search("known[_ ]unmatched", h.title, re.I)
                    and node.line <= h.end
                    and not re.search(r"\(.*known[_ ]unmatched.*\)", h.title, re.I)
                ),
                None,
            )
            if heading is not None:
                continue  # taken with its heading
            after = _after_label(node.text)
            following = self.nodes[k + 1] if k + 1 < len(self.nodes) else None
            if after.strip():
                self.take_inline(node, after)
            elif following is not None and following.kind == "bullets":
                self.take_bullets(following)
            else:
                self.problem("known_unmatched label with no list after it", node.line)

    def take_bullets(self, node: Node) -> None:
        ctx = self.context_of(node.line)
        for line, text in node.items:
            ctx.items["known_unmatched"].append(
                Item("known_unmatched", unmatched_entry(text), {(): (line, 1)}, (), line)
            )

    def take_inline(self, node: Node, text: str) -> None:
        ctx = self.context_of(node.line)
        entries: list[dict] = []
        for part in _split_items(text):
            if "`" in part or _ATOM.search(part) or not entries:
                entries.append(unmatched_entry(part))
            else:
                prev = entries[-1]
                prev["note"] = f"{prev.get('note') or ''}; {part}".strip("; ")
        for entry in entries:
            ctx.items["known_unmatched"].append(
                Item("known_unmatched", entry, {(): (node.line, 1)}, (), node.line)
            )
        self.problem(
            f"known_unmatched written as a paragraph; read {len(entries)} entries from it",
            node.line,
            "info",
        )

    # .. validation ..

    def validate(self, item: Item, owner: str) -> Any:
        if item.checked:
            return item.value
        item.checked = True
        model = MODELS[item.section]
        name = _item_name(item)
        if item.section in ("handles", "actions", "gates") and not isinstance(item.data, dict):
            self.problem(
                f"{name} should be a mapping, got {type(item.data).__name__}; not imported",
                item.line,
                "error",
                path=name,
            )
            return None
        data = copy.deepcopy(item.data)
        origin = _origins(data)
        reported: set[tuple] = set()
        for _ in range(12):
            try:
                item.value = model.model_validate(data)
                break
            except ValidationError as exc:
                if not self.salvage(exc, data, origin, item, name, model, reported):
                    return None
        else:
            return None
        rel = {
            k[len(item.path) :]: v
            for k, v in item.where.items()
            if k[: len(item.path)] == item.path
        }
        for p in extras_problems(item.value, rel):  # type: ignore[arg-type]
            self.problems.append(replace(p, path=f"{name}.{p.path}" if p.path else name))
        return item.value

    def salvage(self, exc, data, origin, item: Item, name: str, model, reported) -> bool:
        """Drop the invalid parts of ``data``; False when the element cannot be kept."""
        pruned = False
        for err in exc.errors(include_url=False):
            loc = _source_path(data, tuple(err["loc"]))
            parent, key, orig = _target(data, loc, origin)
            full = (*item.path, *orig)
            line, column = _locate(item.where, full)
            path = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in orig)
            required = (
                parent is data
                and isinstance(key, str)
                and key in model.model_fields
                and model.model_fields[key].is_required()
            )
            if parent is None or required or key is None:
                self.problem(
                    f"{_message(dict(err))}; {name} not imported",
                    line or item.line,
                    "error",
                    column=column,
                    path=path,
                )
                return False
            if orig not in reported:
                reported.add(orig)
                self.problem(
                    f"{_message(dict(err))}; the value is dropped, the rest of {name} imported",
                    line or item.line,
                    "error",
                    column=column,
                    path=path,
                )
            try:
                del parent[key]
                pruned = True
            except (KeyError, IndexError, TypeError):
                continue
        return pruned

    # .. assembly ..

    def assemble(self) -> list[Chain]:
        self.extend_partial_definitions()
        for ctx in [self.shared, *self.contexts]:
            for section in SECTIONS:
                for item in ctx.items[section]:
                    self.validate(item, ctx.name)
        contexts = self.contexts or [self.single_context()]
        used: set[int] = set()
        chains = []
        taken_ids: set[str] = set()
        for ctx in contexts:
            chain = self.build(ctx, contexts, used)
            if chain is None:
                continue
            if chain.id in taken_ids:
                new_id = f"{chain.id}_{len(taken_ids) + 1}"
                self.problem(f"two scopes are named {chain.id!r}; renamed one {new_id!r}", None)
                chain = chain.model_copy(update={"id": new_id})
            taken_ids.add(chain.id)
            chains.append(chain)
        self.report_unused(chains, used)
        return chains

    def extend_partial_definitions(self) -> None:
        """An element that lacks a required field but shares its id with a full
        definition elsewhere (``- id: x  # as defined in §4.2; preconditions
        added``) extends that definition: its fields replace the base's."""
        everywhere = [self.shared, *self.contexts]
        for ctx in everywhere:
            for section in ("handles", "actions", "gates"):
                model = MODELS[section]
                required = [n for n, f in model.model_fields.items() if f.is_required()]
                for item in ctx.items[section]:
                    data = item.data
                    if not isinstance(data, dict) or all(k in data for k in required):
                        continue
                    base = self.full_definition(section, item.key, required, ctx)
                    if base is None:
                        continue
                    origin, base_item = base
                    item.data = _deep_merge(copy.deepcopy(base_item.data), data)
                    self.problem(
                        f"{_item_name(item)} extends the definition in {origin} "
                        f"(line {base_item.line}); the fields given here replace its fields",
                        item.line,
                        "info",
                    )

    def full_definition(self, section: str, key, required: list[str], ctx: Context):
        for other in [self.shared, *self.contexts]:
            if other is ctx:
                continue
            for item in other.items[section]:
                data = item.data
                if item.key == key and isinstance(data, dict) and all(k in data for k in required):
                    return other.name, item
        return None

    def single_context(self) -> Context:
        title = next((h for h in self.headings if h.level == 1), None)
        name = chain_id_from_heading(title.title) if title else "chain"
        ctx = Context(name, heading=title)
        ctx.items, self.shared.items = self.shared.items, {s: [] for s in SECTIONS}
        ctx.keys, self.shared.keys = self.shared.keys, {}
        return ctx

    def build(self, ctx: Context, contexts: list[Context], used: set[int]) -> Chain | None:
        own = {s: [i for i in ctx.items[s] if i.value is not None] for s in SECTIONS}
        for s in SECTIONS:
            used.update(id(i) for i in own[s])
        steps = {i.value.id for i in own["actions"]}
        for item in self.shared.items["verdict_table"]:
            if item.value is None:
                continue
            named = set(item.value.scope.steps)
            if not named or named & steps:
                own["verdict_table"].append(item)
                used.add(id(item))
        pools = [self.shared] + [c for c in contexts if c is not ctx]
        copied = self.closure(own, pools, used)
        for item in self.shared.items["known_unmatched"]:
            if item.value is not None:
                own["known_unmatched"].append(item)
                used.add(id(item))
        rows = sorted(own["verdict_table"], key=lambda i: i.line or 0)
        document: dict[str, Any] = {
            "id": ctx.name,
            "title": _bare_title(ctx.heading.title) if ctx.heading else None,
        }
        for key, value in {**self.shared.keys, **ctx.keys}.items():
            document[key] = value
        document["handles"] = [_copy(i.value) for i in own["handles"]]
        document["actions"] = [_copy(i.value) for i in own["actions"]]
        document["gates"] = [_copy(i.value) for i in own["gates"]]
        document["verdict_table"] = [_copy(i.value) for i in rows]
        document["known_unmatched"] = [_copy(i.value) for i in own["known_unmatched"]]
        policy = self.merged(self.shared.items["policy"] + own["policy"], used)
        if policy is not None:
            document["policy"] = policy
        variants = [i for i in own["variants"] + self.shared.items["variants"] if i.value]
        if variants:
            document["variants"] = _copy(variants[0].value)
            used.update(id(i) for i in variants[:1])
            for extra in variants[1:]:
                self.problem("a second variants block; the first one is used", extra.line)
                used.add(id(extra))
        try:
            chain = Chain.model_validate(document)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                self.problem(
                    f"chain {ctx.name!r}: {_message(dict(err))}",
                    ctx.heading.line if ctx.heading else None,
                    "error",
                    path=".".join(map(str, err["loc"])),
                )
            return None
        if copied:
            listing = "; ".join(
                f"{section} {', '.join(ids)} from {origin}"
                for (section, origin), ids in copied.items()
            )
            self.problem(
                f"chain {chain.id!r} uses definitions given elsewhere; copied {listing}",
                ctx.heading.line if ctx.heading else None,
                "info",
            )
        return chain

    def closure(self, own: dict, pools: list[Context], used: set[int]) -> dict:
        """Copy in the handles, actions and gates ``own`` refers to but lacks."""
        copied: dict[tuple[str, str], list[str]] = {}
        have = {s: {i.value.id for i in own[s]} for s in ("handles", "actions", "gates")}
        # Rows bring in what their verdicts name, not the steps their scope
        # names: a shared row may list steps of several chains.
        queue = [i.value for s in ("handles", "actions", "gates", "verdict_table") for i in own[s]]
        while queue:
            element = queue.pop()
            for section, ref in references(element):
                if ref in have[section]:
                    continue
                for pool in pools:
                    found = pool.ids(section).get(ref)
                    if found is not None:
                        own[section].append(found)
                        used.add(id(found))
                        have[section].add(ref)
                        copied.setdefault((section, pool.name), []).append(ref)
                        queue.append(found.value)
                        break
        return copied

    def merged(self, items: list[Item], used: set[int]) -> dict | None:
        result: dict | None = None
        for item in items:
            used.add(id(item))
            if item.value is None:
                continue
            dumped = item.value.model_dump(mode="json", by_alias=True, exclude_unset=True)
            result = _deep_merge(result or {}, dumped)
        return result

    def report_unused(self, chains: list[Chain], used: set[int]) -> None:
        """Shared definitions no chain took: add them to every chain, say so."""
        if not chains:
            return
        for section in ("handles", "actions", "gates", "verdict_table"):
            for item in self.shared.items[section]:
                if item.value is None or id(item) in used:
                    continue
                for k, chain in enumerate(chains):
                    target = getattr(chain, section)
                    target.append(_copy(item.value))
                    chains[k] = chain
                self.problem(
                    f"{_item_name(item)} is defined outside every scope and no chain refers "
                    "to it; added to every chain",
                    item.line,
                    "info",
                )


# --- helpers -----------------------------------------------------------------

_FIELD_OF_COLUMN = {"signal": "description"}


def _column(header: str) -> str:
    h = re.sub(r"[*_`]", "", header).strip().lower()
    if h in ("#", "id", "row", "no", "no."):
        return "id"
    if h.startswith("signal") or h in ("condition", "trigger"):
        return "signal"
    if h in ("step scope", "scope", "applies to", "step", "steps", "step(s)"):
        return "scope"
    if h.startswith("verdict"):
        return "verdict"
    if "source" in h or "evidence" in h:
        return "source"
    return ""


def _cells(raw: str) -> list[str]:
    """Split a table row on unescaped pipes outside code spans."""
    body = raw.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells: list[str] = []
    current: list[str] = []
    in_code = False
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and body[i + 1 : i + 2] == "|":
            current.append("|")
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    cells.append("".join(current))
    if in_code:  # an unbalanced backtick: fall back to a plain split
        cells = [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]
    return [c.strip() for c in cells]


_ATOM = re.compile(
    r"\b(?:(?:http|code|webhook|event|type|status|probe):[\w.\-/*]+|http[: ]\d(?:\d\d|xx)\b)",
    re.I,
)


def signal_atoms(text: str) -> list[str]:
    """Machine-matchable signals named in a Signal cell.

    >>> signal_atoms("`http:410` / `SEARCH_EXPIRED` or timeout; webhook `charge.expired`")
    ['http:410', 'code:SEARCH_EXPIRED', 'timeout', 'webhook:charge.expired']
    """
    found: list[str] = []

    def add(atom: str) -> None:
        if atom not in found:
            found.append(atom)

    for m in re.finditer(r"`([^`\n]+)`|(\b[\w:./*\-]+)", text):
        if m.group(1):
            token = m.group(1).strip()
            atoms = _ATOM.findall(token)
            if atoms:
                for atom in atoms:
                    add(_norm_atom(atom))
            elif re.fullmatch(r"[A-Z][A-Z0-9_]{2,}", token):
                add(f"code:{token}")
            elif re.fullmatch(r"\d{3}", token):
                add(f"http:{token}")
            else:
                before = text[max(0, m.start() - 9) : m.start()].lower()
                if before.rstrip().endswith("webhook") and re.fullmatch(r"[\w.]+", token):
                    add(f"webhook:{token}")
        else:
            word = m.group(2)
            if _ATOM.fullmatch(word):
                add(_norm_atom(word))
            elif word.lower() == "timeout":
                add("timeout")
    for m in re.finditer(r"\bHTTP\s+(\d{3})\b", text):
        add(f"http:{m[1]}")
    return found


def _norm_atom(atom: str) -> str:
    m = re.fullmatch(r"(?i)http[: ](\S+)", atom)
    if m:
        return f"http:{m[1].lower()}"
    return atom


def no_side_effect_flag(text: str) -> bool:
    """A row declares no_side_effect (or v0.3 rejected_before_execution), not negated."""
    for m in re.finditer(r"no_side_effect|rejected_before_execution", text):
        before = text[max(0, m.start() - 40) : m.start()]
        after = text[m.end() : m.end() + 10]
        if re.search(r"\bnot\b|\bnever\b", before, re.I) or re.match(r"`?\s*:\s*false", after):
            continue
        return True
    return False


def unmatched_entry(text: str) -> dict[str, Any]:
    """``signal`` = the first backticked token (else the text); ``note`` = the rest."""
    text = text.strip().rstrip(".").strip()
    m = _BACKTICK.search(text)
    if not m:
        return {"signal": text}
    signal = m.group(1).strip()
    rest = text[m.end() :].strip().lstrip("—–-:;, ").strip() if m.start() == 0 else text
    return {"signal": signal, "note": rest or None}


def _after_label(text: str) -> str:
    """The text after a ``known_unmatched (...):`` label."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            return text[i + 1 :]
    return ""


def _split_items(text: str) -> list[str]:
    """Split a run-on list at commas/semicolons/sentence ends outside () and ``."""
    parts: list[str] = []
    current: list[str] = []
    depth, code = 0, False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            code = not code
        elif not code and ch in "([{":
            depth += 1
        elif not code and ch in ")]}":
            depth = max(0, depth - 1)
        if not code and depth == 0 and (ch in ",;" or (ch == "." and text[i + 1 : i + 2] == " ")):
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    cleaned = []
    for part in parts:
        part = re.sub(r"^\s*(?:and|or|also)\s+", "", part.strip(), flags=re.I).strip()
        if part:
            cleaned.append(part)
    return cleaned


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _item_name(item: Item) -> str:
    if item.section in ("policy", "variants"):
        return item.section
    if item.key:
        return f"{item.section}[{item.key}]"
    return f"{item.section} at line {item.line}"


def _origins(data: Any) -> dict[int, tuple]:
    """``id(container) → its path`` in ``data``, to report paths after pruning."""
    out: dict[int, tuple] = {}
    stack: list[tuple[Any, tuple]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            out[id(node)] = path
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list):
            out[id(node)] = path
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
    return out


def _target(data: Any, loc: tuple, origin: dict[int, tuple]):
    """The container and key to drop for an error at ``loc``, and its original path.

    The key is the deepest part of ``loc`` that exists in ``data`` (a missing
    field's error drops the mapping that lacks it).
    """
    if not loc:
        return None, None, ()
    node, parent, key = data, None, None
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            parent, key, node = node, part, node[part]
        else:
            break
    if parent is None:
        return None, None, ()
    base = origin.get(id(parent), ())
    return parent, key, (*base, key)


def _deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _copy(value: BaseModel) -> BaseModel:
    return value.model_copy(deep=True)


def _verdicts_in(obj: Any):
    if isinstance(obj, Verdict):
        yield obj
    elif isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            yield from _verdicts_in(getattr(obj, name))
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _verdicts_in(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _verdicts_in(value)


def references(element: Any):
    """``(section, id)`` pairs an element refers to (for copying definitions in)."""
    for verdict in _verdicts_in(element):
        if verdict.to:
            yield "actions", verdict.to
        if verdict.gate:
            yield "gates", verdict.gate
    if isinstance(element, Handle):
        if element.minted_by:
            yield "actions", element.minted_by
        for parent in element.derived_from:
            yield "handles", parent
        if element.staleness and element.staleness.refresh:
            yield "actions", element.staleness.refresh
    elif isinstance(element, Action):
        for handle in (*element.input.handles, *element.output.handles):
            yield "handles", handle
        if element.mutates:
            yield "handles", element.mutates
        if element.entry_gate:
            yield "gates", element.entry_gate
        if element.confirmation and element.confirmation.probe:
            yield "actions", element.confirmation.probe
        comp = element.compensation
        if comp:
            if comp.action and comp.action != "none":
                yield "actions", comp.action
            for step in comp.chain:
                yield "actions", step
            for rung in comp.ladder:
                if rung.action:
                    yield "actions", rung.action
                for step in rung.chain:
                    yield "actions", step
