"""Assembly of a compile document's chains from the contexts it was read into.

:func:`assemble` validates every element the document gives, then builds
one :class:`~chains.core.model.ChainSpec` per scope (or one for a document
without scopes) by :class:`_Assembler`: a chain's own items, what its prose
says it shares with other scopes, what it uses of theirs (the sharing rules
of :mod:`.md_scopes`), the shared verdict rows narrowed to its steps and the
shared policy without other chains' steps. :func:`externalize` marks the
handles another chain's step makes. A shared definition no chain took goes
to the chains whose steps its own text names (to the chain, when there is
one), else it stays out; either way with an info.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..model import ChainSpec, Variants, compensators
from ..verdicts import parse_verdict
from .md_ambiguous import unambiguous_first
from .md_blocks import markers
from .md_items import SECTIONS, Context, Item, item_name, validate_item
from .md_layout import Layout
from .md_outline import bare_title, chain_id_from_heading, scope_passages
from .md_probes import mark_probe_reads
from .md_scopes import (
    Copied,
    closure,
    declared_rails,
    declared_rows,
    declared_steps,
    deep_merge,
    extend_partial_definitions,
    narrowed_row,
    split_policy_by_chain,
)
from .md_statements import Statement, carry_statements, find_statements
from .validation import error_message

__all__ = ["assemble", "externalize", "place_unused"]


def assemble(layout: Layout) -> list[ChainSpec]:
    """The chains of ``layout``'s document, its contexts filled by :mod:`.md_reading`.

    Problems go to ``layout.problems``; a scope that does not validate is
    left out.
    """
    return _Assembler(layout).assemble()


class _Assembler:
    """Builds the chains of one layout; collects the document's action and handle ids."""

    def __init__(self, layout: Layout):
        self.headings, self.nodes = layout.headings, layout.nodes
        self.problems, self.problem = layout.problems, layout.problem
        self.shared, self.contexts = layout.shared, layout.contexts
        self.context_of = layout.context_of
        self.layout = layout
        self.statements: list[Statement] = []
        self.action_ids: set[str] = set()  # every action the document defines, any scope
        self.handle_ids: set[str] = set()

    def assemble(self) -> list[ChainSpec]:
        everywhere = [self.shared, *self.contexts]
        extend_partial_definitions(everywhere, self.problems)
        split_policy_by_chain(everywhere, self.problems)
        for ctx in everywhere:
            for section in SECTIONS:
                for item in ctx.items[section]:
                    validate_item(item, self.problems)
            self.action_ids.update(_ids(ctx.items["actions"]))
            self.handle_ids.update(_ids(ctx.items["handles"]))
        self.statements = find_statements(self.layout, self.action_ids)
        contexts = self.contexts or [self.single_context()]
        used: set[int] = set()
        chains = []
        taken_ids: set[str] = set()
        for ctx in contexts:
            spec = self.build(ctx, contexts, used)
            if spec is None:
                continue
            if spec.id in taken_ids:
                new_id = f"{spec.id}_{len(taken_ids) + 1}"
                self.problem(f"two scopes are named {spec.id!r}; renamed one {new_id!r}", None)
                spec = spec.model_copy(update={"id": new_id})
            taken_ids.add(spec.id)
            chains.append(spec)
        place_unused(self.shared, chains, used, self.problem)
        return chains

    def single_context(self) -> Context:
        title = next((h for h in self.headings if h.level == 1), None)
        name = chain_id_from_heading(title.title) if title else "chain"
        ctx = Context(name, heading=title, line=title.line if title else None)
        ctx.items, self.shared.items = self.shared.items, {s: [] for s in SECTIONS}
        ctx.keys, self.shared.keys = self.shared.keys, {}
        return ctx

    def gather(self, ctx: Context, contexts: list[Context], used: set[int]):
        """The items of one chain: its own, what it shares, and the shared rows for it."""
        own = {s: [i for i in ctx.items[s] if i.value is not None] for s in SECTIONS}
        for s in SECTIONS:
            used.update(id(i) for i in own[s])
        for item in self.shared.items["known_unmatched"]:
            if item.value is not None:
                own["known_unmatched"].append(item)
                used.add(id(item))
        others = [c for c in contexts if c is not ctx]
        steps, summary, rows = self.declarations(ctx)
        copied: Copied = {}
        self.take_steps(own, steps, others, used, copied)
        _merge(copied, closure(own, self.shared, others, used))
        taken = self.take_steps(own, self.consumed_from(own, summary, others), others, used, copied)
        if taken:
            _merge(copied, closure(own, self.shared, others, used, start=taken))
        have = {i.value.id for i in own["actions"]}
        left_out = [s for s in summary if s not in have]
        if left_out:
            self.problem(
                f"chain {ctx.name!r}: the summary names {', '.join(left_out)} of another scope, "
                "but nothing in the chain uses what they make; not taken",
                ctx.line,
                "info",
            )
        narrowed: list[str] = []
        for item in self.shared.items["verdict_table"]:
            named = set(item.value.scope.steps) if item.value is not None else set()
            if item.value is None or (named and not named & have):
                continue
            used.add(id(item))
            row, left = narrowed_row(item.value, have)
            own_verdict = item.per_scope.get(ctx.label or "")
            if own_verdict:  # "`a` (Chain A) / `b` (Chain C)": this chain's verdict
                row = row.model_copy(update={"verdict": parse_verdict(own_verdict)})
            changed = left or own_verdict
            own["verdict_table"].append(_row_item(item, row) if changed else item)
            if left:
                narrowed.append(row.id or f"line {item.line}")
        own["verdict_table"].sort(key=lambda i: i.line or 0)
        own_rows = {i.value.id for i in own["verdict_table"] if i.value.id}
        for row_id in rows:
            found = next(((c, c.rows()[row_id]) for c in others if row_id in c.rows()), None)
            if found is None or row_id in own_rows:
                continue
            origin, item = found
            row, _ = narrowed_row(item.value, have)
            own["verdict_table"].append(_row_item(item, row))
            copied.setdefault(("verdict rows", origin.name), []).append(row_id)
        if not [r for r in rows if r not in ctx.rows()]:  # it names no other scope's rows
            self.take_compensators_rows(own, copied, others, have)
        start = [i.value for i in own["verdict_table"]]
        _merge(copied, closure(own, self.shared, others, used, start=start))
        if narrowed:
            self.problem(
                f"chain {ctx.name!r}: shared rows {', '.join(narrowed)} name steps of other "
                "chains; their scope keeps this chain's steps and the note records the rest",
                ctx.line,
                "info",
            )
        return own, copied

    def take_compensators_rows(self, own, copied: Copied, others, have: set[str]) -> None:
        """Rows another scope wrote for a compensator this chain took from it, narrowed.

        A commit naming another scope's step as its compensation runs that
        step here, so the step fails here as it fails at home. Used only when
        the chain's prose names no other scope's rows: a "same rows A1–A3"
        sentence is then the whole answer.
        """
        undo = {name for item in own["actions"] for name in compensators(item.value)}
        own_rows = {i.value.id for i in own["verdict_table"] if i.value.id}
        for (section, origin_name), ids in list(copied.items()):
            origin = next((c for c in others if c.name == origin_name), None)
            taken = set(ids) & undo
            if section != "actions" or origin is None or not taken:
                continue
            for item in origin.items["verdict_table"]:
                row = item.value
                if row is None or row.id in own_rows or not set(row.scope.steps) & taken:
                    continue
                narrowed, _ = narrowed_row(row, have)
                own["verdict_table"].append(_row_item(item, narrowed))
                if row.id:
                    own_rows.add(row.id)
                    copied.setdefault(("verdict rows", origin.name), []).append(row.id)

    def declarations(self, ctx: Context) -> tuple[list[str], list[str], list[str]]:
        """What the prose says a scope shares: steps in its own section, steps in
        the document's summary of it, and rows (``same rows A1–A3``)."""
        steps: list[str] = []
        rows: list[str] = []
        summary: list[str] = []
        known = self.action_ids
        for node in self.nodes:
            if node.kind not in ("para", "bullets"):
                continue
            texts = [node.text] if node.kind == "para" else [t for _, t in node.items]
            mine = self.context_of(node.line) is ctx
            for text in texts:
                if mine:
                    steps += declared_steps(text, known)
                    rows += declared_rows(text)
                elif self.context_of(node.line) is self.shared and ctx.label:
                    for label, passage in scope_passages(text):
                        if label == ctx.label:
                            summary += declared_steps(passage, known, arrows_only=True)
        return list(dict.fromkeys(steps)), list(dict.fromkeys(summary)), rows

    def take_steps(self, own, names, others, used, copied: Copied) -> list:
        """Copy the named steps of other scopes into ``own``; returns what was taken."""
        have = {i.value.id for i in own["actions"]}
        taken = []
        for name in names:
            if name in have:
                continue
            for pool in others:
                found = pool.ids("actions").get(name)
                if found is not None:
                    own["actions"].append(found)
                    used.add(id(found))
                    have.add(name)
                    taken.append(found.value)
                    copied.setdefault(("actions", pool.name), []).append(name)
                    break
        return taken

    def consumed_from(self, own, names: list[str], others) -> list[str]:
        """The steps of ``names`` (another scope's) that make a handle ``own``'s steps use.

        A document's summary sketches each chain's path loosely; a step it
        names is taken only when the chain needs what the step makes.
        """
        needed = set()
        for item in own["actions"]:
            needed.update(item.value.input.handles)
            if item.value.mutates:
                needed.add(item.value.mutates)
        out = []
        for name in names:
            for pool in others:
                found = pool.ids("actions").get(name)
                if found is not None:
                    if set(found.value.output.handles) & needed:
                        out.append(name)
                    break
        return out

    def build(self, ctx: Context, contexts: list[Context], used: set[int]) -> ChainSpec | None:
        own, copied = self.gather(ctx, contexts, used)
        for section in ("handles", "actions", "gates"):
            # Document order, wherever a definition came from: a copied step
            # of an earlier scope runs before this scope's own steps.
            own[section].sort(key=lambda i: (i.line is None, i.line or 0))
        line = ctx.line
        title = ctx.title or (bare_title(ctx.heading.title) if ctx.heading else None)
        document: dict[str, Any] = {"id": ctx.name, "title": title and title.replace("`", "")}
        if ctx.description:
            document["description"] = ctx.description
        document.update({**self.shared.keys, **ctx.keys})
        for section in ("handles", "actions", "gates", "verdict_table", "known_unmatched"):
            document[section] = [_copy(i.value) for i in own[section]]
        changed = externalize(ctx, document, contexts, self.handle_ids)
        if changed:
            self.problem(
                f"chain {ctx.name!r}: handles made by other chains are external here: "
                + ", ".join(changed),
                line,
                "info",
            )
        # A block that names the chain (``id:``) declares it, even before it has elements.
        declared = "id" in ctx.keys
        if not declared and not any(
            document[s] for s in ("handles", "actions", "gates", "verdict_table")
        ):
            self.problem(
                f"{document['title'] or ctx.name!r} defines no handles, actions, gates or "
                "verdict rows; not a chain",
                line,
                "error",
            )
            return None
        policy = self.policy(ctx, own, used)
        if policy is not None:
            document["policy"] = policy
        variants = [i for i in own["variants"] + self.shared.items["variants"] if i.value]
        if variants:
            document["variants"] = _copy(variants[0].value)
            used.update(id(i) for i in variants)
            for extra in variants[1:]:
                self.problem("a second variants block; the first one is used", extra.line)
        self.rails(ctx, document)
        try:
            spec = ChainSpec.model_validate(document)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                path = ".".join(map(str, err["loc"]))
                message = f"chain {ctx.name!r}: {error_message(dict(err))}"
                self.problem(message, line, "error", path=path)
            return None
        if copied:
            listing = "; ".join(
                f"{section} {', '.join(ids)} from {origin}"
                for (section, origin), ids in copied.items()
            )
            message = f"chain {spec.id!r} uses definitions given elsewhere; copied {listing}"
            self.problem(message, line, "info")
        spec = unambiguous_first(spec, [i.line for i in own["verdict_table"]], self.problem)
        lines = {i.value.id: i.line for i in reversed(own["actions"])}  # the first wins
        spec = mark_probe_reads(spec, lines, self.problem, self.sections(lines))
        mine = [s for s in self.statements if s.context is self.shared or s.context is ctx]
        return carry_statements(spec, mine, self.problem)

    def rails(self, ctx: Context, document: dict[str, Any]) -> None:
        """Rails the prose writes as alternatives (``GDS `a → b`; NDC `c → d```)
        become variants: the axis ``rail`` unless the chain has its own, and
        each step of one rail ``only`` on it (SPEC §2.7), so a run takes one."""
        rails, line = self.declared_rails(ctx)
        if not rails:
            return
        given = document.get("variants")
        values = list(given.values) if given is not None else list(rails)
        missing = [r for r in rails if r not in values]
        if missing:
            self.problem(
                f"chain {ctx.name!r}: the rails {', '.join(missing)} written as alternatives "
                "are not values of its variants; steps not scoped to them",
                line,
                "warning",
            )
            return
        if given is None:
            document["variants"] = Variants(axis="rail", values=values)
        scoped: dict[str, list[str]] = {}
        for k, action in enumerate(document["actions"]):
            on = [r for r, steps in rails.items() if action.id in steps]
            if len(on) == 1 and not action.only:
                document["actions"][k] = action.model_copy(update={"only": on})
                scoped.setdefault(on[0], []).append(action.id)
        listing = "; ".join(f"{', '.join(ids)} only on {r}" for r, ids in scoped.items())
        self.problem(
            f"chain {ctx.name!r}: the rails {' and '.join(rails)} are written as alternatives, "
            f"so they are variants (axis {document['variants'].axis}), not one sequence: "
            + (listing or "no step of the chain is on one rail only"),
            line,
            "info",
        )

    def declared_rails(self, ctx: Context) -> tuple[dict[str, list[str]], int | None]:
        """The rails a chain's own prose, or the document's summary of it, sketches."""
        for node in self.nodes:
            if node.kind not in ("para", "bullets"):
                continue
            texts = [node.text] if node.kind == "para" else [t for _, t in node.items]
            where = self.context_of(node.line)
            for n, text in enumerate(texts):
                at = node.line if node.kind == "para" else node.items[n][0]
                if where is ctx:
                    passages = [text]
                elif where is self.shared and ctx.label:
                    passages = [p for label, p in scope_passages(text) if label == ctx.label]
                else:
                    continue
                for passage in passages:
                    rails = declared_rails(passage, self.action_ids)
                    if rails:
                        return rails, at
        return {}, None

    def sections(self, lines: dict[str, int | None]) -> dict[str, str]:
        """Each action's section heading: the ruled comment above it in its block
        (``# ──── shared read probes ────``), when that names no scope; the author's
        words for every item under it, up to the next ruled comment."""
        found = {}
        for node in self.nodes:
            if node.kind != "code":
                continue
            text, ruled = node.text.split("\n"), markers(node)
            for action, line in lines.items():
                if line is None or not node.line <= line < node.line + len(text):
                    continue
                above = [(at, label) for at, label in ruled if at < line]
                if above and above[-1][1] == "":
                    found[action] = text[above[-1][0] - node.line]
        return found

    def policy(self, ctx: Context, own: dict, used: set[int]) -> dict | None:
        """The shared policy without steps of other chains, and the chain's own over it.

        A shared ``per_step`` entry naming an action another scope defines
        and this chain lacks belongs to that scope's chain; an entry naming
        no action of the document stays, for lint to report.
        """
        shared = self.merged(self.shared.items["policy"], used)
        steps = _ids(own["actions"]) | _ids(ctx.items["actions"])
        per_step = (shared or {}).get("per_step")
        if shared is not None and isinstance(per_step, dict):
            others = [k for k in per_step if k in self.action_ids and k not in steps]
            if others:
                shared["per_step"] = {k: v for k, v in per_step.items() if k not in others}
                self.problem(
                    f"chain {ctx.name!r}: policy.per_step entries for other chains' actions "
                    f"left out: {', '.join(others)}",
                    self.policy_line(others[0]),
                    "info",
                )
        return self.merged(own["policy"], used, start=shared)

    def policy_line(self, step: str) -> int | None:
        for item in self.shared.items["policy"]:
            if (*item.path, "per_step", step) in item.where:
                return item.where[(*item.path, "per_step", step)][0]
        return None

    def merged(self, items: list[Item], used: set[int], start: dict | None = None) -> dict | None:
        result: dict | None = start
        for item in items:
            used.add(id(item))
            if item.value is None:
                continue
            dumped = item.value.model_dump(mode="json", by_alias=True, exclude_unset=True)
            result = deep_merge(result or {}, dumped)
        return result


