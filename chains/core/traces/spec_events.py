"""SPEC §2.5's trace event, as its example writes it: JSON lines, one event a line.

The SPEC pins what an event must capture, not how it is written, so this
reader takes the example's shape and is lenient where the SPEC is open:
``t_start`` (else ``t``, else ``t_end``) in ISO-8601 or seconds; ``verdict``
as text (``gate(price_consent)``) or as an object (``{"type": "gate",
"arg": "price_consent"}``, or named arguments such as ``"to"``);
``input.handles`` maps each handle presented to its alias; ``signal`` with
``provider_code`` and ``payload_predicates``; ``handles_minted`` and
``handles_invalidated`` as handle names (or aliases). Fields the SPEC's
example does not name are ignored, not refused: the serialization is
deliberately unsettled. ``run_id`` tells runs apart in one file.
"""

from __future__ import annotations

from typing import Any

from ..errors import DocumentError, Problem, VerdictSyntaxError
from ..sim.state import Event
from ..verdicts import POSITIONAL, VERDICT_TYPES, build_verdict
from .common import Aliases, Place, Reading, in_seq_order, json_lines, one_run, relative, seconds

__all__ = ["read_spec_events"]

_STATES = {"running", "at_gate", "reconciling", "compensating", "done", "dead_end", "escalated"}


def read_spec_events(text: str, run: str | None = None) -> Reading:
    """SPEC §2.5 events as the audit's events; every bad line named."""
    rows: dict[str | None, list[tuple[Place, dict[str, Any]]]] = {}
    for number, value in json_lines(text):
        place = Place(number)
        if not isinstance(value, dict):
            raise DocumentError([place.problem("an event must be a JSON object")])
        run_id = value.get("run_id")
        rows.setdefault(run_id if isinstance(run_id, str) else None, []).append((place, value))
    if not rows:
        raise DocumentError([Problem("the trace holds no event")])
    chosen = one_run(rows, run, "trace")
    aliases = Aliases()
    events, places, times, problems = [], [], [], []
    for place, row in rows[chosen]:
        try:
            event, t = _event(row, place, aliases)
        except DocumentError as exc:
            problems += exc.problems
            continue
        events.append(event)
        places.append(place)
        times.append(t)
    if problems:
        raise DocumentError(problems)
    in_seq_order(events, places)
    for event, t in zip(events, relative(times, places), strict=True):
        event.t = t
    return Reading("spec", events, places, run_id=chosen)


def _event(row: dict[str, Any], place: Place, aliases: Aliases) -> tuple[Event, float | None]:
    seq = row.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= 2**63 - 1:
        raise DocumentError([place.problem(f"seq: expected a whole number; got {seq!r}")])
    kind = row.get("event_type")
    if kind not in ("attempt", "transition", "reconcile"):
        why = f"event_type: expected attempt, transition or reconcile; got {kind!r}"
        raise DocumentError([place.problem(why)])
    when = next((row[k] for k in ("t_start", "t", "t_end") if row.get(k) not in (None, "")), None)
    t = None if when is None else seconds(when, "t_start", place)
    given: dict[str, Any] = row["input"] if isinstance(row.get("input"), dict) else {}
    consumed = []
    presented: dict[str, Any] = given["handles"] if isinstance(given.get("handles"), dict) else {}
    for name, value in presented.items():
        alias = aliases.presented(name, str(value)) or aliases.mint(name, [str(value)])
        consumed.append(alias)
    signal = row.get("signal") if isinstance(row.get("signal"), dict) else None
    step = row.get("step_id")
    attempt = row.get("attempt")
    return (
        Event(
            seq=seq,
            event_type=kind,
            step_id=step if isinstance(step, str) else None,
            attempt=attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None,
            signal=signal,
            verdict=_verdict(row.get("verdict"), place),
            verdict_source=_choice(row.get("verdict_source"), ("table", "default", "config")),
            row=row.get("row") if isinstance(row.get("row"), str) else None,
            handles_consumed=consumed,
            handles_minted=_minted(row.get("handles_minted"), aliases),
            handles_invalidated=[
                a
                for a in (_killed(h, aliases) for h in _names(row.get("handles_invalidated")))
                if a
            ],
            note=row.get("note") if isinstance(row.get("note"), str) else None,
            input=given if "kind" in given else None,
            proposal_source=_choice(row.get("proposal_source"), ("model", "user", "code")),
            idempotency_key=_text(row.get("idempotency_key")),
            state=row.get("state") if row.get("state") in _STATES else None,
        ),
        t,
    )


def _verdict(value: Any, place: Place) -> str | None:
    """A verdict as the chain's syntax writes it; an object's ``arg`` is its positional argument.

    >>> _verdict({"type": "gate", "arg": "price_change_consent"}, Place(1))
    'gate(price_change_consent)'
    """
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, dict) or value.get("type") not in VERDICT_TYPES:
        why = f"verdict: expected a verdict or an object with its type; got {value!r}"
        raise DocumentError([place.problem(why)])
    parts = {k: v for k, v in value.items() if k != "arg"}
    if value.get("arg") is not None:
        parts[POSITIONAL.get(value["type"], "reason")] = value["arg"]
    try:
        return build_verdict(parts)
    except VerdictSyntaxError as exc:
        raise DocumentError([place.problem(f"verdict: {exc}")]) from None


def _names(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _minted(value: Any, aliases: Aliases) -> list[str]:
    """Minted handles: names (each a new generation), aliases as they are, or name -> alias."""
    if isinstance(value, dict):
        return [aliases.mint(str(k), [str(v)]) for k, v in value.items()]
    return [h if "#" in h else aliases.mint(h) for h in _names(value)]


def _killed(handle: str, aliases: Aliases) -> str | None:
    return handle if "#" in handle else aliases.live(handle)


def _choice(value: Any, allowed: tuple[str, ...]) -> Any:
    return value if value in allowed else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
