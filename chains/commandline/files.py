"""What the commands on chain files share: reading a target, picking its chain, the
lint JSON and SARIF, the explorer's bounds and counterexample files, the rules list.

A target is read through a :class:`Files`: ``chain-designer`` reads files only;
``manage.py chain`` passes one that also takes a stored chain's key and reads up
to its upload limit. A command that cannot run raises :class:`Failed`, whose
message says why (``chain-designer`` prints it on stderr, ``manage.py chain``
raises it as a ``CommandError``). Django-free.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chains.core import formats
from chains.core.errors import DocumentError, Problem
from chains.core.lint import RULES, LintReport, lint, worst_status
from chains.core.lint.docs import rules_markdown
from chains.core.model import ChainSpec
from chains.core.openapi import OPENAPI_MAX_BYTES
from chains.core.sarif import sarif_run
from chains.core.sim.audit import AuditResult, audit
from chains.core.sim.explorer import EXIT_CODES as EXPLORE_EXIT_CODES
from chains.core.sim.explorer import Bounds, ExploreResult
from chains.core.sim.scenario import Scenario, load_scenario
from chains.core.traces import read as read_telemetry

from .text import cause_text, scenario_yaml

__all__ = [
    "Failed",
    "Files",
    "Unreadable",
    "LintedFile",
    "Loaded",
    "audit_trace",
    "bounds_of",
    "exploration_status",
    "lint_json",
    "lint_loaded",
    "pick_chain",
    "read_limited",
    "read_scenario",
    "rules_text",
    "sarif_log",
    "scenario_chain",
    "write_counterexamples",
]

# A SARIF rule for what the importer could not read: a lint rule needs a chain to run on.
_IMPORT_RULE = "import.unreadable"
_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


class Failed(Exception):
    """A command that could not run; its message says why (``manage.py chain``: CommandError).

    ``status`` is the exit status it ends the command with.
    """

    status = 1


class Unreadable(Failed):
    """The audit's chain or trace cannot be read: exit 2, apart from 1 for a diverged run."""

    status = 2


def read_limited(
    path: Path, limit: int = formats.MAX_BYTES, what: str = "a chain document"
) -> bytes:
    """The file's bytes; refuses, before reading it all, one over ``limit`` bytes."""
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise Failed(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Failed(f"{path} is larger than the {limit:,} bytes {what} may have")
    return data


@dataclass
class Loaded:
    """One target as the importer read it: its text (None when it was not a file or not
    text), the chains it holds and the problems found."""

    target: str
    text: str | None
    chains: list[ChainSpec]
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Files:
    """Chain targets as files, none over ``limit`` bytes (an OpenAPI document:
    ``openapi_limit``)."""

    limit: int = formats.MAX_BYTES
    openapi_limit: int = OPENAPI_MAX_BYTES
    # How a harness run reaches workers (``manage.py chain harness --celery``); None here.
    send_schedule: Callable[[dict[str, Any]], Any] | None = None

    def read(self, path: Path) -> bytes:
        return read_limited(path, self.limit)

    def read_openapi(self, path: Path) -> bytes:
        return read_limited(path, self.openapi_limit, "an OpenAPI document")

    def load(self, target: str, fmt: formats.Format = "auto") -> Loaded:
        """Read the file ``target`` as the importer does."""
        data = self.read(Path(target))
        result = formats.load(data, format=fmt, filename=Path(target).name)
        try:
            text: str | None = formats.decode(data)
        except DocumentError:
            text = None
        return Loaded(target, text, result.chains, result.problems)


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


def lint_loaded(loaded: Loaded) -> LintedFile:
    """Lint every chain a target holds."""
    reports = [(c, lint(c)) for c in loaded.chains]
    return LintedFile(loaded.target, loaded.text, loaded.problems, reports)


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
    return sarif_run("chain-designer", described, results, version)


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


def pick_chain(loaded: Loaded, chain_id: str | None) -> ChainSpec:
    """The target's only chain, or the one ``chain_id`` names (``--chain``)."""
    chains, target = loaded.chains, loaded.target
    if not chains:
        found = "; ".join(str(p) for p in loaded.problems if p.severity == "error")
        raise Failed(f"no chain found in {target}" + (f": {found}" if found else ""))
    ids = ", ".join(c.id for c in chains)
    if chain_id is None and len(chains) > 1:
        raise Failed(f"{target} holds several chains ({ids}); pick one with --chain")
    for chain in chains:
        if chain_id in (None, chain.id):
            return chain
    raise Failed(f"{target} has no chain {chain_id}; it holds {ids}")


def scenario_chain(loaded: Loaded, scenario: Scenario) -> ChainSpec:
    """The chain a scenario runs on: the target's only chain, or the one it names."""
    if len(loaded.chains) > 1 and scenario.chain is None:
        ids = ", ".join(c.id for c in loaded.chains)
        raise Failed(f"{loaded.target} holds several chains ({ids}); name one in `chain:`")
    return pick_chain(loaded, scenario.chain if len(loaded.chains) > 1 else None)


def read_scenario(path: Path) -> Scenario:
    try:
        return load_scenario(read_limited(path), filename=path.name)
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Failed(f"bad scenario {path}:\n{lines}") from None


def bounds_of(options: argparse.Namespace) -> Bounds:
    """The explorer's bounds from ``--max-faults``, ``--max-events`` and ``--no-crashes``."""
    if options.max_faults < 0 or options.max_events < 1:
        raise Failed("--max-faults must be 0 or more and --max-events 1 or more")
    return Bounds(
        max_faults=options.max_faults,
        max_events=options.max_events,
        crashes=not options.no_crashes,
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


def audit_trace(
    spec: ChainSpec, path: Path, fmt: str = "auto", run: str | None = None
) -> AuditResult:
    """Audit the trace file ``path`` (any shape of docs/trace-audit.md, or ``fmt``) against
    ``chain``; :class:`Unreadable` naming each line when it cannot be read."""
    try:
        reading = read_telemetry(formats.decode(read_limited(path)), spec, fmt, run)
    except Failed as exc:
        raise Unreadable(str(exc)) from None
    except DocumentError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        raise Unreadable(f"bad trace {path}:\n{lines}") from None
    return audit(spec, reading)


def exploration_status(result: ExploreResult, allow_incomplete: bool) -> int:
    verdict = result.verdict()
    if verdict == "incomplete" and allow_incomplete:
        verdict = "pass"
    return EXPLORE_EXIT_CODES[verdict]


def rules_text(markdown: bool = False) -> str:
    """The lint rules, a line each (id, severity, SPEC section, summary), or docs/lint-rules.md."""
    if markdown:
        return rules_markdown()
    rules = sorted(RULES.values(), key=lambda r: r.id)
    return "".join(f"{r.id:40} {r.severity:8} {r.ref:16} {r.summary}\n" for r in rules)
