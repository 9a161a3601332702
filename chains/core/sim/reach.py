"""What an exploration reached of its chain, and why it did not reach the rest.

The explorer's counts (states, paths, terminal states) say how much it
searched, not how much of the chain it saw: a chain whose second step always
dead-ends explores a few states, breaks no invariant and looks clean. This
module owns the other half of the answer. :func:`declared` lists what a
complete exploration would reach (the denominators), a :class:`Recorder`
reads what a search reaches from what a run exposes publicly (its trace
events and its snapshot, :mod:`.state`), and :class:`Reach` holds the result:
it merges across shards, prints the ``coverage`` block of a result and says
in words what fell short (:meth:`Reach.warnings`).

The denominators, each in document order:

* **steps**: the chain's main-path steps, in every variant it declares (a
  step scoped ``only:`` to one variant counts once). ``probe_only`` reads are
  left out (they run only to confirm a commit); so are compensators (they run
  only in an unwind and are counted under compensations). A read that serves
  as some commit's probe but is not ``probe_only`` is a main step (SPEC §2.1:
  ``probe_only`` marks a read that exists *only* as a probe), and a search
  that skips it has not reached it.
* **rows**: the domain verdict rows that can decide some dispatch: in a
  variant explored, with a scope that covers a main step or a compensator. A
  row without an id is labelled as the classifier labels it
  (:func:`~.classifier.row_label`, ``domain#n``); a row whose scope is prose
  only matches nothing and is not counted.
* **outcomes**: every declared outcome of every gate, as ``gate:outcome``.
* **compensations**: every action the main steps name as their compensation
  (action, chain or ladder rung).

A step is reached when a run arrives at it (``Snapshot.arrivals``, or an
event of that step), a row fired when an event names it, an outcome taken
when a gate was answered with it or timed out into it, and a compensation
run when it was dispatched (an ``attempt`` event).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import ChainSpec, compensators, in_variant, main_steps
from ..signals import scope_applies_to
from .classifier import row_label
from .state import Event, Snapshot

__all__ = ["KINDS", "Declared", "Reach", "Recorder", "declared", "main_steps"]

# The coverage block's kinds, and what each calls an element it saw.
KINDS = {"steps": "reached", "rows": "fired", "outcomes": "taken", "compensations": "run"}
_STOPS_KEPT = 3  # per step: the fewest-fault ways walks ended there, enough to say why


@dataclass(frozen=True)
class Declared:
    """What a complete exploration would reach; ``paths`` is the main path of each variant."""

    steps: list[str]
    rows: list[str]
    outcomes: list[str]
    compensations: list[str]
    paths: list[tuple[str | None, list[str]]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "steps": list(self.steps),
            "rows": list(self.rows),
            "outcomes": list(self.outcomes),
            "compensations": list(self.compensations),
            "paths": [[variant, list(steps)] for variant, steps in self.paths],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Declared:
        return cls(
            steps=list(data["steps"]),
            rows=list(data["rows"]),
            outcomes=list(data["outcomes"]),
            compensations=list(data["compensations"]),
            paths=[(variant, list(steps)) for variant, steps in data["paths"]],
        )


def declared(spec: ChainSpec) -> Declared:
    """The denominators of ``chain``'s coverage, explored in all its variants.

    >>> doc = ChainSpec.model_validate({"id": "c",
    ...     "actions": [{"id": "s", "effect": "read"}],
    ...     "gates": [{"id": "g", "audience": "user", "outcomes": {"yes": "ok", "no": "ok"}}],
    ...     "verdict_table": [{"signal": ["code:X"], "verdict": "retry"}]})
    >>> d = declared(doc)
    >>> d.steps, d.rows, d.outcomes, d.compensations
    (['s'], ['domain#1'], ['g:yes', 'g:no'], [])
    """
    variants: list[str | None] = list(spec.variants.values) if spec.variants else [None]
    paths = [(v, main_steps(spec, v)) for v in variants]
    steps = list(dict.fromkeys(s for _, path in paths for s in path))
    comps: dict[str, None] = {}
    for step in steps:
        action = spec.action(step)
        comps.update((c, None) for c in (compensators(action) if action else []))
    dispatched = [a for a in spec.actions if a.id in set(steps) | set(comps)]
    rows: dict[str, None] = {}
    for row in spec.verdict_table:
        if any(
            in_variant(row.only, v)
            and in_variant(a.only, v)
            and scope_applies_to(row.scope, a) is True
            for v in variants
            for a in dispatched
        ):
            rows.setdefault(row_label(spec, row))
    outcomes = [f"{g.id}:{o}" for g in spec.gates for o in g.outcomes]
    return Declared(steps, list(rows), list(dict.fromkeys(outcomes)), list(comps), paths)


@dataclass
class Reach:
    """What a search (or several shards of one) reached of :attr:`declared`.

    ``stops`` maps a step to the ways walks ended there (terminal or cut), each
    with the fewest faults it took; ``happy`` maps a variant (``""`` for none)
    to how its fault-free walk ended: ``{"state", "step", "why"}``; ``done``
    holds the variants (``""`` for none) in which some walk reached ``done``.
    """

    declared: Declared
    seen: dict[str, set[str]] = field(default_factory=lambda: {k: set() for k in KINDS})
    stops: dict[str, dict[str, int]] = field(default_factory=dict)
    happy: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)

    # --- what it says ----------------------------------------------------------

    def coverage(self) -> dict[str, dict[str, Any]]:
        """The ``coverage`` block: per kind, what was seen (in declared order) and the total."""
        out = {}
        for kind, verb in KINDS.items():
            universe = getattr(self.declared, kind)
            seen = [x for x in universe if x in self.seen[kind]]
            out[kind] = {verb: seen, "total": len(universe)}
        return out

    def missed(self) -> dict[str, list[str]]:
        """Per kind, what was declared and never seen, in declared order."""
        return {
            kind: [x for x in getattr(self.declared, kind) if x not in self.seen[kind]]
            for kind in KINDS
        }

    def happy_path(self) -> list[dict[str, Any]]:
        """How each variant's fault-free walk ended (``ended`` None: the search stopped first)."""
        out = []
        for variant, _ in self.declared.paths:
            end = self.happy.get(variant or "")
            out.append(
                {
                    "variant": variant,
                    "ended": end["state"] if end else None,
                    "step": end.get("step") if end else None,
                    "why": end.get("why") if end else None,
                }
            )
        return out

    def warnings(self, truncated: bool = False) -> list[str]:
        """What a reader must know before calling the result a pass, in words.

        The happy path of a variant that does not reach ``done``, and every
        stretch of main steps no walk arrived at, with the reason the trace
        gives where walks stopped just before it (the fewest-fault ends seen
        there: a dead end's reason, an escalation, the event bound).
        """
        out = []
        if truncated:
            out.append("the search stopped before its bounds, so coverage is partial")
        for variant, _ in self.declared.paths:
            where = f" in variant {variant}" if variant else ""
            end = self.happy.get(variant or "")
            if end is None:
                out.append(f"the happy path{where} did not finish before the search stopped")
            elif end["state"] != "done":
                out.append(f"the happy path{where} does not reach done: {end['why']}")
        reached = self.seen["steps"]
        total = len(self.declared.steps)
        for gap, before, after, variant in self._gaps():
            why = self._why_not_past(before, gap, after, variant)
            out.append(
                f"explored {len(reached & set(self.declared.steps))} of {total} steps: {why}; "
                f"never reached: {', '.join(gap)}"
            )
        return list(dict.fromkeys(out))

    def complete(self, truncated: bool = False) -> bool:
        return not self.warnings(truncated)

    def _gaps(self) -> list[tuple[list[str], str | None, str | None, str]]:
        """Each stretch of unreached steps on a variant's path: the steps around it, the variant."""
        reached = self.seen["steps"]
        found: dict[tuple[str, ...], tuple[str | None, str | None, str]] = {}
        for variant, path in self.declared.paths:
            gap: list[str] = []
            before: str | None = None
            for step in [*path, None]:
                if step is not None and step not in reached:
                    gap.append(step)
                    continue
                if gap:
                    found.setdefault(tuple(gap), (before, step, variant or ""))
                    gap = []
                before = step
        return [(list(g), b, a, v) for g, (b, a, v) in found.items()]

    def _why_not_past(
        self, before: str | None, gap: list[str], after: str | None, variant: str
    ) -> str:
        skipped = " and ".join(gap) if len(gap) < 3 else f"{len(gap)} steps"
        start = f"from {before}" if before else "from the start"
        if after is not None:  # walks went on past the stretch without arriving at it
            return f"walks went {start} straight to {after}, skipping {skipped}"
        if variant in self.done:  # ... or finished without it
            return f"walks went {start} straight to done, skipping {skipped}"
        if before is None:
            return f"no walk arrived at {gap[0]}"
        ends = self.stops.get(before)
        if not ends:
            return f"no explored walk went past {before}"
        fewest = min(ends.values())
        whys = sorted(w for w, n in ends.items() if n == fewest)
        return "; or ".join(whys)

    # --- shards ----------------------------------------------------------------

    def merge(self, other: Reach) -> Reach:
        """Both searches' reach together (shards of one exploration share ``declared``)."""
        merged = Reach(self.declared)
        for kind in KINDS:
            merged.seen[kind] = self.seen[kind] | other.seen[kind]
        for stops in (self.stops, other.stops):
            for step, ends in stops.items():
                for why, faults in ends.items():
                    merged._stop(step, why, faults)
        merged.happy = {**other.happy, **self.happy}
        merged.done = self.done | other.done
        return merged

    def as_dict(self) -> dict[str, Any]:
        """Everything :meth:`from_dict` needs to merge it again (a shard's result carries it)."""
        return {
            "declared": self.declared.as_dict(),
            "seen": {kind: sorted(items) for kind, items in self.seen.items()},
            "stops": {step: dict(ends) for step, ends in sorted(self.stops.items())},
            "happy": dict(self.happy),
            "done": sorted(self.done),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reach:
        reach = cls(Declared.from_dict(data["declared"]))
        for kind in KINDS:
            reach.seen[kind] = set(data["seen"].get(kind, []))
        reach.stops = {step: dict(ends) for step, ends in data.get("stops", {}).items()}
        reach.happy = dict(data.get("happy", {}))
        reach.done = set(data.get("done", []))
        return reach

    def _stop(self, step: str, why: str, faults: int) -> None:
        ends = self.stops.setdefault(step, {})
        if why in ends and ends[why] <= faults:
            return
        ends[why] = faults
        if len(ends) > _STOPS_KEPT:  # keep the fewest-fault ones; the same ones in any shard order
            kept = sorted(ends.items(), key=lambda item: (item[1], item[0]))[:_STOPS_KEPT]
            self.stops[step] = dict(kept)


class Recorder:
    """Fills a :class:`Reach` from a search: the events of each input, then how walks end."""

    def __init__(self, spec: ChainSpec):
        self.reach = Reach(declared(spec))
        d = self.reach.declared
        self._steps = set(d.steps)
        self._rows = set(d.rows)
        self._compensations = set(d.compensations)
        # Trace rows of gate answers and timeouts → the outcome they took.
        self._outcomes: dict[str, str] = {}
        for gate in spec.gates:
            for outcome in gate.outcomes:
                self._outcomes[f"gate:{gate.id}.{outcome}"] = f"{gate.id}:{outcome}"
            timeout = gate.timeout
            if timeout is not None and timeout.outcome in gate.outcomes:
                self._outcomes[f"gate:{gate.id}.timeout"] = f"{gate.id}:{timeout.outcome}"

    def feed(self, snapshot: Snapshot, events: list[Event]) -> None:
        """One input applied: the steps the run has arrived at, and what its events show."""
        seen = self.reach.seen
        if len(seen["steps"]) < len(self._steps):  # once all are seen, no need to look
            seen["steps"].update(s for s in snapshot.arrivals if s in self._steps)
        for e in events:
            if e.step_id in self._steps:
                seen["steps"].add(e.step_id)
            if e.row in self._rows:
                seen["rows"].add(e.row)
            elif e.row in self._outcomes:
                seen["outcomes"].add(self._outcomes[e.row])
            if e.event_type == "attempt" and e.step_id in self._compensations:
                seen["compensations"].add(e.step_id)

    def ended(self, snapshot: Snapshot, events: list[Event], faults: int, how: str) -> None:
        """A walk ended: ``how`` is ``terminal``, ``cut`` (the event bound) or ``loop``.

        A loop (a state already explored) is only an end for the fault-free
        walk: any other walk goes on from the state it joined.
        """
        step, why = _why(snapshot, events, how)
        done = how == "terminal" and snapshot.state == "done"
        if done:
            self.reach.done.add(snapshot.variant or "")
        if how != "loop" and not done and step is not None:
            self.reach._stop(step, why, faults)
        if faults == 0:
            state = snapshot.state if how == "terminal" else how
            self.reach.happy.setdefault(
                snapshot.variant or "", {"state": state, "step": step, "why": why}
            )


def _why(snapshot: Snapshot, events: list[Event], how: str) -> tuple[str | None, str]:
    """Where a walk ended and why, in words a reader can act on."""
    last = next((e for e in reversed(events) if e.step_id), None)
    out = snapshot.outcome
    step = out.get("step") or snapshot.cursor or (last.step_id if last else None)
    at = step or "the start"
    if how == "cut":
        verdict = next((e.verdict for e in reversed(events) if e.verdict), None)
        after = f" after {verdict}" if verdict else ""
        return step, f"walks at {at} were cut at the event bound{after}"
    if how == "loop":
        return step, f"it comes back at {at} to a state it already passed, and loops"
    state = snapshot.state
    if state == "done":
        return step, "done"
    reason = out.get("reason")
    if state == "dead_end" and reason == "no_options_to_select":
        return step, f"{at} never received options (dead_end: no_options_to_select)"
    if state == "dead_end" and reason not in (None, "dead_end"):
        return step, f"{at} ends in dead_end: {reason}"
    if state == "dead_end":
        return step, f"{at} ends in dead_end"
    if state == "escalated":
        failure = out.get("compensation_failure")
        because = f" (compensation failed: {failure})" if failure else ""
        return step, f"{at} escalates to {out.get('escalated') or 'an operator'}{because}"
    if state == "restart_required":
        restart = out.get("restart_required") or {}
        return step, f"{at} ends in restart_required: {restart.get('reason') or 'no reason given'}"
    return step, f"{at} ends in {state}"
