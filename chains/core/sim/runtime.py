"""The run: SPEC §3's verdict → next-state transitions, driven by scripted inputs.

A :class:`Run` walks a chain's main steps (its actions in document order,
minus probe-only reads, compensators and steps another variant owns). It
never calls a provider: it *waits* (:meth:`Run.waiting`) for an observation
of the dispatched step, a pick at a selection step, a gate answer, a probe
result or a repair proposal, and applies exactly one transition per input.
Every state change is one event in the append-only trace (SPEC §2.5):
``attempt`` 1:1 with dispatches, ``transition`` for changes that dispatch
nothing, ``reconcile`` for probe and webhook observations. The snapshot plus
the trace resume a run (:meth:`Run.resume`), and the trace alone re-derives
it (:func:`~.replay.replay`).

``Run`` is a thin facade: each input is applied by the collaborator that
owns its concern — :mod:`.steps` (arrive, dispatch, advance, selection),
:mod:`.outcomes` (what each verdict does; the wall clock and business
expiry), :mod:`.backtrack` (rewind, repair, reselect), :mod:`.gates` (gates
and proposals), :mod:`.reconcile` (P3 probes, revocations),
:mod:`.compensation` (P5 unwinds), :mod:`.handles` (I1–I5) — and written to
the trace by :mod:`.events`. Each part is given only the parts it calls
(:mod:`.ports`).

Time is virtual: :meth:`Run.wait` advances it, and backoff, gate timeouts,
business deadlines, async deadlines and the wall clock are read from it.
Jitter is drawn from a RNG seeded by the run's seed and the event seq, so a
run is a pure function of its inputs. Handle values do not exist here; a
handle is an alias ``<handle>#<n>`` and its lineage.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, cast

from ..model import Action, ChainSpec, Gate, is_commit_class
from ..policy import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_REWINDS
from .backtrack import Backtrack
from .compensation import Compensation
from .events import EventLog
from .gates import Gates
from .handles import Handles
from .outcomes import Outcomes
from .part import TERMINAL, SimulationError, fields_of
from .reconcile import Reconcile
from .runs import RunStore, rebuild
from .sealed import seal, seal_carried
from .state import Budgets, Event, Observation, Proposal, Snapshot, Waiting, clone
from .steps import Steps

__all__ = ["TERMINAL", "Run", "SimulationError"]

# What a continuation run inherits from the run it continues (SPEC §2.3 external mode).
_CARRIED = (
    "handles",
    "commits_landed",
    "compensators_landed",
    "mint_counts",
    "results",
    "selections",
    "excluded",
    "fresh",
    "correlation",
    "auto_repairs_fired",
    "stale_recurrences",
    "clock",
)


class _Parts:
    """A run's parts, as the parts see each other (each through its own ``Needs``)."""

    __slots__ = (
        "steps",
        "outcomes",
        "backtrack",
        "gates",
        "reconcile",
        "compensation",
        "handles",
        "__weakref__",
    )
    steps: Steps
    outcomes: Outcomes
    backtrack: Backtrack
    gates: Gates
    reconcile: Reconcile
    compensation: Compensation
    handles: Handles