def place_unused(
    shared: Context, chains: list[ChainSpec], used: set[int], problem: Callable[..., None]
) -> None:
    """Shared definitions no chain took: each goes to the chains whose steps its own
    text names (to the chain, when there is one), else stays out; say so."""
    if not chains:
        return
    for section in ("handles", "actions", "gates", "verdict_table"):
        for item in shared.items[section]:
            if item.value is None or id(item) in used:
                continue
            named = _names_steps(item.value, chains)
            takers = chains if len(chains) == 1 else named
            for chain in takers:
                getattr(chain, section).append(_copy(item.value))
            where = (
                f"its text names steps of {', '.join(c.id for c in takers)}; added there"
                if named and len(chains) > 1
                else "added to the chain"
                if takers
                else "its text names no chain's step; left out (refer to it from a chain to use it)"
            )
            problem(
                f"{item_name(item)} is defined outside every scope and no chain refers "
                f"to it; {where}",
                item.line,
                "info",
            )


def externalize(
    ctx: Context, document: dict, contexts: list[Context], handle_ids: set[str]
) -> list[str]:
    """Mark each handle of ``document`` that a step of another chain makes
    ``external(<that chain> <step>)``; returns what changed, one line each.

    Its parents and refresh step of other chains are left out of this
    chain, and recorded in the handle's notes. ``handle_ids`` are the
    handles the whole document defines.
    """
    steps = {a.id for a in document["actions"]}
    handles = {h.id for h in document["handles"]}
    outputs: dict[str, set[str]] = {}
    for action in document["actions"]:
        for name in action.output.handles:
            outputs.setdefault(name, set()).add(action.id)
    origins: dict[str, str] = {}
    for other in contexts:
        if other is not ctx:
            for name in other.ids("actions"):
                origins.setdefault(name, _origin(other))
    changed = []
    for k, handle in enumerate(document["handles"]):
        update: dict[str, Any] = {}
        notes = list(handle.notes)
        minter = handle.minted_by
        if minter and minter not in steps and minter in origins:
            update["minted_by"] = f"external({origins[minter]} {minter})"
        mine = _own_origin(minter or "", _origin(ctx), outputs.get(handle.id, set()))
        if mine:  # another scope wrote "external(scope A create_order)" of scope A's own
            update["minted_by"] = mine
        parents = [p for p in handle.derived_from if p not in handles and p in handle_ids]
        if parents:
            update["derived_from"] = [p for p in handle.derived_from if p not in parents]
            notes.append(f"derived from {', '.join(parents)} of another chain")
        refresh = handle.staleness.refresh if handle.staleness else None
        if refresh and refresh not in steps and refresh in origins and handle.staleness:
            update["staleness"] = handle.staleness.model_copy(update={"refresh": None})
            notes.append(f"refreshed by {refresh} of {origins[refresh]}")
        if update:
            update["notes"] = notes
            document["handles"][k] = handle.model_copy(update=update)
            changed.append(f"{handle.id} ({update.get('minted_by', 'minted here')})")
    return changed


