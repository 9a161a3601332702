"""How long a save waits for the explorer's answer beside lint (issue 38: within 2 s).

The workspace loads ``…/save-check?revision=N`` after every save; this times
that request, uncached, through Django's test client on a test database, for
the flight chain as it is, the flight chain with a row that re-sends its
unkeyed booking after a timeout (the explorer must show the double booking),
and, given the git directory of the public chain-re-action material, every
chain of SPEC.md §6-§7 and compiles/*.chain.md imported as the import page
would. One row each: the request's seconds (median of ``--runs``), the
explorer's own seconds, the sequences tried, and what the panel says.

    .venv/bin/python bench/save_check.py [GIT_DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.test import Client  # noqa: E402

from bench import _django  # noqa: E402,F401  (sets Django up)
from bench._django import test_database  # noqa: E402
from chains.core import formats  # noqa: E402
from chains.models import Chain  # noqa: E402
from chains.services.save_check import BOUNDS, save_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def documents(git_dir: str | None) -> list[tuple[str, dict]]:
    flight = formats.load((ROOT / "fixtures/flight-roundtrip.yaml").read_text(), format="yaml")
    plain = formats.to_document(flight.chains[0])
    retried = formats.to_document(flight.chains[0])
    retried["id"] = "flight_unkeyed_retry"
    row = {"id": "R0", "signal": ["timeout"], "scope": {"steps": ["book_trip"]}}
    retried["verdict_table"].insert(0, {**row, "verdict": "retry", "no_side_effect": True})
    found = [("fixtures", plain), ("flight + unkeyed retry", retried)]
    if git_dir:
        from bench.real_chains import sources

        for name, text in sources(git_dir).items():
            for spec in formats.load(text, filename=f"{name}.md").chains:
                found.append((name, formats.to_document(spec)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("git_dir", nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"bounds: {BOUNDS.max_faults} faults, {BOUNDS.max_seconds} s, {BOUNDS.max_states} states")
    print("| source | chain | request s (median) | explore s | sequences | panel says |")
    print("|---|---|---|---|---|---|")
    with test_database():
        admin = get_user_model().objects.create_superuser("bench")
        client = Client()
        client.force_login(admin)
        worst = 0.0
        for source, document in documents(args.git_dir):
            chain = Chain.objects.store(document, "bench").chain
            url = f"{chain.url('save_check')}?revision=1"
            times = []
            for _ in range(args.runs):
                cache.clear()
                start = time.perf_counter()
                response = client.get(url, HTTP_HX_REQUEST="true")
                times.append(time.perf_counter() - start)
                assert response.status_code == 200, response.status_code
            result = save_check(chain.head()) or {}
            says = (
                "violations: " + ", ".join(sorted({v["invariant"] for v in result["violations"]}))
                if result.get("violations")
                else (
                    "pass"
                    if result.get("complete")
                    else f"clean, {result.get('stopped_by') or 'incomplete'}"
                )
            )
            median = statistics.median(times)
            worst = max(worst, median)
            print(
                f"| {source} | {chain.key} | {median:.2f} | {result.get('seconds', '?')} "
                f"| {result.get('paths', '?')} | {says} |",
                flush=True,
            )
        print(f"\nslowest: {worst:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
