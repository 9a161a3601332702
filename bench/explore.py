"""The explorer now against the explorer of commit ce485a2 (the baseline), in one run.

For every chain of ``fixtures/*.yaml`` and ``fixtures/hotel-compile.md`` at
max_faults 1 and 2, ``flight-roundtrip`` at 3, and two chains of our own in
``bench/chains/`` shaped like real compiles (an offer search, pricing and
unkeyed order with a hold variant; a fare search, pricing, held reservation
with a deadline and ticketing behind consent), it prints the states each
explorer finds, the seconds of its ``explore`` call (median of ``--runs``),
the speed-up (baseline seconds / current seconds), and whether both find the
same violations (the same set of (invariant, message)).

The baseline comes from ``git archive ce485a2 chains fixtures`` into a
temporary folder, so the work tree is not touched. Each exploration runs in a
fresh process of the same Python, the baseline's with that folder as its
working directory and ``PYTHONPATH``, the current one's the same way from the
repository root: both pay the same process costs and neither warms the
other's caches. The runs of a case alternate between the two.

The current explorer merges states the baseline kept apart, so fewer states
is expected. More states, or different findings, is a failure: the row says
so in capitals and the exit status is 1. Other notes do not fail: a chain of
ours the baseline's model cannot read (fields added since) is "baseline
cannot load"; one its simulator walks wrongly, never reaching ``done`` where
the current one does, is "baseline cannot walk it" and is not compared; and
terminal kinds that differ are shown. Since ce485a2 the simulator itself
changed (messages reworded, runs no longer end ``escalated``, some chains
gained or lost reachable states), so against it some rows fail for reasons
that are not the explorer's; ``--baseline`` takes any other commit, such as
the one just before a change to the explorer, to check that change alone;
a baseline that reports coverage (steps, rows, outcomes and compensations
reached) must report the same, or the row fails with "COVERAGE DIFFERS".

    .venv/bin/python bench/explore.py [--runs 3] [--faults 1 2 3] [--only flight]
        [--json rows.json] [--baseline ce485a2]

``--runs`` defaults to 1 for the 3-fault case and 3 for the others; the
seconds are the median. ``--only`` keeps the cases whose name or chain id
holds the text. The whole run takes about five minutes on 2 cores, most of
it flight-roundtrip at 3 faults; measure on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chains.core import formats

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "ce485a2"
REAL_SHAPES = ["bench/chains/offer-order.yaml", "bench/chains/held-ticketing.yaml"]

# One exploration in a fresh process: argv is the chain file, the chain id and
# max_faults; stdout is one JSON object. Run as `python -c`, so the working
# directory (the tree being measured) comes first on sys.path.
_WORKER = """
import json, sys, time
from pathlib import Path
import chains
from chains.core import formats
from chains.core.sim.explorer import Bounds, explore

path, chain_id, faults = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
out = {"package": str(Path(chains.__file__).resolve().parent.parent)}
try:
    loaded = formats.load(path.read_bytes(), filename=path.name)
except Exception as exc:
    loaded, out["error"] = None, f"{type(exc).__name__}: {exc}"
chain = next((c for c in loaded.chains if c.id == chain_id), None) if loaded else None
if chain is None and "error" not in out:
    out["error"] = "; ".join(str(p) for p in loaded.problems[:3]) or "no such chain"
if chain is None:
    print(json.dumps(out))
    sys.exit(0)
