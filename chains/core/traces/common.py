"""What every trace reader shares: JSON reading, times, aliases, picking one run.

A reader turns a file into the audit's :class:`~chains.core.sim.audit.Reading`:
its events (:class:`~chains.core.sim.state.Event`, the simulator's own), each
with the :class:`~chains.core.sim.audit.Place` in the file it came from (a
line, or a JSON pointer where a document is one JSON value), and the HTTP
calls no action is bound to; those types are the audit's, re-exported. Times
are seconds since the run's first event, whatever the file wrote (numbers,
ISO-8601 text or Unix nanoseconds). Handle values never reach an event: each
becomes an alias ``<handle>#<generation>``, as the simulator writes them, so
the audit can compare what a call presented with what the chain invalidated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..errors import DocumentError, Problem
from ..sim.audit import MAX_SECONDS, Place, Reading, UnknownCall, in_seq_order, seconds

__all__ = [
    "MAX_SECONDS",
    "Aliases",
    "Place",
    "Reading",
    "UnknownCall",
    "documents",
    "in_seq_order",
    "json_lines",
    "load_json",
    "one_run",
    "seconds",
]


def load_json(text: str, where: Place | None = None) -> Any:
    """One JSON value; a problem naming the line and column where it stops being JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno if where is None or where.line is None else where.line
        raise DocumentError([Problem(f"not JSON: {exc.msg}", line, exc.colno)]) from None
    except RecursionError:  # a value nested thousands deep: Python's parser gives up
        at = where or Place(1)
        raise DocumentError([at.problem("not JSON we can read: nested too deeply")]) from None


def json_lines(text: str) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's JSON value with its number; every bad line named at once."""
    problems: list[Problem] = []
    values: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            values.append((number, load_json(line, Place(number))))
        except DocumentError as exc:
            problems += exc.problems
    if problems:
        raise DocumentError(problems)
    yield from values


def documents(text: str) -> list[tuple[int | None, Any]]:
    """The file's JSON: one value (line None), or one a line (JSON lines).

    A pretty-printed document spans lines that are not values of their own,
    so a file that does not parse whole is read as JSON lines when its first
    line is a JSON object of its own (then each bad line is named); otherwise
    the whole file's error is the one named.
    """
    try:
        return [(None, load_json(text))]
    except DocumentError:
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            alone = json.loads(first)
        except (ValueError, RecursionError):
            alone = None
        if not isinstance(alone, dict):
            raise
    return list(json_lines(text))


def relative(times: list[float | None], places: list[Place]) -> list[float]:
    """Times as seconds since the first one; a time before it, or too far after, is named."""
    known = [t for t in times if t is not None]
    start = min(known) if known else 0.0
    out: list[float] = []
    last = 0.0
    for t, place in zip(times, places, strict=True):
        at = last if t is None else t - start
        if not 0 <= at <= MAX_SECONDS:
            why = f"time: {at:,.0f} seconds after the run's start; at most {MAX_SECONDS:,}"
            raise DocumentError([place.problem(why)])
        out.append(at)
        last = at
    return out


def one_run(runs: dict[str | None, list[Any]], wanted: str | None, what: str) -> str | None:
    """The run id to audit: ``wanted``, or the only one there is.

    A file with several runs is refused unless one is named: each run is
    its own replay of the chain, and one audit answers for one run.
    """
    named = sorted(r for r in runs if r is not None)
    if wanted is not None:
        if wanted not in runs:
            listed = ", ".join(named) or "none"
            raise DocumentError(
                [Problem(f"--run {wanted}: the {what} holds no such run ({listed})")]
            )
        return wanted
    if len(runs) > 1:
        listed = ", ".join(named)
        why = f"the {what} holds {len(runs)} runs ({listed}); name the one to audit with --run"
        raise DocumentError([Problem(why)])
    return next(iter(runs), None)


class Aliases:
    """Handle values as aliases: ``offer_id#2`` is a value the second mint of offer_id made.

    Values a minting answer carried are that mint's generation. A value
    first seen in a request stands for the live generation (the pick among
    a search's results is one of that search's offers); a handle never seen
    minted has no alias, so a request presenting it presents nothing known.
    """

    def __init__(self) -> None:
        self.generation: dict[str, int] = {}
        self.known: dict[tuple[str, str], str] = {}

    def mint(self, handle: str, values: list[str] | None = None) -> str:
        """A new generation of ``handle`` (with the values its answer carried); its alias."""
        self.generation[handle] = self.generation.get(handle, 0) + 1
        alias = f"{handle}#{self.generation[handle]}"
        for value in values or []:
            self.known[(handle, value)] = alias
        return alias

    def presented(self, handle: str, value: str | None) -> str | None:
        """The alias of ``value`` sent as ``handle``; None when nothing says which it is."""
        if value is not None and (handle, value) in self.known:
            return self.known[(handle, value)]
        if handle not in self.generation:
            return None
        alias = f"{handle}#{self.generation[handle]}"
        if value is not None:  # seen again after a newer mint, it shows as this generation's
            self.known[(handle, value)] = alias
        return alias

    def live(self, handle: str) -> str | None:
        n = self.generation.get(handle)
        return None if n is None else f"{handle}#{n}"
