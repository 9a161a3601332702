"""The commands on chain files, each run once for both doors.

A command takes the parsed options, an :class:`Output` and the door's
:class:`~chains.commandline.files.Files` (what a chain argument may name), and
returns its exit status: lint 0 for VALID or WARNINGS, 1 INVALID, 2 BLOCKED
(the worst of all the targets); simulate 0 when the scenario ran and its
expectations held (else :class:`Failed`); explore 1 when an invariant broke, 3
when none did but the search did not cover the chain, 0 for a clean and
complete search; audit 0 when a run's trace kept to the chain, 1 when it
diverged, 2 when its chain or trace cannot be read. Django-free.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any, TextIO

import yaml

from chains.core import edit, formats
from chains.core.errors import ChainError, DocumentError, Problem
from chains.core.export import export as export_spec
from chains.core.lint import EXIT_CODES, worst_status
from chains.core.model import EFFECTS
from chains.core.openapi import confirmed_effects, edits_onto, propose_chain, read_provider
from chains.core.openapi.picking import pick
from chains.core.sim.explorer import explore
from chains.core.sim.runs import FileRuns
from chains.core.sim.scenario import ScenarioMismatch, simulate
from chains.core.sim.schedules import schedules
from chains.harness import report as harness_report
from chains.harness.faults import DEFAULT_ERROR_BODY
from chains.harness.runner import Client, Target, provider_started, run_schedules
from chains.harness.stand_in import StandIn, serve

from .files import (
    Failed,
    Files,
    Unreadable,
    audit_trace,
    bounds_of,
    exploration_status,
    lint_json,
    lint_loaded,
    pick_chain,
    read_scenario,
    rules_text,
    sarif_log,
    scenario_chain,
    write_counterexamples,
)
from .text import (
    Line,
    audit_lines,
    exploration_lines,
    import_lines,
    lint_lines,
    run_lines,
)

__all__ = ["COMMANDS", "Command", "Output", "version"]


class Output:
    """Where a command writes: lines of text (a style each, which plain output leaves
    out) and whole texts such as JSON."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def line(self, text: str, style: str = "") -> None:
        print(text, file=self.stream)

    def say(self, lines: Iterable[Line]) -> None:
        for text, style in lines:
            self.line(text, style)

    def write_text(self, text: str) -> None:
        self.stream.write(text if text.endswith("\n") else text + "\n")

    def json(self, data: object) -> None:
        self.write_text(json.dumps(data, indent=2))


Command = Callable[[argparse.Namespace, Output, Files], int]


def lint(options: argparse.Namespace, out: Output, files: Files) -> int:
    linted = [lint_loaded(files.load(t, options.input_format)) for t in options.targets]
    status = worst_status([f.status for f in linted])
    if options.output == "sarif":
        out.json(sarif_log(linted, version()))
    elif options.output == "json":
        shapes = [lint_json(f) for f in linted]
        if len(shapes) == 1:
            out.json(shapes[0])
        else:
            each = [{"path": f.target, **shape} for f, shape in zip(linted, shapes, strict=True)]
            out.json({"status": status, "files": each})
    else:
        for f in linted:
            out.say((f"import: {p}", "") for p in f.problems)
            for chain, report in f.reports:
                out.say(lint_lines(chain.id, report))
        if sum(len(f.reports) for f in linted) != 1:
            out.line(f"status: {status}")
    return EXIT_CODES[status]


def import_(options: argparse.Namespace, out: Output, files: Files) -> int:
    """Read a document as the importer does and store nothing."""
    result = formats.load(files.read(options.path), options.format, options.path.name)
    problems = list(result.problems)
    if not result.chains and not problems:
        problems.append(Problem("the document holds no chain"))
    report = formats.ImportResult(result.chains, formats.errors_first(problems), result.format)
    if options.json:
        out.json(report.report())
    else:
        out.say(import_lines(report.report()))
    if not result.chains:
        raise Failed(f"no chain found in {options.path}")
    return 0


