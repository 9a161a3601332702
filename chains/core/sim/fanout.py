"""Fan-out: sibling runs sharing one read prefix (SPEC §4 I7, CONFORMANCE C3.6).

A planner may compare N candidate selections in parallel: each is a full
run (its own budgets, trace and snapshot), branched from one run that has
done the shared reads. The shared handles are stored once and referred to
by alias from every branch. When any branch rewinds to re-mint a shared
handle (it found it stale), the alias is marked dead for all of them and
that branch becomes the one re-minting it. A sibling notices at its next
step arrival — before it uses the handle or anything derived from it —
invalidates it and its descendants in its own state (I1), and adopts the
re-minted handle if it is there, or waits (``Waiting.kind == "shared"``)
until the re-minting branch re-shares it: the re-mint happens once. Only
when no live sibling is re-minting does a branch re-mint itself. Moving its
cursor back costs each sibling a rewind from its own budget.

The group's shared store lives in the parent's snapshot
(:class:`~.state.SharedStore`) and every branch's snapshot names its parent
(``branch_of``), so the snapshots alone resume the group
(:meth:`Fanout.resume`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Action
from ..verdicts import Verdict
from .runtime import Run, SimulationError
from .state import Event, SharedStore, Snapshot, Waiting

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
        self.branches: list[Run] = []
        s = run.snapshot
        s.fanout = SharedStore(
            shared=names,
            handles={h: live[h] for h in names},
            results={live[h].alias: list(s.results.get(live[h].alias, [])) for h in names},
            counts={h: s.mint_counts.get(h, 0) for h in names},
        )

    @property
    def state(self) -> SharedStore:
        store = self.parent.snapshot.fanout
        assert store is not None
        return store

    @property
    def shared(self) -> set[str]:
        return set(self.state.shared)

    def branch(self) -> Run:
        """A new run continuing from the parent's state, with its own budgets and trace."""
        parent = self.parent.snapshot
        snap = parent.model_copy(deep=True)
        snap.run_id = f"{parent.run_id}.b{len(self.state.branches) + 1}"
        snap.seq = 0
        snap.dispatches = {}  # 1:1 with this branch's own attempt events
        snap.fanout = None
        snap.branch_of = parent.run_id
        run = Run(self.parent.spec, snap, [])
        run.fanout = self
        run.log.transition(
            None, None, note=f"branch of {parent.run_id} sharing {sorted(self.shared)}", source=None
        )
        run.log.flush()
        self.state.branches.append(snap.run_id)
        self.branches.append(run)
        return run

    @classmethod
    def resume(cls, parent: Run, branches: list[tuple[Snapshot, list[Event]]]) -> Fanout:
        """The group again, from the parent's run and the branches' snapshots and traces."""
        if parent.snapshot.fanout is None:
            raise SimulationError(f"run {parent.snapshot.run_id} has no fan-out to resume")
        group = cls.__new__(cls)
        group.parent = parent
        group.branches = []
        for snapshot, trace in branches:
            if snapshot.branch_of != parent.snapshot.run_id:
                raise SimulationError(
                    f"run {snapshot.run_id} is not a branch of {parent.snapshot.run_id}"
                )
            run = Run.resume(parent.spec, snapshot, trace)
            run.fanout = group
            group.branches.append(run)
        return group

    # --- hooks the runtime calls -------------------------------------------------

    def discovered_dead(self, run: Run, handle_ids: Iterable[str]) -> None:
        """``run`` is about to re-mint these handles: shared ones die for every branch."""
        for hid in handle_ids:
            state = run.snapshot.handles.get(hid)
            if hid in self.shared and state is not None:
                if state.alias not in self.state.dead:
                    self.state.dead.append(state.alias)
                self.state.reminting[hid] = run.snapshot.run_id

    def claim(self, handle_id: str, count: int) -> int:
        """The mint number for a new alias of ``handle_id``: unique in the whole group."""
        if handle_id not in self.shared:
            return count
        number = max(count, self.state.counts.get(handle_id, 0) + 1)
        self.state.counts[handle_id] = number
        return number

    def publish(self, run: Run, action: Action) -> None:
        """``run`` minted handles: a fresh shared one is re-shared, and waiting siblings go on."""
        store = self.state
        for hid in action.output.handles:
            state = run.snapshot.handles.get(hid)
            if hid in self.shared and state is not None and state.alias not in store.dead:
                store.handles[hid] = state
                store.results[state.alias] = list(run.snapshot.results.get(state.alias, []))
                store.reminting.pop(hid, None)
                me = run.snapshot.run_id
                for sibling in self.branches:
                    w = sibling.snapshot.waiting
                    if sibling.snapshot.run_id != me and w.kind == "shared" and hid in w.fields:
                        self._wake(sibling, hid)

    def sync(self, run: Run, arriving: Action) -> bool:
        """Before ``run`` goes on: drop dead shared handles; True when the cursor moved."""
        s = run.snapshot
        store = self.state
        dead = [
            h for h in sorted(self.shared) if h in s.handles and s.handles[h].alias in store.dead
        ]
        if not dead:
            return False
        hid = dead[0]
        old = s.handles[hid].alias
        target = self._after_minter(run, hid)
        fresh = store.handles.get(hid)
        adoptable = fresh is not None and fresh.alias not in store.dead and target is not None
        waiting = not adoptable and target is not None and self._reminted_by_sibling(run, hid)
        if adoptable or waiting:
            verdict = Verdict(type="rewind", to=target)
        else:
            verdict = Verdict(type="rewind", to=run.handles.refresh(hid) or arriving.id)
        run.log.transition(
            arriving.id, "I7:shared", verdict, f"shared {old} died in a sibling branch"
        )
        run.handles.invalidate([hid])
        if adoptable:
            self._adopt(run, hid)
            return True
        if waiting:
            who = store.reminting[hid]
            run.log.set(note=f"{who} is re-minting it: waiting for the re-share")
            s.waiting = Waiting(kind="shared", step=run.handles.refresh(hid), fields=[hid])
            return True
        refresh = run.handles.refresh(hid)
        if refresh is None:
            return False
        run.backtrack.rewind(refresh, arriving, in_process=True)
        return True

    def adopt_instead(self, run: Run, target: str) -> bool:
        """``run`` rewinds to re-mint shared handles a sibling has already re-shared.

        Then it takes the re-shared ones instead of re-minting (the rewind is
        already paid from its own budget) and goes on after their minter;
        True when it did.
        """
        s = run.snapshot
        store = self.state
        shared = [h for h in run.handles.minted_by(target) if h in self.shared]
        fresh = [store.handles.get(h) for h in shared]
        if not shared or any(
            f is None or f.alias in store.dead or (h in s.handles and s.handles[h].alias == f.alias)
            for h, f in zip(shared, fresh, strict=True)
        ):
            return False
        after = self._after_minter(run, shared[0])
        if after is None:
            return False
        run.handles.invalidate(shared)  # I1: the old lineage goes first
        for hid in shared:
            self._take(run, hid)
        run.steps.arrive(after)
        return True

    def traces(self) -> dict[str, list[Event]]:
        return {b.snapshot.run_id: b.trace for b in self.branches}

    # --- adopting a re-shared handle ------------------------------------------------

    def _after_minter(self, run: Run, hid: str) -> str | None:
        """The step after the shared handle's minter: where an adopting branch goes on."""
        handle = self.parent.spec.handle(hid)
        steps = run.steps.main()
        minter = handle.minted_by if handle else None
        if minter not in steps:
            return None
        after = steps.index(minter) + 1
        return steps[after] if after < len(steps) else None

    def _reminted_by_sibling(self, run: Run, hid: str) -> bool:
        who = self.state.reminting.get(hid)
        return who != run.snapshot.run_id and any(
            b.snapshot.run_id == who and not b.finished for b in self.branches
        )

    def _wake(self, run: Run, hid: str) -> None:
        """A sibling re-shared ``hid``: the waiting ``run`` adopts it and goes on."""
        run.log.transition(run.snapshot.cursor, "I7:shared", note="the sibling re-shared it")
        self._adopt(run, hid)
        run.log.flush()

    def _adopt(self, run: Run, hid: str) -> None:
        s = run.snapshot
        target = self._after_minter(run, hid)
        assert target is not None
        if s.budgets.rewinds_left <= 0:
            verdict = Verdict(type="dead_end", reason="max_rewinds_exhausted", permanent=False)
            run.log.set(verdict=verdict)
            run.outcomes.dead_end(verdict, run.action(target))
            return
        s.budgets.rewinds_left -= 1
        self._take(run, hid)
        run.steps.arrive(target)

    def _take(self, run: Run, hid: str) -> None:
        """Put the re-shared ``hid`` (and its options) into ``run``'s live handles."""
        s = run.snapshot
        fresh = self.state.handles[hid]
        s.handles[hid] = fresh
        s.results[fresh.alias] = list(self.state.results.get(fresh.alias, []))
        count = int(fresh.alias.rsplit("#", 1)[1])
        s.mint_counts[hid] = max(s.mint_counts.get(hid, 0), count)
        run.log.set(note=f"adopted the re-shared {fresh.alias}; no second re-mint")
