"""What can happen next to a run: every outside input the chain tells apart, labelled.

This module owns the list both the model checker and the simulator page
offer at each point of a run. At a dispatch it is every observation the
chain distinguishes for that step, success first: each valid-empty, business
expiry, each domain row's signals in scope, each staleness signal of a
consumed handle, auto-repair triggers, the generic faults (timeout, 5xx,
429, an unknown code), each precondition and each revocation watch. At a
selection it is every option, at a gate every outcome (params taken from
what was presented), its timeout and a model trying to answer, while
reconciling every probe result and the waits past the async deadline and
the sweep, and a valid repair where one waits.

Each :class:`Choice` carries the scenario event that makes it happen, a
label a person reads, and whether it counts as a *fault*: the plain success
choice at each point (success, the first option, the accepting outcome,
landed, the repair) costs nothing, every other choice is one fault. Nothing
here decides what the run does with an input; that is the runtime's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..memo import remember
from ..model import Action, ChainSpec, Gate
from ..paths import ElementPath
from ..signals import conjuncts, scope_applies_to
from ..verdicts import format_verdict
from .classifier import row_label, rows_for
from .runtime import Run
from .state import Observation, Option, Snapshot

__all__ = [
    "OPTIONS",
    "UNKNOWN_CODE",
    "Choice",
    "choices",
    "default_intent",
    "observation_choices",
    "probe_age",
    "probe_choices",
    "revocation_watches",
]

UNKNOWN_CODE = "UNMAPPED_ERROR"
OPTIONS = [
    Option(id="opt_1", key={"rank": 1}),
    Option(id="opt_2", key={"rank": 2}),
]


@dataclass(frozen=True)
class Choice:
    """One input the run can receive next, as a scenario event.

    ``group`` sorts choices for a person (success, empty, expiry, row, stale,
    auto_repair, fault, precondition, revocation, option, outcome, timeout,
    model, probe, wait, repair); ``detail`` says where the chain declares it.
    """

    event: dict[str, Any]
    fault: bool
    label: str = ""
    group: str = ""
    detail: str = ""
    # An ``observe`` event's observation, made once by a caller that keeps its choices
    # (the explorer): the runtime never changes an observation, so one serves every run.
    observation: Observation | None = field(default=None, compare=False, repr=False)


def choices(spec: ChainSpec, run: Run) -> list[Choice]:
    """Every input the chain tells apart for what ``run`` waits on; empty once it has finished.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "s", "effect": "read"}]})
    >>> [c.label for c in choices(doc, Run.start(doc))][:3]
    ['success', 'timeout', 'HTTP 503']
    """
    w = run.snapshot.waiting
    if run.finished:
        return []
    if w.kind == "observe" and w.step:
        return observation_choices(spec, run.snapshot, spec.action(w.step))
    if w.kind == "select":
        return [
            Choice({"select": o.id}, i > 0, f"pick {o.id}", "option", _key_text(o))
            for i, o in enumerate(w.options)
        ]
    if w.kind == "answer" and w.gate:
        return _answers(spec, run.snapshot, spec.gate(w.gate))
    if w.kind == "probe" and w.step:
        return probe_choices(spec, run.snapshot, spec.action(w.step))
    if w.kind == "repair":
        fields = {f: f"repaired_{f}" for f in w.fields}
        label = "propose a repair of " + ", ".join(w.fields)
        return [Choice({"propose": {"kind": "repair", "fields": fields}}, False, label, "repair")]
    return []


def observation_choices(spec: ChainSpec, snapshot: Snapshot, action: Action | None) -> list[Choice]:
    """Every observation of ``action`` the chain tells apart now, success first.

    Two signals that would be observed the same way are offered once, under
    the first label.
    """
    if action is None:
        return [Choice({"observe": {}}, False, "success", "success")]
    options = list(OPTIONS) if _feeds_selection(spec, action) else []
    found: list[tuple[Observation, str, str, str]] = []
    success = "success" + (f" ({len(options)} options)" if options else "")
    found.append((Observation(options=options), success, "success", ""))
    expiry = action.output.business_expiry
    if expiry is not None:
        # The deadline is now: it has passed by the next arrival.
        found.append(
            (
                Observation(options=options, payload=_nested(expiry.field, snapshot.clock)),
                f"success, {expiry.field} due now",
                "expiry",
                f"output.business_expiry of {action.id}",
            )
        )
    empty = action.output.empty
    if empty is not None and empty.valid and empty.detect:
        found.append(
            (
                _observation_for(empty.detect),
                f"valid empty: {empty.detect}",
                "empty",
                f"output.empty of {action.id}",
            )
        )
    for row in rows_for(spec, action, snapshot.variant):
        where = f"row {row_label(spec, row)} → {format_verdict(row.verdict)}"
        found += [(_observation_for(atom), atom, "row", where) for atom in row.signal]
    for hid in action.input.handles:
        handle = spec.handle(hid) if hid in snapshot.handles else None
        if handle is not None and handle.staleness is not None:
            stale_at = str(ElementPath.handle(hid).field("staleness"))
            found += [
                (_observation_for(atom), f"{hid} stale: {atom}", "stale", stale_at)
                for atom in handle.staleness.detect
            ]
    found += [
        (_observation_for(ar.trigger), ar.trigger, "auto_repair", f"auto_repairs of {action.id}")
        for ar in action.auto_repairs
    ]
    found += [
        (Observation(transport="timeout"), "timeout", "fault", "generic"),
        (Observation(transport="http:503"), "HTTP 503", "fault", "generic"),
        (Observation(transport="http:429"), "HTTP 429", "fault", "generic"),
        (
            Observation(transport="http:400", code=UNKNOWN_CODE),
            f"unknown code {UNKNOWN_CODE}",
            "fault",
            "a code the chain never lists",
        ),
    ]
    found += [
        (
            Observation(options=options, predicates=[pre.when]),
            pre.when,
            "precondition",
            f"preconditions of {action.id}",
        )
        for pre in action.preconditions
    ]
    found += [
        (_observation_for(atom), atom, "revocation", "revocation.watch of a landed commit")
        for atom in revocation_watches(spec, snapshot)
    ]
    unique: dict[str, Choice] = {}
    for obs, label, group, detail in found:
        event = {"observe": obs.model_dump(exclude_defaults=True)}
        unique.setdefault(obs.model_dump_json(), Choice(event, bool(unique), label, group, detail))
    return list(unique.values())


def default_intent(spec: ChainSpec) -> dict[str, Any]:
    """A value for every required intent field; the runtime matches predicates by name only."""
    intent: dict[str, Any] = {}
    for action in spec.actions:
        for name, wanted in action.input.intent.items():
            if wanted.required and name not in intent:
                intent[name] = 1 if wanted.type in ("int", "integer") else f"{name}_1"
    return intent


def revocation_watches(spec: ChainSpec, snapshot: Snapshot) -> list[str]:
    """The signals the revocation watches of landed commits still listen for."""
    atoms: list[str] = []
    for lc in [*snapshot.commits_landed, *snapshot.compensators_landed]:
        action = spec.action(lc.step)
        rev = action.revocation if action else None
        if rev is None or lc.revoked:
            continue
        window = rev.window.seconds if rev.window else None
        if window is None or snapshot.clock - lc.at <= window:
            atoms += [a for a in rev.watch if a not in atoms]
    return atoms


def _answers(spec: ChainSpec, snapshot: Snapshot, gate: Gate | None) -> list[Choice]:
    if gate is None or not gate.outcomes:
        return []
    w = snapshot.waiting
    names = list(gate.outcomes)
    accepting = next((n for n in names if gate.outcomes[n].verdict.type == "ok"), names[0])
    out = []
    for name in [accepting, *(n for n in names if n != accepting)]:
        outcome = gate.outcomes[name]
        for i, params in enumerate(_param_sets(outcome.params, w.options, w.payload)):
            answer: dict[str, Any] = {"outcome": name}
            if params:
                answer["params"] = params
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            out.append(
                Choice(
                    {"answer": answer},
                    name != accepting or i > 0,
                    name + (f" ({shown})" if shown else ""),
                    "outcome",
                    f"→ {format_verdict(outcome.verdict)}",
                )
            )
    after = gate.timeout.after.seconds if gate.timeout else None
    if after is None and spec.policy.per_chain.gate_timeout is not None:
        after = spec.policy.per_chain.gate_timeout.seconds
    if after is not None:
        out.append(
            Choice(
                {"wait": float(after) + 1},
                True,
                "let it time out",
                "timeout",
                f"wait {float(after) + 1:g}s, past the gate timeout",
            )
        )
    out.append(
        Choice(
            {"propose": {"kind": "answer", "value": accepting}},
            True,
            f"a model answers {accepting}",
            "model",
            f"audience {gate.audience}",
        )
    )
    return out


def probe_choices(spec: ChainSpec, snapshot: Snapshot, action: Action | None) -> list[Choice]:
    """What a probe of ``action``'s commit can find, and the waits past its deadlines.

    Besides the chain, it reads only ``action`` and :func:`probe_age`.
    """
    out = [
        Choice({"probe": {"result": "landed"}}, False, "landed", "probe"),
        Choice({"probe": {"result": "not_landed"}}, True, "not landed", "probe"),
    ]
    if action is None:
        return out
    for atom, cause in _probe_causes(spec, action):
        out.append(
            Choice(
                {"probe": {"result": "not_landed", "cause": cause}},
                True,
                f"not landed, cause {atom}",
                "probe",
            )
        )
    out.append(Choice({"probe": {"result": "unknown"}}, True, "still unknown", "probe"))
    conf = action.confirmation
    age = probe_age(snapshot, action.id)
    limits = []
    if conf and conf.async_ and conf.async_.deadline and conf.async_.deadline.seconds:
        limits.append(("async deadline", conf.async_.deadline.seconds))
    if conf and conf.sweep and conf.sweep.escalate_after and conf.sweep.escalate_after.seconds:
        limits.append(("sweep escalate_after", conf.sweep.escalate_after.seconds))
    for name, limit in limits:
        if limit - age >= 0:
            wait = float(limit - age) + 1
            out.append(Choice({"wait": wait}, True, f"wait past the {name}", "wait", f"{wait:g}s"))
    return out


def probe_age(snapshot: Snapshot, step: str) -> float:
    """Seconds since the correlation record of ``step``'s last dispatch (0 without one)."""
    record = next((r for r in reversed(snapshot.correlation) if r.step == step), None)
    return snapshot.clock - record.created_at if record else 0.0


