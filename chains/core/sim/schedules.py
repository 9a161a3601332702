"""Fault schedules for putting a real client through a chain's failures, from the explorer's
own choices.

A *schedule* says what a provider does wrong in one run of a client, on the
wire: at the n-th call of a step, a lost response after the provider applied
it, a timeout before it saw the request, a reset, an error status, a 429 with
``Retry-After``, a provider error code, or the client killed between its
dispatch and its record. The fault harness (``chains.harness``) injects one
schedule per run and audits what the client did.

:func:`schedules` walks the chain's runtime as the explorer does, choosing at
each dispatch of a bound step (one with an HTTP binding) between success and
each signal the chain tells apart there (:func:`~.palette.choices`), within a
fault budget; selections, gate answers and waits are the client's to make,
so the walk takes their plain choice. A timeout of a call is a lost
response or a request the provider never saw depending on what the probe
that follows finds (landed or not landed), which is exactly the difference
between the two. Signals the wire cannot carry without the provider's own
answer (an empty result, a predicate on the payload) are left out. Schedules
are deduplicated by their faults, listed fewest faults first, and capped.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..errors import DocumentError, Problem
from ..model import COMMIT_CLASS_EFFECTS, ChainSpec
from .palette import Choice, choices
from .runtime import Run, SimulationError
from .search import apply_event, fork

__all__ = ["FAULT_KINDS", "MAX_SCHEDULES", "Fault", "FaultKind", "Schedule", "schedules"]

FaultKind = Literal[
    "lost_response", "timeout", "reset", "status", "rate_limited", "code", "kill_client"
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
MAX_SCHEDULES = 5_000
_MAX_DEPTH = 200  # events along one walk: a chain that loops is cut there


_SAID = {
    "lost_response": "response lost after the provider applied it",
    "timeout": "timeout before the provider saw it",
    "reset": "connection reset",
    "kill_client": "client killed after the provider applied it",
}


@dataclass(frozen=True)
class Fault:
    """What goes wrong at the ``dispatch``-th call (from 1) of ``step`` in a run."""

    step: str
    dispatch: int
    kind: FaultKind
    status: int | None = None
    code: str | None = None
    retry_after: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fault:
        return cls(**data)

    def __str__(self) -> str:
        if self.kind == "status":
            what = f"HTTP {self.status}"
        elif self.kind == "rate_limited":
            what = f"HTTP 429, Retry-After {self.retry_after or 0:g} s"
        elif self.kind == "code":
            what = f"HTTP {self.status} {self.code}"
        else:
            what = _SAID[self.kind]
        return f"{self.step} call {self.dispatch}: {what}"


@dataclass(frozen=True)
class Schedule:
    """The faults of one run, in the order the run meets them."""

    faults: tuple[Fault, ...]

    @property
    def label(self) -> str:
        return "; ".join(str(f) for f in self.faults) or "no fault"

    def as_dict(self) -> dict[str, Any]:
        return {"faults": [f.as_dict() for f in self.faults]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schedule:
        return cls(tuple(Fault.from_dict(f) for f in data.get("faults", [])))


def schedules(
    spec: ChainSpec,
    max_faults: int = 1,
    *,
    limit: int = MAX_SCHEDULES,
    sample: int | None = None,
    seed: int = 0,
) -> list[Schedule]:
    """Every distinct schedule of up to ``max_faults`` faults the chain tells apart, fewest
    first; ``sample`` of them (at random, by ``seed``) when given.

    :class:`DocumentError` when no step of the chain is bound to an HTTP call
    (there is nothing to inject into), or past ``limit`` schedules.

    >>> from chains.core.model import ChainSpec
    >>> spec = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "look", "effect": "read", "http": {"method": "GET", "path": "/x"}}]})
    >>> [s.label for s in schedules(spec)][:3]
    ['no fault', 'look call 1: timeout before the provider saw it', 'look call 1: HTTP 503']
    """
    if max_faults < 0:
        raise DocumentError([Problem("max_faults: at least 0")])
    if not any(a.http is not None for a in spec.actions):
        raise DocumentError(
            [Problem("no step of the chain is bound to an HTTP call (http): nothing to inject")]
        )
    found: dict[tuple[Fault, ...], None] = {(): None}
    for faults in _walk(spec, Run.start(spec), max_faults, (), {}, None, 0):
        found.setdefault(faults, None)
        if len(found) > limit:
            raise DocumentError(
                [Problem(f"more than {limit:,} schedules up to {max_faults} faults: sample some")]
            )
    order = {a.id: n for n, a in enumerate(spec.actions)}
    listed = sorted(found, key=lambda f: (len(f), [(order[x.step], x.dispatch) for x in f]))
    if sample is not None and sample < len(listed):
        listed = [listed[0], *random.Random(seed).sample(listed[1:], max(0, sample - 1))]
        listed.sort(key=len)
    return [Schedule(faults) for faults in listed]


def _walk(
    spec: ChainSpec,
    run: Run,
    budget: int,
    faults: tuple[Fault, ...],
    calls: dict[str, int],
    pending: Fault | None,
    depth: int,
) -> Iterator[tuple[Fault, ...]]:
    """The fault tuples of every walk from ``run``; ``pending`` is a timeout whose kind the
    next probe decides (landed: the response was lost; not landed: never seen)."""
    if run.finished or depth > _MAX_DEPTH:
        yield faults + ((pending,) if pending else ())
        return
    waiting = run.snapshot.waiting
    options = choices(spec, run)
    if not options:
        yield faults + ((pending,) if pending else ())
        return
    action = spec.action(waiting.step) if waiting.step else None
    bound = action is not None and action.http is not None
    if waiting.kind == "observe" and bound and waiting.step:
        calls = {**calls, waiting.step: calls.get(waiting.step, 0) + 1}
        flushed = faults + ((pending,) if pending else ())
        if action is not None and action.effect in COMMIT_CLASS_EFFECTS:
            options = [*options, Choice({"crash": True}, True)]  # the client dies, call out
        for choice in options:
            fault = _on_the_wire(choice, waiting.step, calls[waiting.step])
            if choice.fault and (fault is None or budget == 0):
                continue
            timed_out = fault is not None and fault.kind in ("timeout", "kill_client")
            nxt = _applied(spec, run, choice)
            if nxt is None:
                continue
            added = () if fault is None or timed_out else (fault,)
            yield from _walk(
                spec,
                nxt,
                budget - (fault is not None),
                flushed + added,
                calls,
                fault if timed_out else None,
                depth + 1,
            )
        return
    if waiting.kind == "probe" and pending is not None:
        for choice in options:
            result = choice.event.get("probe", {}).get("result")
            kind = {"landed": "lost_response", "not_landed": "timeout"}.get(result or "")
            if pending.kind == "kill_client":  # the proxy forwarded it: the probe finds it
                kind = "kill_client" if result == "landed" else None
            nxt = _applied(spec, run, choice) if kind else None
            if nxt is None or choice.event["probe"].get("cause") is not None:
                continue
            decided = Fault(pending.step, pending.dispatch, kind)  # type: ignore[arg-type]
            yield from _walk(spec, nxt, budget, faults + (decided,), calls, None, depth + 1)
        return
    plain = next((c for c in options if not c.fault), options[0])
    nxt = _applied(spec, run, plain)
    if nxt is None:
        yield faults + ((pending,) if pending else ())
        return
    yield from _walk(spec, nxt, budget, faults, calls, pending, depth + 1)


def _applied(spec: ChainSpec, run: Run, choice: Choice) -> Run | None:
    branch = fork(run)
    try:
        apply_event(spec, branch, choice.event)
    except SimulationError:
        return None
    return branch


def _on_the_wire(choice: Choice, step: str, dispatch: int) -> Fault | None:
    """The fault a proxy injects for an observation the chain tells apart; None for a
    success, or for a signal only the provider's own answer can carry (a predicate)."""
    if choice.event.get("crash"):
        return Fault(step, dispatch, "kill_client")
    seen = choice.event.get("observe")
    if not choice.fault or not isinstance(seen, dict) or seen.get("predicates"):
        return None
    transport = str(seen.get("transport", "http:200"))
    code = seen.get("code")
    if transport == "timeout":
        return Fault(step, dispatch, "timeout")
    if transport in ("conn_reset", "conn_drop"):
        return Fault(step, dispatch, "reset")
    status = int(transport[5:]) if transport[5:].isdigit() else 0
    if status < 400:
        return None
    if code:
        return Fault(step, dispatch, "code", status=status, code=str(code))
    if status == 429:
        return Fault(step, dispatch, "rate_limited", status=429, retry_after=1.0)
    return Fault(step, dispatch, "status", status=status)
