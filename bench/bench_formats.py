"""Throughput of reading, validating and writing chain documents.

Reads every fixture (YAML and the compile Markdown), and for each one times
``formats.load`` and ``formats.dump`` (YAML and JSON) over several rounds.
No target is set by an issue yet; the numbers are a baseline for later
changes, compared as ratios within one run (the machines are shared).

    .venv/bin/python bench/bench_formats.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from chains.core import formats

ROOT = Path(__file__).resolve().parent.parent


def best_of(rounds: int, fn) -> float:
    """Median wall time of ``fn`` in milliseconds over ``rounds`` runs."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    paths = sorted(p for p in (ROOT / "fixtures").iterdir() if p.suffix in (".yaml", ".md"))
    header = ("fixture", "KiB", "load ms", "yaml ms", "json ms", "load/json")
    print("{:28} {:>6} {:>8} {:>8} {:>8} {:>9}".format(*header))
    for path in paths:
        if path.name == "README.md":
            continue
        data = path.read_bytes()
        result = formats.load(data, filename=path.name)
        load_ms = best_of(args.rounds, lambda d=data, n=path.name: formats.load(d, filename=n))
        yaml_ms = best_of(args.rounds, lambda r=result: [formats.dump(c, "yaml") for c in r.chains])
        json_ms = best_of(args.rounds, lambda r=result: [formats.dump(c, "json") for c in r.chains])
        print(
            f"{path.name:28} {len(data) / 1024:6.1f} {load_ms:8.2f} {yaml_ms:8.2f} "
            f"{json_ms:8.2f} {load_ms / json_ms:9.1f}"
        )


if __name__ == "__main__":
    main()
