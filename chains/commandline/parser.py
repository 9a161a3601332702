"""The one declaration of the commands on chain files: names, arguments, help.

``chain-designer`` (:mod:`chains.cli`) calls :func:`add_commands` on its own
parser; ``manage.py chain`` calls it on Django's, then adds what needs the
database (storing an import, edit, undo, redo, saved scenarios) to the same
tree. The two differ only in what a chain argument may name, which each door
says with a :class:`Targets`: a file, or a file or a stored chain.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from chains.core.export import EXPORT_FORMATS
from chains.core.model import EFFECTS
from chains.core.sim.explorer import Bounds
from chains.core.traces import FORMATS as TRACE_FORMATS

__all__ = ["FILES", "INPUT_FORMATS", "Targets", "add_commands"]

INPUT_FORMATS = ["auto", "yaml", "json", "md"]


@dataclass(frozen=True)
class Targets:
    """What a door's commands take as a chain: the help of one, of several, and their metavar."""

    one: str
    several: str
    metavar: str


FILES = Targets(
    one="a chain file (any import format)",
    several="YAML, JSON or compile Markdown files",
    metavar="FILE",
)

Subcommands = argparse._SubParsersAction  # what add_subparsers returns; .choices by name


def add_commands(parser: argparse.ArgumentParser, targets: Targets = FILES) -> Subcommands:
    """Add the commands on chain files to ``parser``; the subcommands, to add more to.

    The chosen command's name is ``subcommand`` in the parsed options.
    """
    sub = parser.add_subparsers(dest="subcommand", required=True)

    lnt = sub.add_parser(
        "lint", help="Check chain files against the SPEC: exit 0 valid, 1 invalid, 2 blocked."
    )
    lnt.add_argument("targets", nargs="+", metavar=targets.metavar, help=targets.several)
    lnt.add_argument("--input-format", choices=INPUT_FORMATS, default="auto")
    lnt.add_argument(
        "--format",
        dest="output",
        choices=["text", "json", "sarif"],
        default="text",
        help="sarif: SARIF 2.1.0 for code review",
    )
    lnt.add_argument("--json", dest="output", action="store_const", const="json")

    imp = sub.add_parser(
        "import",
        help="Read a chain document as the importer does; "
        "manage.py chain stores its chains unless --dry-run.",
    )
    imp.add_argument("path", type=Path)
    imp.add_argument("--format", choices=INPUT_FORMATS, default="auto")
    imp.add_argument("--json", action="store_true", help="print the report as JSON")

    sim = sub.add_parser(
        "simulate", help="Run a scenario against a chain: exit 0 if it ran as expected, else 1."
    )
    sim.add_argument("chain", help=targets.one)
    sim.add_argument("scenario", type=Path, help="the scenario (YAML or JSON)")
    _json_option(sim)
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
    xpl.add_argument("chain", help=targets.one)
    _pick_option(xpl)
    xpl.add_argument("--max-faults", type=int, default=Bounds.max_faults)
    xpl.add_argument("--max-events", type=int, default=Bounds.max_events)
    xpl.add_argument("--no-crashes", action="store_true", help="never crash mid-dispatch")
    _json_option(xpl)
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

    aud = sub.add_parser(
        "audit",
        help="Replay a run's trace against its chain: exit 0 if it kept to it, 1 if it "
        "diverged, 2 if the chain or the trace cannot be read.",
    )
    aud.add_argument("chain", help=targets.one)
    aud.add_argument(
        "trace",
        type=Path,
        help="the run's trace: the simulator's or SPEC §2.5 JSON lines, an intent log, "
        "OTLP JSON or HAR (docs/trace-audit.md)",
    )
    _pick_option(aud)
    aud.add_argument(
        "--format",
        dest="trace_format",
        choices=["auto", *TRACE_FORMATS],
        default="auto",
        help="the trace's shape (default: told from its content)",
    )
    aud.add_argument("--run", metavar="ID", help="the run to audit in a trace that holds several")
    _json_option(aud)

    har = sub.add_parser(
        "harness",
        help="Put a real client through the chain's failures: run it once per fault schedule "
        "behind a fault-injecting proxy and audit each run; exit 0 if every run kept to the "
        "chain, 1 if one diverged, 2 if it cannot run (docs/harness.md).",
    )
    har.add_argument("chain", help=targets.one)
    _pick_option(har)
    har.add_argument(
        "--client",
        required=True,
        metavar="COMMAND",
        help="the command that runs the client once (split as a shell would, not run by one); "
        "it finds the provider in $PROVIDER_URL and may keep records in $RUN_DIR",
    )
    where = har.add_mutually_exclusive_group(required=True)
    where.add_argument("--upstream", metavar="URL", help="the provider's base URL (a sandbox)")
    where.add_argument(
        "--provider",
        metavar="COMMAND",
        help="start a provider stand-in that prints 'listening on http://127.0.0.1:PORT' first",
    )
    har.add_argument("--max-faults", type=int, default=1, metavar="N", help="default 1")
    har.add_argument("--sample", type=int, metavar="K", help="run K schedules picked at random")
    har.add_argument("--seed", type=int, default=0, help="for --sample (default 0)")
    har.add_argument("--jobs", type=int, default=1, metavar="N", help="runs at once (default 1)")
    har.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per run (60)")
    har.add_argument(
        "--hold", type=float, default=5.0, metavar="S", help="how long a timeout holds a call (5)"
    )
    har.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="for the client"
    )
    har.add_argument(
        "--url-variable", default="PROVIDER_URL", help="where the client finds the provider"
    )
    har.add_argument(
        "--error-body",
        metavar="JSON",
        help='the provider\'s error shape, "<code>" where the code goes '
        '(default {"error": {"code": "<code>"}})',
    )
    har.add_argument("--out", type=Path, default=Path("harness-runs"), help="each run's files")
    har.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    har.add_argument("--sarif", type=Path, metavar="FILE", help="write a SARIF 2.1.0 report")
    _json_option(har)

    stn = sub.add_parser(
        "stand-in",
        help="Serve a provider stand-in on 127.0.0.1 from an OpenAPI or Swagger 2.0 document's "
        "examples (no state: see docs/harness.md); prints 'listening on URL' first.",
    )
    stn.add_argument("document", type=Path, help="the provider's OpenAPI document (YAML or JSON)")
    stn.add_argument("--port", type=int, default=0, help="the port (default 0: any free one)")

    opn = sub.add_parser(
        "openapi",
        help="List a provider's OpenAPI operations as proposed actions, or print the chosen ones.",
    )
    opn.add_argument("path", type=Path, help="an OpenAPI 3.0 or 3.1 document (YAML or JSON)")
    opn.add_argument(
        "--pick",
        action="append",
        default=[],
        metavar="ID,ID",
        help="print these operations as chain actions (YAML): action ids, operationIds "
        "or globs ('*refund*'); repeatable",
    )
    opn.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only operations with this tag (case not mattering); repeatable, any of them",
    )
    opn.add_argument(
        "--path",
        dest="path_glob",
        action="append",
        default=[],
        metavar="GLOB",
        help="only operations whose path matches ('/v1/refunds*'); repeatable, any of them",
    )
    opn.add_argument(
        "--effect",
        action="append",
        default=[],
        metavar="ID=EFFECT",
        help=f"confirm another effect than the guessed one ({', '.join(EFFECTS)})",
    )
    opn.add_argument(
        "--key-header",
        metavar="NAME",
        help="state that every POST takes its idempotency key in this header (e.g. "
        "Idempotency-Key), where the document says so only in prose or not at all",
    )
    opn.add_argument(
        "--onto",
        type=Path,
        metavar="CHAIN",
        help="with --pick: print this chain file with the picked operations attached to its "
        "actions bound to the same call, the others added",
    )
    opn.add_argument("--chain", metavar="ID", help="with --onto: the chain of a multi-chain file")
    opn.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="PROPOSED=ACTION",
        help="with --onto: attach a proposed action to the chain's action of another name",
    )
    opn.add_argument("--json", action="store_true", help="print as JSON")
    opn.add_argument(
        "--resolve-local",
        action="store_true",
        help="read the files a $ref names by a relative path, from the document's directory "
        "(never a URL, an absolute path or a way out of that directory)",
    )

    exp = sub.add_parser(
        "export", help="Print a chain in canonical form (a stored chain: its head revision)."
    )
    exp.add_argument("chain", help=targets.one)
    _pick_option(exp)
    exp.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default="yaml",
        help="md: the Markdown design document (SKILL Step 6 layout); openapi: OpenAPI 3.1 "
        "with x-chain extensions (imports back); postman: a Postman collection v2.1",
    )

    sub.add_parser("schema", help="Print the JSON Schema of chain documents.")
    rls = sub.add_parser("rules", help="List the lint rules.")
    rls.add_argument("--markdown", action="store_true", help="the docs/lint-rules.md text")
    return sub


def _pick_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
