"""Compensation: unwinding landed commits after a dead end (SPEC P5, C8).

A dead end that finds landed, uncompensated commits unwinds them, in the
policy's ``compensation_order`` when it names them and in reverse landing
order otherwise. Each commit's compensation is an action, a chain of
actions, or a ladder whose rungs match what the landing showed. An
original that a later commit replaces (``compensation.replaced_by``) is
left standing unless that replacement stands (C8.2: replace before
compensate), and the outcome says why under ``kept``. Any failure while
unwinding escalates to the operator with what is left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..model import compensators
from ..verdicts import Verdict, format_verdict
from .classifier import matches
from .part import Part
from .state import NOT_WAITING, Observation, Unwind

if TYPE_CHECKING:
    from ..model import ChainSpec
    from .events import EventLog
    from .ports import Cursor
    from .state import Snapshot

__all__ = ["Compensation"]


class Needs(Protocol):
    """The parts :class:`Compensation` calls, each through its interface in :mod:`.ports`."""

    @property
    def steps(self) -> Cursor: ...


class Compensation(Part):
    """The unwind queue in the snapshot, and the steps that work it off."""

    __slots__ = ("peers",)

    def __init__(
        self,
        spec: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        peers: Needs,
    ):
        super().__init__(spec, snapshot, log)
        self.peers = peers

    def start(self, pending: list[int]) -> None:
        """Unwind the landed commits at indices ``pending`` of ``commits_landed``."""
        s = self.snapshot
        order = self.spec.policy.per_chain.compensation_order
        landed = s.commits_landed
        queue = list(reversed(pending))
        if isinstance(order, list):

            def rank(i: int) -> int:
                names = [landed[i].step, *compensators(self.action(landed[i].step))]
                hits = [order.index(n) for n in names if n in order]
                return min(hits) if hits else len(order)

            queue.sort(key=rank)  # stable: unnamed ones keep reverse landing order
        s.compensation = Unwind(reason=dict(s.outcome), queue=queue)
        s.state = "compensating"
        self.log.transition(
            None,
            "compensation_order",
            note=f"dead_end with landed commits: unwinding {[landed[i].step for i in queue]}",
        )
        self.next()

    def next(self) -> None:
        """Arrive at the first compensator of the queue's head, or finish the dead end."""
        s = self.snapshot
        unwind = s.compensation
        assert unwind is not None
        while unwind.queue:
            lc = s.commits_landed[unwind.queue[0]]
            kept = self.kept(unwind.queue[0])
            if kept is not None:
                unwind.reason.setdefault("kept", {})[lc.step] = kept
                self.log.transition(
                    lc.step,
                    "compensation.replaced_by",
                    note=f"{lc.step} left standing, not compensated: {kept}",
                )
                unwind.queue.pop(0)
                continue
            action = self.action(lc.step)
            comp = action.compensation
            steps: list[str] = []
            if comp is None:
                self.failed(f"{lc.step} declares no compensation")
                return
            if comp.action and comp.action != "none":
                steps = [comp.action]
            elif comp.chain:
                steps = list(comp.chain)
            elif comp.ladder:
                facts = Observation(predicates=lc.predicates)
                for rung in comp.ladder:
                    if rung.when is None or matches(rung.when, facts):
                        if rung.else_ is not None and not (rung.chain or rung.action):
                            self.failed(f"{lc.step}: ladder fell to {format_verdict(rung.else_)}")
                            return
                        steps = list(rung.chain) or ([rung.action] if rung.action else [])
                        break
            if not steps:
                unwind.reason.setdefault("not_compensable", []).append(lc.step)
                unwind.queue.pop(0)
                continue
            unwind.steps = steps
            unwind.pos = 0
            self.peers.steps.arrive(steps[0])
            return
        s.outcome = {
            **unwind.reason,
            "compensated": [lc.step for lc in s.commits_landed if lc.compensated],
        }
        s.compensation = None
        s.state = "dead_end"
        s.cursor = None
        s.waiting = NOT_WAITING

    def kept(self, i: int) -> str | None:
        """Why the landed commit at ``i`` stays standing, or None when it is unwound.

        A commit whose compensation names ``replaced_by`` is an original that
        a later commit replaces (a rebook, SPEC §2.1 ordering_note, C8.2): it is
        given up only while a later landing of its replacement stands, that
        is, landed and neither compensated nor still waiting in this unwind.
        Otherwise compensating it would leave the user with neither.
        """
        s = self.snapshot
        comp = self.action(s.commits_landed[i].step).compensation
        if comp is None or not comp.replaced_by:
            return None
        later = [
            j
            for j in range(i + 1, len(s.commits_landed))
            if s.commits_landed[j].step == comp.replaced_by
        ]
        if not later:
            return f"{comp.replaced_by} did not land"
        waiting = s.compensation.queue[1:] if s.compensation else []
        if any(not s.commits_landed[j].compensated and j not in waiting for j in later):
            return None
        if all(s.commits_landed[j].compensated for j in later):
            return f"{comp.replaced_by} was compensated"
        return f"{comp.replaced_by} is still to be compensated in this unwind"

    def failed(self, why: str) -> None:
        """Stop unwinding; the operator owns what is left uncompensated."""
        s = self.snapshot
        unwind = s.compensation
        left = [s.commits_landed[i].step for i in unwind.queue] if unwind else []
        self.log.transition(
            s.cursor,
            "compensation_failed",
            Verdict(type="escalate", audience="operator"),
            f"compensation failed ({why}); uncompensated: {left}",
        )
        s.outcome = {
            **(unwind.reason if unwind else s.outcome),
            "escalated": "operator",
            "uncompensated": left,
            "compensation_failure": why,
        }
        s.compensation = None
        s.state = "escalated"
        s.waiting = NOT_WAITING
