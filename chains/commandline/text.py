"""How the command line words results as text, apart from its plumbing.

Each function turns one result (an import report, a lint report, a run, an
exploration) into lines ``(text, style)``, where style is ``""``, ``"SUCCESS"``
or ``"WARNING"``; ``manage.py chain`` writes them with its terminal's colours,
``chain-designer`` plainly (:class:`chains.commandline.commands.Output`).
Django-free. The JSON forms are the results' own ``as_dict``/``report`` and
live with them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from chains.core.sim.explorer import Bounds, ExploreResult, scenario_dict

__all__ = [
    "Line",
    "audit_lines",
    "cause_text",
    "exploration_lines",
    "import_lines",
    "lint_lines",
    "run_lines",
    "scenario_yaml",
    "trace_line",
    "violation_lines",
]

Line = tuple[str, str]


def import_lines(report: dict[str, Any]) -> Iterator[Line]:
    """What an import found (chains, problems) and stored."""
    for c in report["chains"]:
        yield (
            f"chain {c['id']}: {c['handles']} handles, {c['actions']} actions, "
            f"{c['gates']} gates, {c['verdict_rows']} verdict rows",
            "",
        )
    for p in report["problems"]:
        where = f"line {p['line']}: " if p.get("line") is not None else ""
        yield f"{where}{p['message']}", ""
    for s in report.get("stored", []):
        outcome = "new revision" if s["created"] else "unchanged, head is revision"
        yield f"stored {s['id']}: {outcome} {s['revision']}", "SUCCESS"


def lint_lines(chain_id: str, report: Any) -> Iterator[Line]:
    """A chain's status, then its findings by severity, each with its fix."""
    yield f"chain {chain_id}: {report.status}", ""
    for severity in ("error", "warning", "info"):
        found = [f for f in report.findings if f.severity == severity]
        if found:
            yield f"  {severity}s ({len(found)}):", ""
        for f in found:
            yield f"    {f.element}: {f.message} [{f.rule}]", ""
            yield f"      fix: {f.hint}", ""


def exploration_lines(chain_id: str, bounds: Bounds, result: ExploreResult) -> Iterator[Line]:
    """The bounds, the search's size, coverage, and the verdict with each counterexample."""
    yield (
        f"chain {chain_id}: max_faults={bounds.max_faults} max_events={bounds.max_events} "
        f"crashes={'yes' if bounds.crashes else 'no'}",
        "",
    )
    yield (
        f"states: {result.states}  paths: {result.paths}  time: {result.seconds:.2f}s"
        + (f"  peak memory: {result.peak_mb:.0f} MB" if result.peak_mb is not None else "")
        + (f"  cut at max_events: {result.cut}" if result.cut else "")
        + ("  (stopped early)" if result.truncated else ""),
        "",
    )
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(result.terminals.items()))
    yield f"terminal states: {kinds or 'none'}", ""
    yield from _coverage_lines(result)
    if not result.violations:
        if result.complete:
            yield "no invariant broken", "SUCCESS"
        else:
            yield (
                "no invariant broken in what was explored, but coverage is incomplete "
                "(see the warnings): not a pass",
                "WARNING",
            )
        return
    yield f"violations: {len(result.violations)}", ""
    for n, v in enumerate(result.violations, 1):
        yield from violation_lines(n, v)


def violation_lines(n: int, violation: Any) -> Iterator[Line]:
    """One violation: its causal line (the decisions that left the good path, first
    first), then what broke, then the scenario that replays it, one event a line.

    A violation found before causes were recorded has none: its message heads it.
    """
    cause = violation.as_dict().get("cause") or []
    if cause:
        yield f"\n{n}. [{violation.invariant}]", ""
        yield "   cause:", ""
        for i, c in enumerate(cause, 1):
            yield f"     {i}. {cause_text(c)}", ""
        yield f"   {violation.message}", ""
    else:
        yield f"\n{n}. [{violation.invariant}] {violation.message}", ""
    yield "   scenario:", ""
    yield "     " + scenario_yaml(violation.scenario).rstrip().replace("\n", "\n     "), ""


def cause_text(cause: dict[str, Any]) -> str:
    """One decision of a causal line, with the element of the chain that took it.

    ``book_room on timeout: row U2 -> retry  (verdict_table[U2])``
    """
    text = cause.get("text") or (
        f"{cause['step']} on {cause['signal']}: {cause['rule']} -> {cause['verdict']}"
    )
    return text + (f"  ({cause['element']})" if cause.get("element") else "")


class _FlowDumper(yaml.SafeDumper):
    """Writes :class:`_OneLine` mappings in flow style, all else in block style."""


class _OneLine(dict):
    pass


_FlowDumper.add_representer(
    _OneLine,
    lambda dumper, data: dumper.represent_mapping(
        "tag:yaml.org,2002:map", data.items(), flow_style=True
    ),
)