def _probe_causes(spec: ChainSpec, action: Action) -> list[tuple[str, dict[str, Any]]]:
    """Each distinct observation a domain row in scope of ``action`` matches, with its atom.

    Depends on the chain alone, so it is kept per chain (:mod:`chains.core.memo`).
    """

    def causes() -> list[tuple[str, dict[str, Any]]]:
        found: dict[str, tuple[str, dict[str, Any]]] = {}
        for row in spec.verdict_table:
            if scope_applies_to(row.scope, action) is True:
                for atom in row.signal:
                    obs = _observation_for(atom)
                    found.setdefault(
                        obs.model_dump_json(), (atom, obs.model_dump(exclude_defaults=True))
                    )
        return list(found.values())

    if spec.action(action.id) is not action:
        return causes()
    return remember(spec, ("probe causes", action.id), causes)


def _feeds_selection(spec: ChainSpec, action: Action) -> bool:
    return any(
        a.effect == "select" and set(a.input.handles) & set(action.output.handles)
        for a in spec.actions
    )


def _key_text(option: Option) -> str:
    return ", ".join(f"{k}={v}" for k, v in option.key.items())


def _nested(path: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    node = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def _observation_for(atom: str) -> Observation:
    """An observation that shows ``atom``: its status, code, webhook, or its predicate by name."""
    transport, code, events, predicate = None, None, [], False
    for part in conjuncts(atom):
        if part.startswith("http:"):
            status = part[5:]
            transport = f"http:{status[0]}03" if status.endswith("xx") else part
        elif part.startswith("code:"):
            code = part[5:]
        elif part.startswith("webhook:"):
            events.append(part[8:])
        elif part in ("timeout", "conn_reset", "conn_drop"):
            transport = part
        else:
            predicate = True
    if transport is None:
        transport = "http:400" if code else "http:200"
    return Observation(
        transport=transport,
        code=code,
        events=events,
        predicates=[atom] if predicate else [],
    )


def _param_sets(
    params: dict[str, Any], options: list[Option], payload: dict[str, Any]
) -> list[dict[str, Any]]:
    """Answer params: each presented option for an option-like param, else one plain value."""
    if not params:
        return [{}]
    sets: list[dict[str, Any]] = [{}]
    for name, kind in params.items():
        listed = payload.get(name)
        if options:
            values: list[Any] = [o.id for o in options]
        elif isinstance(listed, list) and listed:
            values = list(listed)
        else:
            values = [1 if str(kind) in ("int", "integer") else f"{name}_2"]
        sets = [{**s, name: v} for s in sets for v in values]
    return sets
