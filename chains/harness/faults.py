"""The faults the proxy injects, checked against a chain before any request comes.

A :class:`Fault` says what goes wrong at the n-th call (from 1) of one step;
it is defined once, in :mod:`chains.core.sim.schedules`, where schedules are
made, and only re-exported here. A :class:`Plan` is the faults of one run:
each names a step of the chain bound to an HTTP call (a step the proxy never
sees could never fire), a call from 1, at most one fault per call, and what
its kind needs on the wire (a status for ``status`` and ``code``, a code for
``code``). :func:`error_body` fills a provider's error shape with a code,
:func:`injected_answer` makes the answer of a fault the proxy answers itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from chains.core.errors import DocumentError, Problem
from chains.core.model import ChainSpec
from chains.core.sim.schedules import FAULT_KINDS, Fault

from .wire import Answer, json_answer, phrase

__all__ = [
    "CODE_PLACEHOLDER",
    "DEFAULT_ERROR_BODY",
    "FAULT_KINDS",
    "Fault",
    "Plan",
    "check_error_body",
    "error_body",
    "injected_answer",
]

CODE_PLACEHOLDER = "<code>"
DEFAULT_ERROR_BODY: Any = {"error": {"code": CODE_PLACEHOLDER}}

_FIELDS = ("step", "dispatch", "kind", "status", "code", "retry_after")
_ANSWERS_WITH_STATUS = ("status", "code")
_RETRY_AFTER = ("status", "code", "rate_limited")  # the kinds whose answer may carry one


@dataclass(frozen=True)
class Plan:
    """The faults of one run by (step, call number); a call no fault names is forwarded."""

    faults: Mapping[tuple[str, int], Fault]

    @classmethod
    def of(cls, spec: ChainSpec, faults: Iterable[Fault | Mapping[str, Any]]) -> Plan:
        """The plan of ``faults`` (faults, or their ``as_dict`` form), every problem named.

        >>> spec = ChainSpec.model_validate({"id": "c", "actions": [
        ...     {"id": "look", "effect": "read", "http": {"method": "GET", "path": "/x"}}]})
        >>> len(Plan.of(spec, [{"step": "look", "dispatch": 2, "kind": "reset"}]))
        1
        """
        problems: list[Problem] = []
        planned: dict[tuple[str, int], Fault] = {}
        for n, item in enumerate(faults, 1):
            fault = item if isinstance(item, Fault) else _from_dict(item, n, problems)
            if fault is None:
                continue
            found = _problems(spec, fault)
            if (fault.step, fault.dispatch) in planned:
                found.append("a second fault at the same call; a call fails one way")
            where = f"fault {n} ({fault.step} call {fault.dispatch})"
            problems += [Problem(f"{where}: {p}") for p in found]
            planned.setdefault((fault.step, fault.dispatch), fault)
        if problems:
            raise DocumentError(problems)
        return cls(planned)

    def at(self, step: str, dispatch: int) -> Fault | None:
        return self.faults.get((step, dispatch))

    def __len__(self) -> int:
        return len(self.faults)

    def __iter__(self) -> Iterator[Fault]:
        return iter(self.faults.values())


def _from_dict(data: Any, n: int, problems: list[Problem]) -> Fault | None:
    if not isinstance(data, Mapping):
        problems.append(Problem(f"fault {n}: expected an object; got {type(data).__name__}"))
        return None
    unknown = sorted(set(map(str, data)) - set(_FIELDS))
    missing = [f for f in ("step", "dispatch", "kind") if f not in data]
    if unknown or missing:
        said = [f"unknown field(s) {', '.join(unknown)}"] if unknown else []
        said += [f"missing {', '.join(missing)}"] if missing else []
        problems.append(Problem(f"fault {n}: {'; '.join(said)} (fields: {', '.join(_FIELDS)})"))
        return None
    return Fault.from_dict(dict(data))


def _problems(spec: ChainSpec, fault: Fault) -> list[str]:
    """What keeps ``fault`` from being injected into ``spec``'s calls, in words."""
    found = []
    action = spec.action(fault.step) if isinstance(fault.step, str) else None
    if action is None:
        steps = ", ".join(a.id for a in spec.actions if a.http is not None)
        found.append(f"step: no action {fault.step!r} in chain {spec.id} (bound steps: {steps})")
    elif action.http is None:
        found.append(f"step: {fault.step} has no HTTP binding, so no call of it reaches the proxy")
    if not _whole(fault.dispatch) or fault.dispatch < 1:
        found.append(f"dispatch: expected a call number from 1; got {fault.dispatch!r}")
    if fault.kind not in FAULT_KINDS:
        found.append(f"kind: expected one of {', '.join(FAULT_KINDS)}; got {fault.kind!r}")
    if fault.kind in _ANSWERS_WITH_STATUS:
        if not _whole(fault.status) or not 200 <= fault.status <= 599:  # type: ignore[operator]
            found.append(f"status: a {fault.kind} fault answers with a status 200-599")
    elif fault.kind == "rate_limited":
        if fault.status not in (None, 429):
            found.append(f"status: a rate_limited fault answers 429; got {fault.status!r}")
    elif fault.status is not None:
        found.append(f"status: a {fault.kind} fault sends no answer to give a status to")
    if fault.kind == "code" and (not isinstance(fault.code, str) or not fault.code):
        found.append("code: a code fault names the provider's error code")
    elif fault.kind != "code" and fault.code is not None:
        found.append(f"code: only a code fault names an error code, not a {fault.kind} fault")
    if fault.retry_after is not None:
        if fault.kind not in _RETRY_AFTER:
            found.append(f"retry_after: a {fault.kind} fault sends no answer to carry it")
        elif not _number(fault.retry_after) or fault.retry_after < 0:
            found.append(f"retry_after: expected seconds, 0 or more; got {fault.retry_after!r}")
    return found


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def check_error_body(template: Any) -> None:
    """Refuse an error-body template that is not JSON or never names the code."""
    try:
        text = json.dumps(template)
    except (TypeError, ValueError) as exc:
        raise DocumentError([Problem(f"error body: not a JSON value ({exc})")]) from None
    if CODE_PLACEHOLDER not in text:
        raise DocumentError(
            [Problem(f"error body: no {CODE_PLACEHOLDER} in it, so the code would not show")]
        )


def error_body(template: Any, code: str) -> Any:
    """``template`` with every ``<code>`` in its strings (keys too) replaced by ``code``.

    >>> error_body({"errors": [{"type": "invalid_request_error", "code": "<code>"}]}, "gone")
    {'errors': [{'type': 'invalid_request_error', 'code': 'gone'}]}
    """
    if isinstance(template, str):
        return template.replace(CODE_PLACEHOLDER, code)
    if isinstance(template, list):
        return [error_body(item, code) for item in template]
    if isinstance(template, dict):
        return {error_body(k, code): error_body(v, code) for k, v in template.items()}
    return template


def injected_answer(fault: Fault, template: Any) -> Answer:
    """The answer to a ``status``, ``rate_limited`` or ``code`` fault: a JSON error body (for
    ``code`` the provider's shape, ``template``), with ``Retry-After`` when the fault gives one."""
    extra = []
    if fault.retry_after is not None:
        extra.append(("Retry-After", f"{fault.retry_after:g}"))
    if fault.kind == "code":
        assert fault.status is not None and fault.code is not None  # the plan checked
        return json_answer(fault.status, error_body(template, fault.code), extra)
    status = 429 if fault.kind == "rate_limited" else fault.status or 503
    return json_answer(status, {"error": {"message": phrase(status)}}, extra)
