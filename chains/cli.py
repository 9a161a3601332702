"""``chain-designer``: the chain commands on files, with no database and no Django settings.

For repositories and CI pipelines: ``pip install chain-designer``, then
``chain-designer lint chains/*.md``. Only the pure core runs (``chains.core``),
so nothing needs configuring. The commands on files are those of ``manage.py
chain``, which calls this module for them, with the same JSON and the same
exit statuses: lint 0 for VALID or WARNINGS, 1 INVALID, 2 BLOCKED (the worst
of all the files); simulate 0 when the scenario ran and its expectations held,
else 1; explore 1 when an invariant broke, 3 when none did but the search did
not cover the chain, 0 for a clean and complete search; audit 0 when a run's
trace kept to the chain, 1 when it diverged. A command that cannot
run (a file missing or too big, a bad scenario) says why on stderr and exits 1.
``lint --format sarif`` writes SARIF 2.1.0, which code-review tools show
inline (docs/ci.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import yaml

from chains.core import formats
from chains.core.errors import ChainError, DocumentError, Problem
from chains.core.lint import EXIT_CODES, RULES, LintReport, lint, worst_status
from chains.core.lint.docs import rules_markdown
from chains.core.model import ChainSpec
from chains.core.openapi import propose_actions, read_openapi
from chains.core.sim.audit import AuditResult, audit, read_trace
from chains.core.sim.explorer import EXIT_CODES as EXPLORE_EXIT_CODES
from chains.core.sim.explorer import Bounds, ExploreResult, explore
from chains.core.sim.runs import FileRuns
from chains.core.sim.scenario import Scenario, ScenarioMismatch, load_scenario, simulate
from chains.management.chain_text import (
    Line,
    audit_lines,
    cause_text,
    exploration_lines,
    import_lines,
    lint_lines,
    run_lines,
    scenario_yaml,
)

__all__ = [
    "Failed",
    "audit_trace",
    "LintedFile",
    "lint_file",
    "lint_json",
    "main",
    "pick_chain",
    "read_limited",
    "rules_text",
    "sarif_log",
    "scenario_chain",
    "write_counterexamples",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# A SARIF rule for what the importer could not read: a lint rule needs a chain to run on.
_IMPORT_RULE = "import.unreadable"
_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


class Failed(Exception):
    """A command that could not run; its message says why (``manage.py chain``: CommandError)."""


def read_limited(path: Path, limit: int = formats.MAX_BYTES) -> bytes:
    """The file's bytes; refuses, before reading it all, one over ``limit`` bytes."""
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise Failed(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Failed(f"{path} is larger than the {limit} bytes a chain document may have")
    return data


@dataclass
class LintedFile:
    """One linted target: what the importer made of it, and each chain's report."""

    target: str
    text: str | None
    problems: list[Problem] = field(default_factory=list)
    reports: list[tuple[ChainSpec, LintReport]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return worst_status([report.status for _, report in self.reports])


def lint_file(target: str, data: bytes, fmt: formats.Format = "auto") -> LintedFile:
    """Read ``data`` as the importer does and lint every chain it holds."""
    result = formats.load(data, format=fmt, filename=Path(target).name)
    try:
        text = formats.decode(data)
    except DocumentError:
        text = None
    return LintedFile(target, text, result.problems, [(c, lint(c)) for c in result.chains])


def lint_json(linted: LintedFile) -> dict[str, Any]:
    """One target's lint JSON: its status, import problems, and the report (or one per chain)."""
    out: dict[str, Any] = {"status": linted.status}
    if linted.problems:
        out["import_problems"] = [p.as_dict() for p in linted.problems]
    documents = [{"chain": c.id, **report.as_dict()} for c, report in linted.reports]
    if len(documents) == 1:
        out.update(documents[0])
    else:
        out["chains"] = documents
    return out


def sarif_log(files: Iterable[LintedFile], version: str | None = None) -> dict[str, Any]:
    """The findings of linted files as one SARIF 2.1.0 run, each placed at its element's line.

    Every registered rule is listed (with its SPEC reference and fix), and
    import problems are results of one more rule, ``import.unreadable``. A
    finding whose element cannot be placed points at the file's first line.
    """
    rules = sorted(RULES.values(), key=lambda r: r.id)
    index = {r.id: n for n, r in enumerate(rules)}
    index[_IMPORT_RULE] = len(rules)
    described = [
        {
            "id": r.id,
            "shortDescription": {"text": r.summary},
            "help": {"text": f"{r.summary} Fix: {r.hint} ({r.ref})"},
            "defaultConfiguration": {"level": _SARIF_LEVELS[r.severity]},
            "properties": {"ref": r.ref, "family": r.family, "blocks": r.blocks},
        }
        for r in rules
    ]
    described.append(
        {
            "id": _IMPORT_RULE,
            "shortDescription": {"text": "A part of the document could not be read as a chain."},
            "defaultConfiguration": {"level": "error"},
        }
    )
    results = []
    for linted in files:
        uri = Path(linted.target).as_posix()
        for p in linted.problems:
            results.append(
                _result(_IMPORT_RULE, index, p.severity, str(p), uri, p.line or 1, p.shown_path)
            )
        for chain, report in linted.reports:
            for f in report.findings:
                line = formats.element_line(linted.text, f.element) if linted.text else None
                results.append(
                    _result(
                        f.rule,
                        index,
                        f.severity,
                        f"{chain.id}: {f.message} Fix: {f.hint}",
                        uri,
                        line or 1,
                        f"{chain.id}/{f.element}",
                    )
                )
    driver = {"name": "chain-designer", "rules": described}
    if version:
        driver["version"] = version
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def _result(
    rule: str, index: dict[str, int], severity: str, text: str, uri: str, line: int, name: Any
) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}
    }
    if name:
        location["logicalLocations"] = [{"fullyQualifiedName": str(name)}]
    return {
        "ruleId": rule,
        "ruleIndex": index[rule],
        "level": _SARIF_LEVELS.get(severity, "error"),
        "message": {"text": text},
        "locations": [location],
    }


