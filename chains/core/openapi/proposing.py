"""Chain actions from the operations a person chose, with the effects they confirmed: alone
(:func:`propose_actions`), as a chain of their own that lints as it is
(:func:`propose_chain`), or as the edits that bring them into a chain that
already has some of them (:func:`edits_onto`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ..errors import DocumentError, Problem
from ..model import COMMIT_CLASS_EFFECTS, EFFECTS, Effect
from .reading import Operation

__all__ = ["confirmed_effects", "edits_onto", "propose_actions", "propose_chain"]


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
        inputs: dict[str, Any] = {}
        if op.fields:
            inputs["intent"] = {name: {"type": op.types.get(name, "string")} for name in op.fields}
        if op.handles:
            inputs["handles"] = list(op.handles)
        if inputs:
            action["input"] = inputs
        if op.mints:
            action["output"] = {"handles": list(op.mints)}
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
    if op.mints:
        binding["reads"] = dict(op.mints)
    return binding


def propose_chain(
    operations: list[Operation],
    chosen: Iterable[str],
    effects: Mapping[str, str] | None = None,
    *,
    chain_id: str = "provider",
    title: str = "",
) -> dict[str, Any]:
    """The chosen operations as a chain document of their own, which lints as it is: each
    handle they send or mint declared, minted by the chosen action whose answer carries
    it, else ``external(...)`` naming the call of the document that makes it.

    >>> from chains.core.openapi import read_openapi
    >>> doc = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": {
    ...     "/orders": {"post": {"operationId": "createOrder", "responses": {"201": {
    ...         "description": "made"}}}},
    ...     "/orders/{id}": {"get": {"operationId": "getOrder", "parameters": [
    ...         {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
    ...         "responses": {"200": {"description": "the order"}}}}}}
    >>> import json
    >>> chain = propose_chain(read_openapi(json.dumps(doc)), ["get_order"])
    >>> chain["handles"]
    [{'id': 'order_id', 'minted_by': 'external(POST /orders)'}]
    """
    actions = propose_actions(operations, chosen, effects)
    minted: dict[str, str] = {}
    for action in actions:
        for handle in action.get("output", {}).get("handles", []):
            if handle in minted:  # one minter per handle: the first chosen one
                action["output"]["handles"].remove(handle)
                action["http"].get("reads", {}).pop(handle, None)
            else:
                minted[handle] = action["id"]
    makers = {h: f"{op.method.upper()} {op.path}" for op in operations for h in op.mints}
    used = [h for a in actions for h in a.get("input", {}).get("handles", [])]
    handles = [
        {"id": h, "minted_by": minted.get(h) or f"external({makers.get(h, 'the provider')})"}
        for h in dict.fromkeys([*minted, *used])
    ]
    chain: dict[str, Any] = {"id": chain_id}
    if title:
        chain["title"] = title
    return {**chain, "handles": handles, "actions": actions}


def edits_onto(
    chain: Mapping[str, Any],
    proposal: Mapping[str, Any],
    renames: Mapping[str, str] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The edits (``edit.apply`` operations and arguments) that bring a proposal
    (:func:`propose_chain`) into ``chain`` (a chain document).

    A proposed action the chain already has gets its binding and documented
    errors, and keeps everything else: the same method and path as its
    binding, or its id given by ``renames`` (proposed id -> the chain's; an
    empty one adds the proposal as a new action even where its call is bound).
    Names it sends that the action does not have are left for the lint to
    show, except one path parameter when the action has one handle that its
    binding sends nowhere, which is taken to be it (and likewise one handle
    the answer carries). The other actions are added, then the handles the
    chain lacks.
    """
    renames = dict(renames or {})
    existing = {str(a["id"]): a for a in chain.get("actions", [])}
    by_call = {
        (str(a["http"]["method"]).upper(), str(a["http"]["path"])): str(a["id"])
        for a in existing.values()
        if isinstance(a.get("http"), Mapping)
    }
    unknown = sorted(set(renames.values()) - set(existing) - {""})
    if unknown:
        raise DocumentError([Problem(f"the chain has no action {name}") for name in unknown])
    edits: list[tuple[str, dict[str, Any]]] = []
    have = {str(h["id"]) for h in chain.get("handles", [])}
    attached = set()
    for action in proposal.get("actions", []):
        http = action["http"]
        if renames.get(action["id"]) == "":  # "a new action", though its call is bound
            continue
        target = renames.get(action["id"]) or by_call.get((http["method"], http["path"]))
        if target is None:
            continue
        attached.add(action["id"])
        changes: dict[str, Any] = {"http": _fitted(http, existing[target])}
        errors = [
            *existing[target].get("documented_errors", []),
            *action.get("documented_errors", []),
        ]
        if errors:
            changes["documented_errors"] = list(dict.fromkeys(errors))
        edits.append(("update_action", {"id": target, "fields": changes}))
    # The actions first: a handle's minted_by must name one the chain has.
    edits += [
        ("add_action", dict(a)) for a in proposal.get("actions", []) if a["id"] not in attached
    ]
    for handle in proposal.get("handles", []):
        needed = any(
            handle["id"]
            in [*a.get("input", {}).get("handles", []), *a.get("output", {}).get("handles", [])]
            for a in proposal.get("actions", [])
            if a["id"] not in attached
        )
        if needed and handle["id"] not in have:
            edits.append(("add_handle", dict(handle)))
    return edits


def _fitted(http: dict[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    """``http`` with its sends named as ``action`` names them, where that is certain."""
    inputs = action.get("input") or {}
    names = {
        *inputs.get("handles", []),
        *(inputs.get("intent") or {}),
        *(action.get("request_invariants") or {}),
    }
    sends = dict(http.get("sends") or {})
    strange = [n for n, place in sends.items() if n not in names and place.startswith("path:")]
    unsent = [h for h in inputs.get("handles", []) if h not in sends]
    if len(strange) == 1 and len(unsent) == 1:
        sends[unsent[0]] = sends.pop(strange[0])
    sends = {n: place for n, place in sends.items() if n in names or place.startswith("path:")}
    out = {**http, "sends": sends} if sends else {k: v for k, v in http.items() if k != "sends"}
    minted = list((action.get("output") or {}).get("handles", []))
    reads = dict(http.get("reads") or {})
    strange = [h for h in reads if h not in minted]
    unread = [h for h in minted if h not in reads]
    if len(strange) == 1 and len(unread) == 1:
        reads[unread[0]] = reads.pop(strange[0])
    reads = {h: place for h, place in reads.items() if h in minted}
    if reads:
        out["reads"] = reads
    else:
        out.pop("reads", None)
    return out
