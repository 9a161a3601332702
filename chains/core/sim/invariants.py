"""Safety invariants of a run, checked on its trace and its snapshot.

The explorer (:mod:`.explorer`) checks these on every state it reaches; a
test or a finished scenario can check them on a whole run with :func:`check`.
Each finding names its invariant and says what broke in words that do not
depend on the path that led there (no seq numbers, no alias counters), so the
same flaw reached two ways is one finding.

History matters for some invariants (was the earlier dispatch of this unkeyed
commit ever resolved?) and the snapshot does not keep it. A :class:`Monitor`
reads the trace event by event and keeps exactly that history; its
:meth:`Monitor.key` is part of the explorer's state identity, so two runs
with equal snapshots but different unresolved dispatches stay apart.

What "declared no_side_effect" excuses is read strictly (SPEC §3 rule on
``no_side_effect``, CONFORMANCE C1.1/C1.8): only a *response* the provider
documents as side-effect free. A timeout or a dropped connection carries no
response, so no declaration can make it safe to dispatch again.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..memo import remember
from ..model import (
    Action,
    ChainSpec,
    commit_steps,
    compensators,
    is_commit_class,
    is_keyed,
    is_unkeyed_commit,
)
from ..policy import step_limits
from ..words import article
from .causes import Cause, Line, decides, decision, since
from .consent import GateWatch, is_money_or_consent_gate
from .effects import (
    Effect,
    detects,
    expiry_routes,
    final_domain_row,
    lands,
    perishable_handles,
    repaired_commits,
    replays,
    same_object,
    sends_back,
)
from .runtime import TERMINAL, Run
from .state import Event, HandleState, Snapshot

__all__ = [
    "INVARIANTS",
    "Finding",
    "Monitor",
    "abandoned",
    "check",
    "is_money_or_consent_gate",
    "minted_read",
]

INVARIANTS = {
    "unkeyed_redispatch": "an unkeyed commit is sent again (the same step presenting the same "
    "handles) only after a probe proved the earlier dispatch not landed, or after a response "
    "declared no_side_effect (within safe_reject_redispatch)",
    "double_commit": "a commit's effect lands at most once for one intent until it is "
    "compensated: no second dispatch while an earlier one landed or may have landed, "
    "whether unkeyed on other handles, keyed with a new key, or keyed on a key that "
    "re-executes",
    "compensation_without_target": "a compensator is dispatched with the handles of the commit "
    "it undoes, never without one nor with a handle this chain never mints",
    "stale_or_spent_handle": "no commit is dispatched with a stale (invalidated) or spent handle",
    "mixed_lineage": "no dispatch presents, and no cached handle keeps, a lineage other than "
    "the live generation of its parents",
    "negative_budget": "attempt, safe-reject, rewind and repair budgets never go negative",
    "gate_skipped": "a run passes a gate about money or consent only with an answer from its "
    "audience (never the model): a commit behind such an entry gate is dispatched only after "
    "the gate was answered since the run arrived there, on the way back as well",
    "outcome_abandoned": "a run ends only when every commit it dispatched has an outcome (ok, "
    "refused, or a probe's result), unless it ends escalated to an operator",
    "bad_terminal": "a run ends done, dead_end or escalated (restart_required only in external "
    "mode); a dead_end compensated its landed commits; a live run always waits for something",
}

# The invariants about what a run did after some earlier event: one finding a route there.
_ROUTED = frozenset(
    {
        "unkeyed_redispatch",
        "double_commit",
        "stale_or_spent_handle",
        "gate_skipped",
        "outcome_abandoned",
    }
)

# Transports that carry no response: nothing the provider said can vouch for them.
_NO_RESPONSE = frozenset({"timeout", "conn_reset", "conn_drop", "lost"})


@dataclass(frozen=True, order=True)
class Finding:
    """A broken invariant, what broke, and the decisions of the run that led there.

    ``cause`` is the run's decisions since the event that set the violation
    up (the earlier dispatch a second one repeats, the dispatch whose outcome
    is unknown), oldest first, its first the one that left the good path;
    for a finding about the state itself, the decision that led into it.
    Two routes to one violation differ there, so they are two findings.
    """

    invariant: str
    message: str
    cause: tuple[Cause, ...] = ()

    def identity(self) -> tuple[str, str, tuple[Cause, ...]]:
        """What tells findings apart: the invariant, the message, and a history's first cause.

        A flaw of the state (a compensator without its target) is one
        finding however the run got there; a flaw of history (a second
        booking) is one a route, told by the first decision of its cause
        that did more than retry: its step, rule and verdict, whatever the
        signal (three timeouts and three 503s spend the same budget).
        """
        if self.invariant not in _ROUTED or not self.cause:
            return (self.invariant, self.message, ())
        # a retry that went through left nothing behind: the route turns where the run went back
        turn = next((c for c in self.cause if not c.verdict.startswith("retry")), self.cause[0])
        return (
            self.invariant,
            self.message,
            (replace(turn, signal=""),),
        )  # the rule, not the signal


# What was sent: a commit's step and the aliases its dispatch presented, sorted.
Sent = tuple[str, tuple[str, ...]]


@dataclass
class Monitor:
    """The history the invariants need, read from the trace one event at a time.

    ``open`` maps what an unkeyed commit sent (its step and the aliases it
    presented) to why that dispatch is unresolved (landed, or an unknown
    outcome no probe settled): sending the same again is a re-dispatch,
    while a compensator undoing another booking sends something else.
    ``effects`` maps a commit's intent to the dispatch whose effect may
    stand, until a compensator undoes it or a probe proves it not landed:
    a forward commit has one intent a run (a second booking on other
    handles is a second effect), a compensator one per target it presents.
    ``streak`` counts the excused re-dispatches in a row; ``spent`` maps
    each single-use alias a commit presented to the step that spent it and
    the idempotency key it carried (a keyed retry with the same key is the
    same request, not a second use); ``minted`` is every handle id minted
    so far; ``gates`` what the run was asked at its gates (:class:`.consent.GateWatch`).
    ``line`` is the run's decisions (:mod:`.causes`); ``open_since`` and
    ``killed`` where it stood when an open dispatch was sent, and when a
    commit's input handle was invalidated: findings are explained from there.
    """

    spec: ChainSpec
    open: dict[Sent, str] = field(default_factory=dict)
    streak: dict[str, int] = field(default_factory=dict)
    spent: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    minted: set[str] = field(default_factory=set)
    last_step: str | None = None
    effects: dict[Sent, Effect] = field(default_factory=dict)
    line: Line = field(default=None, compare=False, repr=False)
    open_since: dict[Sent, Line] = field(default_factory=dict, compare=False, repr=False)
    gates: GateWatch = field(default_factory=GateWatch)
    killed: dict[str, Line] = field(default_factory=dict, compare=False, repr=False)
    # The last attempt: a precondition after it, or the answer to a gate it raised, is its own
    # (they may come in a later call of feed, as an explorer's next input).
    read: Event | None = field(default=None, compare=False, repr=False)
    # The live handles the lineage of every handle was last checked on, and what that
    # found: a run's handles change at a few inputs only, and the check reads them all.
    # Shared by copies: it is replaced, never changed.
    lineage_seen: tuple[dict[str, HandleState], list[Finding]] | None = field(
        default=None, compare=False, repr=False
    )

    def copy(self) -> Monitor:
        return Monitor(
            self.spec,
            dict(self.open),
            dict(self.streak),
            dict(self.spent),
            set(self.minted),
            self.last_step,
            dict(self.effects),
            self.line,
            dict(self.open_since),
            GateWatch(self.gates.cleared, self.gates.parked),
            dict(self.killed),
            self.read,
            self.lineage_seen,
        )

    def key(self, snapshot: Snapshot, name: Callable[[str], Any] = str) -> list:
        """What of the history can still change a finding.

        A spent alias matters only while a dispatch can still present it: a
        live one, or one a landed commit consumed or minted, which its
        compensator presents (I5). Aliases are written as ``name`` writes
        them (the state key numbers them back from their handle's latest mint).
        """
        spent: list[tuple[Any, list[str | None]]] = []
        if self.spent:  # most states have spent nothing: no need to know what is live
            presentable = {h.alias for h in snapshot.handles.values()}
            for landed in snapshot.commits_landed:
                presentable.update(landed.consumed, landed.handles)
            spent = sorted((name(a), list(s)) for a, s in self.spent.items() if a in presentable)
        # the last step only tells a streak of excused re-dispatches on, or ends it
        last_step = self.last_step if self.streak else None
        open_ = sorted(((s, [*map(name, al)]), why) for (s, al), why in self.open.items())
        effects = sorted(
            (
                (s, [*map(name, al)]),
                e.key,
                [*map(name, e.presented)],
                [*map(name, e.minted)],
                e.how,
                e.landed,
            )
            for (s, al), e in self.effects.items()
        )
        streak = sorted(self.streak.items()) if self.streak else []
        return [open_, streak, spent, last_step, effects]

    def feed(self, events: Iterable[Event]) -> list[Finding]:
        """Read trace events in order; the findings they show."""
        found: list[Finding] = []
        for event in events:
            for alias in event.handles_minted:
                self.minted.add(alias.split("#")[0])
            if self.effects:
                self._lapsed(event, self.read)
            if event.event_type == "attempt":
                self.read = event
            if event.event_type == "attempt" and event.step_id:
                found += self._attempt(event)
            elif (event.row or "").startswith("revocation:"):
                # the provider reversed it: that effect no longer stands
                self.effects.pop((event.step_id or "", ()), None)
            elif event.event_type == "reconcile" and event.step_id and event.signal:
                self._probe(event.step_id, event.signal.get("probe"), event.handles_minted)
            else:
                said = self.gates.see(self.spec, event)
                found += [Finding("gate_skipped", said)] if said else []
            if event.handles_invalidated:
                self._killed(event)
            if decides(event):
                self.line = ((event, self.read), self.line)
        return self._explained(found)

    def _killed(self, event: Event) -> None:
        """Where a dispatch lacking a handle ``event`` invalidates is explained from.

        From the decision that asked for it when that came just before (a
        precondition that asked for a repair, then the repair applied).
        """
        line = self.line
        if line is not None and line[0][0].seq == event.seq - 1:
            line = line[1]
        for alias in event.handles_invalidated:
            if alias.split("#")[0] in minted_read(self.spec):
                self.killed[alias.split("#")[0]] = line

    def _explained(self, found: list[Finding]) -> list[Finding]:
        """``found``; a finding with no cause yet (a flaw of the state the run is in, with
        no earlier event that set it up) gets the decision that brought the run there."""
        if self.line is None or all(f.cause for f in found):
            return found
        last = (decision(*self.line[0]),)
        return [f if f.cause else replace(f, cause=last) for f in found]

    def _attempt(self, event: Event) -> list[Finding]:
        step = event.step_id or ""
        action = self.spec.action(step)
        if action is None:
            return []
        if self.last_step != step:
            self.streak.pop(step, None)
        self.last_step = step
        presented = list(event.handles_consumed)
        self.gates.went_to(step)
        if not is_commit_class(action):  # a read or mint of an undo still acts on its target
            return _without_target(self.spec, action, presented)
        found = self.dispatch_findings(step, presented, self.minted, event.idempotency_key)
        said = self.gates.ungated(self.spec, action)
        found += [Finding("gate_skipped", said)] if said else []
        safe = _excused(self.spec, event)
        # a compensator that names no target is told from no other: that is its one finding
        aimless = bool(_without_target(self.spec, action, presented))
        if is_unkeyed_commit(action) and not aimless:
            sent = (step, tuple(sorted(presented)))
            if safe:
                self.open.pop(sent, None)
                self.open_since.pop(sent, None)
                self.streak[step] = self.streak.get(step, 0) + 1
            else:
                self.open[sent] = _redispatch_message(step, event)
                self.open_since[sent] = self.line
                self.streak.pop(step, None)
        if not (safe or aimless):
            self._effect(action, presented, event)
        for alias in presented:
            handle = self.spec.handle(alias.split("#")[0])
            if handle is None or not handle.single_use:
                continue
            if safe:
                self.spent.pop(alias, None)  # it never executed: nothing was spent
            else:
                self.spent.setdefault(alias, (step, event.idempotency_key))
        return found

    def _effect(self, action: Action, presented: list[str], event: Event) -> None:
        """Record the effect ``event`` may have left; a compensator's landing undoes its target.

        A dispatch may have landed when it answered ok, or when nothing
        answered for it: no response, a 5xx, a verdict of reconcile. Any other
        answer is the provider refusing the request (SPEC P4), and so is a 5xx
        carrying a code that one of the chain's own rows reads as final (a
        documented "booking failed" that dead-ends). A refusal of a request
        that repeats an unresolved one (its key replayed, or a naturally
        idempotent request) is the answer to both: the first did not land.
        """
        verdict = event.verdict or ""
        landed = lands(verdict)
        signal = event.signal or {}
        transport = str(signal.get("transport", "")).lower()
        refused = bool(signal.get("code")) and final_domain_row(event)
        unknown = (
            transport in _NO_RESPONSE
            or (transport.startswith("http:5") and not refused)
            or verdict.startswith("reconcile")
        )
        intent = _intent(self.spec, action.id, presented)
        earlier = self.effects.get(intent)
        if not (landed or unknown):
            if earlier is None or earlier.landed:
                return
            natural = action.idempotency is not None and action.idempotency.mode == "natural"
            if natural or replays(action, earlier, event.idempotency_key):
                del self.effects[intent]
            return
        if landed or earlier is None:
            how = _outcome(event, "landed" if landed else "may have landed")
            key, minted = event.idempotency_key, tuple(event.handles_minted)
            self.effects[intent] = Effect(
                key, tuple(sorted(presented)), minted, how, landed, self.line
            )
        if landed:
            for target in _undoes(self.spec).get(action.id, ()):
                undone = self.effects.get((target, ()))
                if undone and set(presented) & {*undone.presented, *undone.minted}:
                    del self.effects[(target, ())]

    def _lapsed(self, event: Event, read: Event | None = None) -> None:
        """Effects the provider let lapse, as ``event`` shows: doing them again is no second one.

        A commit's product that the chain declares perishable dies when the
        provider says so: detected stale on a later call (an authorization
        that expired), or killed with the object it lives on (an intent the
        provider reports cancelled). A durable product is a fact (I5): no
        signal and no choice of ours (a reselect sweeping past it) undoes
        it. A commit that declares a ``business_expiry`` lapses when the run
        takes the route the chain gives that expiry, from the timer or from
        a row that routes the provider's word for it the same way. A read
        of what a commit acted on whose precondition sends the run back
        (a payment still awaiting confirmation, an intent cancelled) shows
        the provider's state of that object: the chain says it must be done
        again, and the read is the provider's word that the effect is not there.
        A repair of the fields a commit takes makes its next dispatch one for
        another intent (a new card after the first was refused).
        """
        said = event.event_type == "attempt"  # the provider's answer, not a choice of ours
        verdict = event.verdict
        if not (said or verdict):
            return  # a transition that routes nowhere ends no effect
        read = event if said else read
        back = read is not None and sends_back(self.spec, event, read)
        seen = set(read.handles_consumed) if read is not None and back else set()
        repaired = repaired_commits(self.spec, verdict)
        routes = expiry_routes(self.spec)
        route = "".join(verdict.split()) if verdict and routes else None
        perishable = perishable_handles(self.spec)
        for intent, effect in list(self.effects.items()):
            made = [a for a in effect.minted if a.split("#")[0] in perishable] if said else []
            if (
                intent[0] in repaired
                or (seen and seen.intersection([*effect.presented, *effect.minted]))
                or (route is not None and routes.get(intent[0]) == route)
                or any(a in event.handles_invalidated for a in made)
                or any(detects(self.spec, a, event) for a in made if a in event.handles_consumed)
            ):
                del self.effects[intent]

    def _probe(self, step: str, result: str | None, minted: list[str]) -> None:
        """A probe's result on ``step``'s unresolved dispatch; what it found landed mints now."""
        for sent in [s for s in self.open if s[0] == step]:
            if result == "not_landed":
                del self.open[sent]
            elif result == "landed":
                self.open[sent] = _again(step, "was found landed by the probe")
        for intent in [i for i in self.effects if i[0] == step]:
            if result == "not_landed":
                del self.effects[intent]
            elif result == "landed":
                effect = self.effects[intent]
                how = "was found landed by the probe"
                made = (*effect.minted, *minted)
                self.effects[intent] = Effect(
                    effect.key, effect.presented, made, how, True, effect.since
                )

    def dispatch_findings(
        self, step: str, presented: list[str], minted: Container[str], key: str | None = None
    ) -> list[Finding]:
        """What is wrong with dispatching ``step`` presenting ``presented`` (aliases) now."""
        action = self.spec.action(step)
        if action is None or not is_commit_class(action):
            return []
        found = []
        sent = (step, tuple(sorted(presented)))
        if is_unkeyed_commit(action) and sent in self.open:
            cause = since(self.line, self.open_since.get(sent))
            found.append(Finding("unkeyed_redispatch", self.open[sent], cause))
        found += self._double(action, presented, key)
        found += _without_target(self.spec, action, presented)
        limit = step_limits(self.spec, action).safe_reject_redispatch
        in_a_row = self.streak.get(step, 0) if self.last_step == step else 0
        if is_unkeyed_commit(action) and in_a_row > limit:
            found.append(
                Finding(
                    "unkeyed_redispatch",
                    f"unkeyed commit {step} was re-dispatched more than its "
                    f"safe_reject_redispatch ({limit}) allows in a row",
                )
            )
        shown = {alias.split("#")[0]: alias for alias in presented}
        for hid in action.input.handles:
            alias = shown.get(hid)
            if alias is None and hid in minted:
                found.append(
                    Finding(
                        "stale_or_spent_handle",
                        f"commit {step} was dispatched without a live {hid}: "
                        "the one minted earlier had been invalidated",
                        since(self.line, self.killed[hid]) if hid in self.killed else (),
                    )
                )
            elif alias is not None and alias in self.spent:
                by, by_key = self.spent[alias]
                if by == step and key is not None and by_key == key:
                    continue  # a keyed retry: the provider sees one request
                found.append(
                    Finding(
                        "stale_or_spent_handle",
                        f"commit {step} presented {hid}, already spent by a dispatch of {by}",
                    )
                )
        return found

    def _double(self, action: Action, presented: list[str], key: str | None) -> list[Finding]:
        """A second dispatch for an intent whose earlier effect may stand (SPEC P3, I5).

        Sending the same again is not a second effect: a keyed retry on the
        same key (unless the provider re-executes it), or an unkeyed request
        with the same handles, which is ``unkeyed_redispatch``'s to report.
        """
        if action.effect != "commit":
            return []  # an undo sent twice is unkeyed_redispatch's, by what it sent
        earlier = self.effects.get(_intent(self.spec, action.id, presented))
        if earlier is None:
            return []
        if action.mutates and same_object(action, presented, earlier):
            return []  # a change in place sets a state (SPEC §2.1): again, it changes nothing
        if is_keyed(action):
            if replays(action, earlier, key):
                return []
            how = "re-executing its key" if key == earlier.key else "with a new idempotency key"
        elif is_unkeyed_commit(action):
            if tuple(sorted(presented)) == earlier.presented:
                return []
            how = "unkeyed and presenting other handles"
        else:
            return []  # naturally idempotent: sending it again changes nothing
        return [
            Finding(
                "double_commit",
                f"commit {action.id} was dispatched again for the same intent, {how}, although "
                f"its earlier dispatch {earlier.how} and was never compensated",
                since(self.line, earlier.since),
            )
        ]

    def state_findings(self, snapshot: Snapshot, run: Run | None = None) -> list[Finding]:
        """Findings about the state itself, including a dispatch that is out right now.

        Handles a landed commit minted are facts (I5): an invalidation that
        sweeps past them leaves them live with an old lineage, which is only
        a finding once a dispatch presents them next to the new generation.
        ``run``, when the caller has it, is the run whose snapshot this is
        (the explorer's); without it one is built around the snapshot.
        """
        s = snapshot
        found: list[Finding] = []
        if s.in_flight and s.waiting.kind == "observe" and s.waiting.step == s.in_flight:
            action = self.spec.action(s.in_flight)
            if action is not None:
                if is_commit_class(action):  # dispatch_findings finds nothing for any other
                    run = run if run is not None and run.snapshot is s else Run(self.spec, s, [])
                    presented, key = run.handles.presented(action), run.steps.key(action)
                    found += self.dispatch_findings(s.in_flight, presented, s.mint_counts, key)
                found += _lineage(s.handles, [h for h in action.input.handles if h in s.handles])
        found += self._live_lineage(s.handles)
        found += _budgets(s)
        found += _terminal(self.spec, s)
        found += abandoned(self, s.state)
        return self._explained(found)

    def _live_lineage(self, handles: dict[str, HandleState]) -> list[Finding]:
        """:func:`_lineage` of every live handle no commit minted, checked again only on change.

        Handle states are frozen and copies of a run share them, so comparing
        the live handles with those last checked costs little.
        """
        seen = self.lineage_seen
        if seen is not None and seen[0] == handles:
            return seen[1]
        facts = commit_steps(self.spec)
        found = _lineage(handles, [h for h, st in handles.items() if st.minted_by not in facts])
        self.lineage_seen = (dict(handles), found)
        return found


def abandoned(monitor: Monitor, state: str | None) -> list[Finding]:
    """Commits whose outcome nobody learned when the run ended in ``state`` (SPEC P3, §2.3).

    An operator who takes an escalated run takes its unknowns with it;
    any other end leaves a booking that may stand, or a charge, with no
    one to find it.
    """
    if state not in TERMINAL or state == "escalated":
        return []
    return [
        Finding(
            "outcome_abandoned",
            f"the run ended {state} although the outcome of {intent[0]} was never "
            "learned: no ok, no refusal and no probe result followed its dispatch",
            since(monitor.line, effect.since),
        )
        for intent, effect in sorted(monitor.effects.items())
        if not effect.landed
    ]


def minted_read(spec: ChainSpec) -> tuple[str, ...]:
    """The handles of which a finding reads whether they were ever minted: commits' inputs.

    :meth:`Monitor.dispatch_findings` tells a commit dispatched without a
    live input handle that was minted earlier from one whose input was never
    minted. Nothing else reads whether a handle was minted, nor how often:
    the count only numbers the next alias, which need only be new. Sorted,
    kept per chain.
    """
    global _last_minted_read
    if _last_minted_read[0] is spec:
        return _last_minted_read[1]
    found = remember(
        spec,
        "commit inputs",
        lambda: tuple(
            sorted({h for a in spec.actions if is_commit_class(a) for h in a.input.handles})
        ),
    )
    _last_minted_read = (spec, found)
    return found


# The last chain's answer at hand: every state key asks it (as steps.keyed_commits).
_last_minted_read: tuple[ChainSpec | None, tuple[str, ...]] = (None, ())


def _undoes(spec: ChainSpec) -> dict[str, tuple[str, ...]]:
    """Each compensator step and the commits it undoes, kept per chain."""

    def find() -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for a in spec.actions:
            if a.effect == "commit":
                for step in compensators(a):
                    found.setdefault(step, []).append(a.id)
        return {step: tuple(targets) for step, targets in found.items()}

    return remember(spec, "commits undone", find)


def _minted_anywhere(spec: ChainSpec) -> frozenset[str]:
    """The handles some step of ``chain`` mints (declared ``minted_by`` or an output)."""
    return remember(
        spec,
        "handles minted",
        lambda: frozenset(
            [h.id for h in spec.handles if h.minted_by]
            + [h for a in spec.actions for h in a.output.handles]
        ),
    )


def _intent(spec: ChainSpec, step: str, presented: list[str]) -> Sent:
    """What one effect of ``step`` is for: the run's one booking, or a compensator's target."""
    return (step, tuple(sorted(presented))) if step in _undoes(spec) else (step, ())


def _without_target(spec: ChainSpec, action: Action, presented: list[str]) -> list[Finding]:
    """A compensator that cannot name what it undoes: an input missing, or one never minted.

    It acts on the facts of the landed commit it undoes (I5); sent without
    them, the provider is asked to cancel nothing, and the run records the
    commit compensated all the same.
    """
    targets = _undoes(spec).get(action.id)
    if not targets:
        return []
    shown = {alias.split("#")[0] for alias in presented}
    minted = _minted_anywhere(spec)
    found = [
        Finding(
            "compensation_without_target",
            f"compensator {action.id} was dispatched without {hid}, so it names nothing of "
            f"the {' or '.join(targets)} it undoes",
        )
        for hid in action.input.handles
        if hid not in shown
    ]
    found += [
        Finding(
            "compensation_without_target",
            f"compensator {action.id} presented {hid}, which no step of this chain mints",
        )
        for hid in sorted(shown - minted)
    ]
    return found


def _excused(spec: ChainSpec, event: Event) -> bool:
    """A response declared no_side_effect: that dispatch left nothing behind.

    How many such re-dispatches one arrival may make is a separate bound,
    checked when the next one goes out (:meth:`Monitor.dispatch_findings`).
    """
    signal = event.signal or {}
    if str(signal.get("transport", "")).lower() in _NO_RESPONSE:
        return False
    row = event.row or ""
    declared = row == "#5" and (event.verdict or "").startswith("retry")
    return declared or row in _excusing_rows(spec)


def _excusing_rows(spec: ChainSpec) -> frozenset[str]:
    """The ids of the rows that declare ``no_side_effect``, kept per chain."""
    return remember(
        spec,
        "no_side_effect rows",
        lambda: frozenset(r.id for r in spec.verdict_table if r.no_side_effect and r.id),
    )


def _redispatch_message(step: str, event: Event) -> str:
    """What a later dispatch of the unkeyed commit ``step`` would break, after ``event``.

    A ``retry`` on an unresolved dispatch is what sends the commit again, so
    the row that gave it is the one to fix: the sentence starts with it.
    Otherwise (a rewind, a gate, a landed dispatch) it names how the earlier
    dispatch stands (:func:`_outcome`).
    """
    verdict = event.verdict or "no verdict"
    if verdict == "ok" or verdict.startswith("ok("):
        return _again(step, _outcome(event, "landed"))
    if verdict.startswith("retry") and event.row:
        return (
            f"{_row_name(event.row)} ({_said(event)}) re-dispatched unkeyed commit {step} "
            "although its earlier dispatch was unresolved"
        )
    return _again(step, _outcome(event, "was unresolved"))


def _outcome(event: Event, how: str) -> str:
    """``landed (http:200 -> ok)``: how a dispatch stands, what it got and the row that said so.

    SPEC §3's generic rows are no one's to change, so only a domain row is
    named; the finding's cause says which rule decided.
    """
    row = f", {_row_name(event.row)}" if event.row and not event.row.startswith("#") else ""
    return f"{how} ({_said(event)}{row})"


def _said(event: Event) -> str:
    """``timeout -> retry``: what a dispatch got, and the verdict on it."""
    signal = event.signal or {}
    seen = " ".join(str(signal[k]) for k in ("transport", "code") if signal.get(k)) or "response"
    return f"{seen} -> {event.verdict or 'no verdict'}"


def _again(step: str, how: str) -> str:
    return f"unkeyed commit {step} was dispatched again although its earlier dispatch {how}"


def _row_name(row: str) -> str:
    """``U2`` → ``row U2``; a generic row ``#7`` → ``generic row #7``; a runtime rule as it is."""
    if row.startswith("#"):
        return f"generic row {row}"
    return row if ":" in row else f"row {row}"


def _lineage(handles: dict[str, HandleState], handle_ids: list[str]) -> list[Finding]:
    """Live handles among ``handle_ids`` whose recorded parents are not the live ones."""
    found: list[Finding] = []
    # An alias names its handle (``hid#n``), so a parent is live as recorded exactly when
    # its alias is among the live ones: one set check a handle, the messages only on a miss.
    live = {st.alias for st in handles.values()}
    for hid in handle_ids:
        lineage = handles[hid].lineage
        if live.issuperset(lineage):
            continue
        for alias in lineage:
            if alias in live:
                continue
            parent = alias.split("#")[0]
            why = "is no longer live" if parent not in handles else "has been re-minted since"
            found.append(
                Finding(
                    "mixed_lineage", f"{hid} is live but derives from {article(parent)} that {why}"
                )
            )
    return found


def _budgets(s: Snapshot) -> list[Finding]:
    b = s.budgets
    found = []
    for name in ("step_attempts_left", "safe_rejects_left", "rewinds_left", "repairs_left"):
        if getattr(b, name) < 0:
            where = s.cursor or s.waiting.step or "the run"
            found.append(Finding("negative_budget", f"{name} went negative at {where}"))
    return found


def _terminal(spec: ChainSpec, s: Snapshot) -> list[Finding]:
    if s.state not in TERMINAL:
        if s.waiting.kind == "nothing":
            return [Finding("bad_terminal", f"the run is {s.state} but waits for nothing")]
        return []
    if s.state == "restart_required" and s.mode != "external":
        return [Finding("bad_terminal", "an internal-mode run ended restart_required")]
    if s.state != "dead_end":
        return []
    found = []
    for i, lc in enumerate(s.commits_landed):
        action = spec.action(lc.step)
        comp = action.compensation if action else None
        declared_none = comp is not None and comp.action == "none"
        # C8.2: an original stays standing while no later landing of its replacement does
        by = comp.replaced_by if comp else None
        kept = by is not None and not any(
            later.step == by and not later.compensated for later in s.commits_landed[i + 1 :]
        )
        if not lc.compensated and not declared_none and not kept:
            found.append(
                Finding(
                    "bad_terminal",
                    f"the run dead-ended leaving landed {lc.step} uncompensated, not escalated",
                )
            )
    return found


def check(spec: ChainSpec, snapshot: Snapshot, trace: list[Event]) -> list[Finding]:
    """Every finding on a whole run: its trace read in order, then its final snapshot.

    Findings that hold on a state persist in the final snapshot only if the
    state still shows them; the trace-based ones (re-dispatch, spent handles,
    gate answers) are found wherever in the trace they happened.
    """
    monitor = Monitor(spec)
    found = monitor.feed(trace)
    found += monitor.state_findings(snapshot)
    return sorted(set(found))
