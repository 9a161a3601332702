"""What a commit's dispatch leaves at the provider, and what the run's trace says ended it.

The :class:`~.invariants.Monitor` keeps, for each commit's intent, the
dispatch whose effect may stand (:class:`Effect`). These functions read the
chain and a trace event to say whether a dispatch landed, was refused, or
was ended later: a perishable product that died, an expiry the chain
routes, a read of the provider's objects that sends the run back, a repair
that makes the next dispatch one for another intent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..memo import remember
from ..model import Action, ChainSpec, Staleness, is_keyed
from ..verdicts import format_verdict, parse_verdict
from .causes import Line
from .classifier import matches
from .state import Event, Observation

__all__ = [
    "Effect",
    "detects",
    "expiry_routes",
    "final_domain_row",
    "lands",
    "perishable_handles",
    "repaired_commits",
    "replays",
    "same_object",
    "sends_back",
]

_BACK = frozenset({"rewind", "reselect", "repair"})
_DURABLE = ("n/a", "na", "none", "never", "unlimited", "durable", "permanent", "infinite")


@dataclass(frozen=True)
class Effect:
    """A commit's dispatch whose effect may stand: it landed, or its outcome is unknown.

    ``key`` is the idempotency key it carried, ``presented`` and ``minted``
    its aliases (a compensator that presents one of them undoes it), ``how``
    the words a finding quotes about it.
    """

    key: str | None
    presented: tuple[str, ...]
    minted: tuple[str, ...]
    how: str
    landed: bool
    since: Line = field(default=None, compare=False)  # the run's decisions when it was sent


def final_domain_row(event: Event) -> bool:
    """Whether one of the chain's own rows decided ``event`` with a verdict that ends the try.

    A retry or a reconcile says the author does not know what the response
    left behind; a rewind, a repair or a dead end says it refused.
    """
    row, verdict = event.row or "", event.verdict or ""
    generic = row.startswith("#") or ":" in row or "." in row
    return bool(row) and not generic and not verdict.startswith(("retry", "reconcile"))


def replays(action: Action, earlier: Effect, key: str | None) -> bool:
    """Whether a dispatch on ``key`` replays ``earlier``'s request: the same key, not re-run."""
    idem = action.idempotency
    reexecutes = idem is not None and idem.replay_semantics == "reexecutes"
    return is_keyed(action) and key is not None and key == earlier.key and not reexecutes


def same_object(action: Action, presented: list[str], earlier: Effect) -> bool:
    """Whether a change in place is sent to the object its earlier dispatch changed."""
    prefix = f"{action.mutates}#"
    now = {alias for alias in presented if alias.startswith(prefix)}
    return bool(now) and now <= set(earlier.presented)


def expiry_routes(spec: ChainSpec) -> dict[str, str]:
    """Each commit declaring a business expiry, and its ``on_expiry`` verdict unspaced."""
    return remember(
        spec,
        "expiry routes",
        lambda: {
            a.id: "".join(format_verdict(a.output.business_expiry.on_expiry).split())
            for a in spec.actions
            if a.output.business_expiry is not None
        },
    )


def sends_back(spec: ChainSpec, event: Event, read: Event) -> bool:
    """Whether ``event`` is the read ``read`` finding a state that sends the run back.

    What it read of the provider's objects: its row on a successful
    response, its precondition, or the answer to a gate that response or
    its documented error raised (a failed authentication the chain routes
    by its own row to a gate whose answer tries again). An error no row of the chain
    reads as the provider's word (a timeout, a generic 4xx) says nothing
    of them.
    """
    if event.step_id != read.step_id:
        return False
    signal = read.signal or {}
    found = str(signal.get("transport", "")).startswith("http:2")
    documented = bool(signal.get("code")) and final_domain_row(read)
    row = event.row or ""
    if event is read:
        if not found:
            return False
    elif not (
        row.startswith("precondition#") or (row.startswith("gate:") and (found or documented))
    ):
        return False
    action = spec.action(read.step_id or "")
    verdict = (event.verdict or "").split("(")[0].strip()
    return action is not None and action.effect == "read" and verdict in _BACK


def repaired_commits(spec: ChainSpec, verdict: str | None) -> frozenset[str]:
    """The commits whose intent a ``repair`` verdict changes: the fields it repairs are theirs."""
    if not verdict or not verdict.startswith("repair"):
        return frozenset()
    try:
        fields = set(parse_verdict(verdict).fields)
    except ValueError:
        return frozenset()
    return frozenset(
        a.id for a in spec.actions if a.effect == "commit" and fields.intersection(a.input.intent)
    )


def perishable_handles(spec: ChainSpec) -> frozenset[str]:
    """The handles that can die: a staleness they detect, or a TTL of their own.

    A commit's product that says neither (no staleness block, or ``ttl_hint:
    n/a`` and nothing to detect) is a fact (I5).
    """

    def can_die(stale: Staleness | None) -> bool:
        if stale is None:
            return False
        ttl = str(stale.ttl_hint or "").strip().lower()
        return bool(stale.detect) or bool(ttl and not ttl.startswith(_DURABLE))

    return remember(
        spec,
        "perishable handles",
        lambda: frozenset(h.id for h in spec.handles if can_die(h.staleness)),
    )


def detects(spec: ChainSpec, alias: str, event: Event) -> bool:
    """Whether ``event``'s signal is one the handle of ``alias`` declares it dies by."""
    handle = spec.handle(alias.split("#")[0])
    detect = handle.staleness.detect if handle and handle.staleness else []
    if not detect:
        return False
    signal = event.signal or {}
    seen = Observation(
        transport=str(signal.get("transport", "http:200")),
        code=signal.get("code"),
        predicates=list(signal.get("predicates", [])),
        events=list(signal.get("events", [])),
    )
    return any(matches(atom, seen) for atom in detect)


def lands(verdict: str) -> bool:
    """``ok`` lands a commit; ``ok(empty)`` (a declined card) lands nothing (SPEC P4)."""
    if verdict == "ok":
        return True
    try:
        parsed = parse_verdict(verdict)
    except ValueError:
        return False
    return parsed.type == "ok" and not parsed.empty
