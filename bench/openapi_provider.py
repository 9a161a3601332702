"""A real provider's OpenAPI document proposed in full on the command line, timed and weighed.

Runs ``chain-designer openapi DOCUMENT --json`` (every operation proposed) in a
child process, ``--runs`` times, and reports the median wall time and the
largest peak memory (resident set) of the child. In the same run it times the
floor no import can beat: a child that only starts Python and parses the same
file with PyYAML's C loader (or ``json``), so the ratio between the two says what
the import adds on this machine, whatever its load.

Target (issue 39): Stripe's ``spec3.yaml`` (4.16 MB, 468 operations; fetch
``github:stripe/openapi``, never committed here) in under 5 s and under 300 MB.

    .venv/bin/python bench/openapi_provider.py PATH [--runs 5] [--key-header Idempotency-Key]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / ".venv" / "bin" / "chain-designer"
_FLOOR = (
    "import json, sys, yaml\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "json.loads(text) if sys.argv[1].endswith('.json') else "
    "yaml.load(text, Loader=yaml.CSafeLoader)\n"
)


def timed(command: list[str]) -> tuple[float, float, bytes]:
    """Wall seconds, the child's peak resident MB, and its output."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=True)
    seconds = time.perf_counter() - start
    # ru_maxrss of the children is the largest of any child waited for so far (KB on Linux):
    # each command runs in a fresh interpreter, and the floor runs last.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return seconds, peak, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--key-header", default=None)
    args = parser.parse_args()
    command = [str(CLI), "openapi", str(args.path), "--json"]
    if args.key_header:
        command += ["--key-header", args.key_header]
    imports, peaks = [], []
    for _ in range(args.runs):
        seconds, peak, out = timed(command)
        imports.append(seconds)
        peaks.append(peak)
    operations = json.loads(out)
    floors = [timed([sys.executable, "-c", _FLOOR, str(args.path)])[0] for _ in range(args.runs)]
    size = args.path.stat().st_size
    median, floor = statistics.median(imports), statistics.median(floors)
    print(f"document: {args.path.name}, {size / 1e6:.2f} MB, {len(operations)} operations")
    print(f"import:   median {median:.2f} s over {args.runs} runs, peak {max(peaks):.0f} MB")
    print(f"floor:    median {floor:.2f} s (Python + parsing the file alone)")
    print(f"ratio:    {median / floor:.2f}x the floor")
    keyed = sum(1 for o in operations if o["method"] == "post" and o["idempotency"] == "keyed")
    posts = sum(1 for o in operations if o["method"] == "post")
    print(f"keyed POSTs: {keyed} of {posts}")


if __name__ == "__main__":
    main()
