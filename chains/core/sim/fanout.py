"""Fan-out: sibling runs sharing one read prefix (SPEC §4 I7, CONFORMANCE C3.6).

A planner may compare N candidate selections in parallel: each is a full
run (its own budgets, trace and snapshot), branched from one run that has
done the shared reads. The shared handles are stored once here and referred
to by alias from every branch. When any branch rewinds to re-mint a shared
handle (it found it stale), the alias is marked dead for all of them; a
sibling notices at its next step arrival — before it uses the handle or
anything derived from it — invalidates it and its descendants in its own
state (I1), and adopts the re-minted handle if a sibling already made it,
so the re-mint happens once and is re-shared. Moving its cursor back costs
the sibling a rewind from its own budget.

The group lives beside the runs, not in their snapshots: resuming a branch
from its snapshot resumes it as a plain run.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Action
from ..verdicts import Verdict
from .runtime import Run, SimulationError
from .state import Event, HandleState, Option

__all__ = ["Fanout"]


class Fanout:
    """Branches of one run that share the handles it holds when branched."""

    def __init__(self, run: Run, shared: Iterable[str] | None = None):
        live = run.snapshot.handles
        names = list(shared) if shared is not None else list(live)
        unknown = [h for h in names if h not in live]
        if unknown:
            raise SimulationError(f"only live handles can be shared; {unknown} are not live")
        self.parent = run
        self.shared = set(names)
        self.store: dict[str, HandleState] = {h: live[h].model_copy(deep=True) for h in names}
        self.results: dict[str, list[Option]] = {
            live[h].alias: list(run.snapshot.results.get(live[h].alias, [])) for h in names
        }
        self.dead: set[str] = set()
        self.branches: list[Run] = []
        self.counts = {h: run.snapshot.mint_counts.get(h, 0) for h in names}

    def branch(self) -> Run:
        """A new run continuing from the parent's state, with its own budgets and trace."""
        parent = self.parent.snapshot
        snap = parent.model_copy(deep=True)
        snap.run_id = f"{parent.run_id}.b{len(self.branches) + 1}"
        snap.seq = 0
        snap.dispatches = {}  # 1:1 with this branch's own attempt events
        run = Run(self.parent.chain, snap, [])
        run.fanout = self
        run.log.transition(
            None, None, note=f"branch of {parent.run_id} sharing {sorted(self.shared)}", source=None
        )
        run.log.flush()
        self.branches.append(run)
        return run

    # --- hooks the runtime calls -------------------------------------------------

    def discovered_dead(self, run: Run, handle_ids: Iterable[str]) -> None:
        """``run`` is about to re-mint these handles: shared ones die for every branch."""
        for hid in handle_ids:
            state = run.snapshot.handles.get(hid)
            if hid in self.shared and state is not None:
                self.dead.add(state.alias)

    def claim(self, handle_id: str, count: int) -> int:
        """The mint number for a new alias of ``handle_id``: unique in the whole group."""
        if handle_id not in self.shared:
            return count
        number = max(count, self.counts.get(handle_id, 0) + 1)
        self.counts[handle_id] = number
        return number

    def publish(self, run: Run, action: Action) -> None:
        """``run`` minted handles: a fresh shared one is re-shared with the siblings."""
        for hid in action.output.handles:
            state = run.snapshot.handles.get(hid)
            if hid in self.shared and state is not None and state.alias not in self.dead:
                self.store[hid] = state.model_copy(deep=True)
                self.results[state.alias] = list(run.snapshot.results.get(state.alias, []))

    def sync(self, run: Run, arriving: Action) -> bool:
        """Before ``run`` goes on: drop dead shared handles; True when the cursor moved."""
        s = run.snapshot
        dead = [
            h for h in sorted(self.shared) if h in s.handles and s.handles[h].alias in self.dead
        ]
        if not dead:
            return False
        hid = dead[0]
        old = s.handles[hid].alias
        fresh = self.store.get(hid)
        adoptable = fresh is not None and fresh.alias not in self.dead
        minter = self.parent.chain.action(s.handles[hid].minted_by)
        steps = run.steps.main()
        after = steps.index(minter.id) + 1 if minter and minter.id in steps else None
        target = steps[after] if adoptable and after is not None and after < len(steps) else None
        run.log.transition(
            arriving.id,
            "I7:shared",
            Verdict(type="rewind", to=target or run.handles.refresh(hid) or arriving.id),
            f"shared {old} died in a sibling branch",
        )
        run.handles.invalidate([hid])
        if target is None or fresh is None:
            refresh = run.handles.refresh(hid)
            if refresh is None:
                return False
            run.outcomes.rewind(refresh, arriving, in_process=True)
            return True
        if s.budgets.rewinds_left <= 0:
            verdict = Verdict(type="dead_end", reason="max_rewinds_exhausted", permanent=False)
            run.log.set(verdict=verdict)
            run.outcomes.dead_end(verdict, arriving)
            return True
        s.budgets.rewinds_left -= 1
        s.handles[hid] = fresh.model_copy(deep=True)
        s.results[fresh.alias] = list(self.results.get(fresh.alias, []))
        count = int(fresh.alias.rsplit("#", 1)[1])
        s.mint_counts[hid] = max(s.mint_counts.get(hid, 0), count)
        run.log.set(note=f"adopted the re-shared {fresh.alias}; no second re-mint")
        run.steps.arrive(target)
        return True

    def traces(self) -> dict[str, list[Event]]:
        return {b.snapshot.run_id: b.trace for b in self.branches}
