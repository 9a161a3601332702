"""A mutation check of a part of the core against the tests that own it.

Each mutant changes the target's modules in one place, in a temporary copy of
the tree (the work tree is never touched: others edit it at the same time), and
runs the target's own tests against it. A mutant the tests fail on is
*killed*; one they pass on *survives*, and is either a gap in the tests or a
change that does not alter behaviour (each survivor kept is argued in
docs/benchmarks.md).

Targets (``--target``), each a set of modules and the tests that own them:

- ``runtime`` (the default): the simulator's runtime (``chains/core/sim``)
  against ``tests/core/sim/conformance/`` alone;
- ``graph``: ``chains/core/graph.py`` against ``tests/core/test_graph*.py``;
- ``invariants``: ``chains/core/sim/invariants.py`` against
  ``tests/core/sim/test_invariants*.py`` and ``test_explorer*.py``;
- ``lint-commit``: ``chains/core/lint/commit.py`` against
  ``tests/core/lint/test_commit*.py``.

Two kinds of mutant:

- **named** (runtime only): the nine safety rules the conformance folder must
  guard on its own (issue 36), each as (file, old text, new text) edits. A named mutation
  whose old text is no longer in the file is reported ``stale``, never
  silently skipped: the rule moved and its mutation must follow it.
- **generic**: operator swaps (``==``/``!=``, ``<``/``<=``, ``and``/``or``,
  ``True``/``False``, ``is``/``is not``, ``in``/``not in``, ``+=``/``-=``, a
  dropped ``not``) sampled with a seed over the target's modules.

    .venv/bin/python bench/mutate.py                 # the nine named mutants
    .venv/bin/python bench/mutate.py --generic 40 --seed 7
    .venv/bin/python bench/mutate.py --only persist_after_kill_point --show
    .venv/bin/python bench/mutate.py --target graph --generic 30 --seed 1 --workers 1

Exit status 1 when a named mutant survives (or is stale).
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIM = "chains/core/sim"
# What a test run needs of the tree (it imports Django settings through conftest).
COPIED = ("chains", "designer", "tests", "fixtures", "pyproject.toml", "manage.py")
# The runtime behind Run (docs/simulator.md): the generic sampler mutates these.
RUNTIME = (
    "runtime.py",
    "steps.py",
    "outcomes.py",
    "gates.py",
    "reconcile.py",
    "compensation.py",
    "handles.py",
    "backtrack.py",
    "deadlines.py",
    "events.py",
    "sealed.py",
    "state.py",
    "classifier.py",
)


@dataclass(frozen=True)
class Target:
    folder: str  # the mutated modules' folder
    modules: tuple[str, ...]  # the modules the generic sampler mutates, in ``folder``
    tests: tuple[str, ...]  # the owning tests: paths or globs, relative to the tree


TARGETS = {
    "runtime": Target(SIM, RUNTIME, ("tests/core/sim/conformance/",)),
    "graph": Target("chains/core", ("graph.py",), ("tests/core/test_graph*.py",)),
    "invariants": Target(
        SIM,
        ("invariants.py",),
        ("tests/core/sim/test_invariants*.py", "tests/core/sim/test_explorer*.py"),
    ),
    "lint-commit": Target("chains/core/lint", ("commit.py",), ("tests/core/lint/test_commit*.py",)),
}


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to the target's folder (chains/core/sim for the named ones)
    edits: tuple[tuple[str, str], ...]  # (old text, new text), each old text unique
    what: str
    line: int | None = None  # a generic mutant: its one edit is of this line (1-based)


NAMED = (
    Mutant(
        "unkeyed_retry_on_ambiguity",
        "classifier.py",
        (
            (
                'Verdict(type="reconcile"), "table", "#7", "transport fault on an unkeyed commit"',
                'Verdict(type="retry"), "table", "#7", "transport fault on an unkeyed commit"',
            ),
        ),
        "a transport fault on an unkeyed commit retries instead of reconciling (C1.1)",
    ),
    Mutant(
        "persist_after_kill_point",
        "steps.py",
        (
            (
                "            self.peers.reconcile.persist(action)\n"
                "        if is_commit_class(action):",
                "        if is_commit_class(action):",
            ),
            (
                "            self.host.before_dispatch(self.host)\n",
                "            self.host.before_dispatch(self.host)\n"
                "        if is_unkeyed_commit(action):\n"
                "            self.peers.reconcile.persist(action)\n",
            ),
        ),
        "the correlation record is persisted after the first kill point (C1.4)",
    ),
    Mutant(
        "staleness_skipped_on_2xx",
        "classifier.py",
        (
            (
                "    stale = _staleness(spec, ctx, step, obs, atoms)\n",
                "    stale = None if _is_success(obs) else "
                "_staleness(spec, ctx, step, obs, atoms)\n",
            ),
        ),
        "a 2xx carrying a staleness signal is not checked for staleness (SPEC §3 row 1)",
    ),
    Mutant(
        "deepest_instead_of_shallowest",
        "classifier.py",
        (
            (
                "dead = min(reporting or list(hits), key=lambda h: ctx.live[h])",
                "dead = max(reporting or list(hits), key=lambda h: ctx.live[h])",
            ),
        ),
        "of several handles reporting stale, the deepest wins (SPEC §3 row 1: shallowest)",
    ),
    Mutant(
        "landed_commits_dropped_on_invalidation",
        "handles.py",
        (
            (
                "            self.log.invalidated(state.alias)\n",
                "            self.log.invalidated(state.alias)\n"
                "            s.commits_landed = [\n"
                "                lc for lc in s.commits_landed if state.alias not in lc.handles\n"
                "            ]\n",
            ),
        ),
        "invalidating a handle a landed commit minted forgets the commit (C3.4, I5)",
    ),
    Mutant(
        "rewind_budget_not_decremented",
        "backtrack.py",
        (("        b.rewinds_left -= 1\n", ""),),
        "a rewind spends no rewind budget (C4.1)",
    ),
    Mutant(
        "model_answers_money_gate",
        "gates.py",
        (
            (
                "    if by is None:\n        return None\n",
                '    if by is None or by == "model":\n        return None\n',
            ),
        ),
        "a model's answer to a user's (money) gate is accepted (C6.5)",
    ),
    Mutant(
        "compensation_skipped_on_dead_end",
        "outcomes.py",
        (
            (
                "pending = [i for i, lc in enumerate(s.commits_landed) if not lc.compensated]",
                "pending: list[int] = []",
            ),
        ),
        "a dead end with landed commits ends without compensating them (C4.1, C8.1)",
    ),
    Mutant(
        "gate_parking_charged_to_wall_clock",
        "runtime.py",
        (
            (
                '        if s.state == "running":\n            s.budgets.wall_used += seconds',
                '        if s.state in ("running", "at_gate"):\n'
                "            s.budgets.wall_used += seconds",
            ),
        ),
        "time parked at a gate counts against wall_clock (C4.3)",
    ),
)

# Operator swaps: token → replacement. ``not`` alone is dropped.
SWAPS = {
    "==": "!=",
    "!=": "==",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "and": "or",
    "or": "and",
    "True": "False",
    "False": "True",
    "+=": "-=",
    "-=": "+=",
}


def generic_candidates(root: Path, target: Target = TARGETS["runtime"]) -> list[Mutant]:
    """Every operator swap in the target's modules, as one-edit mutants (whole-line context)."""
    out: list[Mutant] = []
    for name in target.modules:
        path = root / target.folder / name
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        for i, tok in enumerate(tokens):
            row, col = tok.start
            if row > len(lines) or tok.type == tokenize.ENDMARKER:
                continue
            line = lines[row - 1]
            if line.lstrip().startswith(("def ", "class ", "@", "assert ")):
                continue
            new: str | None = None
            if tok.type in (tokenize.OP, tokenize.NAME) and tok.string in SWAPS:
                new = SWAPS[tok.string]
            elif tok.type == tokenize.NAME and tok.string == "is":
                nxt = tokens[i + 1].string if i + 1 < len(tokens) else ""
                new = "is" if nxt == "not" else "is not"
                if nxt == "not":  # "is not" → "is": drop the following "not"
                    end = tokens[i + 1].end[1]
                    mutated = line[:col] + "is" + line[end:]
                    out.append(_one(name, row, line, mutated, "is not → is"))
                    continue
            elif tok.type == tokenize.NAME and tok.string == "not":
                prev = tokens[i - 1].string if i else ""
                if prev == "is":
                    continue
                nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                if nxt is not None and nxt.string == "in":
                    mutated = line[:col] + "in" + line[nxt.end[1] :]
                    out.append(_one(name, row, line, mutated, "not in → in"))
                    continue
                mutated = line[:col] + line[tok.end[1] :].lstrip()
                out.append(_one(name, row, line, mutated, "not dropped"))
                continue
            elif tok.type == tokenize.NAME and tok.string == "in":
                prev = tokens[i - 1].string if i else ""
                if prev in ("not", "for") or line.lstrip().startswith("for "):
                    continue
                new = "not in"
            if new is None or tok.start[0] != tok.end[0]:
                continue
            mutated = line[:col] + new + line[tok.end[1] :]
            out.append(_one(name, row, line, mutated, f"{tok.string} → {new}"))
    return out