def pick_chain(
    chains: list[ChainSpec], problems: list[Problem], target: str, chain_id: str | None
) -> ChainSpec:
    """The target's only chain, or the one ``chain_id`` names (``--chain``)."""
    if not chains:
        found = "; ".join(str(p) for p in problems if p.severity == "error")
        raise Failed(f"no chain found in {target}" + (f": {found}" if found else ""))
    ids = ", ".join(c.id for c in chains)
    if chain_id is None and len(chains) > 1:
        raise Failed(f"{target} holds several chains ({ids}); pick one with --chain")
    for chain in chains:
        if chain_id in (None, chain.id):
            return chain
    raise Failed(f"{target} has no chain {chain_id}; it holds {ids}")


def scenario_chain(
    chains: list[ChainSpec], problems: list[Problem], target: str, scenario: Scenario
) -> ChainSpec:
    """The chain a scenario runs on: the target's only chain, or the one it names."""
    if len(chains) > 1 and scenario.chain is None:
        ids = ", ".join(c.id for c in chains)
        raise Failed(f"{target} holds several chains ({ids}); name one in `chain:`")
    return pick_chain(chains, problems, target, scenario.chain if len(chains) > 1 else None)


def read_scenario(path: Path) -> Scenario:
    try:
        return load_scenario(read_limited(path), filename=path.name)
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"bad scenario {path}:\n{lines}") from None


def bounds_of(options: argparse.Namespace | dict[str, Any]) -> Bounds:
    """The explorer's bounds from ``--max-faults``, ``--max-events`` and ``--no-crashes``."""
    o = vars(options) if isinstance(options, argparse.Namespace) else options
    if o["max_faults"] < 0 or o["max_events"] < 1:
        raise Failed("--max-faults must be 0 or more and --max-events 1 or more")
    return Bounds(
        max_faults=o["max_faults"], max_events=o["max_events"], crashes=not o["no_crashes"]
    )