started = time.perf_counter()
result = explore(chain, Bounds(max_faults=faults))
out["seconds"] = time.perf_counter() - started
out["states"] = result.states
out["terminals"] = result.terminals
out["violations"] = sorted({(v.invariant, v.message) for v in result.violations})
reach = getattr(result, "reach", None)
out["coverage"] = reach.coverage() if reach is not None else None
print(json.dumps(out))
"""


@dataclass
class Case:
    """One chain at one max_faults: ``path`` relative to the repository root."""

    path: str
    chain_id: str
    label: str  # the file's stem, and the chain id when the file holds several
    faults: int
    runs: int

    @property
    def name(self) -> str:
        return f"{self.label} f{self.faults}"


@dataclass
class Row:
    case: str
    faults: int
    baseline_states: int | None = None
    current_states: int | None = None
    baseline_seconds: float | None = None
    current_seconds: float | None = None
    speedup: float | None = None
    same_findings: bool | None = None
    baseline_violations: list[list[str]] = field(default_factory=list)
    current_violations: list[list[str]] = field(default_factory=list)
    baseline_terminals: dict[str, int] = field(default_factory=dict)
    current_terminals: dict[str, int] = field(default_factory=dict)
    coverage: dict[str, Any] | None = None
    note: str = ""
    failed: bool = False


def cases(runs: int | None) -> list[Case]:
    """Every fixture chain at 1 and 2 faults, flight-roundtrip at 3, then our real shapes."""
    files = [*sorted(ROOT.glob("fixtures/*.yaml")), ROOT / "fixtures/hotel-compile.md"]
    files += [ROOT / p for p in REAL_SHAPES]
    out = []
    for file in files:
        loaded = formats.load(file.read_bytes(), filename=file.name)
        if not loaded.chains:
            raise SystemExit(f"no chain in {file}: {[str(p) for p in loaded.problems]}")
        path = str(file.relative_to(ROOT))
        for chain in loaded.chains:
            label = file.stem if len(loaded.chains) == 1 else f"{file.stem}:{chain.id}"
            out += [Case(path, chain.id, label, faults, runs or 3) for faults in (1, 2)]
    flight = "fixtures/flight-roundtrip.yaml"
    out.append(Case(flight, "flight_roundtrip", "flight-roundtrip", 3, runs or 1))
    return out


def run_once(case: Case, root: Path) -> dict[str, Any]:
    """One exploration of ``case`` by the explorer under ``root``, in a process of its own."""
    path = root / case.path if (root / case.path).exists() else ROOT / case.path
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", _WORKER, str(path), case.chain_id, str(case.faults)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{case.name} under {root} exited {done.returncode}:\n{done.stderr}")
    out = json.loads(done.stdout)
    if Path(out["package"]) != root.resolve():
        raise SystemExit(f"{case.name}: imported chains from {out['package']}, not {root}")
    return out


def measure(case: Case, baseline_root: Path) -> tuple[list[dict], list[dict]]:
    """``case.runs`` runs of each explorer, alternating; no baseline runs if it cannot load."""
    base: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    for _ in range(case.runs):
        base.append(run_once(case, baseline_root))
        if "error" in base[0]:
            base = []
            break
        current.append(run_once(case, ROOT))
    current += [run_once(case, ROOT) for _ in range(case.runs - len(current))]
    if "error" in current[0]:
        raise SystemExit(f"{case.name}: the current explorer cannot load it: {current[0]['error']}")
    return base, current


def compare(case: Case, baseline_root: Path) -> Row:
    """The median seconds of each explorer on ``case``, and what tells their results apart."""
    base, current = measure(case, baseline_root)
    now = current[-1]
    row = Row(case.name, case.faults, current_states=now["states"])
    row.current_seconds = statistics.median(r["seconds"] for r in current)
    row.current_violations = now["violations"]
    row.current_terminals = now["terminals"]
    row.coverage = now["coverage"]
    problems = []
    if len({r["states"] for r in current}) > 1:
        problems.append("CURRENT STATES VARY BETWEEN RUNS")
    if not base:
        row.note, row.failed = "; ".join([*problems, "baseline cannot load"]), bool(problems)
        return row
    then = base[-1]
    row.baseline_states = then["states"]
    row.baseline_seconds = statistics.median(r["seconds"] for r in base)
    row.baseline_violations = then["violations"]
    row.baseline_terminals = then["terminals"]
    if "done" in now["terminals"] and "done" not in then["terminals"]:
        # A shape the baseline's simulator got wrong (it stops short of done):
        # its states and seconds measure a different walk, so nothing is compared.
        row.note = "; ".join([*problems, "baseline cannot walk it (never reaches done)"])
        row.failed = bool(problems)
        return row
    row.speedup = row.baseline_seconds / row.current_seconds
    row.same_findings = {tuple(v) for v in then["violations"]} == {
        tuple(v) for v in now["violations"]
    }
    if now["states"] > then["states"]:
        problems.append("MORE STATES THAN THE BASELINE")
    if not row.same_findings:
        invariants = [sorted(v[0] for v in r["violations"]) for r in (then, now)]
        reworded = " (same invariants, reworded)" if invariants[0] == invariants[1] else ""
        problems.append(f"FINDINGS DIFFER{reworded}")
    if then.get("coverage") is not None and then["coverage"] != now["coverage"]:
        problems.append("COVERAGE DIFFERS")
    row.failed = bool(problems)
    kinds = ["/".join(sorted(r["terminals"])) for r in (then, now)]
    if kinds[0] != kinds[1]:
        problems.append(f"terminals: baseline {kinds[0]}, current {kinds[1]}")
    row.note = "; ".join(problems)
    return row


def baseline_tree(into: Path, commit: str = BASELINE) -> None:
    """``chains`` and ``fixtures`` of ``commit``, extracted under ``into``."""
    command = ["git", "archive", commit, "chains", "fixtures"]
    archive = subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


_HEADER = (
    f"{'case':38} {'base states':>11} {'cur states':>10} {'base s':>8} {'cur s':>8} "
    f"{'speed-up':>8}  findings"
)


def show(row: Row) -> str:
    def num(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    same = {None: "-", True: "same", False: "DIFFER"}[row.same_findings]
    speedup = "-" if row.speedup is None else f"{row.speedup:.2f}x"
    return (
        f"{row.case:38} {num(row.baseline_states, 'd'):>11} {num(row.current_states, 'd'):>10} "
        f"{num(row.baseline_seconds, '.3f'):>8} {num(row.current_seconds, '.3f'):>8} "
        f"{speedup:>8}  {same}" + (f"  {row.note}" if row.note else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, help="runs per case (median); default 3, 1 at 3 faults")
    parser.add_argument("--faults", type=int, nargs="+", help="only cases at these max_faults")
    parser.add_argument("--only", help="only cases whose name (file stem, chain id) has this text")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    args = parser.parse_args()
    chosen = [
        c
        for c in cases(args.runs)
        if (not args.faults or c.faults in args.faults)
        and (not args.only or args.only in f"{c.name} {c.chain_id}")
    ]
    if not chosen:
        raise SystemExit("no case left after --faults / --only")
    rows = []
    print(f"{args.baseline} against the work tree; seconds are explore() calls, median of runs")
    print(_HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-explore-") as folder:
        baseline = Path(folder).resolve()
        baseline_tree(baseline, args.baseline)
        for case in chosen:
            rows.append(compare(case, baseline))
            print(show(rows[-1]), flush=True)
    print(
        "\nFewer current states is expected (the current explorer merges states the baseline"
        "\nkept apart); more states or different findings fails the bench."
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    failed = [r.case for r in rows if r.failed]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
