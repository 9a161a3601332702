"""The trace audit's inputs a trace did not record, inferred where the next call makes them certain.

An HTTP trace holds calls only: no pick at a selection step, no gate
answer, and a probe is just another call. When the audit's shadow run waits
for such an input and the trace's next event is a dispatch of another step,
:func:`needed` looks, on copies of the run, for the picks, gate answers and
probe results that bring it to wait for exactly that dispatch; each one it
finds is reported as an :class:`Inferred` input, with the event that made
it certain. A gate is answered as late as the trace allows before its
timeout (parked time does not count against the wall clock, and the trace
cannot say when the answer came). A probe result is never inferred from a
dispatch of a commit: a commit sent again after a lost answer is exactly
what the audit must catch, not excuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import ChainSpec, is_commit_class
from .runtime import TERMINAL, Run, SimulationError
from .state import clone

__all__ = ["Inferred", "apply", "gate_deadline", "needed", "probe_result"]

_DEPTH = 6  # inputs between two calls: a pick, an entry gate, a raised gate, ... and room
_TRIALS = 200  # runs tried for one call: a gate of many outcomes at every level stays bounded


@dataclass(frozen=True)
class Inferred:
    """An input the trace did not record: what it was, and the event that made it certain."""

    kind: str  # select | answer | probe
    step: str | None
    value: str | None  # the outcome or the probe's result; a pick's option is not known
    seq: int
    at: str
    gate: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "step": self.step,
            "gate": self.gate,
            "value": self.value,
            "seq": self.seq,
            "at": self.at,
        }

    def __str__(self) -> str:
        if self.kind == "answer":
            what = f"gate {self.gate} answered {self.value}"
        elif self.kind == "probe":
            what = f"probe of {self.step} found it {(self.value or '').replace('_', ' ')}"
        else:
            what = f"pick at {self.step}"
        return f"{what}, certain from seq {self.seq} ({self.at})"


def copy(spec: ChainSpec, run: Run) -> Run:
    """A run to try inputs on: the snapshot copied, no trace."""
    return Run(spec, clone(run.snapshot), [])


def gate_deadline(spec: ChainSpec, run: Run) -> tuple[str, float] | None:
    """The gate the run is parked at and the virtual time its timeout fires; None if none."""
    s = run.snapshot
    ctx = s.gate_context
    if s.waiting.kind != "answer" or ctx is None:
        return None
    gate = spec.gate(ctx.gate)
    after = gate.timeout.after.seconds if gate and gate.timeout and gate.timeout.after else None
    if after is None and spec.policy.per_chain.gate_timeout is not None:
        after = spec.policy.per_chain.gate_timeout.seconds
    return ctx.gate, (ctx.raised_at + after if after is not None else float("inf"))


def needed(spec: ChainSpec, run: Run, step: str, t: float) -> list[dict[str, Any]] | None:
    """The inputs that bring ``run`` to wait for a dispatch of ``step`` at time ``t``.

    Empty when it already waits for it; None when no picks, answers and
    probe results do (then the dispatch is out of order as it stands).
    """
    return _search(spec, run, step, t, _DEPTH, [_TRIALS])


def _search(
    spec: ChainSpec, run: Run, step: str, t: float, depth: int, budget: list[int]
) -> list[dict[str, Any]] | None:
    waiting = run.snapshot.waiting
    if waiting.kind == "observe" and waiting.step == step:
        return []
    if depth == 0 or run.snapshot.state in TERMINAL:
        return None
    for given in _candidates(spec, run, step, t):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        trial = copy(spec, run)
        try:
            apply(trial, given)
        except (SimulationError, KeyError, TypeError, ValueError):
            continue
        rest = _search(spec, trial, step, t, depth - 1, budget)
        if rest is not None:
            return [given, *rest]
    return None


def _candidates(spec: ChainSpec, run: Run, step: str, t: float) -> list[dict[str, Any]]:
    waiting = run.snapshot.waiting
    if waiting.kind == "select" and waiting.options:
        return [{"kind": "select", "option": waiting.options[0].id, "step": waiting.step}]
    if waiting.kind == "answer":
        parked = gate_deadline(spec, run)
        clock = run.snapshot.clock
        # answered at the latest moment the trace allows before the timeout fires
        until = min(t, parked[1] - 0.001) if parked else t
        wait = max(0.0, until - clock)
        return [
            {
                "kind": "answer",
                "outcome": o,
                "gate": waiting.gate,
                "wait": wait,
                "step": waiting.step,
            }
            for o in waiting.outcomes
        ]
    action = spec.action(step)
    if waiting.kind == "probe" and action is not None and not is_commit_class(action):
        return [
            {"kind": "probe", "result": r, "step": waiting.step} for r in ("landed", "not_landed")
        ]
    return []


def apply(run: Run, given: dict[str, Any]) -> None:
    """Apply one inferred input to ``run`` (a gate answer after its wait)."""
    kind = given["kind"]
    if kind == "select":
        run.select(given["option"])
    elif kind == "answer":
        if given.get("wait"):
            run.wait(given["wait"])
        run.answer(given["outcome"])
    elif kind == "probe":
        run.probe(given["result"])
    else:
        raise ValueError(kind)


def probe_result(spec: ChainSpec, run: Run, following: tuple[str, float] | None) -> str | None:
    """The probe result that lets the run go on to the trace's next dispatch ``following``
    (its step and time); None when there is none, or the next dispatch is a commit's."""
    if following is None:
        return None
    step, t = following
    action = spec.action(step)
    if action is None or is_commit_class(action):
        return None
    for result in ("landed", "not_landed"):
        trial = copy(spec, run)
        try:
            trial.probe(result)
        except SimulationError:
            continue
        if t > trial.snapshot.clock:
            trial.wait(t - trial.snapshot.clock)
        if _search(spec, trial, step, t, _DEPTH, [_TRIALS]) is not None:
            return result
    return None
