"""HTTP calls as chain steps, through each action's HTTP binding (docs/format.md).

OTLP client spans and HAR entries are both :class:`Call` records; this
module maps each to the action bound to its method and path template (a
``{name}`` matches one path segment; a base path such as ``/v2`` or a host
before the template is ignored) and writes the audit's attempt event: the
signal from the status (or the transport failure when no response came),
the provider's error code and type from an error body, the idempotency key
from the bound header, the handles presented from the ``sends`` places and
the handles minted from the ``reads`` places of a successful answer. What a
call does not show (a body OTLP did not record) stays unknown: no alias is
made up for it. A call no action is bound to is kept as an
:class:`~.common.UnknownCall`, never dropped and never a step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import DocumentError, Problem
from ..model import Action, ChainSpec
from ..sim.state import Event
from .common import Aliases, Place, Reading, UnknownCall, one_run, relative

__all__ = ["UNSEEN", "Call", "calls_reading", "failure_of", "route_of", "routes_of"]


class _Unseen:
    """A body the trace did not record (not the same as an empty one)."""

    def __repr__(self) -> str:
        return "UNSEEN"


UNSEEN: Any = _Unseen()


@dataclass
class Call:
    """One HTTP request as a trace recorded it; ``status`` None when no response came."""

    method: str
    url: str
    place: Place
    start: float | None
    status: int | None = None
    failure: str | None = None  # timeout | conn_reset | conn_drop, when no response came
    request_headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    request_body: Any = UNSEEN
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: Any = UNSEEN
    run: str | None = None


@dataclass(frozen=True)
class _Route:
    action: Action
    method: str
    segments: tuple[str | None, ...]  # None: a path parameter
    names: tuple[str, ...]  # the parameters' names, in order

    @property
    def literals(self) -> int:
        return sum(s is not None for s in self.segments)


def failure_of(text: str) -> str:
    """The transport failure a client's error text names: ``timeout``, ``conn_reset``, else a drop.

    >>> failure_of("net::ERR_TIMED_OUT"), failure_of("ECONNRESET"), failure_of("EOF")
    ('timeout', 'conn_reset', 'conn_drop')
    """
    lowered = text.lower()
    if "timeout" in lowered or "timed_out" in lowered or "timed out" in lowered:
        return "timeout"
    if "reset" in lowered:
        return "conn_reset"
    return "conn_drop"


def routes_of(spec: ChainSpec) -> list[_Route]:
    """The chain's bound calls, as :func:`route_of` matches them (build once, match often)."""
    routes = []
    for action in spec.actions:
        if action.http is None:
            continue
        parts = [p for p in action.http.path.split("/") if p]
        segments = tuple(None if p.startswith("{") else p for p in parts)
        names = tuple(p[1:-1] for p in parts if p.startswith("{"))
        routes.append(_Route(action, action.http.method, segments, names))
    return routes


def route_of(
    spec: ChainSpec, method: str, url: str, routes: list[_Route] | None = None
) -> tuple[Action, dict[str, str]] | None:
    """The action bound to ``method`` and ``url``, with the path parameters' values.

    The template is matched against the end of the path, so a base path or
    a host before it does not matter; of several matches the one with more
    literal segments wins, then the one whose query and header places the
    request fills, then the chain's order. A template of parameters only
    matches a path of exactly its length.
    """
    path = [unquote(p) for p in urlsplit(url).path.split("/") if p]
    query = parse_qs(urlsplit(url).query)
    best: tuple[tuple[int, int, int], Action, dict[str, str]] | None = None
    for order, route in enumerate(routes if routes is not None else routes_of(spec)):
        if route.method != method.upper() or len(route.segments) > len(path):
            continue
        if route.literals == 0 and len(route.segments) != len(path):
            continue
        tail = path[len(path) - len(route.segments) :]
        if any(s is not None and s != p for s, p in zip(route.segments, tail, strict=True)):
            continue
        values = [p for s, p in zip(route.segments, tail, strict=True) if s is None]
        filled = sum(
            1
            for place in (route.action.http.sends.values() if route.action.http else ())
            if place.startswith("query:") and place.removeprefix("query:") in query
        )
        score = (route.literals, filled, -order)
        if best is None or score > best[0]:
            best = (score, route.action, dict(zip(route.names, values, strict=True)))
    return None if best is None else (best[1], best[2])


