"""Applying verdicts: ok, retry, escalate, dead end, and routing the rest (SPEC §3).

The classifier decides a verdict for a response; this module does what the
verdict says to the snapshot: mints and records landings on ``ok``, spends
attempts and backs off on ``retry``, ends the run on ``escalate`` and
``dead_end``, and starts the unwind when a dead end finds landed commits
(P5). The deadlines that end or route a run on virtual time are here too
(the wall clock, a landed commit's business expiry): each is a dead end or
a route, checked on arrival and after backoff. Rewind, repair and reselect,
which spend the run's budgets (C4), are :mod:`.backtrack`'s.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from ..model import Action, is_commit_class, is_keyed, is_unkeyed_commit
from ..policy import step_limits
from ..verdicts import Verdict, format_verdict
from .classifier import Classification, auto_repair_transform, matches
from .deadlines import virtual_time
from .part import PLAIN_OBSERVATION, Part, dead, lookup
from .state import NOT_WAITING, LandedCommit, Observation

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Cursor, HandleBook, Host, Parking, Probes, Rewinds, Unwinds
    from .state import Snapshot

__all__ = ["Outcomes"]

# ok(empty) on a step whose empty block gives no route (or that declares none).
NO_EMPTY_ROUTE = Verdict(type="dead_end", reason="empty_without_route")


class Needs(Protocol):
    """The parts :class:`Outcomes` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...

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


