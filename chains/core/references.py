"""Every place in a chain document that names an action, a handle or a gate.

An edit that renames an element rewrites each place (:func:`rename`), and
one that deletes it first asks which places still use it
(:func:`places_using`).
The places are those the model knows of: ids in lists and fields, and the
``to`` and ``gate`` arguments of verdict expressions, read and written
through :mod:`chains.core.verdicts`, never by text substitution; each
is named by its :class:`~chains.core.paths.ElementPath`. Prose such
as a precondition's ``when`` is not a reference. Works on the document form
(plain dicts and lists) and changes it in place; :mod:`chains.core.edit`
copies the document first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .paths import ElementPath
from .verdicts import format_verdict, parse_verdict

__all__ = [
    "Slot",
    "action_slots",
    "gate_slots",
    "handle_slots",
    "places_using",
    "rename",
]

Data = dict[str, Any]


@dataclass
class Slot:
    """One place in the document that names an element.

    ``part`` is ``to`` or ``gate`` when the place holds a verdict expression;
    ``cleanable`` marks list entries that deleting the named element may drop.
    """

    place: ElementPath
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


def key_slot(place: ElementPath, holder: Any, key: str) -> Iterator[Slot]:
    if isinstance(holder, dict) and key in holder:
        yield Slot(place, holder, key)


def list_slots(place: ElementPath, items: Any, cleanable: bool = False) -> Iterator[Slot]:
    for i in range(len(items or [])):
        yield Slot(place, items, i, cleanable=cleanable)


def _rows(data: Data) -> Iterator[tuple[ElementPath, Data]]:
    rows = ElementPath.root("verdict_table")
    for i, row in enumerate(data.get("verdict_table") or []):
        yield rows.item_at(i, row), row


def _steps(data: Data, section: str) -> Iterator[tuple[ElementPath, Data]]:
    items = ElementPath.root(section)
    for i, item in enumerate(data.get(section) or []):
        yield items.item_at(i, item), item


def verdict_slots(data: Data, part: str) -> Iterator[Slot]:
    """Every verdict expression of the document, for its ``to`` or ``gate`` argument."""
    for where, a in _steps(data, "actions"):
        output = a.get("output") or {}
        for key, name in (("empty", "route"), ("business_expiry", "on_expiry")):
            if isinstance(output.get(key), dict) and name in output[key]:
                yield Slot(where.field("output", key, name), output[key], name, part)
        for j, pre in enumerate(a.get("preconditions") or []):
            place = where.field("preconditions").item(j + 1).field("verdict")
            yield Slot(place, pre, "verdict", part)
        revocation = a.get("revocation") or {}
        if "route" in revocation:
            yield Slot(where.field("revocation", "route"), revocation, "route", part)
        for j, rung in enumerate((a.get("compensation") or {}).get("ladder") or []):
            if "else" in rung:
                place = where.field("compensation", "ladder").item(j + 1).field("else")
                yield Slot(place, rung, "else", part)
    for where, g in _steps(data, "gates"):
        for name, outcome in (g.get("outcomes") or {}).items():
            yield Slot(where.field("outcomes").field(name), outcome, "verdict", part)
        for key in ("timeout", "payload_expiry"):
            if isinstance(g.get(key), dict) and "verdict" in g[key]:
                yield Slot(where.field(key, "verdict"), g[key], "verdict", part)
    for where, row in _rows(data):
        yield Slot(where.field("verdict"), row, "verdict", part)


def action_slots(data: Data) -> Iterator[Slot]:
    for where, h in _steps(data, "handles"):
        yield from key_slot(where.field("minted_by"), h, "minted_by")
        yield from key_slot(where.field("staleness", "refresh"), h.get("staleness"), "refresh")
    for where, a in _steps(data, "actions"):
        yield from key_slot(where.field("confirmation", "probe"), a.get("confirmation"), "probe")
        comp = a.get("compensation") or {}
        at = where.field("compensation")
        yield from key_slot(at.field("action"), comp, "action")
        yield from key_slot(at.field("replaced_by"), comp, "replaced_by")
        yield from list_slots(at.field("chain"), comp.get("chain"))
        for j, rung in enumerate(comp.get("ladder") or []):
            step = at.field("ladder").item(j + 1)
            yield from key_slot(step.field("action"), rung, "action")
            yield from list_slots(step.field("chain"), rung.get("chain"))
    for where, row in _rows(data):
        steps = (row.get("scope") or {}).get("steps")
        yield from list_slots(where.field("scope", "steps"), steps)
    order = ((data.get("policy") or {}).get("per_chain") or {}).get("compensation_order")
    if isinstance(order, list):
        yield from list_slots(ElementPath.root("policy", "per_chain", "compensation_order"), order)
    yield from verdict_slots(data, "to")


def handle_slots(data: Data) -> Iterator[Slot]:
    for where, h in _steps(data, "handles"):
        yield from list_slots(where.field("derived_from"), h.get("derived_from"), cleanable=True)
    for where, a in _steps(data, "actions"):
        inputs = (a.get("input") or {}).get("handles")
        outputs = (a.get("output") or {}).get("handles")
        yield from list_slots(where.field("input", "handles"), inputs, cleanable=True)
        yield from list_slots(where.field("output", "handles"), outputs, cleanable=True)
        yield from key_slot(where.field("mutates"), a, "mutates")
    for where, row in _rows(data):
        consumers = (row.get("scope") or {}).get("consumers_of")
        yield from list_slots(where.field("scope", "consumers_of"), consumers)
    for where, pair in _steps(data, "independence"):
        yield from list_slots(where.field("handles"), pair.get("handles"), cleanable=True)


def gate_slots(data: Data) -> Iterator[Slot]:
    for where, a in _steps(data, "actions"):
        yield from key_slot(where.field("entry_gate"), a, "entry_gate")
    yield from verdict_slots(data, "gate")


def rename(slots: Iterator[Slot], old: str, new: str) -> None:
    for slot in list(slots):
        if slot.get() == old:
            slot.set(new)


def places_using(slots: Iterator[Slot], ident: str, own: ElementPath) -> list[Slot]:
    """The slots naming ``ident`` outside the element itself (places under ``own``)."""
    return [s for s in slots if s.get() == ident and not s.place.is_within(own)]
