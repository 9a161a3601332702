"""``manage.py chain``: ``chain-designer``'s commands, on files and stored chains, and
the commands that change stored chains; a thin shell.

The parser is :mod:`chains.commandline`'s tree, the one ``chain-designer``
builds, with a chain argument that may also name a stored chain (KEY, or
TEAM/KEY when several teams have that key: its head revision) and with what
needs the database added to it: ``import`` stores what it reads (through
``chains.services.imports``, as the page and the API do; ``--dry-run`` stores
nothing, ``--team`` picks the owner), ``edit``, ``undo`` and ``redo`` go
through ``chains.services.editing`` (0 with the revision number on stdout, 1
with the reason on stderr when refused), ``scenario`` keeps scenarios with a
stored chain and replays them. The commands on files run as they do in
``chain-designer``, with the same JSON and exit statuses
(:mod:`chains.commandline.commands`), in the terminal's colours.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chains.commandline import (
    COMMANDS,
    Failed,
    Files,
    Loaded,
    Output,
    Targets,
    add_commands,
    read_limited,
    read_scenario,
)
from chains.commandline.text import import_lines
from chains.core import formats
from chains.core.errors import ChainError
from chains.core.sim.regression import test_vectors
from chains.models import (
    Chain,
    NothingToUndo,
    Revision,
    StaleRevision,
    Team,
    saved_scenarios,
    scenario_checks,
)
from chains.services import editing
from chains.services.imports import import_document
from chains.services.scenarios import BadScenario, save_scenario

CHAIN_REF = "a stored chain: KEY, or TEAM/KEY when several teams have that key"
STORED = Targets(
    one="a chain file (any import format) or a stored chain (KEY or TEAM/KEY)",
    several="chain files (YAML, JSON or compile Markdown) or stored chains (KEY or TEAM/KEY)",
    metavar="TARGET",
)


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


def head_of(chain: Chain, ref: str) -> Revision:
    head = chain.head()
    if head is None:
        raise CommandError(f"chain {ref!r} has no revision")
    return head


class FilesOrStored(Files):
    """A target is a file when there is one by that name, else a stored chain's head; a
    harness run may go to the Celery workers."""

    @staticmethod
    def send_schedule(job: dict[str, Any]) -> Any:
        # By the task's name: one door (this command) does not import another (the tasks).
        return current_app.send_task("chains.harness_schedule", args=[job])

    def load(self, target: str, fmt: formats.Format = "auto") -> Loaded:
        if Path(target).exists():
            return super().load(target, fmt)
        try:
            chain = stored_chain(target, not_found=f"{target} is neither a file nor a stored chain")
            head = head_of(chain, target)
        except CommandError as exc:  # a command decides what a chain it cannot read exits with
            raise Failed(str(exc)) from None
        spec = formats.from_document(head.document)
        return Loaded(target, None, [spec])


class Styled(Output):
    """Django's stdout, each line in its style's colour."""

    def __init__(self, stdout: Any, style: Any) -> None:
        super().__init__(stdout)
        self.stdout, self.style = stdout, style  # an OutputWrapper: it ends each write

    def line(self, text: str, style: str = "") -> None:
        self.stdout.write(getattr(self.style, style)(text) if style else text)

    def write_text(self, text: str) -> None:
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")


class Command(BaseCommand):
    help = "chain-designer's commands on chain files and stored chains, and edits to stored chains."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = add_commands(parser, STORED)
        sub.choices["harness"].add_argument(
            "--celery",
            action="store_true",
            help="run the schedules on the Celery workers, --jobs at a time (each worker "
            "must see the client, the provider and --out)",
        )
        imp = sub.choices["import"]
        imp.add_argument("--dry-run", action="store_true", help="check only, store nothing")
        imp.add_argument("--team", help="slug of the team that owns the chains this creates")

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

    def handle(self, *args: Any, **options: Any) -> None:
        given = argparse.Namespace(**options)
        out = Styled(self.stdout, self.style)
        stored = {
            "import": self.import_,
            "edit": self.edit,
            "undo": self.edit,
            "redo": self.edit,
            "scenario": self.scenario,
        }
        try:
            if given.subcommand in stored:
                stored[given.subcommand](given, out)
                return
            files = FilesOrStored(
                settings.CHAIN_UPLOAD_MAX_BYTES, settings.OPENAPI_UPLOAD_MAX_BYTES
            )
            status = COMMANDS[given.subcommand](given, out, files)
        except Failed as exc:
            raise CommandError(str(exc), returncode=exc.status) from None
        if status:
            raise SystemExit(status)

    def import_(self, options: argparse.Namespace, out: Output) -> None:
        team = _team(options.team)
        path: Path = options.path
        # The operator at the command line has confirmed by running it: the usable
        # chains are stored even when others in the file have errors.
        imported = import_document(
            read_limited(path, settings.CHAIN_UPLOAD_MAX_BYTES),
            format=options.format,
            filename=path.name,
            team=team,
            confirm=True,
            store=not options.dry_run,
            message=f"import {path.name}",
        )
        report = imported.report()
        if options.json:
            out.json(report)
        else:
            out.say(import_lines(report))
        if not imported.chains:
            raise CommandError(f"no chain found in {path}")

    def edit(self, options: argparse.Namespace, out: Output) -> None:
        """Edit, undo or redo as the operator (who may write any chain); stdout: the revision."""
        subcommand = options.subcommand
        chain = stored_chain(options.chain)
        head = head_of(chain, options.chain)
        base = head.number if options.base is None else options.base
        try:
            if subcommand == "edit":
                args = editing.parse_args(options.op_args, "--args")
                saved = editing.save_edit(chain, options.op, args, base=base, author=None)
                revision = saved.revision
            else:
                revision = getattr(editing, subcommand)(chain, base=base, author=None)
        except (ChainError, StaleRevision, NothingToUndo) as exc:
            raise CommandError(f"{subcommand} refused: {exc}") from None
        if revision.number == base:
            self.stderr.write(f"nothing changed; the head is still revision {base}")
        out.line(str(revision.number))

    def scenario(self, options: argparse.Namespace, out: Output) -> None:
        chain = stored_chain(options.chain)
        head = head_of(chain, options.chain)
        if options.action == "add":
            self.scenario_add(chain, options)
            return
        spec = formats.from_document(head.document)
        if options.action == "export":
            out.json(test_vectors(spec, saved_scenarios(chain)))
            return
        checks = scenario_checks(chain, spec)
        if options.json:
            out.json([c.as_dict() for c in checks])
        else:
            for c in checks:
                out.line(f"{'held' if c.held else 'CHANGED'}: {c.name}")
                for line in [*c.changes, *([c.error] if c.error else [])]:
                    out.line(f"  {line}")
        if not all(c.held for c in checks):
            raise CommandError("some scenarios changed outcome")

    def scenario_add(self, chain: Chain, options: argparse.Namespace) -> None:
        scenario = read_scenario(options.scenario)
        try:
            saved = save_scenario(
                chain,
                options.name,
                scenario,
                author=None,
                record=options.record,
                replace=True,  # the operator runs the same script again to update it
            )
        except BadScenario as exc:
            raise CommandError(str(exc)) from None
        except ChainError as exc:
            raise CommandError(f"scenario does not replay: {exc}") from None
        self.stdout.write(self.style.SUCCESS(f"saved scenario {saved.name!r} for {chain.key}"))


def _team(slug: str | None) -> Team | None:
    if slug is None:
        return None
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        raise CommandError(f"--team: no team called {slug!r}")
    return team