def _names_steps(value: BaseModel, chains: list[ChainSpec]) -> list[ChainSpec]:
    """The chains having a step that ``value``'s own text (notes, description ...) names."""
    text = json.dumps(value.model_dump(mode="json", exclude={"id"}))
    words = set(re.findall(r"[A-Za-z_]\w*", text))
    return [c for c in chains if words & {a.id for a in c.actions}]


def _ids(items: list[Item]) -> set[str]:
    """The ids of action items, as validated or else as written."""
    return {str(i.value.id if i.value is not None else i.key) for i in items if i.value or i.key}


def _copy(value: BaseModel) -> BaseModel:
    return value.model_copy(deep=True)


def _merge(into: Copied, more: Copied) -> None:
    for key, ids in more.items():
        into.setdefault(key, []).extend(ids)


def _row_item(item: Item, row: Any) -> Item:
    """A copy of a verdict-row item holding ``row`` (narrowed) as its value."""
    return Item("verdict_table", None, item.where, item.path, item.line, row.id, row, True)


def _own_origin(minted_by: str, origin: str, makers: set[str]) -> str | None:
    """The step of ``external(<origin> <step> …)`` when ``origin`` is this chain and the
    step (one of ``makers``, the chain's steps that output the handle) makes it."""
    m = re.fullmatch(r"external\(\s*(.*?)\s*\)", minted_by.strip())
    if not m or not m[1].lower().startswith(origin.lower() + " "):
        return None
    step = re.match(r"\w+", m[1][len(origin) :].strip())
    return step[0] if step and step[0] in makers else None


def _origin(ctx: Context) -> str:
    """How a handle's origin names a scope: ``scope A``, ``chain M``, else the chain id."""
    title = ctx.title or (bare_title(ctx.heading.title) if ctx.heading else "")
    kind = re.match(r"(scope|chain)\b", title, re.I)
    return f"{kind[1].lower()} {ctx.label}" if kind and ctx.label else ctx.name