def scenario_yaml(scenario: Any) -> str:
    """A scenario as YAML that :func:`~chains.core.sim.scenario.load_scenario` reads back,
    each event on one line, so a step it names leads its line.

    >>> from chains.core.sim.scenario import Scenario
    >>> print(scenario_yaml(Scenario(events=[{"step": "book", "observe": "timeout"}])), end="")
    chain: null
    intent: {}
    events:
    - {step: book, observe: {transport: timeout}}
    """
    data = scenario_dict(scenario)
    data["events"] = [_OneLine(e) for e in data["events"]]
    return yaml.dump(data, Dumper=_FlowDumper, sort_keys=False, width=1 << 20)


def _coverage_lines(result: ExploreResult) -> Iterator[Line]:
    if result.reach is None:
        return
    parts = []
    for kind, block in result.reach.coverage().items():
        seen = next(v for k, v in block.items() if k != "total")
        parts.append(f"{kind} {len(seen)}/{block['total']}")
    yield "coverage: " + ", ".join(parts), ""
    missed = result.reach.missed()["steps"]
    if missed:
        yield f"never reached: {', '.join(missed)}", ""
    if result.warnings:
        yield f"warnings: {len(result.warnings)}", "WARNING"
        for warning in result.warnings:
            yield f"  - {warning}", "WARNING"


def run_lines(run: Any) -> Iterator[Line]:
    """A simulated run: its trace, one line an event, then where it stands."""
    for e in run.trace:
        yield trace_line(e), ""
    snap = run.snapshot
    yield f"state: {snap.state}  cursor: {snap.cursor or '-'}  clock: {snap.clock:g}s", ""
    if snap.waiting.kind != "nothing":
        waiting = snap.waiting
        yield f"waiting: {waiting.kind} {waiting.step or waiting.gate or ''}".rstrip(), ""
    dispatched = ", ".join(f"{step} {n}" for step, n in snap.dispatches.items())
    yield f"dispatches: {dispatched or 'none'}", ""
    landed = ", ".join(
        c.step + (" (compensated)" if c.compensated else "") for c in snap.commits_landed
    )
    yield f"commits landed: {landed or 'none'}", ""
    live = ", ".join(h.alias for h in snap.handles.values())
    yield f"live handles: {live or 'none'}", ""
    if snap.outcome:
        shown = (f"{k}={v}" for k, v in snap.outcome.items() if v is not None)
        yield "outcome: " + ", ".join(shown), ""


def trace_line(e: Any) -> str:
    """One trace event: seq, type, step, attempt, signal, verdict [row], handles, budget."""
    parts = [f"{e.seq:>3}", f"{e.event_type:<10}", e.step_id or "-"]
    if e.attempt is not None:
        parts.append(f"#{e.attempt}")
    if e.signal:
        parts.append(signal_text(e.signal))
    if e.verdict:
        why = e.row or e.verdict_source
        parts.append(f"-> {e.verdict}" + (f" [{why}]" if why else ""))
    if e.handles_minted:
        parts.append("minted " + ", ".join(e.handles_minted))
    if e.handles_invalidated:
        parts.append("invalidated " + ", ".join(e.handles_invalidated))
    if e.budget_after:
        parts.append("budget " + " ".join(budget_text(k, v) for k, v in e.budget_after.items()))
    if e.note:
        parts.append(f"({e.note})")
    return "  ".join(parts)


def signal_text(signal: dict[str, Any]) -> str:
    """``http:402 card_declined predicates=[...]``: transport, code, then anything else."""
    first = ("transport", "code", "provider_code")
    shown = [str(signal[k]) for k in first if signal.get(k)]
    for key, value in signal.items():
        if key in first or not value:
            continue
        if isinstance(value, dict):
            value = signal_text(value)
        elif isinstance(value, list):
            value = "[" + ", ".join(map(str, value)) + "]"
        shown.append(f"{key}={value}")
    return " ".join(shown)


def budget_text(key: str, value: Any) -> str:
    """``step_attempts_left=1.0`` → ``attempts=1``: a trace line names what is left."""
    name = key if key.startswith("wall") else key.removeprefix("step_").removesuffix("_left")
    return f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"


def audit_lines(chain_id: str, result: Any) -> Iterator[Line]:
    """An audited trace: how far the chain's rules followed it, what it inferred, the calls
    bound to no action, then each divergence."""
    shape = f" ({result.format})" if result.format != "simulator" else ""
    yield f"chain {chain_id}: {result.events} events, {result.attempts} attempts{shape}", ""
    for inferred in result.inferred:
        yield f"  inferred: {inferred}", ""
    for call in result.unknown_calls:
        said = f"{call.method} {call.path} ({call.place}): no action is bound to it"
        yield f"  unknown call: {said}", "WARNING"
    if not result.followed:
        yield (
            f"the chain's rules followed the run up to seq {result.stopped_at}; "
            "after it only the invariants were checked",
            "WARNING",
        )
    if result.clean:
        yield "no divergence: the run kept to the chain", "SUCCESS"
        return
    yield f"divergences: {len(result.divergences)}", ""
    for d in result.divergences:
        at = f" at {d.step}" if d.step else ""
        yield f"  seq {d.seq} ({d.at or f'line {d.line}'}){at}: {d.kind}: {d.message}", ""