def calls_reading(spec: ChainSpec, calls: list[Call], fmt: str, run: str | None = None) -> Reading:
    """The audit's events for ``calls`` (in time order), and the calls no action is bound to."""
    routes = routes_of(spec)
    if not routes:
        raise DocumentError(
            [
                Problem(
                    f"chain {spec.id} binds no action to an HTTP call (an action's http: "
                    "method and path, docs/format.md), so an HTTP trace cannot be read as its steps"
                )
            ]
        )
    by_run: dict[str | None, list[Call]] = {}
    for call in calls:
        by_run.setdefault(call.run, []).append(call)
    if run is None and len(by_run) > 1 and all(len(group) == 1 for group in by_run.values()):
        # every call alone in its trace: a client that starts no span around its run
        by_run = {None: list(calls)}
    chosen = one_run(by_run, run, f"{fmt} trace")
    ordered = sorted(by_run.get(chosen, []), key=lambda c: (c.start is None, c.start or 0.0))
    aliases = Aliases()
    probes = {a.confirmation.probe for a in spec.actions if a.confirmation and a.confirmation.probe}
    events: list[Event] = []
    places: list[Place] = []
    times: list[float | None] = []
    unknown: list[UnknownCall] = []
    for call in ordered:
        found = route_of(spec, call.method, call.url, routes)
        if found is None:
            status = str(call.status) if call.status is not None else (call.failure or "none")
            unknown.append(
                UnknownCall(call.method.upper(), _shown_path(call.url), call.place, status)
            )
            continue
        action, params = found
        events.append(_event(len(events) + 1, action, params, call, aliases, action.id in probes))
        places.append(call.place)
        times.append(call.start)
    if not events:
        raise DocumentError([_nothing_bound(routes, unknown)])
    for event, t in zip(events, relative(times, places), strict=True):
        event.t = t
    return Reading(fmt, events, places, unknown, chosen)


def _nothing_bound(routes: list[_Route], unknown: list[UnknownCall]) -> Problem:
    bound = ", ".join(f"{r.method} {r.action.http.path}" for r in routes if r.action.http)
    if not unknown:
        return Problem("the trace holds no HTTP call")
    first = unknown[0]
    return first.place.problem(
        f"no call of the trace matches an action's HTTP binding (the chain binds {bound}); "
        f"the first call is {first.method} {first.path}"
    )


def _shown_path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "") or "/"


def _event(
    seq: int, action: Action, params: dict[str, str], call: Call, aliases: Aliases, probe: bool
) -> Event:
    binding = action.http
    assert binding is not None
    signal = _signal(action, call)
    if probe:
        found = _probe_result(action, call)
        if found is not None:
            signal["probe"] = found
    consumed: list[str] = []
    for name, place in binding.sends.items():
        if name in action.input.handles:
            alias = aliases.presented(name, _request_value(place, call, params))
            if alias is not None:
                consumed.append(alias)
    minted: list[str] = []
    if (
        call.status is not None
        and 200 <= call.status < 300
        and "empty:true" not in signal.get("predicates", [])
    ):
        for handle, place in binding.reads.items():
            value = _response_value(place, call)
            if value is not None:
                minted.append(aliases.mint(handle, [value]))
    key = None
    if binding.idempotency_header:
        key = call.request_headers.get(binding.idempotency_header.lower())
    return Event(
        seq=seq,
        event_type="attempt",
        step_id=action.id,
        signal=signal,
        handles_consumed=consumed,
        handles_minted=minted,
        idempotency_key=key,
    )


def _signal(action: Action, call: Call) -> dict[str, Any]:
    if call.status is None:
        return {"transport": call.failure or "conn_drop"}
    signal: dict[str, Any] = {"transport": f"http:{call.status}"}
    code, kind = _error(call.response_body)
    predicates = [f"type:{kind}"] if kind else []
    if code and call.status >= 300:
        signal["code"] = code
    if 200 <= call.status < 300 and _is_empty(action, call.response_body):
        detect = action.output.empty.detect if action.output.empty else None
        predicates += [p for p in (detect, "empty:true") if p]
    if predicates:
        signal["predicates"] = predicates
    return signal