def _one(name: str, row: int, line: str, mutated: str, what: str) -> Mutant:
    return Mutant(f"{name}:{row}", name, ((line, mutated),), f"{what}: {line.strip()}", row)


def copy_tree(dest: Path) -> None:
    for item in COPIED:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            shutil.copy2(src, dest / item)


def apply(mutant: Mutant, text: str) -> str | None:
    """``text`` with the mutant's edits, or None when an old text is not there exactly once
    (for a generic mutant: not on its line)."""
    if mutant.line is not None:
        lines = text.splitlines(keepends=True)
        ((old, new),) = mutant.edits
        if mutant.line > len(lines) or lines[mutant.line - 1] != old:
            return None
        lines[mutant.line - 1] = new
        return "".join(lines)
    for old, new in mutant.edits:
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    return text


def test_paths(tree: Path, target: Target) -> list[str]:
    """The target's test files in ``tree`` (globs expanded), relative to it."""
    found: list[str] = []
    for pattern in target.tests:
        if "*" not in pattern:
            found.append(pattern)
            continue
        found += sorted(str(Path(p).relative_to(tree)) for p in glob.glob(str(tree / pattern)))
    if not found:
        raise SystemExit(f"no tests match {target.tests}")
    return found


def pytest(
    tree: Path, timeout: float, *extra: str, target: Target = TARGETS["runtime"]
) -> tuple[int | None, str, float]:
    """Run the target's tests in ``tree``: exit code (None on timeout), output, seconds."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1", "DEBUG": "1"}
    tests = test_paths(tree, target)
    cmd = [sys.executable, "-m", "pytest", *tests, "-q", "-p", "no:cacheprovider", *extra]
    began = time.monotonic()
    try:
        done = subprocess.run(
            cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - began
    return done.returncode, done.stdout, time.monotonic() - began


def baseline_failures(
    tree: Path, timeout: float, target: Target = TARGETS["runtime"]
) -> tuple[list[str], float]:
    """The tests that fail on the unmutated copy (a test written first, before its fix)."""
    code, out, took = pytest(tree, timeout, "-rf", target=target)
    if code is None:
        raise SystemExit("the unmutated copy's test run timed out")
    failed = [line.split()[1] for line in out.splitlines() if line.startswith("FAILED ")]
    if code != 0 and not failed:
        raise SystemExit(f"the unmutated copy's test run broke:\n{out[-2000:]}")
    return failed, took


def run_tests(
    tree: Path, timeout: float, skip: tuple[str, ...] = (), target: Target = TARGETS["runtime"]
) -> tuple[str, float, str]:
    """killed | survived | killed (timeout) | killed (error) | broken, the seconds it
    took, and the test that failed.

    A run that fails naming no test and no mutated module (a tool crashing, a
    package missing while someone reinstalls the virtualenv) is ``broken``:
    not the mutant's doing, so not scored as a kill.
    """
    deselect = [arg for node in skip for arg in ("--deselect", node)]
    code, out, took = pytest(tree, timeout, "-x", "-rfE", *deselect, target=target)
    if code is None:
        return "killed (timeout)", took, ""
    if code == 0:
        return "survived", took, ""
    named = (line.split()[1] for line in out.splitlines() if line.startswith(("FAILED ", "ERROR ")))
    killer = next(named, "")
    if code == 1 and killer:
        return "killed", took, killer.removeprefix("tests/")
    if code in (1, 2) and target.folder in out:  # the mutated module does not import
        return "killed (error)", took, killer.removeprefix("tests/")
    return "broken", took, (out.strip().splitlines() or [""])[-1][:200]


def check(
    mutant: Mutant,
    tree: Path,
    timeout: float,
    skip: tuple[str, ...] = (),
    target: Target = TARGETS["runtime"],
) -> tuple[str, float, str]:
    path = tree / target.folder / mutant.file
    original = path.read_text()
    mutated = apply(mutant, original)
    if mutated is None:
        return "stale", 0.0, ""
    try:
        compile(mutated, str(path), "exec")
    except SyntaxError:
        return "invalid", 0.0, ""
    path.write_text(mutated)
    try:
        return run_tests(tree, timeout, skip, target)
    finally:
        path.write_text(original)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--target", choices=sorted(TARGETS), default="runtime", help="what to mutate (see above)"
    )
    ap.add_argument("--generic", type=int, default=0, help="how many generic mutants to sample")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-named", action="store_true", help="skip the nine named mutants")
    ap.add_argument("--only", action="append", default=[], help="run the named mutant(s) only")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--show", action="store_true", help="print each mutant's edit")
    args = ap.parse_args(argv)
    target = TARGETS[args.target]
    if args.target != "runtime" and (args.only or not args.generic):
        ap.error("the named mutants are the runtime's: another target needs --generic N")

    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        trees = []
        for n in range(max(1, args.workers)):
            tree = Path(tmp) / f"tree{n}"
            tree.mkdir()
            copy_tree(tree)
            trees.append(tree)
        mutants: list[Mutant] = []
        if not args.no_named and args.target == "runtime":
            mutants += [m for m in NAMED if not args.only or m.name in args.only]
        if args.generic:
            # the copy: the work tree may change meanwhile
            pool = generic_candidates(trees[0], target)
            rng = random.Random(args.seed)
            mutants += rng.sample(pool, min(args.generic, len(pool)))
            print(
                f"generic pool: {len(pool)} operator mutants; "
                f"{args.generic} sampled, seed {args.seed}"
            )
        failing, took = baseline_failures(trees[0], args.timeout, target)
        skip = tuple(failing)
        tests = " ".join(target.tests)
        print(f"baseline: {args.target}: {tests} in {took:.1f}s; {len(mutants)} mutants")
        for node in failing:
            print(f"  deselected, failing before any mutation: {node}")

        def work(i: int) -> tuple[Mutant, str, float, str]:
            m = mutants[i]
            status, secs, killer = check(m, trees[i % len(trees)], args.timeout, skip, target)
            print(f"  [{i + 1}/{len(mutants)}] {status} {m.name}", flush=True)
            return m, status, secs, killer

        # One copy per worker: mutant i always runs in copy i % workers, one at a time.
        results: list[tuple[Mutant, str, float, str]] = []
        with ThreadPoolExecutor(len(trees)) as pool_:
            chunks = [list(range(w, len(mutants), len(trees))) for w in range(len(trees))]
            futures = [pool_.submit(lambda c=c: [work(i) for i in c]) for c in chunks]
            for f in futures:
                results += f.result()
    results.sort(key=lambda r: mutants.index(r[0]))
    for m, status, secs, killer in results:
        print(f"{status:16} {secs:5.1f}s  {m.name:40} {m.what}")
        if killer:
            print(f"{'':24} by {killer}")
        if args.show:
            for old, new in m.edits:
                print(f"    - {old.rstrip()}\n    + {new.rstrip()}")
    scored = [r for r in results if r[1] not in ("stale", "invalid", "broken")]
    broken = len(results) - len(scored) - sum(r[1] in ("stale", "invalid") for r in results)
    if broken:
        print(f"{broken} runs broke without naming a test or the mutant: not scored, run again")
    killed = sum(1 for r in scored if r[1].startswith("killed"))
    print(f"score: {killed}/{len(scored)} killed", end="")
    named = [r for r in results if r[0] in NAMED]
    if named:
        named_killed = sum(1 for r in named if r[1].startswith("killed"))
        print(f"; named {named_killed}/{len(named)}", end="")
    print()
    return 1 if broken or any(not r[1].startswith("killed") for r in named) else 0


if __name__ == "__main__":
    sys.exit(main())
