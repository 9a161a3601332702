"""How long the test suite takes: `make test-fast`, and the pytest part of `make test`.

Runs each command once (the suite is minutes long; the machine is shared and
noisy, so note the load printed with each row) and prints wall seconds and
what pytest reported:

    .venv/bin/python bench/suite_timing.py [--only fast|test] [--profile ci|dev]

- ``fast``: ``make test-fast`` (every test but the browser ones, in parallel).
- ``test``: the two pytest commands of ``make test`` (the parallel pass and the
  browser tests), without ruff and mypy.

``--profile`` sets ``HYPOTHESIS_PROFILE`` for every command (``ci`` is what
CI runs; without it, the profile follows ``CI`` as in tests/conftest.py).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = str(ROOT / ".venv" / "bin" / "pytest")
WORKERS = os.environ.get("WORKERS", "2")

COMMANDS = {
    "fast": [["make", "--no-print-directory", "test-fast"]],
    "test": [
        [PYTEST, "-q", "-n", WORKERS, "-m", "not browser"],
        [PYTEST, "-q", "-n", WORKERS, "-m", "browser"],
    ],
}
SUMMARY = re.compile(r"^=* ?(\d+ passed.*?) ?=*$", re.MULTILINE)


def run(command: list[str], env: dict[str, str]) -> tuple[float, str, int]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    found = SUMMARY.findall(done.stdout)
    summary = found[-1] if found else (done.stdout + done.stderr).strip().splitlines()[-1:]
    return seconds, str(summary), done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(COMMANDS))
    parser.add_argument("--profile", choices=["ci", "dev"])
    args = parser.parse_args()
    env = dict(os.environ)
    if args.profile:
        env["HYPOTHESIS_PROFILE"] = args.profile
    failed = 0
    for name, commands in COMMANDS.items():
        if args.only and name != args.only:
            continue
        total = 0.0
        for command in commands:
            load = os.getloadavg()[0]
            seconds, summary, code = run(command, env)
            total += seconds
            failed |= code
            shown = " ".join(c.removeprefix(str(ROOT) + "/") for c in command)
            print(f"{name:5} {seconds:7.1f} s  load {load:4.2f}  {shown}: {summary}", flush=True)
        print(f"{name:5} {total:7.1f} s  total", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
