"""Real telemetry as the trace audit's events: one reader per shape a system emits.

The audit (:mod:`chains.core.sim.audit`) replays a list of
:class:`~chains.core.sim.state.Event`; this package makes one from what a
run left behind: the simulator's own JSON lines, SPEC §2.5's event shape,
an intent log (the correlation records SPEC P3 asks for), OTLP JSON client
spans and a HAR archive. HTTP calls become steps through each action's HTTP
binding (:mod:`.http`). :func:`detect` tells the shape from the content;
:func:`read` reads it (or the shape it is told). Every problem names its
line, or its JSON pointer in a file that is one JSON document.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from ..errors import DocumentError, Problem
from ..model import ChainSpec
from ..sim.audit import Place, Reading, UnknownCall, read_simulator
from .common import documents
from .har import read_har
from .intents import read_intent_log
from .otlp import read_otlp
from .spec_events import read_spec_events

__all__ = ["FORMATS", "Format", "Place", "Reading", "UnknownCall", "detect", "read"]

Format = Literal["simulator", "spec", "intent-log", "otlp", "har"]
FORMATS: tuple[str, ...] = get_args(Format)

_SPEC_ONLY = ("t_start", "t_end", "run_id", "chain_id")


def detect(text: str) -> Format:
    """The shape of a trace, from its content.

    >>> detect('{"seq": 1, "event_type": "attempt", "t_start": "2026-03-01T10:00:00Z"}')
    'spec'
    >>> detect('{"log": {"version": "1.2", "entries": []}}')
    'har'
    """
    values = documents(text)
    first = values[0][1] if values else None
    if isinstance(first, dict):
        if "resourceSpans" in first:
            return "otlp"
        if isinstance(first.get("log"), dict) and "entries" in first["log"]:
            return "har"
        if "event_type" in first:
            return "spec" if _spec_like(first) else "simulator"
        if any(k in first for k in ("step_id", "tool", "action", "gate")) and (
            "status" in first or "created_at" in first or "gate" in first
        ):
            return "intent-log"
    raise DocumentError(
        [
            Problem(
                "cannot tell the trace's shape from its first value; name it with --format "
                f"({', '.join(FORMATS)})",
                values[0][0] if values else None,
            )
        ]
    )


def _spec_like(event: dict[str, Any]) -> bool:
    given = event.get("input")
    return (
        any(k in event for k in _SPEC_ONLY)
        or isinstance(event.get("verdict"), dict)
        or (isinstance(given, dict) and "kind" not in given and "handles" in given)
    )


def read(text: str, spec: ChainSpec, fmt: str = "auto", run: str | None = None) -> Reading:
    """``text`` as the audit's events for ``spec``; ``fmt`` picks the shape (else detected).

    ``run`` names the run to read in a file that holds several (a SPEC or
    intent-log ``run_id``, an OTLP ``traceId``, a HAR ``pageref``); a file
    with several runs and no ``run`` is refused, naming them.
    """
    shape = detect(text) if fmt == "auto" else fmt
    if shape == "simulator":
        if run is not None:
            raise DocumentError([Problem("--run: the simulator's trace holds one run")])
        return read_simulator(text)
    if shape == "spec":
        return read_spec_events(text, run)
    if shape == "intent-log":
        return read_intent_log(text, spec, run)
    if shape == "otlp":
        return read_otlp(text, spec, run)
    if shape == "har":
        return read_har(text, spec, run)
    raise DocumentError(
        [Problem(f"format: expected auto or one of {', '.join(FORMATS)}; got {fmt!r}")]
    )
