"""Handles of a run: minting, invalidation, refresh targets (SPEC §4 I1, I2, I4, I5).

A handle is an alias ``<handle>#<n>`` and its lineage; its value never
exists here. Minting a handle that is live invalidates the old generation
and everything derived from it first (I1 before I2). Handles a landed commit
minted are facts (I5): a compensator presents them even after a rewind has
re-minted their inputs, and no rewind goes back into the commit to re-mint
them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..graph import GraphError, cascade, cascades
from ..memo import remember
from ..model import Action, ChainSpec, commit_steps
from .part import Part
from .state import HandleState, Option

if TYPE_CHECKING:
    from .events import EventLog
    from .ports import Host
    from .state import Snapshot

__all__ = ["Handles", "refresh_step"]

_ALIAS = re.compile(r"^([A-Za-z_][\w.\-]*)#\d+$")


def _descendants(spec: ChainSpec) -> dict[str, list[str]]:
    """Every handle derived from each handle, through commit-minted ones too (I1).

    Kept per chain (:mod:`chains.core.memo`): the explorer builds thousands of runs of one chain.
    """
    return remember(spec, "descendants", lambda: _walk_descendants(spec))


def _walk_descendants(spec: ChainSpec) -> dict[str, list[str]]:
    try:
        found = cascades(spec)
    except GraphError:  # a cycle: cascade what can be, handle by handle
        found = {}
        for h in spec.handles:
            try:
                found[h.id] = cascade(spec, h.id)
            except GraphError:
                continue
    out: dict[str, list[str]] = {}
    for hid in found:
        dead: list[str] = []
        queue = [hid]
        while queue:
            c = found.get(queue.pop(0))
            if c is None:
                continue
            facts = [h for h in c.facts if h not in dead]
            dead += [h for h in c.invalidated if h not in dead] + facts
            queue += facts
        out[hid] = dead
    return out


def _selection_inputs(spec: ChainSpec) -> frozenset[str]:
    """The handles some selection step consumes."""
    return frozenset(h for a in spec.actions if a.effect == "select" for h in a.input.handles)


def refresh_step(spec: ChainSpec, handle_id: str) -> str | None:
    """The step a run goes back to when ``handle_id`` must be re-minted; None when none does.

    Its declared ``staleness.refresh``, the cheapest re-mint (SPEC §2.2).
    Without one (absent or ``n/a``), its minter when that is a read, mint or
    selection of this chain, which re-mints what it made; never a commit,
    whose output is a fact no step of this run re-mints (I5), nor a chain the
    handle came from. None leaves the caller at SPEC §3's "else dead_end".

    >>> doc = ChainSpec.model_validate({"id": "c", "handles": [
    ...     {"id": "results", "minted_by": "search"},
    ...     {"id": "order", "minted_by": "book", "staleness": {"refresh": "n/a"}}],
    ...     "actions": [{"id": "search", "effect": "read"}, {"id": "book", "effect": "commit"}]})
    >>> refresh_step(doc, "results"), refresh_step(doc, "order")
    ('search', None)
    """
    handle = spec.handle(handle_id)
    if handle is None:
        return None
    declared = handle.staleness.refresh if handle.staleness else None
    if declared and declared != "n/a":
        return declared
    minter = handle.minted_by
    if minter is None or spec.action(minter) is None or minter in commit_steps(spec):
        return None
    return minter


class Handles(Part):
    """The live handles in the snapshot, and the rules that change them."""

    __slots__ = ("host",)

    def __init__(
        self,
        spec: ChainSpec,
        snapshot: Snapshot,
        log: EventLog,
        host: Host,
    ):
        super().__init__(spec, snapshot, log)
        self.host = host

    def mint(self, action: Action, option: Option | None = None) -> list[str]:
        """New aliases for every handle ``action`` outputs; returns them in output order."""
        s = self.snapshot
        fanout = self.host.fanout
        minted = []
        for hid in action.output.handles:
            if hid in s.handles:  # a live handle re-minted: I1 before I2
                self.invalidate([hid], including_roots=False)
            handle = self.spec.handle(hid)
            parents = handle.derived_from if handle else []
            count = s.mint_counts.get(hid, 0) + 1
            if fanout is not None:  # aliases of shared handles are unique across branches
                count = fanout.claim(hid, count)
            s.mint_counts[hid] = count
            alias = f"{hid}#{count}"
            s.handles[hid] = HandleState(
                alias=alias,
                lineage=[s.handles[p].alias for p in parents if p in s.handles],
                minted_by=action.id,
                minted_seq=s.seq,
                minted_at=s.clock,
                option=option,
            )
            minted.append(alias)
            self.log.minted(alias)
        return minted

    def options_key(self, action: Action, aliases: list[str]) -> str | None:
        """The alias the options ``action`` returned are kept under (I2, I3).

        A read that mints several handles at once (a search minting the
        request and the offers under it) keeps its options for the handle a
        selection step consumes, since that step offers them; otherwise for
        the first handle it minted.
        """
        selected = remember(self.spec, "selection inputs", lambda: _selection_inputs(self.spec))
        for alias in aliases:
            if alias.rsplit("#", 1)[0] in selected:
                return alias
        return aliases[0] if aliases else None

    def invalidate(self, handle_ids: list[str], including_roots: bool = True) -> None:
        """Kill handles and every live handle derived from them, atomically (I1).

        That includes handles a landed commit minted: I1 invalidates "every
        handle with a ``derived_from`` path" to a re-minted one, so no step
        may present the old lineage's hold next to a new intent. The landed
        commit itself stays a fact (I5): it keeps its entry in
        ``commits_landed``, with the aliases it minted and consumed, and only
        compensation unwinds it.
        """
        s = self.snapshot
        lineage = _descendants(self.spec)
        dead: list[str] = list(handle_ids) if including_roots else []
        for hid in handle_ids:
            dead += lineage.get(hid, [])
        for hid in dict.fromkeys(dead):
            state = s.handles.pop(hid, None)
            if state is None:
                continue
            s.results.pop(state.alias, None)
            self.log.invalidated(state.alias)

    def minted_by(self, step: str) -> list[str]:
        """The handles ``step`` outputs."""
        return list(self.action(step).output.handles)

    def refresh(self, handle_id: str) -> str | None:
        """The step that re-mints ``handle_id`` (:func:`refresh_step`)."""
        return refresh_step(self.spec, handle_id)

    def is_fact(self, action_id: str) -> bool:
        """True when ``action_id`` is a commit: what it landed is a fact (I5)."""
        return action_id in commit_steps(self.spec)

    def presented(self, action: Action) -> list[str]:
        """Aliases a dispatch of ``action`` presents.

        Live handles, except during an unwind: a compensator acts on what the
        landed commit it undoes presented and minted (I5: facts), even where
        a rewind has re-minted those handles since.
        """
        s = self.snapshot
        facts: dict[str, str] = {}
        if s.compensation is not None and s.compensation.queue:
            landed = s.commits_landed[s.compensation.queue[0]]
            facts = {alias.split("#")[0]: alias for alias in [*landed.consumed, *landed.handles]}
        return [
            facts[h] if h in facts else s.handles[h].alias
            for h in action.input.handles
            if h in facts or h in s.handles
        ]

    def looks_like_handle(self, value: Any) -> bool:
        """True for a live alias or anything shaped like one (handles are code-owned)."""
        if not isinstance(value, str):
            return False
        m = _ALIAS.match(value)
        live = {st.alias for st in self.snapshot.handles.values()}
        return value in live or bool(m and self.spec.handle(m[1]) is not None)
