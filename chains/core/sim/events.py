"""The run's event log: one event per state change, appended to the trace (SPEC §2.5).

An event is opened, filled in while the transition runs (handles minted and
invalidated, a verdict decided later, a note), and flushed to the trace when
the next one opens or the input is fully applied; the flush stamps the
budgets and the state after it. ``attempt`` events are 1:1 with dispatches,
``transition`` events record changes that dispatch nothing, ``reconcile``
events record probe and webhook observations.
"""

from __future__ import annotations

from typing import Any, Literal

from ..memo import by_identity, remember
from ..model import ChainSpec
from ..verdicts import Verdict, format_verdict
from .sealed import seal_observation
from .state import EVENT_FIELDS, Event, Observation, Snapshot, Waiting

__all__ = ["EventLog", "describe", "observed_input", "shown_fields", "signal_of"]


class EventLog:
    """The event being written, and the trace it goes to."""

    __slots__ = ("spec", "snapshot", "trace", "draft", "seals", "stamps_budgets")

    def __init__(self, spec: ChainSpec, snapshot: Snapshot, trace: list[Event]):
        # ``snapshot`` is the parts' view of the run's snapshot (:func:`~.part.fields_of`).
        self.spec = spec
        self.snapshot = snapshot
        self.trace = trace
        self.draft: dict[str, Any] | None = None
        # A search reads no event's budgets (its invariants read the snapshot's), and
        # stamping them is a third of what writing an event costs: it turns this off.
        self.stamps_budgets = True
        # Nor does it show its traces to anyone (its counterexamples are inputs, run again
        # where they are shown), so it need not seal the responses it writes either.
        self.seals = True

    def open(
        self,
        event_type: Literal["attempt", "transition", "reconcile"],
        *,
        step: str | None = None,
        attempt: int | None = None,
        signal: dict[str, Any] | None = None,
        verdict: Verdict | None = None,
        source: str | None = None,
        row: str | None = None,
        note: str | None = None,
        input: dict[str, Any] | None = None,
        proposal_source: str | None = None,
        key: str | None = None,
        consumed: list[str] | None = None,
    ) -> None:
        """Start the next event; the previous one is finished first.

        ``consumed``: the aliases an attempt's dispatch presented.
        """
        self.flush()
        s = self.snapshot
        s.seq += 1
        if self.seals and input is not None and ("observation" in input or "cause" in input):
            input = self.sealed(input, step)
        self.draft = {
            "seq": s.seq,
            "event_type": event_type,
            "step_id": step,
            "attempt": attempt,
            "t": s.clock,
            "signal": signal,
            "verdict": format_verdict(verdict) if verdict is not None else None,
            "verdict_source": source,
            "row": row,
            "handles_consumed": [] if consumed is None else consumed,
            "handles_minted": [],
            "handles_invalidated": [],
            "note": note,
            "input": input,
            "proposal_source": proposal_source,
            "idempotency_key": key,
        }

    def sealed(self, given: dict[str, Any], step: str | None) -> dict[str, Any]:
        """``given`` with the response it carries sealed (C7.3), into the run's sealed store.

        A response is ``given``'s ``observation`` (an attempt, a webhook) or
        ``cause`` (what a probe saw); the fields :func:`shown_fields` names for
        ``step`` stay readable. ``given`` itself is not changed:
        :func:`observed_input` shares it between runs.
        """
        shown = shown_fields(self.spec).get(step or "", frozenset())
        s = self.snapshot
        out = given
        for name in ("observation", "cause"):
            observed = given.get(name)
            if observed:
                sealed = seal_observation(s.sealed, s.run_id, observed, shown)
                if sealed is not observed:
                    out = {**out, name: sealed}
        return out

    def transition(
        self,
        step: str | None,
        row: str | None,
        verdict: Verdict | None = None,
        note: str | None = None,
        *,
        source: str | None = "config",
        input: dict[str, Any] | None = None,
        proposal_source: str | None = None,
    ) -> None:
        """A ``transition`` event the run decides from its config (the usual case)."""
        # Every argument named, none passed on as ``**``: half of a run's events are
        # transitions, and unpacking a dict of keywords cost a third of writing one.
        self.open(
            "transition",
            step=step,
            verdict=verdict,
            source=source,
            row=row,
            note=note,
            input=input,
            proposal_source=proposal_source,
        )

    def set(self, **fields: Any) -> None:
        """Fill in the open event; a second note is appended to the first.

        A field no event has is refused here, by the event's validation, so
        that every draft flushed holds exactly the event's fields.
        """
        if self.draft is None:
            return
        if "verdict" in fields and isinstance(fields["verdict"], Verdict):
            fields["verdict"] = format_verdict(fields["verdict"])
        if "source" in fields:
            fields["verdict_source"] = fields.pop("source")
        if "note" in fields and self.draft.get("note") and fields["note"]:
            fields["note"] = f"{self.draft['note']}; {fields['note']}"
        if not EVENT_FIELDS.issuperset(fields):
            Event.model_validate({**self.draft, **fields})  # raises, naming the stray field
        self.draft.update(fields)

    def minted(self, alias: str) -> None:
        if self.draft is not None:
            self.draft["handles_minted"].append(alias)

    def invalidated(self, alias: str) -> None:
        if self.draft is not None:
            self.draft["handles_invalidated"].append(alias)

    def flush(self) -> None:
        """Finish the open event: stamp budgets and state, append it to the trace.

        With ``stamps_budgets`` off (a search's runs) ``budget_after`` is left empty.
        """
        if self.draft is None:
            return
        draft, self.draft = self.draft, None
        s = self.snapshot
        if self.stamps_budgets:
            b = s.budgets
            draft["budget_after"] = {
                "step_attempts_left": b.step_attempts_left,
                "safe_rejects_left": b.safe_rejects_left,
                "rewinds_left": b.rewinds_left,
                "repairs_left": b.repairs_left,
                "wall_used": round(b.wall_used, 6),
                "wall_left": None if b.wall_limit is None else round(b.wall_limit - b.wall_used, 6),
            }
        else:
            draft["budget_after"] = {}
        draft["state"] = s.state
        self.trace.append(Event.written(draft))


