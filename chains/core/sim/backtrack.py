"""Moving back: rewind, repair and reselect, each spending the run's budgets (SPEC §3, C4).

A verdict that sends the run back to an earlier step spends a rewind (a
repair also spends a repair), invalidates what the target minted (I3, I4,
I6; facts are never invalidated), and arrives there again, or, in external
mode, ends the run with a typed restart the planner acts on (SPEC §2.3).
A target the chain does not have, or a spent-out budget, is a dead end the
run decides itself, through :class:`~.outcomes.Outcomes`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from ..graph import GraphError, repair_scope
from ..memo import remember
from ..model import Action, is_commit_class
from ..signals import normalize_atom
from ..verdicts import Verdict, format_verdict
from .classifier import matches, observed_atoms
from .part import Part
from .state import NOT_WAITING, Observation, Waiting

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Cursor, HandleBook, Host, Unwinds, Verdicts
    from .state import Snapshot

__all__ = ["Backtrack"]


class Needs(Protocol):
    """The parts :class:`Backtrack` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...

    @property
    def outcomes(self) -> Verdicts: ...

    @property
    def compensation(self) -> Unwinds: ...

    @property
    def handles(self) -> HandleBook: ...


class Backtrack(Part):
    """Rewind, repair and reselect: budgeted moves back, with invalidation."""

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

    def rewind(self, target: str, origin: Action, in_process: bool = False) -> None:
        """Rewind to ``target``; ``in_process`` even in external mode (an I4 re-mint)."""
        s = self.snapshot
        peers = self.peers
        if s.compensation is not None:
            peers.compensation.failed(f"{origin.id}: rewind(to: {target})")
            return
        if not in_process:
            target = self.re_minting(target, origin)
        if not self.spend(target, origin):
            return
        to = self.action(target)
        minted = peers.handles.minted_by(target)
        fanout = self.host.fanout
        if fanout is not None:
            if (in_process or s.mode == "internal") and fanout.adopt_instead(self.host, target):
                return  # a sibling already re-minted it: the re-mint happens once (I7)
            fanout.discovered_dead(self.host, minted)
        peers.handles.invalidate(minted, including_roots=not is_commit_class(to))
        if s.mode == "external" and not in_process:
            self.restart(target, None, f"rewind(to: {target}) from {origin.id}")
            return
        peers.steps.arrive(target)

    def re_minting(self, target: str, origin: Action) -> str:
        """``target``, or the dead handle's refresh when ``target`` would skip its re-mint (C2.3).

        A rewind answering ``origin``'s response, whose signal reports a
        handle ``origin`` presented stale (its own ``staleness.detect``
        atom, or the only one that matched), may go back coarser than the
        handle's refresh, never to a point whose replay presents the handle
        again before a step re-mints it: SPEC §2.2 names the refresh "the
        rewind target when it dies". Such a target is refused, with a
        transition saying so, for the refresh of the shallowest dead handle
        it skips. An unattributable signal (one every candidate lists) is
        left to the row: which handle died is the config's guess.
        """
        s = self.snapshot
        obs = s.last_observation
        if obs is None or s.waiting.kind != "observe" or s.waiting.step != origin.id:
            return target
        steps = self.peers.steps.main()
        if target not in steps:
            return target
        for hid in self.reported_dead(origin, obs):
            if not self.presents_before_re_mint(steps[steps.index(target) :], hid):
                continue
            refresh = self.peers.handles.refresh(hid)
            if refresh is None or refresh == target or refresh not in steps:
                continue
            self.log.transition(
                origin.id,
                "stale:refresh",
                Verdict(type="rewind", to=refresh),
                f"rewind(to: {target}) would present {s.handles[hid].alias} again before "
                f"re-minting it; rewinds to its refresh {refresh} instead (C2.3)",
            )
            return refresh
        return target

    def reported_dead(self, origin: Action, obs: Observation) -> list[str]:
        """The live inputs of ``origin`` that ``obs`` reports stale, shallowest first."""
        s = self.snapshot
        atoms = observed_atoms(obs)
        detects: dict[str, list[str]] = {}
        for hid in dict.fromkeys(origin.input.handles):
            h = self.spec.handle(hid)
            if h is not None and hid in s.handles and h.staleness and h.staleness.detect:
                detects[hid] = [normalize_atom(a) for a in h.staleness.detect]
        hits = {h: [a for a in d if matches(a, obs, atoms)] for h, d in detects.items()}
        hits = {h: found for h, found in hits.items() if found}
        listed = Counter(a for d in detects.values() for a in set(d))
        reporting = [h for h, found in hits.items() if any(listed[a] == 1 for a in found)]
        dead = reporting or (list(hits) if len(hits) == 1 else [])
        return sorted(dead, key=lambda h: s.handles[h].minted_seq)

    def presents_before_re_mint(self, replay: list[str], handle_id: str) -> bool:
        """Does the replay (main steps from the target on) present the handle before minting it?"""
        for step in replay:
            action = self.action(step)
            if handle_id in action.input.handles:
                return True
            if handle_id in action.output.handles:
                return False
        return False

    def repair(self, v: Verdict, origin: Action, values: dict[str, Any] | None) -> None:
        """Spend a rewind and a repair; apply ``values`` or wait for a repair proposal."""
        s = self.snapshot
        if s.compensation is not None:
            self.peers.compensation.failed(f"{origin.id}: {format_verdict(v)}")
            return
        if not self.spend(v.to or "", origin, repair=True):
            return
        if s.mode == "external":
            s.intent.update(values or {})
            self.invalidate_for_repair(v)
            self.restart(v.to or "", list(v.fields), f"{format_verdict(v)} from {origin.id}")
            return
        if values is not None and set(v.fields) <= set(values):
            self.apply_repair(v, values)
            return
        if values:
            s.intent.update(values)
        s.state = "running"
        s.waiting = Waiting(
            kind="repair", step=v.to, fields=list(v.fields), audience=self.repair_audience()
        )

    def repair_audience(self) -> str:
        for step in self.spec.policy.escalation:
            if any("repair" in m.lower() for m in step.may):
                return step.audience
        return "model"

    def apply_repair(self, v: Verdict, values: dict[str, Any]) -> None:
        self.snapshot.intent.update(values)
        self.invalidate_for_repair(v)
        self.peers.steps.arrive(v.to or "")

    def invalidate_for_repair(self, v: Verdict) -> None:
        """I6: what the repaired fields fed, and everything derived from it; never facts."""
        handles = self.peers.handles
        target = v.to or ""
        try:
            chain, fields = self.spec, tuple(v.fields)
            scope = remember(
                chain, ("repair scope", target, fields), lambda: repair_scope(chain, target, fields)
            )
            dead_ids = scope.invalidated
        except GraphError:
            dead_ids = handles.minted_by(target)
        facts = {
            h
            for h in dead_ids
            if (m := self.spec.handle(h)) and m.minted_by and handles.is_fact(m.minted_by)
        }
        handles.invalidate([h for h in dead_ids if h not in facts])

    def restart(self, target: str, fields: list[str] | None, reason: str) -> None:
        """External mode: end the run with a typed restart the planner acts on (SPEC §2.3)."""
        s = self.snapshot
        b = s.budgets
        s.state = "restart_required"
        s.waiting = NOT_WAITING
        s.outcome = {
            "restart_required": {
                "rewind_to": target,
                "repair_fields": fields,
                "reason": reason,
                "budgets_remaining": {"rewinds": b.rewinds_left, "repairs": b.repairs_left},
            }
        }

    def reselect(self, target: str, origin: Action) -> None:
        """Back to selection step ``target`` with the last pick excluded (I3)."""
        s = self.snapshot
        handles = self.peers.handles
        if not self.spend(target, origin):
            return
        for hid in handles.minted_by(target):
            state = s.handles.get(hid)
            if state is not None and state.option is not None:
                s.excluded.setdefault(target, []).append(state.option.id)
        handles.invalidate(handles.minted_by(target))
        if target not in s.fresh:
            s.fresh.append(target)
        self.peers.steps.arrive(target)

    def spend(self, target: str, origin: Action, repair: bool = False) -> bool:
        """Spend a rewind (and a repair) to move back to ``target``; False when the run cannot.

        An unknown ``target`` or an exhausted budget (the rewinds checked
        first) ends the run as a dead end, and nothing is spent.
        """
        outcomes = self.peers.outcomes
        b = self.snapshot.budgets
        if outcomes.unknown_step(target, origin):
            return False
        if b.rewinds_left <= 0:
            outcomes.give_up(origin, "max_rewinds_exhausted", "budget")
            return False
        if repair and b.repairs_left <= 0:
            outcomes.give_up(origin, "max_repairs_exhausted", "budget")
            return False
        b.rewinds_left -= 1
        if repair:
            b.repairs_left -= 1
        return True
