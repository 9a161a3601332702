"""How evenly the explorer's shards share a search, and two Celery workers against one.

First, in this process, every shard of one exploration of
``fixtures/flight-roundtrip.yaml`` (``--faults``, default 3, in ``--shards``,
default 8), one after another, split two ways: before, the old split (every
shard walks the first levels until one holds four nodes per shard, then keeps
the nodes at positions ``index`` modulo the shard count; reproduced below as
:func:`modulo_shard`), and after, the explorer's own balanced split
(``explore(chain, bounds, shard=...)``). Prints each shard's states, seconds
and peak memory, the max/mean of states and of seconds (1.00 is a perfect
balance: the slowest shard sets the wall time of a campaign), the speed-up
two workers would reach on those seconds taking the shards in turn, as a
campaign sends them, and checks that both splits merge to the unsharded
states.

Then the wall time of the same exploration run as a campaign by one Celery
worker process, then by two, and the speed-up (target >= 1.9x); see
:func:`celery_speedup`. Each round also measures what two processes get out
of this machine at that moment (:func:`machine_ceiling`: the same search
alone, then two at once, no database or broker), the ceiling the Celery
ratio is read against.

    .venv/bin/python bench/explore_shards.py [--faults 3] [--shards 8]
    .venv/bin/python bench/explore_shards.py --no-celery   # the in-process split only
    .venv/bin/python bench/explore_shards.py --celery      # the Celery speed-up only
    .venv/bin/python bench/explore_shards.py --celery --rounds 5   # its median of five pairs
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _celery import private_broker, start_celery_worker, stop, wait_ready

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.sim.explorer import Bounds, ExploreResult, _result, explore, merge
from chains.core.sim.search import Search

FLIGHT = Path(__file__).resolve().parent.parent / "fixtures" / "flight-roundtrip.yaml"


def load(path: Path) -> ChainSpec:
    return formats.load(path.read_text(), format="yaml").chains[0]


def modulo_shard(chain: ChainSpec, bounds: Bounds, shard: tuple[int, int]) -> ExploreResult:
    """A shard as the explorer split them before: first level of 4 nodes a shard, modulo."""
    started = time.perf_counter()
    search = Search(chain, bounds, None, None)
    queue = deque(search.start())
    index, count = shard
    while queue and len(queue) < 4 * count and not search.stopped:
        level = list(queue)
        queue.clear()
        for node in level:
            queue.extend(search.expand(node))
    search.bfs(deque(node for i, node in enumerate(queue) if i % count == index))
    return _result(search, time.perf_counter() - started, shard)


def two_in_turn(seconds: list[float]) -> float:
    """When two workers that take the shards in index order, each when free, are done."""
    free = [0.0, 0.0]
    for s in seconds:
        free[free.index(min(free))] += s
    return max(free)


def balance(chain: ChainSpec, bounds: Bounds, shards: int) -> dict[str, Any]:
    """Each shard split before and after, one after another here; what each explored."""
    report: dict[str, Any] = {}
    for name, run in (("before", modulo_shard), ("after", explore)):
        parts = []
        print(f"{name}: {shards} shards of flight-roundtrip, max_faults={bounds.max_faults}")
        print(f"{'shard':>7} {'states':>8} {'seconds':>8} {'peak MB':>8}")
        for i in range(shards):
            part = run(chain, bounds, shard=(i, shards))
            parts.append(part)
            peak = f"{part.peak_mb:.0f}" if part.peak_mb is not None else "?"
            print(f"{i:>7} {part.states:>8} {part.seconds:>8.2f} {peak:>8}", flush=True)
        states = [p.states for p in parts]
        seconds = [p.seconds for p in parts]
        row = {
            "states": states,
            "seconds": [round(s, 2) for s in seconds],
            "states_max_mean": round(max(states) / (sum(states) / shards), 2),
            "seconds_max_mean": round(max(seconds) / (sum(seconds) / shards), 2),
            "states_sum": sum(states),
            "seconds_sum": round(sum(seconds), 2),
            "merged_states": merge(parts).states,
            "two_in_turn": round(sum(seconds) / two_in_turn(seconds), 2),
        }
        print(
            f"max/mean: states {row['states_max_mean']:.2f}, seconds "
            f"{row['seconds_max_mean']:.2f}; in all {row['states_sum']} states in "
            f"{row['seconds_sum']:.1f}s (the shared first levels counted in every shard), "
            f"{row['merged_states']} after merge; two workers taking these shards in "
            f"turn would finish {row['two_in_turn']:.2f}x sooner than one\n"
        )
        report[name] = row
    if report["before"]["merged_states"] != report["after"]["merged_states"]:
        raise SystemExit("the two splits merge to different states")
    return report


# --- Celery speed-up: two workers against one on the same campaign ---------
#
def celery_speedup(
    chain_path: Path, bounds: Bounds, shards: int = 8, rounds: int = 1, timeout: float = 3600
) -> dict[str, Any]:
    """Wall time of one exploration run by one Celery worker process, then by two; the ratio.

    The database is migrated and the chain stored as a revision first. Each
    run launches ``Exploration.objects.launch(revision, bounds, shards=shards)``
    once its workers are ready and times it from the launch to the
    ``finished_at`` its last shard wrote, so worker start-up is not counted
    and neither is this script's polling for the end. More shards than workers
    keeps both workers busy to the end when shards differ in size; the
    slowest shard still bounds how close two workers come to twice one.
    ``rounds`` repeats the pair (one worker, then two; two first in every
    other round) and reports every ratio and their median: on a shared
    machine one pair can be off by a quarter.
    """
    # The development configuration, as `make run` has it; the workers inherit it.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from chains.models import Chain
    from designer.celery import app

    call_command("migrate", verbosity=0)
    loaded = formats.load(chain_path.read_bytes(), filename=chain_path.name)
    if not loaded.chains:
        raise SystemExit(f"no chain in {chain_path}: {[str(p) for p in loaded.problems]}")
    revision = Chain.objects.store(formats.to_document(loaded.chains[0]), message="bench")
    folder = Path(settings.VAR_DIR) / "bench"
    folder.mkdir(parents=True, exist_ok=True)  # the workers' logs, whatever the broker
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        private_broker(app, folder / "broker")
    # A SIGTERM to this script still stops the workers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    pairs = []
    for n in range(rounds):
        # odd rounds run two workers first: a host that speeds up or slows down over the
        # minutes of a run favours neither side of the ratio
        order = (1, 2) if n % 2 == 0 else (2, 1)
        runs = {
            count: _campaign(revision, bounds, shards, count, folder, timeout) for count in order
        }
        speedup = runs[1]["seconds"] / runs[2]["seconds"]
        ceiling = machine_ceiling(chain_path, bounds)
        print(
            f"speed-up of two workers over one: {speedup:.2f}x (target >= 1.9x); "
            f"two independent searches on this machine: {ceiling['ratio']:.2f}x"
        )
        pairs.append(
            {
                "one_worker": runs[1],
                "two_workers": runs[2],
                "speedup": round(speedup, 2),
                "ceiling": ceiling,
            }
        )
    median = statistics.median(p["speedup"] for p in pairs)
    ceiling_median = statistics.median(p["ceiling"]["ratio"] for p in pairs)
    if rounds > 1:
        print(
            f"median of {rounds} rounds: {median:.2f}x (target >= 1.9x); two independent "
            f"searches: {ceiling_median:.2f}x"
        )
    return {
        "chain": chain_path.name,
        "bounds": asdict(bounds),
        "shards": shards,
        "rounds": pairs,
        "speedup": median,
        "ceiling": ceiling_median,
    }


# One whole (unsharded) search in a fresh process; prints its wall seconds.
_SEARCH = """
import sys, time
from pathlib import Path
from chains.core import formats
from chains.core.sim.explorer import Bounds, explore
path = Path(sys.argv[1])
chain = formats.load(path.read_bytes(), filename=path.name).chains[0]
started = time.perf_counter()
explore(chain, Bounds(max_faults=int(sys.argv[2])))
print(time.perf_counter() - started)
"""


def machine_ceiling(chain_path: Path, bounds: Bounds) -> dict[str, float]:
    """What two processes get out of this machine: one search alone, then two at once.

    The same whole search, in fresh processes with no database or broker:
    ``2 * alone / slower of the pair`` is the most two workers could reach
    here in the same minute, whatever the campaign does (a shared host
    lends its cores unevenly), so the Celery ratio is read against it.
    """

    def start() -> subprocess.Popen:
        command = [sys.executable, "-c", _SEARCH, str(chain_path), str(bounds.max_faults)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)

    def seconds(process: subprocess.Popen) -> float:
        out, _ = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"the search exited with {process.returncode}")
        return float(out.strip().splitlines()[-1])

    alone = seconds(start())
    pair = [start(), start()]
    slower = max(seconds(p) for p in pair)
    return {
        "alone": round(alone, 2),
        "pair": round(slower, 2),
        "ratio": round(2 * alone / slower, 2),
    }


def _campaign(
    revision: Any, bounds: Bounds, shards: int, count: int, folder: Path, timeout: float
) -> dict[str, Any]:
    """One exploration of ``revision`` run by ``count`` fresh worker processes, timed."""
    from django.utils import timezone

    from chains.models import Exploration

    logs = [folder / f"shards-worker{count}-{i}.log" for i in range(count)]
    workers = [(start_celery_worker(f"shards{count}-{i}", log), log) for i, log in enumerate(logs)]
    try:
        wait_ready(workers)
        started, launched = time.perf_counter(), timezone.now()
        exploration = Exploration.objects.launch(revision, bounds, shards=shards)
        while exploration.finished_at is None:
            if time.perf_counter() - started > timeout:
                exploration.cancel()
                raise RuntimeError(f"exploration not finished after {timeout}s")
            time.sleep(0.1)
            exploration.refresh_from_db()
        # from the launch to the finish the last shard wrote (same clock, this machine's),
        # not to when this loop saw it: the poll would add up to a tenth of a second
        wall = (exploration.finished_at - launched).total_seconds()
    finally:
        for process, _ in workers:
            stop(process)
    if exploration.status != "done":
        raise RuntimeError(f"exploration {exploration.status}: {exploration.error}")
    result = exploration.result() or {}
    print(
        f"celery, {shards} shards, {count} worker(s): {wall:.2f}s, "
        f"{result.get('states')} states, peak {result.get('peak_mb')} MB"
    )
    return {
        "seconds": round(wall, 2),
        "states": result.get("states"),
        "peak_mb": result.get("peak_mb"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--faults", type=int, default=3, help="max_faults of the exploration")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument(
        "--rounds", type=int, default=1, help="Celery: pairs of runs, the median ratio reported"
    )
    parser.add_argument("--celery", action="store_true", help="only the Celery speed-up")
    parser.add_argument("--no-celery", action="store_true", help="leave the Celery part out")
    args = parser.parse_args()
    bounds = Bounds(max_faults=args.faults)
    if not args.celery:
        balance(load(FLIGHT), bounds, args.shards)
    if not args.no_celery:
        celery_speedup(FLIGHT, bounds, args.shards, args.rounds)


if __name__ == "__main__":
    main()
