"""Instructions the explorer executes, the baseline's against the work tree's, counted by callgrind.

Seconds on a shared machine wander: two runs of the same exploration, or two
copies run at once on the two cores, can differ by a fifth. The number of
instructions it executes moves by about 1%, so it is the steadier measure of
what a change to the explorer saved. This runs one chain's ``explore()`` call
in a fresh process of each tree under valgrind's callgrind, both at once,
with only that call counted (imports, loading and a first warm-up search at
max_faults 0 are not), and prints both counts, their ratio and the states.

Instructions are not time (a cache miss costs more than an addition), so the
issue's targets stay measured in seconds by ``bench/explore.py``; this says
which way a change moved the work, and how far. ``--cold`` leaves the
warm-up out: the count is then that of a search started in a fresh process,
as ``bench/explore.py`` times it (each signal classified for the first
time). ``--cycles`` also simulates the caches (callgrind's ``--cache-sim``,
about twice as slow) and prints the usual cycle estimate, instructions + 10
× first-level misses + 100 × last-level misses: a change that saves
instructions but misses the cache more shows there, and the estimate's
ratio has tracked the seconds' ratio on a quiet machine within a few percent.

    .venv/bin/python bench/explore_instructions.py [--faults 2] [--cycles] [--cold]
        [--chain fixtures/flight-roundtrip.yaml] [--baseline ce485a2]

Needs valgrind (Debian's package); about two minutes on 2 cores at max_faults
2 (callgrind runs Python some fifty times slower).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from explore import BASELINE, ROOT, baseline_tree

# argv: chain file, max_faults. Switches callgrind's counting on around explore() only.
_WORKER = """
import json, os, subprocess, sys
from pathlib import Path
from chains.core import formats
from chains.core.sim.explorer import Bounds, explore

path, faults, warm = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "warm"
chain = formats.load(path.read_bytes(), filename=path.name).chains[0]
if warm:
    explore(chain, Bounds(max_faults=0))
switch = ["callgrind_control", "-i"]
subprocess.run([*switch, "on", str(os.getpid())], capture_output=True, check=True)
result = explore(chain, Bounds(max_faults=faults))
subprocess.run([*switch, "off", str(os.getpid())], capture_output=True, check=True)
print(json.dumps({"states": result.states}))
"""

_COLLECTED = re.compile(r"Collected : (\d+)")


def start(
    root: Path, chain: Path, faults: int, out: Path, cycles: bool, cold: bool
) -> subprocess.Popen:
    """The exploration of ``chain`` by the explorer under ``root``, counted, running.

    ``chain`` is relative to the repository; the tree's own copy of it is read
    where it has one, as ``bench/explore.py`` does.
    """
    path = root / chain if (root / chain).exists() else ROOT / chain
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        *(["--cache-sim=yes"] if cycles else []),
        f"--callgrind-out-file={out}",
        sys.executable,
        "-c",
        _WORKER,
        str(path),
        str(faults),
        "cold" if cold else "warm",
    ]
    # One hash seed for both: set and dict orders then match from run to run.
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
    return subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(name: str, process: subprocess.Popen) -> tuple[int, int]:
    """(instructions, states) of a counted exploration, once it ends."""
    stdout, stderr = process.communicate()
    found = _COLLECTED.search(stderr)
    if process.returncode != 0 or found is None:
        raise SystemExit(f"the {name} exploration failed ({process.returncode}):\n{stderr[-2000:]}")
    return int(found.group(1)), json.loads(stdout.strip().splitlines()[-1])["states"]


def estimated_cycles(out: Path) -> tuple[int, int, int]:
    """(first-level misses, last-level misses, estimated cycles) of a cache-simulated run."""
    totals = dict.fromkeys(("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"), 0)
    events: list[str] = []
    for line in out.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:"):
            counts = dict(zip(events, map(int, line.split()[1:]), strict=False))
            totals = {k: counts.get(k, 0) for k in totals}
            break
    first = totals["I1mr"] + totals["D1mr"] + totals["D1mw"]
    last = totals["ILmr"] + totals["DLmr"] + totals["DLmw"]
    return first, last, totals["Ir"] + 10 * first + 100 * last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=2)
    parser.add_argument("--chain", type=Path, default=Path("fixtures/flight-roundtrip.yaml"))
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--cycles", action="store_true", help="simulate the caches too")
    parser.add_argument("--cold", action="store_true", help="no warm-up search first")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as folder:
        base_root = Path(folder) / "baseline"
        base_root.mkdir()
        baseline_tree(base_root, args.baseline)
        outs = {"baseline": Path(folder) / "base.out", "current": Path(folder) / "current.out"}
        roots = {"baseline": base_root, "current": ROOT}
        running = {
            name: start(roots[name], args.chain, args.faults, outs[name], args.cycles, args.cold)
            for name in outs
        }
        counted = {name: finish(name, process) for name, process in running.items()}
        cycles = {name: estimated_cycles(out) for name, out in outs.items()} if args.cycles else {}
    (base, base_states), (now, now_states) = counted["baseline"], counted["current"]
    print(f"{args.chain} at max_faults {args.faults}, explore() only")
    print(f"baseline {args.baseline}: {base:>15,} instructions, {base_states} states")
    print(f"work tree: {now:>17,} instructions, {now_states} states")
    print(f"ratio: {base / now:.2f}x fewer instructions")
    for name, (first, last, estimate) in cycles.items():
        print(f"{name}: {first:,} first-level and {last:,} last-level misses, {estimate:,} cycles")
    if cycles:
        print(f"ratio: {cycles['baseline'][2] / cycles['current'][2]:.2f}x fewer estimated cycles")


if __name__ == "__main__":
    main()