def _error(body: Any) -> tuple[str | None, str | None]:
    """The provider's error code and type in an error body: ``errors[0]``, ``error`` or the top.

    >>> _error({"errors": [{"type": "invalid_state_error", "code": "offer_no_longer_available"}]})
    ('offer_no_longer_available', 'invalid_state_error')
    """
    if not isinstance(body, dict):
        return None, None
    if isinstance(body.get("errors"), list) and body["errors"]:
        first = body["errors"][0]
    elif isinstance(body.get("error"), dict):
        first = body["error"]
    else:
        first = {"code": body.get("code") or body.get("error_code")}
    if not isinstance(first, dict):
        return None, None
    code, kind = first.get("code"), first.get("type")
    return (
        str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None,
        kind if isinstance(kind, str) else None,
    )


_EMPTY = re.compile(
    r"^\s*(?:len\(\s*(?P<a>[\w.]+)\s*\)\s*==\s*0|(?P<b>[\w.]+)(?:\.length\s*==\s*0|\s*==\s*\[\s*\]))\s*$"
)


def _is_empty(action: Action, body: Any) -> bool:
    """Does the answer hold the empty result its action declares (``offers.length == 0``)?"""
    empty = action.output.empty
    if body is UNSEEN or empty is None or not empty.valid or not empty.detect:
        return False
    matched = _EMPTY.match(empty.detect)
    if matched is None:
        return False
    found = _collection(body, matched.group("a") or matched.group("b"))
    return found is not None and len(found) == 0


def _collection(body: Any, dotted: str | None) -> list[Any] | None:
    """The list ``dotted`` names in ``body`` (at the top, under ``data``, or deeper); else the
    answer's own list (``data`` or the body), which is what a list endpoint returns."""
    if dotted:
        for root in (body, body.get("data") if isinstance(body, dict) else None):
            value = _dig(root, dotted.split("."))
            if isinstance(value, list):
                return value
        found = _find_key(body, dotted.split(".")[-1], depth=4)
        if isinstance(found, list):
            return found
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        return body["data"]
    return body if isinstance(body, list) else None


def _dig(value: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _find_key(value: Any, key: str, depth: int) -> Any:
    level: list[Any] = [value]
    for _ in range(depth):
        nested: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                if key in item:
                    return item[key]
                nested += list(item.values())
        level = nested
    return None


def _probe_result(action: Action, call: Call) -> str | None:
    """What a probe's answer shows: ``not_landed`` for a 404 or an empty list, ``landed`` for
    a list with something in it or one object; None when its body was not recorded."""
    if call.status == 404:
        return "not_landed"
    if call.status is None or not 200 <= call.status < 300 or call.response_body is UNSEEN:
        return None
    detect = action.output.empty.detect if action.output.empty else None
    matched = _EMPTY.match(detect) if detect else None
    found = _collection(call.response_body, matched and (matched.group("a") or matched.group("b")))
    if found is not None:
        return "landed" if found else "not_landed"
    data = call.response_body.get("data") if isinstance(call.response_body, dict) else None
    return "landed" if isinstance(data, dict) and data else None


def _request_value(place: str, call: Call, params: dict[str, str]) -> str | None:
    kind, _, name = place.partition(":")
    if kind == "path":
        return params.get(name)
    if kind == "query":
        values = parse_qs(urlsplit(call.url).query).get(name)
        return values[0] if values else None
    if kind == "header":
        return call.request_headers.get(name.lower())
    return _scalar(pointer(call.request_body, name))


def _response_value(place: str, call: Call) -> str | None:
    kind, _, name = place.partition(":")
    if kind == "header":
        return call.response_headers.get(name.lower())
    return _scalar(pointer(call.response_body, name))


def pointer(value: Any, text: str) -> Any:
    """The value at JSON pointer ``text`` (RFC 6901) in ``value``; None where there is none.

    >>> pointer({"data": {"offers": [{"id": "off_1"}]}}, "/data/offers/0/id")
    'off_1'
    """
    if value is UNSEEN:
        return None
    for token in text.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return value["id"]  # a reference written as an object with its id
    return None


def headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header names in lower case (HTTP names are case-blind); the first of repeated ones."""
    out: dict[str, str] = {}
    for name, value in pairs:
        out.setdefault(name.lower(), value)
    return out