def simulate_(options: argparse.Namespace, out: Output, files: Files) -> int:
    scenario = read_scenario(options.scenario)
    spec = scenario_chain(files.load(options.chain), scenario)
    try:
        runs = FileRuns(options.runs) if options.runs is not None else None
        result = simulate(spec, scenario, runs=runs)
    except ScenarioMismatch as exc:
        if exc.run is not None and not options.json:
            out.say(run_lines(exc.run))
        raise Failed(f"scenario mismatch: {exc}") from None
    except ChainError as exc:
        raise Failed(f"simulation failed: {exc}") from None
    if options.json:
        out.json(result.as_dict())
    else:
        if result.created is False:
            out.line(f"run_key {scenario.run_key}: the kept run, no event applied")
        out.say(run_lines(result.run))
        for n, accepted in result.proposals:
            out.line(f"proposal of event {n}: {'accepted' if accepted else 'refused'}")
        for e in result.expectations:
            out.line(f"expect {'held' if e.held else 'FAILED'}: {e}")
    if not result.held:
        raise Failed("expectations failed: " + "; ".join(str(e) for e in result.failed))
    return 0


def explore_(options: argparse.Namespace, out: Output, files: Files) -> int:
    bounds = bounds_of(options)
    spec = pick_chain(files.load(options.chain), options.chain_id)
    result = explore(spec, bounds)
    if options.json:
        out.json(result.as_dict())
    else:
        out.say(exploration_lines(spec.id, bounds, result))
    if options.write_counterexamples is not None:
        for path in write_counterexamples(options.write_counterexamples, spec.id, result):
            out.line(f"wrote {path}")
    return exploration_status(result, options.allow_incomplete)


def audit(options: argparse.Namespace, out: Output, files: Files) -> int:
    try:
        spec = pick_chain(files.load(options.chain), options.chain_id)
    except Failed as exc:  # a chain that cannot be read is exit 2, as a trace that cannot
        raise Unreadable(str(exc)) from None
    result = audit_trace(spec, options.trace, options.trace_format, options.run)
    if options.json:
        out.json(result.as_dict())
    else:
        out.say(audit_lines(spec.id, result))
    return 0 if result.clean else 1


def harness(options: argparse.Namespace, out: Output, files: Files) -> int:
    try:
        spec = pick_chain(files.load(options.chain), options.chain_id)
    except Failed as exc:
        raise Unreadable(str(exc)) from None
    try:
        found = schedules(spec, options.max_faults, sample=options.sample, seed=options.seed)
        client = Client(
            shlex.split(options.client),
            dict(_pair(e, "--env", "NAME=VALUE") for e in options.env),
            options.url_variable,
            options.timeout,
        )
        body = json.loads(options.error_body) if options.error_body else DEFAULT_ERROR_BODY
        with _provider(options) as upstream:
            target = Target(upstream, body, options.hold)
            progress = None if options.json else (lambda r: out.line(_run_line(r)))
            send = files.send_schedule if getattr(options, "celery", False) else None
            results = run_schedules(
                spec,
                found,
                client,
                target,
                options.out,
                jobs=options.jobs,
                progress=progress,
                send=send,
            )
    except (DocumentError, ValueError) as exc:
        raise Unreadable(f"harness: {exc}") from None
    if options.junit:
        options.junit.write_text(harness_report.junit_xml(spec.id, results), encoding="utf-8")
    if options.sarif:
        log = harness_report.sarif_log(spec.id, results, version())
        options.sarif.write_text(json.dumps(log, indent=2), encoding="utf-8")
    if options.json:
        out.write_text(harness_report.as_json(spec.id, results) + "\n")
    else:
        failed = sum(1 for r in results if not r.clean)
        out.line(f"{len(results)} schedules: {len(results) - failed} clean, {failed} diverged")
    return 0 if all(r.clean for r in results) else 1


def stand_in(options: argparse.Namespace, out: Output, files: Files) -> int:
    """Serve the document's stand-in until stopped (chains/harness/stand_in.py)."""
    try:
        served = StandIn(files.read_openapi(options.document), options.document.name)
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"{options.document}:\n{lines}") from None

    def announce(line: str) -> None:
        out.line(line)
        out.stream.flush()  # the harness waits for this line before it starts a client

    try:
        serve(served, options.port, announce)
    except OSError as exc:
        raise Failed(f"stand-in: cannot listen on 127.0.0.1:{options.port}: {exc}") from None
    return 0


def _provider(options: argparse.Namespace) -> Any:
    """The provider's base URL: given, or of a stand-in started for the run."""
    if options.upstream:
        return contextlib.nullcontext(options.upstream.rstrip("/"))
    return provider_started(shlex.split(options.provider))


