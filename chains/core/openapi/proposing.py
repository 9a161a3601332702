"""Chain actions from the operations a person chose, with the effects they confirmed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ..errors import DocumentError, Problem
from ..model import COMMIT_CLASS_EFFECTS, EFFECTS, Effect
from .reading import Operation

__all__ = ["confirmed_effects", "propose_actions"]


def confirmed_effects(effects: Mapping[str, str]) -> dict[str, Effect]:
    """The effects a person confirmed, by operation id; :class:`DocumentError` naming
    each one that is not an effect of the model.

    >>> try:
    ...     confirmed_effects({"refund": "compensate", "cancel": "undo"})
    ... except DocumentError as exc:
    ...     print(exc.problems[0].message)
    cancel: 'undo' is not an effect (read, mint, commit, compensate, select)
    """
    known: dict[str, Effect] = {}
    wrong = []
    for op, effect in effects.items():
        if effect in EFFECTS:
            known[op] = cast(Effect, effect)
        else:
            wrong.append(Problem(f"{op}: {effect!r} is not an effect ({', '.join(EFFECTS)})"))
    if wrong:
        raise DocumentError(wrong)
    return known


def propose_actions(
    operations: Iterable[Operation],
    chosen: Iterable[str],
    effects: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Chain actions (documents) for the ``chosen`` operation ids, in the document's order.

    ``effects`` overrides a guessed effect per id (what the person confirmed);
    one that is not an effect is refused (:func:`confirmed_effects`).
    """
    wanted = set(chosen)
    given = confirmed_effects(effects or {})
    actions = []
    for op in operations:
        if op.id not in wanted:
            continue
        effect = given.get(op.id, op.effect)
        action: dict[str, Any] = {
            "id": op.id,
            "description": f"{op.method.upper()} {op.path}"
            + (f": {op.summary}" if op.summary else ""),
            "effect": effect,
        }
        if op.fields:
            action["input"] = {"intent": {name: {} for name in op.fields}}
        if effect in COMMIT_CLASS_EFFECTS:
            action["idempotency"] = {"mode": op.idempotency}
        if op.errors:
            action["documented_errors"] = list(op.errors)
        action["http"] = _binding(op, keyed=effect in COMMIT_CLASS_EFFECTS)
        actions.append(action)
    unknown = sorted(wanted - {op.id for op in operations})
    if unknown:
        raise DocumentError([Problem(f"no operation {name} in the document") for name in unknown])
    return actions


def _binding(op: Operation, keyed: bool) -> dict[str, Any]:
    """The HTTP binding of the action proposed for ``op`` (docs/format.md).

    >>> op = Operation("get_order", "get", "/orders/{id}", "", "read", "", "natural", None,
    ...                ["id"], [], "getOrder", {"id": "path:id"})
    >>> _binding(op, keyed=False)["sends"], _binding(op, keyed=False)["operation_id"]
    ({'id': 'path:id'}, 'getOrder')
    """
    binding: dict[str, Any] = {"method": op.method.upper(), "path": op.path}
    if op.operation_id:
        binding["operation_id"] = op.operation_id
    if keyed and op.idempotency == "keyed" and op.key_header:
        binding["idempotency_header"] = op.key_header
    if op.places:
        binding["sends"] = dict(op.places)
    return binding