def write_counterexamples(folder: Path, chain_id: str, result: ExploreResult) -> list[Path]:
    """Each violation's scenario as YAML in ``folder``, its causal line and message in
    comments above it; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for n, v in enumerate(result.violations, 1):
        path = folder / f"{chain_id}-{n:02d}-{v.invariant}.yaml"
        cause = "".join(f"#   {cause_text(c)}\n" for c in v.as_dict().get("cause") or [])
        header = f"# {v.invariant}: {v.message}\n" + (f"# cause:\n{cause}" if cause else "")
        path.write_text(header + scenario_yaml(v.scenario))
        written.append(path)
    return written


def audit_trace(chain: ChainSpec, path: Path) -> AuditResult:
    """Audit the trace file ``path`` (JSON lines, docs/trace-audit.md) against ``chain``."""
    try:
        events = read_trace(formats.decode(read_limited(path)))
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"bad trace {path}:\n{lines}") from None
    return audit(chain, events)


def exploration_status(result: ExploreResult, allow_incomplete: bool) -> int:
    verdict = result.verdict()
    if verdict == "incomplete" and allow_incomplete:
        verdict = "pass"
    return EXPLORE_EXIT_CODES[verdict]


def add_export_format(parser: argparse.ArgumentParser) -> None:
    """``export``'s ``--format`` in both shells."""
    parser.add_argument(
        "--format",
        choices=["yaml", "json", "md"],
        default="yaml",
        help="md: the Markdown design document (SKILL Step 6 layout)",
    )


def add_explore_options(parser: argparse.ArgumentParser) -> None:
    """The options ``explore`` takes in both shells."""
    parser.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")
    parser.add_argument("--max-faults", type=int, default=Bounds.max_faults)
    parser.add_argument("--max-events", type=int, default=Bounds.max_events)
    parser.add_argument("--no-crashes", action="store_true", help="never crash mid-dispatch")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0, not 3, when no invariant broke but coverage is incomplete",
    )
    parser.add_argument(
        "--write-counterexamples",
        type=Path,
        metavar="DIR",
        help="write each violation's scenario to DIR as YAML",
    )


# --- the console script ------------------------------------------------------------