class Outcomes(Part):
    """What each verdict does to the run."""

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

    def apply(self, action: Action, c: Classification, obs: Observation) -> None:
        """Apply the classifier's verdict for ``action``'s response ``obs``."""
        s = self.snapshot
        v = c.verdict
        if c.stale_key is not None and v.type == "rewind":
            s.stale_recurrences[c.stale_key] = s.stale_recurrences.get(c.stale_key, 0) + 1
        if c.auto_repair is not None:
            s.auto_repairs_fired.append(c.auto_repair)
            n = int(c.auto_repair.rsplit("#", 1)[1])
            values = auto_repair_transform(action.auto_repairs[n - 1], len(s.auto_repairs_fired))
            self.log.transition(
                action.id,
                c.row,
                v,
                f"auto_repair applied: {sorted(values)}",
                proposal_source="code",
            )
            self.peers.backtrack.repair(v, action, values)
            return
        if v.type == "ok":
            self.on_ok(action, obs, empty=v.empty)
        elif v.type == "retry":
            self.retry(action, c)
        else:
            self.route(action, v, obs)

    def route(self, action: Action, v: Verdict, obs: Observation | None) -> None:
        """Apply a verdict that is not the classifier's ok/retry."""
        peers = self.peers
        if self.snapshot.compensation is not None and v.type in (
            "rewind",
            "repair",
            "reselect",
            "escalate",
            "dead_end",
            "retry",
        ):
            peers.compensation.failed(f"{action.id}: {format_verdict(v)}")
            return
        if v.type == "ok":
            self.land(action, obs)
            peers.steps.advance(action)
        elif v.type == "gate" and v.gate:
            peers.gates.park(v.gate, action, "raised", obs)
        elif v.type == "rewind" and v.to:
            peers.backtrack.rewind(v.to, action)
        elif v.type == "repair":
            peers.backtrack.repair(v, action, None)
        elif v.type == "reselect" and v.to:
            peers.backtrack.reselect(v.to, action)
        elif v.type == "reconcile":
            peers.reconcile.start(action)
        elif v.type == "escalate":
            self.escalate(v, action)
        elif v.type == "retry" and is_unkeyed_commit(action):
            peers.reconcile.start(action)  # never a fresh dispatch of an unkeyed commit
        elif v.type == "retry":
            peers.steps.dispatch(action)
        else:
            self.dead_end(v, action)

    # --- ok -------------------------------------------------------------------------

    def land(self, action: Action, obs: Observation | None) -> None:
        """Mint the step's handles if this arrival has not, and record a landed commit.

        A gate outcome ``ok`` keeps the raising step's success path: its
        output counts as produced, the step is never dispatched again.
        """
        s = self.snapshot
        since = s.arrived_seq
        if any(
            h not in s.handles or s.handles[h].minted_seq < since for h in action.output.handles
        ):
            self.peers.handles.mint(action)
        if is_commit_class(action) and not any(
            lc.step == action.id and lc.attempt_seq >= since
            for lc in [*s.commits_landed, *s.compensators_landed]
        ):
            self.record_landing(action, obs or PLAIN_OBSERVATION)

    def on_ok(self, action: Action, obs: Observation, empty: bool) -> None:
        """The step succeeded: mint, keep its options, record a landing, check preconditions."""
        s = self.snapshot
        peers = self.peers
        declined = empty and is_commit_class(action)  # a valid empty commit landed nothing
        aliases = [] if declined else peers.handles.mint(action)
        if obs.options:
            key = peers.handles.options_key(action, aliases) or f"{action.id}@{s.seq}"
            s.results[key] = list(obs.options)
        fanout = self.host.fanout
        if fanout is not None:
            fanout.publish(self.host, action)
        if declined:
            record = peers.reconcile.pending(action.id)
            if record is not None:
                record.status = "NOT_LANDED"
        elif is_commit_class(action):
            self.record_landing(action, obs, aliases)
        for k in [k for k in s.stale_recurrences if k.startswith(f"{action.id}|")]:
            del s.stale_recurrences[k]
        if empty:
            route = action.output.empty.route if action.output.empty else None
            if route is None:
                # Fail closed: proceeding would run the next steps without this one's
                # output (a declined card going on to capture).
                route = NO_EMPTY_ROUTE
                self.log.transition(action.id, "empty.route", route, "empty result with no route")
            else:
                self.log.transition(action.id, "empty.route", route)
            if route.type == "ok":
                peers.steps.advance(action)
            else:
                self.route(action, route, obs)
            return
        for n, pre in enumerate(action.preconditions, 1):
            if matches(pre.when, obs):
                self.log.transition(action.id, f"precondition#{n}", pre.verdict, pre.reason)
                if pre.verdict.type == "ok":
                    peers.steps.advance(action)
                elif pre.verdict.type == "gate" and pre.verdict.gate:
                    peers.gates.park(pre.verdict.gate, action, "raised", obs, from_ok=True)
                else:
                    self.route(action, pre.verdict, obs)
                return
        peers.steps.advance(action)

    def record_landing(
        self, action: Action, obs: Observation, aliases: list[str] | None = None
    ) -> None:
        """A commit landed: a fact (I5), with its business deadline and what it showed."""
        s = self.snapshot
        if aliases is None:
            aliases = [s.handles[h].alias for h in action.output.handles if h in s.handles]
        deadline = None
        expiry = action.output.business_expiry
        if expiry is not None:
            deadline = virtual_time(lookup(obs.payload, expiry.field))
        landed = LandedCommit(
            step=action.id,
            attempt_seq=s.seq,
            handles=aliases,
            consumed=self.peers.handles.presented(action),
            at=s.clock,
            business_deadline=deadline,
            predicates=list(obs.predicates),
        )
        if s.compensation is not None or action.effect == "compensate":
            s.compensators_landed.append(landed)
        else:
            s.commits_landed.append(landed)
        record = self.peers.reconcile.pending(action.id)
        if record is not None:
            record.status = "LANDED"

    # --- retry ------------------------------------------------------------------------

    def retry(self, action: Action, c: Classification) -> None:
        """Dispatch again within the step's budget; what exhaustion does depends on the effect."""
        s = self.snapshot
        peers = self.peers
        if is_commit_class(action) and is_keyed(action) and peers.steps.key_expired(action):
            peers.reconcile.instead(
                action,
                "key_retention",
                "idempotency key past key_retention: effectively unkeyed, probe instead",
            )
            return
        if is_unkeyed_commit(action):
            # observe() has already marked a declared no-side-effect answer NOT_LANDED.
            if c.no_side_effect and s.budgets.safe_rejects_left > 0:
                # A documented no-side-effect rejection does not use the single attempt.
                s.budgets.safe_rejects_left -= 1
                s.budgets.step_attempts_left += 1
                for hid in action.input.handles:  # it never executed: nothing was spent
                    if hid in s.handles:
                        s.handles[hid] = replace(s.handles[hid], spent=False)
                self.backoff_and_dispatch(action)
            elif c.no_side_effect:
                self.give_up(action, "safe_reject_redispatch_exhausted", "budget")
            else:
                peers.reconcile.instead(
                    action, "P3:never_retry_unkeyed", "an unkeyed commit is never retried"
                )
            return
        if s.budgets.step_attempts_left > 0:
            self.backoff_and_dispatch(action)
            return
        if self.replayed_error(action):
            peers.reconcile.instead(
                action,
                "replay_semantics:returns_cached",
                "every retry replayed the key's cached error: it may have landed; probe, "
                "never retry further",
            )
            return
        # Exhausted: escalate per effect class (SPEC §3; the threshold is OPEN, §8).
        note = f"{action.id} used all {s.attempt} attempts"
        if action.effect in ("read", "mint"):
            consumed = [h for h in action.input.handles if h in s.handles]
            newest = max(consumed, key=lambda h: s.handles[h].minted_seq, default=None)
            target = peers.handles.refresh(newest) if newest else None
            if target and s.budgets.rewinds_left > 0:
                self.log.transition(
                    action.id,
                    "retry_exhausted",
                    Verdict(type="rewind", to=target),
                    f"attempts exhausted; re-mint the newest input {newest}",
                )
                self.peers.backtrack.rewind(target, action)
                return
            if newest and not target:
                note += f"; its newest input {newest} has no refresh step to re-mint it"
        self.give_up(action, "step_attempts_exhausted", "retry_exhausted", note)

    def replayed_error(self, action: Action) -> bool:
        """True when a keyed ``returns_cached`` commit used all its attempts on errors.

        SPEC §2.1 ``replay_semantics``: a replayed response, cached error
        included, is not a fresh attempt, and "a cached 5xx is
        indistinguishable from a fresh one except by attempt count". An error
        on every attempt of one key is therefore a persistent replay: the
        first dispatch may have landed, and it "routes to reconcile, not more
        retries" (nor a dead end that would forget a landed commit).
        """
        idem = action.idempotency
        return (
            is_keyed(action)
            and idem is not None
            and idem.replay_semantics == "returns_cached"
            and self.snapshot.attempt > 1
        )

    def backoff_and_dispatch(self, action: Action) -> None:
        s = self.snapshot
        backoff = step_limits(self.spec, action).backoff
        # Seeded by what the run's state holds (not by the event count), so two
        # runs in the same state draw the same jitter: the explorer merges them.
        budgets = s.budgets
        seed = f"{s.seed}:{action.id}:{s.attempt}:{budgets.rewinds_left}:{budgets.repairs_left}"
        draw = random.Random(seed).random()
        delay = backoff.delay(max(s.attempt, 1), draw)
        s.clock += delay
        if s.state == "running":
            s.budgets.wall_used += delay
        self.log.set(note=f"backoff {delay:.3f}s")
        if s.compensation is None and self.wall_exhausted():
            return
        self.peers.steps.dispatch(action)

    # --- deadlines: checked on arrival and after backoff, never while a commit is out (P3) ---

    def wall_exhausted(self) -> bool:
        """End the run when the wall clock is used up; True when it was."""
        s = self.snapshot
        b = s.budgets
        if b.wall_limit is None or b.wall_used <= b.wall_limit:
            return False
        verdict = dead("wall_clock_exhausted", False)
        self.log.transition(s.cursor, "wall_clock", verdict)
        self.dead_end(verdict, self.spec.action(s.cursor or ""))
        return True

    def business_expiry(self) -> bool:
        """Route the first landed commit whose business deadline passed; True when one did."""
        s = self.snapshot
        for lc in s.commits_landed:
            if lc.business_deadline is None or lc.business_expired or lc.compensated:
                continue
            if s.clock < lc.business_deadline:
                continue
            lc.business_expired = True
            action = self.action(lc.step)
            expiry = action.output.business_expiry
            assert expiry is not None
            self.log.transition(
                lc.step,
                "business_expiry",
                expiry.on_expiry,
                f"{lc.step}'s {expiry.field} passed; the commit stays landed (I5)",
            )
            s.gate_context = None
            s.pending_gate = None
            s.state = "running"
            self.route(action, expiry.on_expiry, None)
            return True
        return False

    # --- the ends -------------------------------------------------------------------------

    def escalate(self, v: Verdict, action: Action) -> None:
        s = self.snapshot
        s.state = "escalated"
        s.waiting = NOT_WAITING
        s.outcome = {"escalated": v.audience or "operator", "step": action.id}

    def unknown_step(self, target: str, origin: Action) -> bool:
        """A verdict naming a step this chain does not have: a permanent dead end, not a crash.

        The linter reports such a target; an imported chain can still carry one
        (a row written for another scope's step), and a run must end cleanly on it.
        """
        if self.spec.action(target) is not None:
            return False
        verdict = dead(f"unknown_step_{target or 'none'}", True)
        self.log.set(note=f"{target!r} is not a step of this chain")
        self.dead_end(verdict, origin)
        return True

    def give_up(self, action: Action, reason: str, row: str, note: str | None = None) -> None:
        """A dead end the run decides itself (a budget, no options), traced at ``row``."""
        verdict = dead(reason, False)
        self.log.transition(action.id, row, verdict, note)
        self.dead_end(verdict, action)

    def dead_end(self, v: Verdict, action: Action | None) -> None:
        """End the run, or unwind its landed commits first (P5)."""
        s = self.snapshot
        if s.compensation is not None:
            self.peers.compensation.failed(f"{action.id if action else '?'}: {format_verdict(v)}")
            return
        if action is not None:
            record = self.peers.reconcile.pending(action.id)
            if record is not None and record.status == "PENDING":
                record.status = "NOT_LANDED"  # a table dead_end is a deterministic reject
        s.outcome = {
            "verdict": format_verdict(v),
            "reason": v.reason or "dead_end",
            "permanent": v.permanent,
            "retry_after_hint": v.retry_after_hint,
            "step": action.id if action else None,
        }
        pending = [i for i, lc in enumerate(s.commits_landed) if not lc.compensated]
        if pending:
            self.peers.compensation.start(pending)
            return
        s.state = "dead_end"
        s.waiting = NOT_WAITING