def describe(w: Waiting) -> str:
    """What a run waiting on ``w`` needs, in words (for error messages)."""
    if w.kind == "observe":
        return f"an observation of step {w.step!r}"
    if w.kind == "select":
        return f"a pick at selection step {w.step!r} among {[o.id for o in w.options]}"
    if w.kind == "answer":
        return f"an answer to gate {w.gate!r} (outcomes: {', '.join(w.outcomes)})"
    if w.kind == "probe":
        return f"a probe result for step {w.step!r} (landed | not_landed | unknown)"
    if w.kind == "repair":
        return f"a repair proposal for {w.fields} at step {w.step!r}"
    if w.kind == "shared":
        return f"a sibling branch to re-share {w.fields} (re-minted by step {w.step!r})"
    return "nothing (the run is finished)"


def shown_fields(spec: ChainSpec) -> dict[str, frozenset[str]]:
    """By step: the response fields the trace shows as they are (C7.3); the rest is sealed.

    Those the step declares in ``output.safe_to_show``, and those the chain
    itself reads to decide: the step's ``business_expiry`` field, every gate's
    ``payload_expiry`` field (a response may raise any gate) and the variant
    axis. A deadline or a rail is neither payment data nor PII, and showing
    it keeps the trace and the chain enough to re-derive every decision
    (C7.2), as the trace audit does with no sealed store.
    """
    return remember(spec, "shown_fields", lambda: _shown_fields(spec))


def _shown_fields(spec: ChainSpec) -> dict[str, frozenset[str]]:
    read = {g.payload_expiry.field for g in spec.gates if g.payload_expiry is not None}
    if spec.variants is not None:
        read.add(spec.variants.axis)
    out = {}
    for action in spec.actions:
        expiry = action.output.business_expiry
        own = {expiry.field} if expiry is not None else set()
        out[action.id] = frozenset({*action.output.safe_to_show, *read, *own})
    return out


@by_identity(limit=4096)  # observations are frozen; the explorer reuses one per choice
def observed_input(obs: Observation) -> dict[str, Any]:
    """The ``input`` of an event that applied ``obs``: it whole, defaults left out.

    Its payload and option keys hold the provider's data: :meth:`EventLog.open`
    seals them before the event reaches the trace (C7.3).
    """
    return {"kind": "observe", "observation": obs.model_dump(exclude_defaults=True)}


@by_identity(limit=4096)
def signal_of(obs: Observation) -> dict[str, Any]:
    """The trace's ``signal`` for an observation: what was seen, never payload values."""
    out: dict[str, Any] = {"transport": obs.transport}
    if obs.code:
        out["code"] = obs.code
    if obs.predicates:
        out["predicates"] = list(obs.predicates)
    if obs.events:
        out["events"] = list(obs.events)
    return out
