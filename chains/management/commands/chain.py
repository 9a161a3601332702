"""``manage.py chain``: import, export, edit, lint, simulate, explore, rules, schema; a thin shell.

The core parses, checks and reports; on files this command is ``chain-designer``
(:mod:`chains.cli`, the same JSON and statuses, no database), whose helpers it
shares; around stored chains it reads the database, imports through
``chains.services.imports`` and edits, undoes and redoes through
``chains.services.editing`` as the page and the API do, and turns outcomes into
text (worded by ``chains.management.chain_text``), JSON and an exit status
(lint: 0 VALID or WARNINGS, 1 INVALID, 2 BLOCKED; simulate: 0 when the
scenario ran and its expectations held, 1 otherwise; explore: 1 when an
invariant broke, 3 when none did but the search did not cover the chain (a
step never reached, a happy path short of ``done``), 0 only for a clean and
complete search; ``--allow-incomplete`` turns 3 into 0; edit, undo, redo: 0
with the revision number on stdout, 1 with the reason on stderr when refused).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chains import cli
from chains.core import formats
from chains.core.errors import ChainError
from chains.core.lint import EXIT_CODES, lint
from chains.core.model import ChainSpec
from chains.core.sim.explorer import explore
from chains.core.sim.regression import test_vectors
from chains.core.sim.runs import FileRuns
from chains.core.sim.scenario import ScenarioMismatch, simulate
from chains.management.chain_text import (
    Line,
    audit_lines,
    exploration_lines,
    import_lines,
    lint_lines,
    run_lines,
)
from chains.models import (
    Chain,
    NothingToUndo,
    StaleRevision,
    Team,
    saved_scenarios,
    scenario_checks,
)
from chains.services import editing
from chains.services.imports import import_document
from chains.services.scenarios import BadScenario, save_scenario

CHAIN_REF = "a stored chain: KEY, or TEAM/KEY when several teams have that key"


def stored_chain(ref: str, not_found: str | None = None) -> Chain:
    """The stored chain ``ref`` names: ``team/key`` (``-/key``: no team), or a key only one has."""
    team, _, key = ref.rpartition("/")
    found = list(Chain.objects.named(key, team or None)[:10])
    if not found:
        raise CommandError(not_found or f"no stored chain {ref!r}")
    if len(found) > 1:
        refs = ", ".join(str(c) for c in found)
        raise CommandError(f"several teams have a chain {key!r}; name one as TEAM/KEY: {refs}")
    return found[0]


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
        exp.add_argument("chain", help=CHAIN_REF)
        cli.add_export_format(exp)

        sub.add_parser("schema", help="Print the JSON Schema of chain documents.")

        edt = sub.add_parser(
            "edit", help="Apply an edit operation to a stored chain; print the new revision."
        )
        edt.add_argument("chain", help=CHAIN_REF)
        edt.add_argument("op", help="an operation of chains/core/edit.py, e.g. add_handle")
        # dest "args" would collide with the positional arguments Django passes to handle().
        edt.add_argument(
            "--args", dest="op_args", metavar="JSON", default="{}", help="its arguments: an object"
        )
        undo = sub.add_parser("undo", help="Undo a chain's last edit; print the new revision.")
        redo = sub.add_parser("redo", help="Redo what the last undo took away; print the revision.")
        for change in (undo, redo):
            change.add_argument("chain", help=CHAIN_REF)
        for change in (edt, undo, redo):
            change.add_argument(
                "--base", type=int, metavar="N", help="the revision it starts from (default: head)"
            )

        lnt = sub.add_parser(
            "lint", help="Check chains against the SPEC: exit 0 valid, 1 invalid, 2 blocked."
        )
        lnt.add_argument("target", help="a file (YAML, JSON or compile Markdown) or a chain key")
        lnt.add_argument("--format", choices=["auto", "yaml", "json", "md"], default="auto")
        lnt.add_argument("--json", action="store_true", help="print the report as JSON")

        sim = sub.add_parser(
            "simulate", help="Run a scenario against a chain: exit 0 if it ran as expected, else 1."
        )
        sim.add_argument(
            "chain", help="a chain file (any import format) or a stored chain (KEY or TEAM/KEY)"
        )
        sim.add_argument("scenario", type=Path, help="the scenario (YAML or JSON)")
        sim.add_argument("--json", action="store_true", help="print the result as JSON")
        sim.add_argument(
            "--runs",
            type=Path,
            metavar="DIR",
            help="keep the run in DIR by the scenario's run_key: a second start with that key "
            "returns the kept run and applies no event (SPEC §2.8)",
        )

        xpl = sub.add_parser(
            "explore",
            help="Search failure sequences for broken invariants: exit 1 if one broke, "
            "3 if none did but coverage is incomplete, 0 if clean and complete.",
        )
        xpl.add_argument(
            "chain", help="a chain file (any import format) or a stored chain (KEY or TEAM/KEY)"
        )
        cli.add_explore_options(xpl)

        aud = sub.add_parser(
            "audit",
            help="Replay a run's trace against its chain: exit 0 if it kept to it, 1 if not.",
        )
        aud.add_argument(
            "chain", help="a chain file (any import format) or a stored chain (KEY or TEAM/KEY)"
        )
        aud.add_argument("trace", type=Path, help="the run's trace: JSON lines")
        aud.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")
        aud.add_argument("--json", action="store_true", help="print the result as JSON")

        scn = sub.add_parser(
            "scenario",
            help="Keep scenarios with a stored chain and replay them as regression checks.",
        )
        scn_sub = scn.add_subparsers(dest="action", required=True)
        add = scn_sub.add_parser("add", help="Save a scenario file under a name.")
        add.add_argument("chain", help=CHAIN_REF)
        add.add_argument("name")
        add.add_argument("scenario", type=Path)
        add.add_argument(
            "--record", action="store_true", help="replay it and save the outcome as its expect"
        )
        chk = scn_sub.add_parser(
            "check", help="Replay every saved scenario: exit 1 if any changed."
        )
        chk.add_argument("chain", help=CHAIN_REF)
        chk.add_argument("--json", action="store_true")
        vec = scn_sub.add_parser("export", help="Print the conformance test vectors (JSON).")
        vec.add_argument("chain", help=CHAIN_REF)

        rls = sub.add_parser("rules", help="List the lint rules.")
        rls.add_argument("--markdown", action="store_true", help="the docs/lint-rules.md text")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self.run(options)
        except cli.Failed as exc:
            raise CommandError(str(exc)) from None

    def run(self, options: dict[str, Any]) -> None:
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
            self.simulate(options["chain"], options["scenario"], options["json"], options["runs"])
        elif subcommand == "explore":
            self.explore(options)
        elif subcommand == "audit":
            self.audit(options)
        elif subcommand == "scenario":
            self.scenario(options)
        elif subcommand in ("edit", "undo", "redo"):
            self.edit(subcommand, options)
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
            self.say(import_lines(report))
        if not imported.chains:
            raise CommandError(f"no chain found in {path}")

    def export(self, key: str, fmt: str) -> None:
        head = stored_chain(key).head()
        if head is None:
            raise CommandError(f"chain {key!r} has no revision")
        self.write_text(formats.dump(formats.from_document(head.document), fmt, drawn=True))

    def edit(self, subcommand: str, options: dict[str, Any]) -> None:
        """Edit, undo or redo as the operator (who may write any chain); stdout: the revision."""
        chain = stored_chain(options["chain"])
        head = chain.head()
        if head is None:
            raise CommandError(f"chain {options['chain']!r} has no revision")
        base = head.number if options["base"] is None else options["base"]
        try:
            if subcommand == "edit":
                args = editing.parse_args(options["op_args"], "--args")
                saved = editing.save_edit(chain, options["op"], args, base=base, author=None)
                revision = saved.revision
            else:
                revision = getattr(editing, subcommand)(chain, base=base, author=None)
        except (ChainError, StaleRevision, NothingToUndo) as exc:
            raise CommandError(f"{subcommand} refused: {exc}") from None
        if revision.number == base:
            self.stderr.write(f"nothing changed; the head is still revision {base}")
        self.stdout.write(str(revision.number))

    def lint(self, target: str, fmt: str, as_json: bool) -> None:
        path = Path(target)
        if path.exists():
            linted = cli.lint_file(target, read_limited(path), fmt)
        else:
            chain = self.stored_head(target)
            linted = cli.LintedFile(target, None, [], [(chain, lint(chain))])
        if as_json:
            self.write_text(json.dumps(cli.lint_json(linted), indent=2))
        else:
            for p in linted.problems:
                self.stdout.write(f"import: {p}")
            for c, report in linted.reports:
                self.say(lint_lines(c.id, report))
            if len(linted.reports) != 1:
                self.stdout.write(f"status: {linted.status}")
        if EXIT_CODES[linted.status]:
            raise SystemExit(EXIT_CODES[linted.status])

    def lint_targets(self, target: str, fmt: str) -> tuple[list, list]:
        """Chains from a file (every format the importer takes) or a stored chain's head."""
        path = Path(target)
        if path.exists():
            result = formats.load(read_limited(path), format=fmt, filename=path.name)
            return result.chains, result.problems
        return [self.stored_head(target)], []

    def stored_head(self, target: str) -> ChainSpec:
        head = stored_chain(
            target, not_found=f"{target} is neither a file nor a stored chain"
        ).head()
        if head is None:
            raise CommandError(f"chain {target!r} has no revision")
        return formats.from_document(head.document)

    def simulate(self, target: str, path: Path, as_json: bool, folder: Path | None) -> None:
        scenario = cli.read_scenario(path)
        chains, problems = self.lint_targets(target, "auto")
        chain = cli.scenario_chain(chains, problems, target, scenario)
        try:
            result = simulate(chain, scenario, runs=FileRuns(folder) if folder else None)
        except ScenarioMismatch as exc:
            if exc.run is not None and not as_json:
                self.say(run_lines(exc.run))
            raise CommandError(f"scenario mismatch: {exc}") from None
        except ChainError as exc:
            raise CommandError(f"simulation failed: {exc}") from None
        if as_json:
            self.write_text(json.dumps(result.as_dict(), indent=2))
        else:
            if result.created is False:
                self.stdout.write(f"run_key {scenario.run_key}: the kept run, no event applied")
            self.say(run_lines(result.run))
            for n, accepted in result.proposals:
                self.stdout.write(f"proposal of event {n}: {'accepted' if accepted else 'refused'}")
            for e in result.expectations:
                self.stdout.write(f"expect {'held' if e.held else 'FAILED'}: {e}")
        if not result.held:
            failed = "; ".join(str(e) for e in result.failed)
            raise CommandError(f"expectations failed: {failed}")

    def explore(self, options: dict[str, Any]) -> None:
        bounds = cli.bounds_of(options)
        chains, problems = self.lint_targets(options["chain"], "auto")
        chain = cli.pick_chain(chains, problems, options["chain"], options["chain_id"])
        result = explore(chain, bounds)
        if options["json"]:
            self.write_text(json.dumps(result.as_dict(), indent=2))
        else:
            self.say(exploration_lines(chain.id, bounds, result))
        if options["write_counterexamples"] is not None:
            for path in cli.write_counterexamples(
                options["write_counterexamples"], chain.id, result
            ):
                self.stdout.write(f"wrote {path}")
        status = cli.exploration_status(result, options["allow_incomplete"])
        if status:
            raise SystemExit(status)

    def audit(self, options: dict[str, Any]) -> None:
        chains, problems = self.lint_targets(options["chain"], "auto")
        chain = cli.pick_chain(chains, problems, options["chain"], options["chain_id"])
        result = cli.audit_trace(chain, options["trace"])
        if options["json"]:
            self.write_text(json.dumps(result.as_dict(), indent=2))
        else:
            self.say(audit_lines(chain.id, result))
        if not result.clean:
            raise SystemExit(1)

    def scenario(self, options: dict[str, Any]) -> None:
        chain = stored_chain(options["chain"])
        if chain.head() is None:
            raise CommandError(f"chain {options['chain']!r} has no revision")
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
        scenario = cli.read_scenario(options["scenario"])
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
        self.write_text(cli.rules_text(markdown))

    def say(self, lines: Iterable[Line]) -> None:
        for text, style in lines:
            self.stdout.write(getattr(self.style, style)(text) if style else text)

    def write_text(self, text: str) -> None:
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")


def _team(slug: str | None) -> Team | None:
    if slug is None:
        return None
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        raise CommandError(f"--team: no team called {slug!r}")
    return team


def read_limited(path: Path) -> bytes:
    """The file's bytes; refuses, before reading it all, one over CHAIN_UPLOAD_MAX_BYTES."""
    return cli.read_limited(path, settings.CHAIN_UPLOAD_MAX_BYTES)
