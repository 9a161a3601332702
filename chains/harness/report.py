"""A harness run's results as the reports CI reads: JUnit XML and SARIF 2.1.0.

Each schedule is one test case: clean, or failed at its first divergence
(the audit's message, e.g. ``[unkeyed_redispatch] ... dispatched again``),
with every divergence and the exchange log in the failure's text. In SARIF
each divergence is a result of the rule named by its kind, placed in the
run's recorded trace (its HAR file) at the entry where it shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from xml.etree import ElementTree as ET

from chains.core.sarif import sarif_run
from chains.core.sim.schedules import Schedule

__all__ = ["ScheduleResult", "as_json", "junit_xml", "sarif_log"]

# Divergence kinds, gravest first.
_GRAVITY = (
    "forbidden_dispatch",
    "invalidated_handle",
    "wrong_verdict",
    "out_of_order",
    "unknown_step",
)
_KINDS = {
    "forbidden_dispatch": "A dispatch the SPEC's invariants forbid (a double booking, a "
    "spent handle, a gate skipped).",
    "invalidated_handle": "A call presented a handle an earlier event had invalidated.",
    "out_of_order": "A call the chain does not wait for at that point.",
    "unknown_step": "A step the chain does not have.",
    "wrong_verdict": "A verdict other than the one the chain's deciding row gives.",
    "client_failed": "The client under test did not finish (it crashed or ran out of time).",
}


@dataclass
class ScheduleResult:
    """One run of the client under one schedule: what the audit found and what it did."""

    schedule: Schedule
    divergences: list[dict[str, Any]] = field(default_factory=list)
    client_exit: int | None = None
    seconds: float = 0.0
    trace: str = ""  # the recorded HAR file, relative to the report
    exchanges: list[str] = field(default_factory=list)  # one line per request
    problem: str = ""  # why the run itself failed (the client timed out, the trace is unreadable)

    @property
    def clean(self) -> bool:
        return not self.divergences and not self.problem

    @property
    def worst(self) -> dict[str, Any] | None:
        """The divergence a team acts on first: the earliest of the gravest kind (a double
        booking before the out-of-order dispatch that led to it)."""
        if not self.divergences:
            return None
        return min(
            self.divergences,
            key=lambda d: _GRAVITY.index(d["kind"]) if d["kind"] in _GRAVITY else len(_GRAVITY),
        )

    @property
    def first(self) -> str:
        """What is wrong, in words (:attr:`worst`, or why the run failed); empty when clean."""
        if self.problem:
            return self.problem
        worst = self.worst
        return worst["message"] if worst else ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScheduleResult:
        """The result :meth:`as_dict` gave (a worker's answer)."""
        return cls(
            Schedule.from_dict(data["schedule"]),
            list(data.get("divergences", [])),
            data.get("client_exit"),
            float(data.get("seconds", 0.0)),
            str(data.get("trace", "")),
            list(data.get("exchanges", [])),
            str(data.get("problem", "")),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule.as_dict(),
            "label": self.schedule.label,
            "clean": self.clean,
            "divergences": self.divergences,
            "client_exit": self.client_exit,
            "seconds": round(self.seconds, 3),
            "trace": self.trace,
            "exchanges": self.exchanges,
            "problem": self.problem,
        }


def junit_xml(chain: str, results: Iterable[ScheduleResult]) -> str:
    """The results as one JUnit ``testsuite`` in a ``testsuites`` document.

    >>> from chains.core.sim.schedules import Fault
    >>> lost = Schedule((Fault("book", 1, "lost_response"),))
    >>> bad = ScheduleResult(lost, [{"kind": "forbidden_dispatch", "message": "twice"}])
    >>> xml = junit_xml("booking", [ScheduleResult(Schedule(())), bad])
    >>> 'tests="2" failures="1"' in xml, 'message="twice"' in xml
    (True, True)
    """
    results = list(results)
    failures = sum(1 for r in results if not r.clean)
    total = sum(r.seconds for r in results)
    root = ET.Element("testsuites", tests=str(len(results)), failures=str(failures))
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"harness: {chain}",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{total:.3f}",
        timestamp=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"harness.{chain}",
            name=result.schedule.label,
            time=f"{result.seconds:.3f}",
        )
        if not result.clean:
            worst = result.worst
            kind = worst["kind"] if worst and not result.problem else "client_failed"
            failure = ET.SubElement(case, "failure", message=result.first, type=kind)
            failure.text = _details(result)
        if result.trace:
            ET.SubElement(case, "system-out").text = f"trace: {result.trace}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def sarif_log(
    chain: str, results: Iterable[ScheduleResult], version: str | None = None
) -> dict[str, Any]:
    """Every divergence of every schedule as a SARIF 2.1.0 result, in the run's trace."""
    kinds = sorted(_KINDS)
    index = {k: n for n, k in enumerate(kinds)}
    rules = [
        {
            "id": f"harness.{k}",
            "shortDescription": {"text": _KINDS[k]},
            "defaultConfiguration": {"level": "error"},
        }
        for k in kinds
    ]
    found = []
    for result in results:
        wrong = result.divergences or (
            [{"kind": "client_failed", "message": result.problem}] if result.problem else []
        )
        for divergence in wrong:
            kind = divergence["kind"] if divergence["kind"] in index else "client_failed"
            location: dict[str, Any] = {
                "physicalLocation": {
                    "artifactLocation": {"uri": result.trace or f"{chain}.har.json"},
                    "region": {"startLine": max(1, int(divergence.get("line") or 1))},
                }
            }
            if divergence.get("step"):
                location["logicalLocations"] = [{"name": divergence["step"], "kind": "function"}]
            found.append(
                {
                    "ruleId": f"harness.{kind}",
                    "ruleIndex": index[kind],
                    "level": "error",
                    "message": {
                        "text": f"{chain}, under {result.schedule.label}: {divergence['message']}"
                    },
                    "locations": [location],
                    "partialFingerprints": {"schedule": result.schedule.label},
                }
            )
    return sarif_run("chain-designer harness", rules, found, version)


def _details(result: ScheduleResult) -> str:
    lines = [f"schedule: {result.schedule.label}"]
    lines += [
        f"{d.get('at') or d.get('line')}: {d['kind']}: {d['message']}" for d in result.divergences
    ]
    if result.problem:
        lines.append(result.problem)
    if result.client_exit is not None:
        lines.append(f"client exit status: {result.client_exit}")
    if result.exchanges:
        lines += ["exchanges:", *(f"  {e}" for e in result.exchanges)]
    return "\n".join(lines)


def as_json(chain: str, results: Iterable[ScheduleResult]) -> str:
    """The results as the command line's ``--json`` prints them."""
    listed = [r.as_dict() for r in results]
    clean = all(r["clean"] for r in listed)
    return json.dumps({"chain": chain, "clean": clean, "schedules": listed}, indent=2)
