"""How the scopes of one compile document share definitions.

A compile document writes several chains that share a prefix: a later
scope lists only its "additions/overrides", names steps of an earlier one,
says "same rows A1–A3", keys policy numbers by chain name. This module
holds the rules that turn that sharing into complete chains, all over
:class:`~.md_items.Context` objects: :func:`closure` copies in the handles,
actions and gates a chain refers to but lacks; :func:`follow_rows` brings
along the verdict rows of the scope those actions came from;
:func:`extend_partial_definitions` completes an element written as a patch
of another; :func:`split_policy_by_chain` hands policy entries keyed by a
chain name (``per_chain: {chain_A: {...}}``) to that chain alone.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from ..errors import Problem
from ..model import Action, Handle, compensators
from ..verdicts import Verdict
from .md_items import MODELS, Context, Item, item_name

__all__ = [
    "closure",
    "deep_merge",
    "extend_partial_definitions",
    "follow_rows",
    "references",
    "split_policy_by_chain",
]

Copied = dict[tuple[str, str], list[str]]  # (section, origin scope) → ids


def closure(own: dict, pools: list[Context], used: set[int], start: list | None = None) -> Copied:
    """Copy in the handles, actions and gates ``own`` refers to but lacks.

    Walks from ``start`` (default: every element of ``own``); copied elements
    bring in their own references. The first pool that defines an id wins.
    """
    copied: Copied = {}
    have = {s: {i.value.id for i in own[s]} for s in ("handles", "actions", "gates")}
    # Rows bring in what their verdicts name, not the steps their scope
    # names: a shared row may list steps of several chains.
    sections = ("handles", "actions", "gates", "verdict_table")
    queue = list(start) if start is not None else [i.value for s in sections for i in own[s]]
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


def follow_rows(own: dict, copied: Copied, pools: list[Context]) -> tuple[list[Item], Copied]:
    """The verdict rows of the scopes actions were copied from that apply here.

    A row comes along when its step scope names a copied action (its steps
    narrowed to the ones this chain has) or when it is a ``consumers_of`` row
    of a handle this chain has. Rows whose id the chain already has are not
    taken twice.
    """
    by_name = {p.name: p for p in pools}
    steps = {i.value.id for i in own["actions"]}
    handles = {i.value.id for i in own["handles"]}
    row_ids = {i.value.id for i in own["verdict_table"] if i.value.id}
    taken: list[Item] = []
    listed: Copied = {}
    for (section, origin), ids in copied.items():
        if section != "actions" or origin not in by_name:
            continue
        for item in by_name[origin].items["verdict_table"]:
            row = _narrowed(item.value, set(ids), steps, handles)
            if row is None or (row.id and row.id in row_ids):
                continue
            row_ids.add(row.id)
            taken.append(
                Item("verdict_table", None, item.where, item.path, item.line, row.id, row, True)
            )
            listed.setdefault(("verdict rows", origin), []).append(row.id or f"line {item.line}")
    return taken, listed


def _narrowed(row: Any, copied: set[str], steps: set[str], handles: set[str]) -> Any:
    if row is None:
        return None
    scope = row.scope
    if set(scope.steps) & copied:
        kept = {"steps": [s for s in scope.steps if s in steps]}
    elif scope.consumers_of and set(scope.consumers_of) <= handles and not scope.steps:
        kept = {}
    else:
        return None
    return row.model_copy(update={"scope": scope.model_copy(update=kept)}, deep=True)


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
_EFFECTS = {"read", "mint", "commit", "compensate", "select"}


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
                    if target is None or key in _EFFECTS or not isinstance(body[key], dict):
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


def references(element: Any) -> Iterator[tuple[str, str]]:
    """``(section, id)`` pairs an element refers to (for copying definitions in)."""
    for verdict in _verdicts_in(element):
        if verdict.to:
            yield "actions", verdict.to
        if verdict.gate:
            yield "gates", verdict.gate
    if isinstance(element, Handle):
        yield from _handle_references(element)
    elif isinstance(element, Action):
        yield from _action_references(element)


def _handle_references(handle: Handle) -> Iterator[tuple[str, str]]:
    if handle.minted_by:
        yield "actions", handle.minted_by
    for parent in handle.derived_from:
        yield "handles", parent
    if handle.staleness and handle.staleness.refresh:
        yield "actions", handle.staleness.refresh


def _action_references(action: Action) -> Iterator[tuple[str, str]]:
    for handle in (*action.input.handles, *action.output.handles):
        yield "handles", handle
    if action.mutates:
        yield "handles", action.mutates
    if action.entry_gate:
        yield "gates", action.entry_gate
    if action.confirmation and action.confirmation.probe:
        yield "actions", action.confirmation.probe
    for step in compensators(action):
        yield "actions", step