INPUT_FORMATS = ["auto", "yaml", "json", "md"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chain-designer",
        description="Check, simulate and explore chain documents (chain-re-action SPEC v0.4).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    lnt = sub.add_parser(
        "lint", help="Check chain files against the SPEC: exit 0 valid, 1 invalid, 2 blocked."
    )
    lnt.add_argument("paths", nargs="+", type=Path, help="YAML, JSON or compile Markdown files")
    lnt.add_argument("--input-format", choices=INPUT_FORMATS, default="auto")
    lnt.add_argument(
        "--format",
        dest="output",
        choices=["text", "json", "sarif"],
        default="text",
        help="sarif: SARIF 2.1.0 for code review",
    )
    lnt.add_argument("--json", dest="output", action="store_const", const="json")

    imp = sub.add_parser("import", help="Read a chain document as the importer does; store none.")
    imp.add_argument("path", type=Path)
    imp.add_argument("--format", choices=INPUT_FORMATS, default="auto")
    imp.add_argument("--json", action="store_true", help="print the report as JSON")

    sim = sub.add_parser(
        "simulate", help="Run a scenario against a chain: exit 0 if it ran as expected, else 1."
    )
    sim.add_argument("chain", type=Path, help="a chain file (any import format)")
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
    xpl.add_argument("chain", type=Path, help="a chain file (any import format)")
    add_explore_options(xpl)

    aud = sub.add_parser(
        "audit",
        help="Replay a run's trace against its chain: exit 0 if it kept to it, 1 if it diverged.",
    )
    aud.add_argument("chain", type=Path, help="a chain file (any import format)")
    aud.add_argument("trace", type=Path, help="the run's trace: JSON lines (docs/trace-audit.md)")
    aud.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")
    aud.add_argument("--json", action="store_true", help="print the result as JSON")

    opn = sub.add_parser(
        "openapi",
        help="List a provider's OpenAPI operations as proposed actions, or print the chosen ones.",
    )
    opn.add_argument("path", type=Path, help="an OpenAPI 3.0 or 3.1 document (YAML or JSON)")
    opn.add_argument(
        "--pick", metavar="ID,ID", help="print these operations as chain actions (YAML)"
    )
    opn.add_argument(
        "--effect",
        action="append",
        default=[],
        metavar="ID=EFFECT",
        help="confirm another effect than the guessed one (read, mint, commit, compensate, select)",
    )
    opn.add_argument("--json", action="store_true", help="print as JSON")
    opn.add_argument(
        "--resolve-local",
        action="store_true",
        help="read the files a $ref names by a relative path, from the document's directory "
        "(never a URL, an absolute path or a way out of that directory)",
    )

    exp = sub.add_parser("export", help="Print a chain file's chain in canonical form.")
    exp.add_argument("path", type=Path)
    exp.add_argument("--chain", dest="chain_id", help="which chain of a multi-chain file")
    add_export_format(exp)

    sub.add_parser("schema", help="Print the JSON Schema of chain documents.")
    rls = sub.add_parser("rules", help="List the lint rules.")
    rls.add_argument("--markdown", action="store_true", help="the docs/lint-rules.md text")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; the exit status."""
    options = _parser().parse_args(argv)
    stdout = out or sys.stdout
    try:
        return _COMMANDS[options.command](options, stdout)
    except Failed as exc:
        print(f"chain-designer: {exc}", file=sys.stderr)
        return 1


def _lint(options: argparse.Namespace, out: TextIO) -> int:
    files = [lint_file(str(p), read_limited(p), options.input_format) for p in options.paths]
    status = worst_status([f.status for f in files])
    if options.output == "sarif":
        _write(out, json.dumps(sarif_log(files, _version()), indent=2))
    elif options.output == "json":
        shapes = [lint_json(f) for f in files]
        if len(shapes) == 1:
            _write(out, json.dumps(shapes[0], indent=2))
        else:
            each = [{"path": f.target, **shape} for f, shape in zip(files, shapes, strict=True)]
            _write(out, json.dumps({"status": status, "files": each}, indent=2))
    else:
        for f in files:
            _say(out, [(f"import: {p}", "") for p in f.problems])
            for chain, report in f.reports:
                _say(out, lint_lines(chain.id, report))
        if sum(len(f.reports) for f in files) != 1:
            print(f"status: {status}", file=out)
    return EXIT_CODES[status]


def _import(options: argparse.Namespace, out: TextIO) -> int:
    result = formats.load(read_limited(options.path), options.format, options.path.name)
    problems = list(result.problems)
    if not result.chains and not problems:
        problems.append(Problem("the document holds no chain"))
    report = formats.ImportResult(result.chains, formats.errors_first(problems), result.format)
    if options.json:
        _write(out, json.dumps(report.report(), indent=2))
    else:
        _say(out, import_lines(report.report()))
    if not result.chains:
        raise Failed(f"no chain found in {options.path}")
    return 0


def _simulate(options: argparse.Namespace, out: TextIO) -> int:
    scenario = read_scenario(options.scenario)
    loaded = formats.load(read_limited(options.chain), filename=options.chain.name)
    chain = scenario_chain(loaded.chains, loaded.problems, str(options.chain), scenario)
    try:
        runs = FileRuns(options.runs) if options.runs is not None else None
        result = simulate(chain, scenario, runs=runs)
    except ScenarioMismatch as exc:
        if exc.run is not None and not options.json:
            _say(out, run_lines(exc.run))
        raise Failed(f"scenario mismatch: {exc}") from None
    except ChainError as exc:
        raise Failed(f"simulation failed: {exc}") from None
    if options.json:
        _write(out, json.dumps(result.as_dict(), indent=2))
    else:
        if result.created is False:
            print(f"run_key {scenario.run_key}: the kept run, no event applied", file=out)
        _say(out, run_lines(result.run))
        for n, accepted in result.proposals:
            print(f"proposal of event {n}: {'accepted' if accepted else 'refused'}", file=out)
        for e in result.expectations:
            print(f"expect {'held' if e.held else 'FAILED'}: {e}", file=out)
    if not result.held:
        raise Failed("expectations failed: " + "; ".join(str(e) for e in result.failed))
    return 0


def _explore(options: argparse.Namespace, out: TextIO) -> int:
    bounds = bounds_of(options)
    loaded = formats.load(read_limited(options.chain), filename=options.chain.name)
    chain = pick_chain(loaded.chains, loaded.problems, str(options.chain), options.chain_id)
    result = explore(chain, bounds)
    if options.json:
        _write(out, json.dumps(result.as_dict(), indent=2))
    else:
        _say(out, exploration_lines(chain.id, bounds, result))
    if options.write_counterexamples is not None:
        for path in write_counterexamples(options.write_counterexamples, chain.id, result):
            print(f"wrote {path}", file=out)
    return exploration_status(result, options.allow_incomplete)


def _audit(options: argparse.Namespace, out: TextIO) -> int:
    loaded = formats.load(read_limited(options.chain), filename=options.chain.name)
    chain = pick_chain(loaded.chains, loaded.problems, str(options.chain), options.chain_id)
    result = audit_trace(chain, options.trace)
    if options.json:
        _write(out, json.dumps(result.as_dict(), indent=2))
    else:
        _say(out, audit_lines(chain.id, result))
    return 0 if result.clean else 1


def _openapi(options: argparse.Namespace, out: TextIO) -> int:
    try:
        beside = options.path.parent if options.resolve_local else None
        operations = read_openapi(read_limited(options.path), options.path.name, beside=beside)
        effects = dict(_pair(e) for e in options.effect)
        chosen = [p.strip() for p in (options.pick or "").split(",") if p.strip()]
        actions = propose_actions(operations, chosen, effects) if chosen else None
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"{options.path}:\n{lines}") from None
    if actions is not None:
        text = (
            json.dumps(actions, indent=2)
            if options.json
            else yaml.safe_dump({"actions": actions}, sort_keys=False, allow_unicode=True)
        )
        _write(out, text)
        return 0
    if options.json:
        _write(out, json.dumps([o.as_dict() for o in operations], indent=2))
        return 0
    for o in operations:
        print(f"{o.id}: {o.method.upper()} {o.path}", file=out)
        print(f"  effect {o.effect} ({o.why}); idempotency {o.idempotency}", file=out)
        if o.fields:
            print(f"  intent fields: {', '.join(o.fields)}", file=out)
        for error in o.errors:
            print(f"  documents {error}", file=out)
    return 0


def _pair(text: str) -> tuple[str, str]:
    name, sep, effect = text.partition("=")
    if not sep or effect not in ("read", "mint", "commit", "compensate", "select"):
        raise Failed(f"--effect {text!r}: write ID=EFFECT, EFFECT one of read, mint, commit, ...")
    return name.strip(), effect


def _export(options: argparse.Namespace, out: TextIO) -> int:
    loaded = formats.load(read_limited(options.path), filename=options.path.name)
    chain = pick_chain(loaded.chains, loaded.problems, str(options.path), options.chain_id)
    _write(out, formats.dump(chain, options.format, drawn=True))
    return 0


def _schema(options: argparse.Namespace, out: TextIO) -> int:
    _write(out, json.dumps(formats.json_schema(), indent=2))
    return 0


def _rules(options: argparse.Namespace, out: TextIO) -> int:
    _write(out, rules_text(options.markdown))
    return 0


def rules_text(markdown: bool = False) -> str:
    """The lint rules, a line each (id, severity, SPEC section, summary), or docs/lint-rules.md."""
    if markdown:
        return rules_markdown()
    rules = sorted(RULES.values(), key=lambda r: r.id)
    return "".join(f"{r.id:40} {r.severity:8} {r.ref:16} {r.summary}\n" for r in rules)


_COMMANDS = {
    "lint": _lint,
    "import": _import,
    "simulate": _simulate,
    "explore": _explore,
    "audit": _audit,
    "openapi": _openapi,
    "export": _export,
    "schema": _schema,
    "rules": _rules,
}


def _say(out: TextIO, lines: Iterable[Line]) -> None:
    for text, _style in lines:
        print(text, file=out)


def _write(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")


def _version() -> str:
    try:
        return metadata.version("chain-designer")
    except metadata.PackageNotFoundError:
        return "0+unknown"


if __name__ == "__main__":
    sys.exit(main())