class Run:
    """One execution of a chain. Build it with :meth:`start` or :meth:`resume`."""

    def __init__(self, spec: ChainSpec, snapshot: Snapshot, trace: list[Event]):
        self.spec = spec
        self.snapshot = snapshot
        # Set by :class:`~.fanout.Fanout` on its branches; not part of the snapshot.
        self.fanout: Any = None
        # A kill point (CONFORMANCE C1.4): called with the run once an unkeyed commit's
        # correlation record is persisted and before its request leaves.
        self.before_dispatch: Callable[[Run], None] | None = None
        # The run owns its parts, and its parts table; each part is given the table by
        # weak proxy, seen as the few collaborators it declares (its module's ``Needs``,
        # see :mod:`.ports`), and the run itself only as its outside hooks (``Host``).
        # A strong reference back would make every run a reference cycle, and the
        # explorer's thousands of short-lived runs would wait for the cyclic collector.
        view = fields_of(snapshot)
        self.log = log = EventLog(spec, view, trace)
        self.parts = parts = _Parts()
        peers = cast(_Parts, weakref.proxy(parts))
        host = cast("Run", weakref.proxy(self))
        parts.steps = self.steps = Steps(spec, view, log, peers, host)
        parts.outcomes = self.outcomes = Outcomes(spec, view, log, peers, host)
        parts.backtrack = self.backtrack = Backtrack(spec, view, log, peers, host)
        parts.gates = self.gates = Gates(spec, view, log, peers)
        parts.reconcile = self.reconcile = Reconcile(spec, view, log, peers)
        parts.compensation = self.compensation = Compensation(spec, view, log, peers)
        parts.handles = self.handles = Handles(spec, view, log, host)

    # --- construction -----------------------------------------------------

    @classmethod
    def start(
        cls,
        spec: ChainSpec,
        *,
        intent: dict | None = None,
        run_key: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        run_id: str | None = None,
        mode: Literal["internal", "external"] = "internal",
        continuation_of: Snapshot | None = None,
        runs: RunStore | None = None,
    ) -> Run:
        """Create a run and move it to its first step (or its first wait).

        ``mode="external"`` ends the run with ``restart_required`` on every
        rewind or repair instead of replaying in process; the caller then
        starts the continuation with ``continuation_of`` = the ended run's
        snapshot, which carries the budgets, handles and landed commits, and
        ``intent`` = the repaired fields (only those the restart listed).

        With ``runs`` (a :class:`~.runs.RunStore`), starting is get-or-create
        by ``run_key`` (SPEC §2.8, C4.5): the run kept under the key is
        returned as it stands, dispatching nothing, and a new one is started
        and kept only when there is none. A store needs a ``run_key``.
        """
        if runs is not None:
            return cls.start_once(
                spec,
                runs,
                intent=intent,
                run_key=run_key,
                variant=variant,
                seed=seed,
                run_id=run_id,
                mode=mode,
                continuation_of=continuation_of,
            )[0]
        if continuation_of is not None:
            return cls._continue(spec, continuation_of, intent, run_key, seed, run_id)
        intent = dict(intent or {})
        axis = spec.variants
        if variant is None and axis is not None and intent.get(axis.axis) is not None:
            variant = str(intent[axis.axis])
        if variant is not None:
            if axis is None:
                raise SimulationError(f"chain {spec.id!r} declares no variants; got {variant!r}")
            if variant not in axis.values:
                raise SimulationError(
                    f"variant must be one of {axis.values} ({axis.axis}); got {variant!r}"
                )
        if run_id is None:
            digest = hashlib.sha256(f"{spec.id}|{run_key}|{seed}".encode()).hexdigest()
            run_id = f"run-{digest[:12]}"
        pc = spec.policy.per_chain
        budgets = Budgets(
            rewinds_left=pc.max_rewinds if pc.max_rewinds is not None else DEFAULT_MAX_REWINDS,
            repairs_left=pc.max_repairs if pc.max_repairs is not None else DEFAULT_MAX_REPAIRS,
            wall_limit=pc.wall_clock.seconds if pc.wall_clock else None,
        )
        snap = Snapshot(
            run_id=run_id,
            chain_id=spec.id,
            run_key=run_key,
            variant=variant,
            mode=mode,
            intent=intent,
            budgets=budgets,
            seed=seed,
        )
        run = cls(spec, snap, [])
        refs = seal(snap.sealed, run_id, intent)  # C7.3: the trace holds references only
        given = {"intent": refs, "run_key": run_key, "variant": variant, "seed": seed}
        given |= {"run_id": run_id, "mode": mode}
        run.log.open("transition", note="start", input={"kind": "start", **given})
        steps = run.steps.main()
        if steps:
            run.steps.arrive(steps[0])
        else:
            run.steps.finish_done()
        run.log.flush()
        return run

    @classmethod
    def start_once(
        cls, spec: ChainSpec, runs: RunStore, *, run_key: str | None, **given: Any
    ) -> tuple[Run, bool]:
        """:meth:`start` through ``runs``: the run for ``run_key``, and whether it is new."""
        previous = given.get("continuation_of")
        run_key = run_key or (previous.run_key if previous is not None else None)
        if not run_key:
            raise SimulationError(
                "starting a kept run needs a run_key derived from the user's task"
            )
        if previous is not None:
            # A continuation takes the key over from the run it continues (SPEC §2.8): the
            # key's run is the logical run's latest. Two continuing callers are not atomic.
            kept, _ = runs.get_or_create(spec, run_key, lambda: rebuild(spec, previous, []))
            if kept.snapshot.run_id != previous.run_id:
                return kept, False
            run = cls.start(spec, run_key=run_key, **given)
            runs.save(run)
            return run, True
        return runs.get_or_create(spec, run_key, lambda: cls.start(spec, run_key=run_key, **given))

    @classmethod
    def _continue(
        cls,
        spec: ChainSpec,
        previous: Snapshot,
        intent: dict | None,
        run_key: str | None,
        seed: int,
        run_id: str | None,
    ) -> Run:
        """A continuation run: same budgets, same run_key, cursor at the restart target."""
        restart = previous.outcome.get("restart_required")
        if previous.state != "restart_required" or not isinstance(restart, dict):
            raise SimulationError(
                f"only a run in state restart_required can be continued; got {previous.state}"
            )
        if previous.chain_id != spec.id:
            raise SimulationError(
                f"snapshot belongs to chain {previous.chain_id!r}; got chain {spec.id!r}"
            )
        if run_key is not None and run_key != previous.run_key:
            raise SimulationError(
                f"a continuation reuses run_key {previous.run_key!r}; got {run_key!r}"
            )
        changes = dict(intent or {})
        allowed = set(restart.get("repair_fields") or [])
        extra = sorted(set(changes) - allowed)
        if extra:
            raise SimulationError(
                f"a continuation may change only the restart's repair fields {sorted(allowed)}; "
                f"got {extra}"
            )
        snap = Snapshot(
            run_id=run_id or f"{previous.run_id}.{len(previous.run_id.split('.'))}",
            chain_id=spec.id,
            run_key=previous.run_key,
            variant=previous.variant,
            mode="external",
            continuation_of=previous.run_id,
            intent={**previous.intent, **changes},
            budgets=replace(previous.budgets),
            seed=seed,
            **{name: getattr(previous, name) for name in _CARRIED},
        )
        snap = Snapshot.model_validate(snap.model_dump())  # no object shared with ``previous``
        run = cls(spec, snap, [])
        # C7.3: the previous snapshot goes into the trace with its intent as references
        # and without its sealed store, which this run's sealed store takes over.
        snap.sealed = dict(previous.sealed)
        dumped = previous.model_dump(mode="json", exclude={"sealed"})
        # Its responses are sealed under this run's key, as this run's own are: the picks it
        # carries and the options it gets meet as equal references (a rematch, C3.3).
        carried = seal_carried(snap.sealed, snap.run_id, dumped)
        carried["intent"] = seal(snap.sealed, previous.run_id, previous.intent)
        given = {"intent": seal(snap.sealed, snap.run_id, changes), "seed": seed}
        given |= {"run_id": snap.run_id, "continuation_of": carried}
        run.log.open(
            "transition",
            note=f"continuation of {previous.run_id}",
            input={"kind": "start", **given},
        )
        run.steps.arrive(restart["rewind_to"])
        run.log.flush()
        return run

    @classmethod
    def resume(cls, spec: ChainSpec, snapshot: Snapshot, trace: list[Event]) -> Run:
        """Continue a run after a crash, from its snapshot and trace alone.

        A dispatch of an unkeyed commit that was out when the process died
        has an unknown outcome (P3): the run records the lost attempt and
        reconciles, it never re-dispatches. A process that died after
        persisting the correlation record but before the dispatch left the
        same uncertainty (the request may or may not have gone): the run
        probes first, and dispatches afresh only if the probe says not landed.
        """
        if snapshot.chain_id != spec.id:
            raise SimulationError(
                f"snapshot belongs to chain {snapshot.chain_id!r}; got chain {spec.id!r}"
            )
        if trace and trace[-1].seq != snapshot.seq:
            raise SimulationError(
                f"snapshot is at seq {snapshot.seq} but the trace ends at seq {trace[-1].seq}"
            )
        run = cls(spec, clone(snapshot), [e.model_copy() for e in trace])
        run.reconcile.after_restart()
        run.log.flush()
        return run

    # --- what the run needs -------------------------------------------------

    @property
    def trace(self) -> list[Event]:
        """The run's events in order; its log (:mod:`.events`) appends to it."""
        return self.log.trace

    @trace.setter
    def trace(self, events: list[Event]) -> None:
        self.log.trace = events

    def waiting(self) -> Waiting:
        return self.snapshot.waiting.model_copy(deep=True)

    @property
    def finished(self) -> bool:
        """In a terminal state and waiting for nothing more.

        An ``escalated`` reconcile still waits for the operator's probe
        finding, so it is not finished until that arrives.
        """
        s = self.snapshot
        return s.state in TERMINAL and s.waiting.kind == "nothing"

    def action(self, action_id: str) -> Action:
        """The chain's action ``action_id``; a :class:`SimulationError` when there is none."""
        return self.steps.action(action_id)

    def gate(self, gate_id: str) -> Gate:
        """The chain's gate ``gate_id``; a :class:`SimulationError` when there is none."""
        return self.steps.gate(gate_id)

    # --- inputs -------------------------------------------------------------
    # Each applies one input and flushes its events, even when it raises.

    def observe(self, obs: Observation) -> None:
        """The dispatched step's response (or a webhook a revocation watch listens for)."""
        if not self.reconcile.revocation(obs):
            self.steps.observe(obs)
        self.log.flush()

    def select(self, option_id: str) -> None:
        """Pick an option at the selection step the run waits at."""
        self.steps.select(option_id, "user")
        self.log.flush()

    def answer(
        self,
        outcome: str,
        params: dict | None = None,
        *,
        by: Literal["user", "operator", "model"] | None = None,
    ) -> None:
        """Answer the gate the run is parked at with one of its declared outcomes.

        ``by`` names who answers; a caller relaying a model's answer (a planner
        in external mode) says ``by="model"``, and a model may never answer a
        gate that is not the model's, nor one about money or consent (C6.5).
        Left out, the answer is the gate's own audience's.
        """
        self.gates.answer(outcome, dict(params or {}), by)
        self.log.flush()

    def probe(
        self,
        result: Literal["landed", "not_landed", "unknown"],
        cause: Observation | None = None,
    ) -> None:
        """The confirmation probe's finding for the commit being reconciled."""
        self.reconcile.result(result, cause)
        self.log.flush()

    def wait(self, seconds: float) -> None:
        """Let virtual time pass; fires gate timeouts, deadlines and the wall clock."""
        if seconds < 0:
            raise SimulationError(f"wait needs a duration of 0 seconds or more; got {seconds}")
        s = self.snapshot
        s.clock += seconds
        if s.state == "running":
            s.budgets.wall_used += seconds
        if s.state == "reconciling" and s.waiting.kind == "probe":
            self.reconcile.deadlines()
        elif s.waiting.kind == "answer" and s.gate_context is not None:
            self.gates.timeout()
        elif s.state == "running" and s.waiting.kind in ("observe", "select", "repair"):
            in_flight = s.waiting.kind == "observe" and s.waiting.step is not None
            shielded = in_flight and is_commit_class(self.action(s.waiting.step or ""))
            if not shielded:  # P3 cancellation shield: an out commit runs to completion
                self.outcomes.wall_exhausted()
        self.log.flush()

    def cancel(self) -> None:
        """The caller cancels the run. A commit whose request is out is not abandoned
        (SPEC P3 cancellation shield): it is reconciled first, then the run ends
        ``dead_end(cancelled)`` and unwinds what landed."""
        self.reconcile.shield.cancel()
        self.log.flush()

    def propose(self, proposal: Proposal) -> bool:
        """Offer a model's proposal; invalid ones are traced and change nothing (C4.2)."""
        applied = self.gates.propose(proposal)
        self.log.flush()
        return applied