def _run_line(result: Any) -> str:
    return f"{'ok  ' if result.clean else 'FAIL'} {result.schedule.label}" + (
        f": {result.first}" if not result.clean else ""
    )


def openapi(options: argparse.Namespace, out: Output, files: Files) -> int:
    try:
        beside = options.path.parent if options.resolve_local else None
        data = files.read_openapi(options.path)
        limit = files.openapi_limit
        provider = read_provider(
            data, options.path.name, beside=beside, limit=limit, key_header=options.key_header
        )
        effects = confirmed_effects(dict(_pair(e) for e in options.effect))
        picks = [p.strip() for given in options.pick for p in given.split(",") if p.strip()]
        # --pick, --tag and --path each a union, together an intersection (picking.py)
        operations = pick(provider.operations, ids=picks, tags=options.tag, paths=options.path_glob)
        chosen = [o.id for o in operations]
        chain = None
        if picks:
            chain_id = _snake_id(provider.title or options.path.stem)
            chain = propose_chain(
                operations, chosen, effects, chain_id=chain_id, title=provider.title
            )
            if options.onto:
                chain = _onto(files, options, chain)
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"{options.path}:\n{lines}") from None
    for warning in provider.warnings:
        print(f"{options.path}: warning: {warning}", file=sys.stderr)
    if chain is not None:
        if options.json:
            out.json(chain)
        else:
            out.write_text(yaml.safe_dump(chain, sort_keys=False, allow_unicode=True))
        return 0
    if options.json:
        out.json([o.as_dict() for o in operations])
        return 0
    if provider.key_header:
        out.line(f"every POST takes {provider.key_header} ({provider.key_source})")
    for o in operations:
        out.line(f"{o.id}: {o.method.upper()} {o.path}")
        out.line(f"  effect {o.effect} ({o.why}); idempotency {o.idempotency}")
        if o.fields:
            typed = (f"{name} ({o.types.get(name, 'string')})" for name in o.fields)
            out.line(f"  intent fields: {', '.join(typed)}")
        if o.handles:
            out.line(f"  handles: {', '.join(o.handles)}")
        for error in o.errors:
            out.line(f"  documents {error}")
    return 0


def _onto(files: Files, options: argparse.Namespace, proposal: dict[str, Any]) -> dict[str, Any]:
    """The chain file ``--onto`` names with the proposal attached or added (edits_onto)."""
    spec = pick_chain(files.load(str(options.onto)), options.chain)
    renames = dict(_pair(r, "--rename", "PROPOSED=ACTION") for r in options.rename)
    try:
        for op, args in edits_onto(formats.to_document(spec), proposal, renames):
            spec = edit.apply(spec, op, args)
    except ChainError as exc:
        raise Failed(f"{options.onto}: {exc}") from None
    return formats.to_document(spec)


def _snake_id(text: str) -> str:
    """A chain id from a document's title: ``Flight Create Orders`` -> ``flight_create_orders``."""
    return "_".join(re.findall(r"[A-Za-z0-9]+", text)).lower() or "provider"


def _pair(text: str, flag: str = "--effect", form: str = "") -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        form = form or f"ID=EFFECT, EFFECT one of {', '.join(EFFECTS)}"
        raise Failed(f"{flag} {text!r}: write {form}")
    return name.strip(), value.strip() if form else value


def export(options: argparse.Namespace, out: Output, files: Files) -> int:
    spec = pick_chain(files.load(options.chain), options.chain_id)
    out.write_text(export_spec(spec, options.format, drawn=True))
    return 0


def schema(options: argparse.Namespace, out: Output, files: Files) -> int:
    out.json(formats.json_schema())
    return 0


def rules(options: argparse.Namespace, out: Output, files: Files) -> int:
    out.write_text(rules_text(options.markdown))
    return 0


COMMANDS: dict[str, Command] = {
    "lint": lint,
    "import": import_,
    "simulate": simulate_,
    "explore": explore_,
    "audit": audit,
    "harness": harness,
    "stand-in": stand_in,
    "openapi": openapi,
    "export": export,
    "schema": schema,
    "rules": rules,
}


def version() -> str:
    """The installed ``chain-designer``'s version (SARIF names it)."""
    try:
        return metadata.version("chain-designer")
    except metadata.PackageNotFoundError:
        return "0+unknown"
