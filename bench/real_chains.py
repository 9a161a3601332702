"""The public chains explored at several fault bounds: states, seconds, violations by step.

The record that issue 35 asks for, so an explorer change can be compared with
the last one: for each chain of the public chain-re-action material (SPEC.md
§6 and §7, compiles/*.chain.md), the explorer at each ``--faults`` bound, run
through our own console script (no Django), one row each: states, seconds,
whether the search was complete, and the violations counted by invariant and
the step their message names. The material is read from the git directory
that fetching the repository gave (``GIT_DIR``); nothing of it is kept.

    .venv/bin/python bench/real_chains.py GIT_DIR [--faults 2 3] [--only CHAIN_ID,...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
COMPILES = ("duffel", "stripe", "travelport", "bookingcom")
_STEP = re.compile(r"\b(?:commit|step|compensator|dispatched|dispatch of)\s+`?([a-z0-9_]+)")


def show(git_dir: str, path: str) -> str:
    command = ["git", "-C", git_dir, "show", f"HEAD:{path}"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def section(text: str, start: str, end: str) -> str:
    """The lines of ``text`` from the heading starting ``start`` to the one starting ``end``."""
    lines = text.split("\n")
    first = next(k for k, line in enumerate(lines) if line.startswith(start))
    last = next((k for k in range(first + 1, len(lines)) if lines[k].startswith(end)), len(lines))
    return "\n".join(lines[first:last])


def sources(git_dir: str) -> dict[str, str]:
    spec = show(git_dir, "SPEC.md")
    found = {"spec-6": section(spec, "## 6.", "## 7."), "spec-7": section(spec, "## 7.", "## 8.")}
    for name in COMPILES:
        found[name] = show(git_dir, f"compiles/{name}.chain.md")
    return found


def cli(*args: str) -> dict:
    done = subprocess.run(
        [str(PYTHON), "-m", "chains.cli", *args], capture_output=True, text=True, timeout=1800
    )
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": (done.stdout + done.stderr).strip().splitlines()[-1:]}


def violations(result: dict) -> str:
    counted = Counter()
    for v in result.get("violations", []):
        step = _STEP.search(v.get("message", ""))
        counted[f"{v.get('invariant')}@{step.group(1) if step else '?'}"] += 1
    return ", ".join(f"{k} x{n}" for k, n in sorted(counted.items())) or "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("--faults", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--only", default="", help="chain ids, comma-separated")
    args = parser.parse_args()
    only = {c for c in args.only.split(",") if c}
    print("| source | chain | faults | states | seconds | complete | violations |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, text in sources(args.git_dir).items():
            path = Path(folder) / f"{name}.md"
            path.write_text(text)
            chains = [c["id"] for c in cli("import", str(path), "--json").get("chains", [])]
            for chain in chains:
                if only and chain not in only:
                    continue
                for faults in args.faults:
                    bound = ["--max-faults", str(faults), "--json"]
                    result = cli("explore", str(path), "--chain", chain, *bound)
                    print(
                        f"| {name} | {chain} | {faults} | {result.get('states', '?')} "
                        f"| {result.get('seconds', '?')} | {result.get('complete', '?')} "
                        f"| {violations(result)} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
