"""Moving the cursor: arrival, dispatch, advance, selection (SPEC §3, I3).

The main steps are the chain's actions in document order, minus probe-only
reads, compensators and steps another variant owns. Arriving at a step
resets its attempt budget, checks the deadlines and the fan-out group, and
then either presents a selection, parks at an entry gate, or dispatches.
A dispatch sends nothing: the run waits for an observation of the step.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..memo import remember
from ..model import (
    Action,
    ChainSpec,
    in_variant,
    is_commit_class,
    is_keyed,
    is_unkeyed_commit,
    main_steps,
)
from ..policy import step_limits
from ..verdicts import Verdict
from .classifier import ClassifyContext, classify
from .events import describe, observed_input, signal_of
from .part import OK, Part, SimulationError, dead
from .state import NOT_WAITING, Observation, Option, Waiting, observing

if TYPE_CHECKING:
    from .events import EventLog
    from .ports import HandleBook, Host, Parking, Probes, Rewinds, Unwinds, Verdicts
    from .state import Snapshot

__all__ = ["Steps", "keyed_commits"]


def keyed_commits(spec: ChainSpec) -> frozenset[str]:
    """The steps whose arrivals number an idempotency key (:meth:`Steps.key`): keyed commits.

    No other step's arrival count is read by anything a run decides.
    """
    global _last_keyed
    last = _last_keyed
    if last[0] is spec:
        return last[1]

    def find() -> frozenset[str]:
        return frozenset(
            a.id
            for a in spec.actions
            if spec.action(a.id) is a and is_commit_class(a) and is_keyed(a)
        )

    found = remember(spec, "keyed commits", find)
    _last_keyed = (spec, found)
    return found


# The last chain's answer at hand: a run asks it at every dispatch and every state key,
# and the per-chain table costs two calls more (as ChainSpec keeps its last indexes).
_last_keyed: tuple[ChainSpec | None, frozenset[str]] = (None, frozenset())


class Needs(Protocol):
    """The parts :class:`Steps` calls, each through its interface in :mod:`.ports`."""

    @property
    def outcomes(self) -> Verdicts: ...

    @property
    def backtrack(self) -> Rewinds: ...

    @property
    def gates(self) -> Parking: ...

    @property
    def reconcile(self) -> Probes: ...

    @property
    def compensation(self) -> Unwinds: ...

    @property
    def handles(self) -> HandleBook: ...


class Steps(Part):
    """The cursor and the dispatches it makes."""

    __slots__ = ("peers", "host")

    def __init__(
        self,
        spec: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        peers: Needs,
        host: Host,
    ):
        super().__init__(spec, snapshot, log)
        self.peers = peers
        self.host = host

    # --- which steps, which key ----------------------------------------------

    def in_variant(self, only: list[str]) -> bool:
        return in_variant(only, self.snapshot.variant)

    def main(self) -> list[str]:
        """The main steps of this run's variant (:func:`~chains.core.model.main_steps`)."""
        chain, variant = self.spec, self.snapshot.variant
        return remember(chain, ("main steps", variant), lambda: main_steps(chain, variant))

    def context(self, action: Action) -> ClassifyContext:
        """What the classifier needs to know about the run to classify ``action``'s response."""
        s = self.snapshot
        handles = s.handles
        return ClassifyContext(
            variant=s.variant,
            commit_in_flight=is_commit_class(action),
            key_expired=self.key_expired(action),
            # the classifier reads the step's own inputs only, and changes nothing it is given
            live={h: handles[h].minted_seq for h in action.input.handles if h in handles},
            stale_recurrences=s.stale_recurrences,
            auto_repairs_fired=s.auto_repairs_fired,
        )

    def key(self, action: Action) -> str | None:
        """The idempotency key of a keyed commit: one per arrival, reused across retries."""
        if action.id not in keyed_commits(self.spec):
            return None
        arrival = self.snapshot.arrivals.get(action.id, 0)
        return f"{self.snapshot.run_id}:{action.id}:{arrival}"

    def key_expired(self, action: Action) -> bool:
        idem = action.idempotency
        if idem is None or idem.key_retention is None:  # most steps: no key to expire
            return False
        key = self.key(action)
        if key is None:
            return False
        retention = idem.key_retention.seconds
        since = self.snapshot.key_since.get(key)
        return (
            retention is not None and since is not None and self.snapshot.clock - since >= retention
        )

    # --- moving the cursor ------------------------------------------------------

    def arrive(self, step_id: str) -> None:
        """Put the cursor on ``step_id`` and do what arriving there does."""
        s = self.snapshot
        peers = self.peers
        action = self.action(step_id)
        s.cursor = step_id
        s.arrived_seq = s.seq
        s.arrivals[step_id] = s.arrivals.get(step_id, 0) + 1
        s.attempt = 0
        limits = step_limits(self.spec, action)
        s.budgets.step_attempts_left = 1 if is_unkeyed_commit(action) else limits.attempts
        s.budgets.safe_rejects_left = limits.safe_reject_redispatch
        if s.compensation is None and (
            peers.outcomes.business_expiry() or peers.outcomes.wall_exhausted()
        ):
            return
        if (
            s.compensation is None
            and (fanout := self.host.fanout) is not None
            and fanout.sync(self.host, action)
        ):
            return
        spent = [
            h
            for h in action.input.handles
            if h in s.handles and s.handles[h].spent and not self.probes_its_spender(action, h)
        ]
        if spent:
            target = peers.handles.refresh(spent[0])
            self.log.transition(
                step_id,
                "I4:spent",
                Verdict(type="rewind", to=target) if target else dead("spent_handle"),
                f"{s.handles[spent[0]].alias} is spent; never re-presented",
            )
            if target:
                peers.backtrack.rewind(target, action, in_process=True)
            else:
                peers.outcomes.dead_end(dead(f"spent_{spent[0]}"), action)
            return
        if action.effect == "select":
            self.present_selection(action)
            return
        if action.entry_gate:
            self.log.transition(step_id, "entry_gate", Verdict(type="gate", gate=action.entry_gate))
            peers.gates.park(action.entry_gate, action, "entry")
            return
        self.dispatch(action)

    def probes_its_spender(self, action: Action, handle_id: str) -> bool:
        """True when ``action`` is the confirmation probe of the commit that spent the handle.

        I4 forbids re-presenting a spent handle to consume it again. A probe
        exists to look up what that commit did, with the commit's inputs as
        its lookup keys (SPEC §2.1: a probe runs without the commit's own
        output), so presenting the spent handle there is the point, not a
        second use. Only matters for a probe that is also a main step.
        """
        return any(
            a.confirmation is not None
            and a.confirmation.probe == action.id
            and handle_id in a.input.handles
            and is_commit_class(a)
            for a in self.spec.actions
        )

    def dispatch(self, action: Action) -> None:
        """Send ``action``: persist what P3 needs first, spend single-use inputs (I4)."""
        s = self.snapshot
        s.state = "compensating" if s.compensation else "running"
        if is_unkeyed_commit(action) and self.peers.reconcile.unresolved(action):
            return
        if is_unkeyed_commit(action):
            # P3: the record is durable before the request leaves.
            self.log.transition(
                action.id,
                "P3:correlation",
                note="correlation record persisted (PENDING) before dispatch",
            )
            self.peers.reconcile.persist(action)
        if is_commit_class(action):
            for hid in action.input.handles:
                handle = self.spec.handle(hid)
                if handle is not None and handle.single_use and hid in s.handles:
                    # I4: spent even if the outcome is unknown
                    s.handles[hid] = replace(s.handles[hid], spent=True)
        key = self.key(action)
        if key is not None:
            s.key_since.setdefault(key, s.clock)
        s.waiting = observing(action.id)
        if is_unkeyed_commit(action) and self.host.before_dispatch is not None:
            # C1.4's first kill point: the record is persisted, the request not yet out.
            self.log.flush()
            self.host.before_dispatch(self.host)
        s.in_flight = action.id

    def observe(self, obs: Observation) -> None:
        """Classify the dispatched step's response and apply its verdict."""
        s = self.snapshot
        peers = self.peers
        if s.waiting.kind != "observe" or s.waiting.step is None:
            raise SimulationError(f"the run waits for {describe(s.waiting)}; got an observation")
        action = self.action(s.waiting.step)
        s.attempt += 1
        s.dispatches[action.id] = s.dispatches.get(action.id, 0) + 1
        s.budgets.step_attempts_left -= 1
        s.in_flight = None
        s.last_observation = obs
        if s.variant is None and self.spec.variants is not None:
            bound = obs.payload.get(self.spec.variants.axis)
            if bound in self.spec.variants.values:
                s.variant = bound
        c = classify(self.spec, self.context(action), action, obs)
        self.log.open(
            "attempt",
            step=action.id,
            attempt=s.attempt,
            signal=signal_of(obs),
            verdict=c.verdict,
            source=c.source,
            row=c.row,
            note=c.reason,
            input=observed_input(obs),
            key=self.key(action),
            consumed=peers.handles.presented(action),
        )
        if c.no_side_effect and is_unkeyed_commit(action):
            record = peers.reconcile.pending(action.id)
            if record is not None:  # the provider vouches this dispatch left nothing
                record.status = "NOT_LANDED"
        peers.outcomes.apply(action, c, obs)

    def advance(self, action: Action) -> None:
        """Go on after ``action``: the next main step, the next compensator, or done."""
        s = self.snapshot
        if s.compensation is not None:
            unwind = s.compensation
            unwind.pos += 1
            if unwind.pos < len(unwind.steps):
                self.arrive(unwind.steps[unwind.pos])
            else:
                s.commits_landed[unwind.queue.pop(0)].compensated = True
                self.peers.compensation.next()
            return
        steps = self.main()
        here = steps.index(action.id) if action.id in steps else len(steps)
        if here + 1 < len(steps):
            self.arrive(steps[here + 1])
        else:
            self.finish_done()

    def finish_done(self) -> None:
        s = self.snapshot
        s.state = "done"
        s.cursor = None
        s.waiting = NOT_WAITING
        s.outcome = {"result": "done"}

    # --- selection (I3) -------------------------------------------------------------

    def present_selection(self, action: Action) -> None:
        """Offer the options of the read that minted the selection's input, or rematch."""
        s = self.snapshot
        options: list[Option] = []
        for hid in action.input.handles:
            if hid in s.handles:
                options = s.results.get(s.handles[hid].alias, [])
                break
        excluded = set(s.excluded.get(action.id, []))
        offered = [o for o in options if o.id not in excluded]
        previous = s.selections.get(action.id)
        rematch = None
        for hid in action.output.handles:
            handle = self.spec.handle(hid)
            if handle is not None and handle.rematch is not None:
                rematch = handle.rematch
        audience = "model"
        gated = False
        if previous is not None and action.id not in s.fresh and rematch is not None:
            keys = rematch.key
            found = [
                o
                for o in offered
                if keys and all(o.key.get(k) == previous.key.get(k) for k in keys)
            ]
            if len(found) == 1:
                self.log.transition(
                    action.id,
                    "rematch",
                    OK,
                    "rematch: exact key match, code re-selects",
                    proposal_source="code",
                )
                self.pick(action, found[0])
                return
            # No or several matches: a new selection (I3) by the model, or a gate the
            # user answers (SPEC §2.2 on_ambiguous), parked until a person picks.
            gated = rematch.on_ambiguous == "gate"
            audience = "user" if gated else "model"
            self.log.transition(
                action.id,
                "rematch",
                note=f"rematch: {len(found)} matches; on_ambiguous → {rematch.on_ambiguous}"
                + ("; parked until a person picks" if gated else ""),
            )
        if not offered:
            self.peers.outcomes.give_up(action, "no_options_to_select", "select")
            return
        if gated and s.compensation is None:
            s.state = "at_gate"
        s.waiting = Waiting(kind="select", step=action.id, options=offered, audience=audience)

    def select(self, option_id: str, who: str, given: dict[str, Any] | None = None) -> None:
        """A pick among the options the run waits on, by the user or a model."""
        s = self.snapshot
        w = s.waiting
        if w.kind != "select" or w.step is None:
            raise SimulationError(f"the run waits for {describe(w)}; got a selection")
        chosen = next((o for o in w.options if o.id == option_id), None)
        if chosen is None:
            why = " (excluded by reselect)" if option_id in s.excluded.get(w.step, []) else ""
            raise SimulationError(
                f"step {w.step!r} offers {[o.id for o in w.options]}; got {option_id!r}{why}"
            )
        action = self.action(w.step)
        if s.state == "at_gate":  # a person answered the rematch gate
            s.state = "running"
        self.log.transition(
            action.id,
            "select",
            note=f"selection collected ({who})",
            input=given or {"kind": "select", "option": option_id},
            proposal_source="model" if who == "model" else "user",
        )
        self.pick(action, chosen)

    def pick(self, action: Action, option: Option) -> None:
        s = self.snapshot
        self.peers.handles.mint(action, option)
        s.selections[action.id] = option
        if action.id in s.fresh:
            s.fresh.remove(action.id)
        self.advance(action)
