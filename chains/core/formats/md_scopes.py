"""How the scopes of one compile document share definitions.

A compile document writes several chains that share a prefix: a later
scope lists only its "additions/overrides", says ``Shares `a → b` with
Scope 1 (same rows A1–A3)``, keys policy numbers by chain name. This module
holds the rules that turn that sharing into complete chains, all over
:class:`~.md_items.Context` objects: :func:`declared_steps` and
:func:`declared_rows` read what a sentence says a scope shares, and
:func:`declared_rails` the rails it sketches as alternatives
(``GDS `a → b`; NDC `c → d```, SPEC §2.7 variants);
:func:`closure` copies in what a chain uses but lacks (handles, gates, the
compensation and probe steps its own steps name), never another scope's
steps merely because a verdict or a handle names them; :func:`narrowed_row`
keeps a shared row to one chain's steps; :func:`extend_partial_definitions`
completes an element written as a patch of another;
:func:`split_policy_by_chain` hands policy entries keyed by a chain name
(``per_chain: {chain_A: {...}}``) to that chain alone.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterator
from typing import Any

from pydantic import BaseModel

from ..errors import Problem
from ..model import EFFECTS, Action, Handle, compensators
from ..verdicts import Verdict
from .md_items import MODELS, Context, Item, item_name

__all__ = [
    "closure",
    "declared_rails",
    "declared_rows",
    "declared_steps",
    "deep_merge",
    "extend_partial_definitions",
    "narrowed_row",
    "references",
    "split_policy_by_chain",
]

Copied = dict[tuple[str, str], list[str]]  # (section, origin scope) → ids


def closure(
    own: dict, shared: Context, others: list[Context], used: set[int], start: list | None = None
) -> Copied:
    """Copy in what ``own`` refers to but lacks, as far as the document lets it.

    Handles and gates a chain uses, and the compensation and probe steps its
    own steps name, come from the shared part or else from the scope that
    defines them. A step named only as a verdict target, a handle's minter
    or refresh, or a parent handle comes from the shared part alone: another
    scope's steps are that scope's, unless the document says it shares them
    (:func:`declared_steps`). Walks from ``start`` (default: every element of
    ``own``); copied elements bring in their own references.
    """
    copied: Copied = {}
    have = {s: {i.value.id for i in own[s]} for s in ("handles", "actions", "gates")}
    sections = ("handles", "actions", "gates", "verdict_table")
    queue = list(start) if start is not None else [i.value for s in sections for i in own[s]]
    while queue:
        element = queue.pop()
        for section, ref, reach in references(element):
            if ref in have[section]:
                continue
            for pool in [shared, *others] if reach == "any" else [shared]:
                found = pool.ids(section).get(ref)
                if found is not None:
                    own[section].append(found)
                    used.add(id(found))
                    have[section].add(ref)
                    copied.setdefault((section, pool.name), []).append(ref)
                    queue.append(found.value)
                    break
    return copied


_ARROW_SPAN = re.compile(r"`([^`\n]*→[^`\n]*)`")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHARING = re.compile(
    r"\b(?:shares?|shared|reuses?|reused|same|steps?\s*:|runs? first|as in (?:scope|chain))\b",
    re.I,
)


def declared_steps(text: str, known: Collection[str], *, arrows_only: bool = False) -> list[str]:
    """The steps a prose passage says a scope has: arrow lists and shared names.

    ``a → b → c`` in backticks lists steps; in a sentence that shares or
    reuses (``Shares `a` with Scope 1``, ``Steps: ...``), a backticked name
    is one too. Only names in ``known`` (the document's actions) count.

    >>> declared_steps("Shares `a → b` and `c` with Scope 1.", {"a", "b", "c", "d"})
    ['a', 'b', 'c']
    >>> declared_steps("Consumes `d` from Scope 1.", {"d"})
    []
    """
    names: list[str] = []
    for span in _ARROW_SPAN.findall(text):
        for part in re.split(r"→", span):
            m = _NAME.search(re.sub(r"\([^)]*\)|[\[\]]", " ", part))
            if m and m[0] in known:
                names.append(m[0])
    if not arrows_only and _SHARING.search(text):
        for token in re.findall(r"`([^`\n]+)`", text):
            if token.strip() in known:
                names.append(token.strip())
    return list(dict.fromkeys(names))


_RAIL = re.compile(
    r"(?<![\w`])(?P<label>[A-Z][A-Z0-9]{1,9})(?:\s+rail)?\s*:?\s*`(?P<span>[^`\n]*→[^`\n]*)`"
)


def declared_rails(text: str, known: Collection[str]) -> dict[str, list[str]]:
    """Alternative rails a passage sketches: ``GDS `a → b`; NDC `c → d``` → label → steps.

    Two or more arrow lists, each after its own upper-case label, are rails a
    run takes one of (SPEC §2.7 variants), not one sequence. Only names in
    ``known`` (the document's actions) count; a lone labelled list is no
    alternative.

    >>> declared_rails("GDS `a → b`; NDC `c → d`", {"a", "b", "c", "d"})
    {'GDS': ['a', 'b'], 'NDC': ['c', 'd']}
    >>> declared_rails("steps: `a → b`", {"a", "b"})
    {}
    """
    rails: dict[str, list[str]] = {}
    for m in _RAIL.finditer(text):
        steps = declared_steps(f"`{m['span']}`", known, arrows_only=True)
        if steps:
            rails.setdefault(m["label"], []).extend(
                s for s in steps if s not in rails.get(m["label"], [])
            )
    return rails if len(rails) > 1 else {}


_ROW_RANGE = re.compile(r"\b([A-Z]{1,3})(\d+)(?:\s*[–—-]\s*(?:\1)?(\d+))?\b")


def declared_rows(text: str) -> list[str]:
    """Row ids a passage says a scope shares: ``same rows A1–A3, A11–A13``.

    >>> declared_rows("Shares steps with Scope 1 (same handles, same rows A1–A3, A11).")
    ['A1', 'A2', 'A3', 'A11']
    """
    ids: list[str] = []
    for m in re.finditer(
        r"\brows?\s+((?:[A-Z]{1,3}\d+(?:\s*[–—-]\s*[A-Z]*\d+)?[,\s]*(?:and\s+)?)+)", text
    ):
        for r in _ROW_RANGE.finditer(m[1]):
            first = int(r[2])
            last = int(r[3]) if r[3] else first
            ids += [f"{r[1]}{n}" for n in range(first, min(last, first + 200) + 1)]
    return list(dict.fromkeys(ids))


def narrowed_row(row: Any, steps: set[str]) -> tuple[Any, list[str]]:
    """A row scoped to the steps a chain has; the steps it names that the chain lacks.

    The steps left out stay recorded in the row's note, so a row of a shared
    core names no step of another chain yet keeps what the document wrote.
    """
    named = list(row.scope.steps)
    kept = [s for s in named if s in steps]
    left = [s for s in named if s not in steps]
    if not left:
        return row, []
    remark = f"shared row; steps of other chains left out of its scope: {', '.join(left)}"
    note = f"{row.note}; {remark}" if row.note else remark
    scope = row.scope.model_copy(update={"steps": kept})
    return row.model_copy(update={"scope": scope, "note": note}, deep=True), left


# --- partial definitions -----------------------------------------------------


def extend_partial_definitions(everywhere: list[Context], problems: list[Problem]) -> None:
    """An element that lacks a required field but shares its id with a full
    definition elsewhere (``- id: x  # as defined in §4.2; preconditions
    added``) extends that definition: its fields replace the base's, and
    the notes of both are kept."""
    for ctx in everywhere:
        for section in ("handles", "actions", "gates"):
            model = MODELS[section]
            required = [n for n, f in model.model_fields.items() if f.is_required()]
            for item in ctx.items[section]:
                data = item.data
                if not isinstance(data, dict) or all(k in data for k in required):
                    continue
                base = _full_definition(everywhere, section, item.key, required, ctx)
                if base is None:
                    continue
                origin, base_item = base
                item.data = deep_merge(copy.deepcopy(base_item.data), data)
                notes = [*_notes(base_item.data), *_notes(data)]
                if notes:  # both remarks stay: the base's reasons and the patch's
                    item.data["notes"] = notes
                problems.append(
                    Problem(
                        f"{item_name(item)} extends the definition in {origin} "
                        f"(line {base_item.line}); the fields given here replace its fields",
                        item.line,
                        severity="info",
                    )
                )


def _notes(data: dict) -> list:
    given = data.get("notes")
    return [given] if isinstance(given, str) else given if isinstance(given, list) else []


def _full_definition(everywhere, section: str, key, required: list[str], ctx: Context):
    for other in everywhere:
        if other is ctx:
            continue
        for item in other.items[section]:
            data = item.data
            if item.key == key and isinstance(data, dict) and all(k in data for k in required):
                return other.name, item
    return None


# --- policy keyed by chain name ----------------------------------------------

_CHAIN_KEY = re.compile(r"^(?:chain|scope)[ _-]?(?P<label>[A-Za-z]{1,2}|\d+)$", re.I)


def split_policy_by_chain(everywhere: list[Context], problems: list[Problem]) -> None:
    """Move ``policy`` entries keyed by a chain name to that chain's own policy.

    ``per_chain: {chain_A: {...}}``, ``per_step: {chain_A: {...}}`` and
    ``policy: {chain_A: {...}}`` become a policy item of the chain named
    ``A`` (by its label or id); the rest of the block stays shared.
    """
    chains = [c for c in everywhere if c.label or c.heading]
    for ctx in everywhere:
        for item in ctx.items["policy"]:
            if not isinstance(item.data, dict):
                continue
            for inner in (("per_chain",), ("per_step",), ()):
                body = item.data.get(inner[0]) if inner else item.data
                if not isinstance(body, dict):
                    continue
                for key in list(body):
                    target = _chain_named(str(key), chains)
                    if target is None or key in EFFECTS or not isinstance(body[key], dict):
                        continue
                    value = body.pop(key)
                    fragment = {inner[0]: value} if inner else value
                    target.items["policy"].append(_policy_item(item, (*inner, key), fragment))
                    line, column = item.where.get((*item.path, *inner, key), (item.line, None))
                    name = ".".join(map(str, (*inner, key)))
                    message = f"policy entry {name!r} applies to chain {target.name!r} only"
                    problems.append(Problem(message, line, column, severity="info"))


def _chain_named(key: str, chains: list[Context]) -> Context | None:
    m = _CHAIN_KEY.match(key)
    for ctx in chains:
        if key == ctx.name or (m and ctx.label and m["label"].upper() == ctx.label):
            return ctx
    return None


def _policy_item(item: Item, keyed: tuple, fragment: dict) -> Item:
    """A policy item of ``fragment`` whose locations are those of ``item`` at ``keyed``."""
    prefix = (*item.path, *keyed)
    kept = (*item.path, *keyed[:-1])
    where = {
        (*kept, *k[len(prefix) :]): v for k, v in item.where.items() if k[: len(prefix)] == prefix
    }
    line = item.where.get(prefix, (item.line,))[0]
    return Item("policy", fragment, where, item.path, line)


# --- references --------------------------------------------------------------


def deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _verdicts_in(obj: Any) -> Iterator[Verdict]:
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


def references(element: Any) -> Iterator[tuple[str, str, str]]:
    """``(section, id, reach)`` an element refers to, for copying definitions in.

    ``reach`` is ``"any"`` when the definition may come from another scope
    (handles and gates used, compensation and probe steps named), and
    ``"shared"`` when only the shared part may supply it (verdict targets,
    a handle's minter and refresh).
    """
    for verdict in _verdicts_in(element):
        if verdict.to:
            yield "actions", verdict.to, "shared"
        if verdict.gate:
            yield "gates", verdict.gate, "any"
    if isinstance(element, Handle):
        yield from _handle_references(element)
    elif isinstance(element, Action):
        yield from _action_references(element)


def _handle_references(handle: Handle) -> Iterator[tuple[str, str, str]]:
    # Parents are not followed: a handle's lineage before the chain got it
    # is the business of the chain that made it.
    if handle.minted_by:
        yield "actions", handle.minted_by, "shared"
    if handle.staleness and handle.staleness.refresh:
        yield "actions", handle.staleness.refresh, "shared"


def _action_references(action: Action) -> Iterator[tuple[str, str, str]]:
    for handle in (*action.input.handles, *action.output.handles):
        yield "handles", handle, "any"
    if action.mutates:
        yield "handles", action.mutates, "any"
    if action.entry_gate:
        yield "gates", action.entry_gate, "any"
    if action.confirmation and action.confirmation.probe:
        yield "actions", action.confirmation.probe, "any"
    for step in compensators(action):
        yield "actions", step, "any"
