"""``manage.py chain``: import, export and schema, a thin shell over ``chains.core.formats``.

The core parses and reports; this command reads files, stores chains through
``Chain.objects.store`` and turns the outcome into text, JSON and an exit status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Max

from chains.core import formats
from chains.models import Chain, Revision


class Command(BaseCommand):
    help = "Import, export and describe chain documents."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)

        imp = sub.add_parser("import", help="Check a chain document and store its chains.")
        imp.add_argument("path", type=Path)
        imp.add_argument("--format", choices=["auto", "yaml", "json", "md"], default="auto")
        imp.add_argument("--dry-run", action="store_true", help="check only, store nothing")
        imp.add_argument("--json", action="store_true", help="print the report as JSON")

        exp = sub.add_parser("export", help="Print the head revision of a chain.")
        exp.add_argument("chain", help="the chain key (its id)")
        exp.add_argument("--format", choices=["yaml", "json"], default="yaml")

        sub.add_parser("schema", help="Print the JSON Schema of chain documents.")

    def handle(self, *args: Any, **options: Any) -> None:
        subcommand = options["subcommand"]
        if subcommand == "import":
            self.import_(options["path"], options["format"], options["dry_run"], options["json"])
        elif subcommand == "export":
            self.export(options["chain"], options["format"])
        else:
            self.write_text(json.dumps(formats.json_schema(), indent=2))

    def import_(self, path: Path, fmt: str, dry_run: bool, as_json: bool) -> None:
        result = formats.load(read_limited(path), format=fmt, filename=path.name)
        report = result.report()
        if result.chains and not dry_run:
            report["stored"] = store_all(result.chains, message=f"import {path.name}")

        if as_json:
            self.write_text(json.dumps(report, indent=2))
        else:
            self.write_human(report)
        if not result.chains:
            raise CommandError(f"no chain found in {path}")

    def export(self, key: str, fmt: str) -> None:
        chain = Chain.objects.filter(key=key).first()
        head = chain.head() if chain else None
        if head is None:
            raise CommandError(f"no chain with key {key!r}")
        self.write_text(formats.dump(formats.from_document(head.document), fmt))

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


def store_all(chains: list, message: str) -> list[dict[str, Any]]:
    """Store every chain of one import, all or none; says which added a revision."""
    stored = []
    with transaction.atomic():
        for chain in chains:
            document = formats.to_document(chain)
            before = Revision.objects.filter(chain__key=document["id"]).aggregate(n=Max("number"))
            revision = Chain.objects.store(document, message=message)
            stored.append(
                {
                    "id": document["id"],
                    "revision": revision.number,
                    "created": revision.number != before["n"],
                }
            )
    return stored
