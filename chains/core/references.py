"""Every place in a chain document that names an action, a handle or a gate.

An edit that renames an element rewrites each place (:func:`rename`), and
one that deletes it first asks which places still use it
(:func:`places_using`).
The places are those the model knows of: ids in lists and fields, and the
``to`` and ``gate`` arguments of verdict expressions, read and written
through :mod:`chains.core.verdicts`, never by text substitution. Prose such
as a precondition's ``when`` is not a reference. Works on the document form
(plain dicts and lists) and changes it in place; :mod:`chains.core.edit`
copies the document first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .verdicts import format_verdict, parse_verdict

__all__ = [
    "Slot",
    "action_slots",
    "gate_slots",
    "handle_slots",
    "places_using",
    "rename",
    "row_place",
]

Data = dict[str, Any]


def row_place(row: Data, index: int) -> str:
    return f"verdict_table.{row['id']}" if row.get("id") else f"verdict_table[#{index + 1}]"


@dataclass
class Slot:
    """One place in the document that names an element.

    ``part`` is ``to`` or ``gate`` when the place holds a verdict expression;
    ``cleanable`` marks list entries that deleting the named element may drop.
    """

    place: str
    holder: Any
    key: Any
    part: str | None = None
    cleanable: bool = False

    def get(self) -> Any:
        value = self.holder[self.key]
        if self.part is None:
            return value
        return getattr(parse_verdict(value), self.part)

    def set(self, new: str) -> None:
        if self.part is None:
            self.holder[self.key] = new
        else:
            verdict = parse_verdict(self.holder[self.key])
            self.holder[self.key] = format_verdict(verdict.model_copy(update={self.part: new}))


def key_slot(place: str, holder: Any, key: str) -> Iterator[Slot]:
    if isinstance(holder, dict) and key in holder:
        yield Slot(place, holder, key)


def list_slots(place: str, items: Any, cleanable: bool = False) -> Iterator[Slot]:
    for i in range(len(items or [])):
        yield Slot(place, items, i, cleanable=cleanable)


def verdict_slots(data: Data, part: str) -> Iterator[Slot]:
    """Every verdict expression of the document, for its ``to`` or ``gate`` argument."""
    for a in data.get("actions") or []:
        where = f"actions.{a['id']}"
        output = a.get("output") or {}
        for key, name in (("empty", "route"), ("business_expiry", "on_expiry")):
            if isinstance(output.get(key), dict) and name in output[key]:
                yield Slot(f"{where}.output.{key}.{name}", output[key], name, part)
        for j, pre in enumerate(a.get("preconditions") or []):
            yield Slot(f"{where}.preconditions[{j}].verdict", pre, "verdict", part)
        revocation = a.get("revocation") or {}
        if "route" in revocation:
            yield Slot(f"{where}.revocation.route", revocation, "route", part)
        for j, rung in enumerate((a.get("compensation") or {}).get("ladder") or []):
            if "else" in rung:
                yield Slot(f"{where}.compensation.ladder[{j}].else", rung, "else", part)
    for g in data.get("gates") or []:
        where = f"gates.{g['id']}"
        for name, outcome in (g.get("outcomes") or {}).items():
            yield Slot(f"{where}.outcomes.{name}", outcome, "verdict", part)
        for key in ("timeout", "payload_expiry"):
            if isinstance(g.get(key), dict) and "verdict" in g[key]:
                yield Slot(f"{where}.{key}.verdict", g[key], "verdict", part)
    for i, row in enumerate(data.get("verdict_table") or []):
        yield Slot(f"{row_place(row, i)}.verdict", row, "verdict", part)


def action_slots(data: Data) -> Iterator[Slot]:
    for h in data.get("handles") or []:
        where = f"handles.{h['id']}"
        yield from key_slot(f"{where}.minted_by", h, "minted_by")
        yield from key_slot(f"{where}.staleness.refresh", h.get("staleness"), "refresh")
    for a in data.get("actions") or []:
        where = f"actions.{a['id']}"
        yield from key_slot(f"{where}.confirmation.probe", a.get("confirmation"), "probe")
        comp = a.get("compensation") or {}
        yield from key_slot(f"{where}.compensation.action", comp, "action")
        yield from key_slot(f"{where}.compensation.replaced_by", comp, "replaced_by")
        yield from list_slots(f"{where}.compensation.chain", comp.get("chain"))
        for j, rung in enumerate(comp.get("ladder") or []):
            yield from key_slot(f"{where}.compensation.ladder[{j}].action", rung, "action")
            yield from list_slots(f"{where}.compensation.ladder[{j}].chain", rung.get("chain"))
    for i, row in enumerate(data.get("verdict_table") or []):
        steps = (row.get("scope") or {}).get("steps")
        yield from list_slots(f"{row_place(row, i)}.scope.steps", steps)
    order = ((data.get("policy") or {}).get("per_chain") or {}).get("compensation_order")
    if isinstance(order, list):
        yield from list_slots("policy.per_chain.compensation_order", order)
    yield from verdict_slots(data, "to")


def handle_slots(data: Data) -> Iterator[Slot]:
    for h in data.get("handles") or []:
        where = f"handles.{h['id']}.derived_from"
        yield from list_slots(where, h.get("derived_from"), cleanable=True)
    for a in data.get("actions") or []:
        where = f"actions.{a['id']}"
        inputs = (a.get("input") or {}).get("handles")
        outputs = (a.get("output") or {}).get("handles")
        yield from list_slots(f"{where}.input.handles", inputs, cleanable=True)
        yield from list_slots(f"{where}.output.handles", outputs, cleanable=True)
        yield from key_slot(f"{where}.mutates", a, "mutates")
    for i, row in enumerate(data.get("verdict_table") or []):
        consumers = (row.get("scope") or {}).get("consumers_of")
        yield from list_slots(f"{row_place(row, i)}.scope.consumers_of", consumers)
    for i, pair in enumerate(data.get("independence") or []):
        yield from list_slots(f"independence[{i}].handles", pair.get("handles"), cleanable=True)


def gate_slots(data: Data) -> Iterator[Slot]:
    for a in data.get("actions") or []:
        yield from key_slot(f"actions.{a['id']}.entry_gate", a, "entry_gate")
    yield from verdict_slots(data, "gate")


def rename(slots: Iterator[Slot], old: str, new: str) -> None:
    for slot in list(slots):
        if slot.get() == old:
            slot.set(new)


def places_using(slots: Iterator[Slot], ident: str, own: str) -> list[Slot]:
    """The slots naming ``ident`` outside the element itself (places under ``own``)."""
    return [s for s in slots if s.get() == ident and not s.place.startswith(own + ".")]
