"""``manage.py chain``: import, export, lint, simulate, explore, rules, schema; a thin shell.

The core parses, checks and reports; this command reads files, imports through
``chains.services.imports`` as the page and the API do, and turns outcomes into
text, JSON and an exit status (lint: 0 VALID or WARNINGS, 1 INVALID, 2
BLOCKED; simulate: 0 when the scenario ran and its expectations held, 1
otherwise; explore: 1 when an invariant broke, 3 when none did but the search
did not cover the chain (a step never reached, a happy path short of
``done``), 0 only for a clean and complete search; ``--allow-incomplete``
turns 3 into 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chains.core import formats
from chains.core.errors import ChainError, DocumentError
from chains.core.lint import EXIT_CODES, RULES, lint, worst_status
from chains.core.lint.docs import rules_markdown
from chains.core.sim.explorer import EXIT_CODES as EXPLORE_EXIT_CODES
from chains.core.sim.explorer import Bounds, ExploreResult, explore, scenario_dict
from chains.core.sim.regression import test_vectors
from chains.core.sim.scenario import Scenario, ScenarioMismatch, load_scenario, simulate
from chains.models import Chain, Team, saved_scenarios, scenario_checks
from chains.services.imports import import_document
from chains.services.scenarios import BadScenario, save_scenario


class Command(BaseCommand):
    help = "Import, export and describe chain documents."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)

        imp = sub.add_parser("import", help="Check a chain document and store its chains.")
        imp.add_argument("path", type=Path)
        imp.add_argument("--format", choices=["auto", "yaml", "json", "md"], default="auto")
        imp.add_argument("--dry-run", action="store_true", help="check only, store nothing")
        imp.add_argument("--json", action="store_true", help="print the report as JSON")
        imp.add_argument("--team", help="slug of the team that owns the chains this creates")

        exp = sub.add_parser("export", help="Print the head revision of a chain.")
        exp.add_argument("chain", help="the chain key (its id)")
        exp.add_argument(
            "--format",
            choices=["yaml", "json", "md"],
            default="yaml",
            help="md: the Markdown design document (SKILL Step 6 layout)",
        )

        sub.add_parser("schema", help="Print the JSON Schema of chain documents.")

        lnt = sub.add_parser(
            "lint", help="Check chains against the SPEC: exit 0 valid, 1 invalid, 2 blocked."
        )
        lnt.add_argument("target", help="a file (YAML, JSON or compile Markdown) or a chain key")
        lnt.add_argument("--format", choices=["auto", "yaml", "json", "md"], default="auto")
        lnt.add_argument("--json", action="store_true", help="print the report as JSON")

        sim = sub.add_parser(
            "simulate", help="Run a scenario against a chain: exit 0 if it ran as expected, else 1."
        )
        sim.add_argument("chain", help="a chain file (any import format) or a stored chain key")
        sim.add_argument("scenario", type=Path, help="the scenario (YAML or JSON)")
        sim.add_argument("--json", action="store_true", help="print the result as JSON")

        xpl = sub.add_parser(
            "explore",
            help="Search failure sequences for broken invariants: exit 1 if one broke, "
            "3 if none did but coverage is incomplete, 0 if clean and complete.",
        )
        xpl.add_argument("chain", help="a chain file (any import format) or a stored chain key")
        xpl.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")
        xpl.add_argument("--max-faults", type=int, default=Bounds.max_faults)
        xpl.add_argument("--max-events", type=int, default=Bounds.max_events)
        xpl.add_argument("--no-crashes", action="store_true", help="never crash mid-dispatch")
        xpl.add_argument("--json", action="store_true", help="print the result as JSON")
        xpl.add_argument(
            "--allow-incomplete",
            action="store_true",
            help="exit 0, not 3, when no invariant broke but coverage is incomplete",
        )
        xpl.add_argument(
            "--write-counterexamples",
            type=Path,
            metavar="DIR",
            help="write each violation's scenario to DIR as YAML",
        )

        scn = sub.add_parser(
            "scenario",
            help="Keep scenarios with a stored chain and replay them as regression checks.",
        )
        scn_sub = scn.add_subparsers(dest="action", required=True)
        add = scn_sub.add_parser("add", help="Save a scenario file under a name.")
        add.add_argument("chain", help="the stored chain key")
        add.add_argument("name")
        add.add_argument("scenario", type=Path)
        add.add_argument(
            "--record", action="store_true", help="replay it and save the outcome as its expect"
        )
        chk = scn_sub.add_parser(
            "check", help="Replay every saved scenario: exit 1 if any changed."
        )
        chk.add_argument("chain", help="the stored chain key")
        chk.add_argument("--json", action="store_true")
        vec = scn_sub.add_parser("export", help="Print the conformance test vectors (JSON).")
        vec.add_argument("chain", help="the stored chain key")

        rls = sub.add_parser("rules", help="List the lint rules.")
        rls.add_argument("--markdown", action="store_true", help="the docs/lint-rules.md text")

    def handle(self, *args: Any, **options: Any) -> None:
        subcommand = options["subcommand"]
        if subcommand == "import":
            team = _team(options["team"])
            self.import_(
                options["path"], options["format"], options["dry_run"], options["json"], team
            )
        elif subcommand == "export":
            self.export(options["chain"], options["format"])
        elif subcommand == "lint":
            self.lint(options["target"], options["format"], options["json"])
        elif subcommand == "simulate":
            self.simulate(options["chain"], options["scenario"], options["json"])
        elif subcommand == "explore":
            self.explore(options)
        elif subcommand == "scenario":
            self.scenario(options)
        elif subcommand == "rules":
            self.rules(options["markdown"])
        else:
            self.write_text(json.dumps(formats.json_schema(), indent=2))

    def import_(
        self, path: Path, fmt: str, dry_run: bool, as_json: bool, team: Team | None = None
    ) -> None:
        # The operator at the command line has confirmed by running it: the usable
        # chains are stored even when others in the file have errors.
        imported = import_document(
            read_limited(path),
            format=fmt,
            filename=path.name,
            team=team,
            confirm=True,
            store=not dry_run,
            message=f"import {path.name}",
        )
        report = imported.report()
        if as_json:
            self.write_text(json.dumps(report, indent=2))
        else:
            self.write_human(report)
        if not imported.chains:
            raise CommandError(f"no chain found in {path}")

    def export(self, key: str, fmt: str) -> None:
        chain = Chain.objects.filter(key=key).first()
        head = chain.head() if chain else None
        if head is None:
            raise CommandError(f"no chain with key {key!r}")
        self.write_text(formats.dump(formats.from_document(head.document), fmt))

    def lint(self, target: str, fmt: str, as_json: bool) -> None:
        chains, problems = self.lint_targets(target, fmt)
        reports = [(chain, lint(chain)) for chain in chains]
        status = worst_status([report.status for _, report in reports])
        if as_json:
            out: dict[str, Any] = {"status": status}
            if problems:
                out["import_problems"] = [p.as_dict() for p in problems]
            documents = [{"chain": c.id, **report.as_dict()} for c, report in reports]
            if len(documents) == 1:
                out.update(documents[0])
            else:
                out["chains"] = documents
            self.write_text(json.dumps(out, indent=2))
        else:
            for p in problems:
                self.stdout.write(f"import: {p}")
            for c, report in reports:
                self.write_lint(c.id, report)
            if len(reports) != 1:
                self.stdout.write(f"status: {status}")
        if EXIT_CODES[status]:
            raise SystemExit(EXIT_CODES[status])

    def lint_targets(self, target: str, fmt: str) -> tuple[list, list]:
        """Chains from a file (every format the importer takes) or a stored chain's head."""
        path = Path(target)
        if path.exists():
            result = formats.load(read_limited(path), format=fmt, filename=path.name)
            return result.chains, result.problems
        stored = Chain.objects.filter(key=target).first()
        head = stored.head() if stored else None
        if head is None:
            raise CommandError(f"{target} is neither a file nor a stored chain")
        return [formats.from_document(head.document)], []

    def write_lint(self, chain_id: str, report: Any) -> None:
        self.stdout.write(f"chain {chain_id}: {report.status}")
        for severity in ("error", "warning", "info"):
            found = [f for f in report.findings if f.severity == severity]
            if found:
                self.stdout.write(f"  {severity}s ({len(found)}):")
            for f in found:
                self.stdout.write(f"    {f.element}: {f.message} [{f.rule}]")
                self.stdout.write(f"      fix: {f.hint}")

    def simulate(self, target: str, path: Path, as_json: bool) -> None:
        try:
            scenario = load_scenario(read_limited(path), filename=path.name)
        except DocumentError as exc:
            lines = "\n".join(f"  {p}" for p in exc.problems)
            raise CommandError(f"bad scenario {path}:\n{lines}") from None
        chain = self.scenario_chain(target, scenario)
        try:
            result = simulate(chain, scenario)
        except ScenarioMismatch as exc:
            if exc.run is not None and not as_json:
                self.write_run(exc.run)
            raise CommandError(f"scenario mismatch: {exc}") from None
        except ChainError as exc:
            raise CommandError(f"simulation failed: {exc}") from None
        if as_json:
            self.write_text(json.dumps(result.as_dict(), indent=2))
        else:
            self.write_run(result.run)
            for n, accepted in result.proposals:
                self.stdout.write(f"proposal of event {n}: {'accepted' if accepted else 'refused'}")
            for e in result.expectations:
                self.stdout.write(f"expect {'held' if e.held else 'FAILED'}: {e}")
        if not result.held:
            failed = "; ".join(str(e) for e in result.failed)
            raise CommandError(f"expectations failed: {failed}")

    def scenario_chain(self, target: str, scenario: Scenario) -> Any:
        """The chain a scenario runs on: the file's only chain, or the one it names."""
        chains, problems = self.lint_targets(target, "auto")
        if not chains:
            found = "; ".join(str(p) for p in problems if p.severity == "error")
            raise CommandError(f"no chain found in {target}" + (f": {found}" if found else ""))
        if len(chains) == 1:
            return chains[0]
        ids = ", ".join(c.id for c in chains)
        if scenario.chain is None:
            raise CommandError(f"{target} holds several chains ({ids}); name one in `chain:`")
        for chain in chains:
            if chain.id == scenario.chain:
                return chain
        raise CommandError(f"{target} has no chain {scenario.chain}; it holds {ids}")

    def explore(self, options: dict[str, Any]) -> None:
        if options["max_faults"] < 0 or options["max_events"] < 1:
            raise CommandError("--max-faults must be 0 or more and --max-events 1 or more")
        chain = self.named_chain(options["chain"], options["chain_id"])
        bounds = Bounds(
            max_faults=options["max_faults"],
            max_events=options["max_events"],
            crashes=not options["no_crashes"],
        )
        result = explore(chain, bounds)
        if options["json"]:
            self.write_text(json.dumps(result.as_dict(), indent=2))
        else:
            self.write_exploration(chain.id, bounds, result)
        if options["write_counterexamples"] is not None:
            self.write_counterexamples(options["write_counterexamples"], chain.id, result)
        verdict = result.verdict()
        if verdict == "incomplete" and options["allow_incomplete"]:
            verdict = "pass"
        if EXPLORE_EXIT_CODES[verdict]:
            raise SystemExit(EXPLORE_EXIT_CODES[verdict])

    def named_chain(self, target: str, chain_id: str | None) -> Any:
        """The file's only chain, the one ``--chain`` names, or a stored chain's head."""
        chains, problems = self.lint_targets(target, "auto")
        if not chains:
            found = "; ".join(str(p) for p in problems if p.severity == "error")
            raise CommandError(f"no chain found in {target}" + (f": {found}" if found else ""))
        ids = ", ".join(c.id for c in chains)
        if chain_id is None and len(chains) > 1:
            raise CommandError(f"{target} holds several chains ({ids}); pick one with --chain")
        for chain in chains:
            if chain_id in (None, chain.id):
                return chain
        raise CommandError(f"{target} has no chain {chain_id}; it holds {ids}")

    def write_exploration(self, chain_id: str, bounds: Bounds, result: ExploreResult) -> None:
        self.stdout.write(
            f"chain {chain_id}: max_faults={bounds.max_faults} max_events={bounds.max_events} "
            f"crashes={'yes' if bounds.crashes else 'no'}"
        )
        self.stdout.write(
            f"states: {result.states}  paths: {result.paths}  time: {result.seconds:.2f}s"
            + (f"  cut at max_events: {result.cut}" if result.cut else "")
            + ("  (stopped early)" if result.truncated else "")
        )
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(result.terminals.items()))
        self.stdout.write(f"terminal states: {kinds or 'none'}")
        self.write_coverage(result)
        if not result.violations:
            if result.complete:
                self.stdout.write(self.style.SUCCESS("no invariant broken"))
            else:
                self.stdout.write(
                    self.style.WARNING(
                        "no invariant broken in what was explored, but coverage is incomplete "
                        "(see the warnings): not a pass"
                    )
                )
            return
        self.stdout.write(f"violations: {len(result.violations)}")
        for n, v in enumerate(result.violations, 1):
            self.stdout.write(f"\n{n}. [{v.invariant}] {v.message}")
            text = yaml.safe_dump(scenario_dict(v.scenario), sort_keys=False)
            self.stdout.write("   " + text.rstrip().replace("\n", "\n   "))

    def write_coverage(self, result: ExploreResult) -> None:
        if result.reach is None:
            return
        cov = result.reach.coverage()
        parts = []
        for kind, block in cov.items():
            seen = next(v for k, v in block.items() if k != "total")
            parts.append(f"{kind} {len(seen)}/{block['total']}")
        self.stdout.write("coverage: " + ", ".join(parts))
        missed = result.reach.missed()["steps"]
        if missed:
            self.stdout.write(f"never reached: {', '.join(missed)}")
        if result.warnings:
            self.stdout.write(self.style.WARNING(f"warnings: {len(result.warnings)}"))
            for warning in result.warnings:
                self.stdout.write(self.style.WARNING(f"  - {warning}"))

    def write_counterexamples(self, folder: Path, chain_id: str, result: ExploreResult) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for n, v in enumerate(result.violations, 1):
            path = folder / f"{chain_id}-{n:02d}-{v.invariant}.yaml"
            header = f"# {v.invariant}: {v.message}\n"
            path.write_text(header + yaml.safe_dump(scenario_dict(v.scenario), sort_keys=False))
            self.stdout.write(f"wrote {path}")

    def write_run(self, run: Any) -> None:
        for e in run.trace:
            self.stdout.write(trace_line(e))
        snap = run.snapshot
        self.stdout.write(
            f"state: {snap.state}  cursor: {snap.cursor or '-'}  clock: {snap.clock:g}s"
        )
        if snap.waiting.kind != "nothing":
            waiting = snap.waiting
            self.stdout.write(
                f"waiting: {waiting.kind} {waiting.step or waiting.gate or ''}".rstrip()
            )
        dispatched = ", ".join(f"{step} {n}" for step, n in snap.dispatches.items())
        self.stdout.write(f"dispatches: {dispatched or 'none'}")
        landed = ", ".join(
            c.step + (" (compensated)" if c.compensated else "") for c in snap.commits_landed
        )
        self.stdout.write(f"commits landed: {landed or 'none'}")
        live = ", ".join(h.alias for h in snap.handles.values())
        self.stdout.write(f"live handles: {live or 'none'}")
        if snap.outcome:
            shown = (f"{k}={v}" for k, v in snap.outcome.items() if v is not None)
            self.stdout.write("outcome: " + ", ".join(shown))

    def scenario(self, options: dict[str, Any]) -> None:
        chain = Chain.objects.filter(key=options["chain"]).first()
        if chain is None or chain.head() is None:
            raise CommandError(f"no stored chain {options['chain']!r}")
        if options["action"] == "add":
            self.scenario_add(chain, options)
            return
        document = formats.from_document(chain.head().document)
        if options["action"] == "export":
            self.write_text(json.dumps(test_vectors(document, saved_scenarios(chain)), indent=2))
            return
        checks = scenario_checks(chain, document)
        if options["json"]:
            self.write_text(json.dumps([c.as_dict() for c in checks], indent=2))
        else:
            for c in checks:
                self.stdout.write(f"{'held' if c.held else 'CHANGED'}: {c.name}")
                for line in [*c.changes, *([c.error] if c.error else [])]:
                    self.stdout.write(f"  {line}")
        if not all(c.held for c in checks):
            raise CommandError("some scenarios changed outcome")

    def scenario_add(self, chain: Chain, options: dict[str, Any]) -> None:
        path = options["scenario"]
        try:
            scenario = load_scenario(read_limited(path), filename=path.name)
        except DocumentError as exc:
            lines = "\n".join(f"  {p}" for p in exc.problems)
            raise CommandError(f"bad scenario {path}:\n{lines}") from None
        try:
            saved = save_scenario(
                chain,
                options["name"],
                scenario,
                author=None,
                record=options["record"],
                replace=True,  # the operator runs the same script again to update it
            )
        except BadScenario as exc:
            raise CommandError(str(exc)) from None
        except ChainError as exc:
            raise CommandError(f"scenario does not replay: {exc}") from None
        self.stdout.write(self.style.SUCCESS(f"saved scenario {saved.name!r} for {chain.key}"))

    def rules(self, markdown: bool) -> None:
        if markdown:
            self.write_text(rules_markdown())
            return
        for r in sorted(RULES.values(), key=lambda r: r.id):
            self.stdout.write(f"{r.id:40} {r.severity:8} {r.ref:16} {r.summary}")

    def write_human(self, report: dict[str, Any]) -> None:
        for c in report["chains"]:
            self.stdout.write(
                f"chain {c['id']}: {c['handles']} handles, {c['actions']} actions, "
                f"{c['gates']} gates, {c['verdict_rows']} verdict rows"
            )
        for p in report["problems"]:
            where = f"line {p['line']}: " if p.get("line") is not None else ""
            self.stdout.write(f"{where}{p['message']}")
        for s in report.get("stored", []):
            outcome = "new revision" if s["created"] else "unchanged, head is revision"
            self.stdout.write(self.style.SUCCESS(f"stored {s['id']}: {outcome} {s['revision']}"))

    def write_text(self, text: str) -> None:
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")


def _team(slug: str | None) -> Team | None:
    if slug is None:
        return None
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        raise CommandError(f"--team: no team called {slug!r}")
    return team


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


def read_limited(path: Path) -> bytes:
    """The file's bytes; refuses, before reading it all, one over CHAIN_UPLOAD_MAX_BYTES."""
    limit = settings.CHAIN_UPLOAD_MAX_BYTES
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CommandError(f"{path} is larger than the {limit} bytes a chain document may have")
    return data
