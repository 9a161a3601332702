"""An intent log: the rows a runtime writes before each dispatch (SPEC P3's correlation record).

SPEC P3 asks a runtime to persist, before it sends an unkeyed commit, a
record of the attempt (run id, intent snapshot, status PENDING) that
survives the process; many runtimes write one for every tool call, in a
table such as ``tool_intents``. Exported as JSON lines, one row a line:

``run_id``; ``step_id`` (or ``tool``, ``action``): the step; ``intent`` (or
``args``): not read; ``idempotency_key``; ``status``; ``created_at`` (or
``t``): when it went out, ISO-8601 or seconds; ``updated_at``: when its
status last changed; ``http_status`` (or ``status_code``),
``error_code`` (or ``code``), ``error_type``, ``transport``: what came
back, when the table keeps it. A row ``{"gate": ID, "outcome": NAME,
"answered_by": WHO}`` is a gate's answer.

``status`` reads (any case): ``ok``/``succeeded``/``done`` answered
(``http_status``, else 200); ``failed``/``error``/``rejected`` answered with
an error (``http_status`` or ``transport`` required); ``timeout``;
``pending``/``reconciling``/``dispatched``: the answer was never read (a
timeout, unless ``transport`` says otherwise); ``landed``/``not_landed`` on
a commit's row: its answer was lost and the reconcile found it landed (or
not), at ``updated_at``; on a probe's row: what the probe found.
"""

from __future__ import annotations

from typing import Any

from ..errors import DocumentError, Problem
from ..model import ChainSpec, is_commit_class
from ..sim.state import Event
from .common import Place, Reading, json_lines, one_run, relative, seconds

__all__ = ["read_intent_log"]

_ANSWERED = {"ok", "succeeded", "success", "done", "completed"}
_FAILED = {"failed", "error", "rejected"}
_UNREAD = {"pending", "reconciling", "dispatched", "in_flight", "timeout"}
_RESOLVED = {"landed", "not_landed"}


def read_intent_log(text: str, spec: ChainSpec, run: str | None = None) -> Reading:
    """Intent-log rows as the audit's events, in the order they went out."""
    rows: dict[str | None, list[tuple[Place, dict[str, Any]]]] = {}
    for number, value in json_lines(text):
        place = Place(number)
        if not isinstance(value, dict):
            raise DocumentError([place.problem("a row must be a JSON object")])
        run_id = value.get("run_id")
        rows.setdefault(str(run_id) if run_id is not None else None, []).append((place, value))
    if not rows:
        raise DocumentError([Problem("the intent log holds no row")])
    chosen = one_run(rows, run, "intent log")
    timed: list[tuple[float | None, int, Place, Event]] = []
    problems: list[Problem] = []
    for order, (place, row) in enumerate(rows[chosen]):
        try:
            timed += [(t, order, place, e) for t, e in _events(row, place, spec)]
        except DocumentError as exc:
            problems += exc.problems
    if problems:
        raise DocumentError(problems)
    timed.sort(key=lambda x: (x[0] is None, x[0] or 0.0, x[1]))
    places = [p for _, _, p, _ in timed]
    events = [e for _, _, _, e in timed]
    for seq, (event, t) in enumerate(
        zip(events, relative([x[0] for x in timed], places), strict=True), 1
    ):
        event.seq, event.t = seq, t
    return Reading("intent-log", events, places, run_id=chosen)


def _events(row: dict[str, Any], place: Place, spec: ChainSpec) -> list[tuple[float | None, Event]]:
    when = next(
        (row[k] for k in ("created_at", "t", "timestamp") if row.get(k) not in (None, "")), None
    )
    t = None if when is None else seconds(when, "created_at", place)
    if row.get("gate") is not None:
        return [(t, _answer(row, place))]
    step = next(
        (row[k] for k in ("step_id", "tool", "action") if isinstance(row.get(k), str)), None
    )
    if step is None:
        raise DocumentError(
            [place.problem("step_id: a row names its step (step_id, tool or action)")]
        )
    action = spec.action(step)
    if action is not None and action.effect == "select":
        return [(t, Event(seq=0, event_type="transition", step_id=step, row="select"))]
    status = str(row.get("status") or "").strip().lower()
    key = row.get("idempotency_key")
    attempt = Event(
        seq=0,
        event_type="attempt",
        step_id=step,
        idempotency_key=str(key) if key not in (None, "") else None,
    )
    commit = action is not None and is_commit_class(action)
    if status in _RESOLVED and commit:
        attempt.signal = {"transport": _transport(row, place, "timeout")}
        later = row.get("updated_at")
        at = seconds(later, "updated_at", place) if later not in (None, "") else t
        found = Event(seq=0, event_type="reconcile", step_id=step, signal={"probe": status})
        return [(t, attempt), (at, found)]
    if status in _ANSWERED or status in _RESOLVED:
        attempt.signal = {"transport": _transport(row, place, "http:200")}
        if status in _RESOLVED:
            attempt.signal["probe"] = status
    elif status in _FAILED:
        attempt.signal = {"transport": _transport(row, place, None)}
    elif status in _UNREAD:
        attempt.signal = {"transport": _transport(row, place, "timeout")}
    else:
        known = ", ".join(sorted(_ANSWERED | _FAILED | _UNREAD | _RESOLVED))
        raise DocumentError(
            [place.problem(f"status: expected one of {known}; got {row.get('status')!r}")]
        )
    code = row.get("error_code", row.get("code"))
    if code not in (None, ""):
        attempt.signal["code"] = str(code)
    if isinstance(row.get("error_type"), str):
        attempt.signal["predicates"] = [f"type:{row['error_type']}"]
    return [(t, attempt)]


def _transport(row: dict[str, Any], place: Place, default: str | None) -> str:
    if isinstance(row.get("transport"), str) and row["transport"]:
        return row["transport"]
    status = row.get("http_status", row.get("status_code"))
    if status is not None:
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise DocumentError([place.problem(f"http_status: expected 100-599; got {status!r}")])
        return f"http:{status}"
    if default is None:
        why = "status: a failed row needs its http_status (or transport) to say how it failed"
        raise DocumentError([place.problem(why)])
    return default


def _answer(row: dict[str, Any], place: Place) -> Event:
    outcome = row.get("outcome")
    if not isinstance(outcome, str) or not outcome:
        raise DocumentError(
            [place.problem("outcome: a gate's row names the outcome it was answered with")]
        )
    by = row.get("answered_by")
    given: dict[str, Any] = {"kind": "answer", "outcome": outcome, "gate": str(row["gate"])}
    if by in ("user", "operator", "model"):
        given["by"] = by
    source = by if by in ("user", "model") else None
    return Event(seq=0, event_type="transition", input=given, proposal_source=source)
