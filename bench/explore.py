"""How fast the explorer walks the fixtures, and how a branch is best built.

Prints, for each fixture chain and max_faults 1 and 2: states, paths,
seconds and states per second (median of ``--runs``), then the time of a
``--max-faults 2`` exploration of ``fixtures/flight-roundtrip.yaml`` alone,
then the cost of building one branch two ways on the same states: copying the
parent run's snapshot (what the explorer does) against re-simulating the
scenario prefix from the start.

    .venv/bin/python bench/explore.py [--runs 3] [--shards 4]

Last, in the same run, the wall time of one sharded exploration of
``flight-roundtrip.yaml`` (``--celery-faults 3``, ``--celery-shards 8``) run by
one Celery worker process, then by two, and the speed-up (target >= 1.6x);
see :func:`celery_speedup`. ``--no-celery`` leaves that part out, ``--celery``
runs only that part.

    .venv/bin/python bench/explore.py [--no-celery | --celery] [--celery-faults 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.sim.explorer import Bounds, ExploreResult, _apply, _fork, _Search, explore, merge
from chains.core.sim.scenario import Scenario, simulate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NAMES = [
    "flight-roundtrip.yaml",
    "card-payment.yaml",
    "cloud-provisioning.yaml",
    "unsafe-retry-booking.yaml",
]


def load(name: str) -> ChainSpec:
    return formats.load((FIXTURES / name).read_text(), format="yaml").chains[0]


def timed(chain: ChainSpec, bounds: Bounds, runs: int) -> tuple[ExploreResult, float]:
    results = [explore(chain, bounds) for _ in range(runs)]
    return results[-1], statistics.median(r.seconds for r in results)


def branch_costs(chain: ChainSpec, samples: int = 300) -> tuple[float, float]:
    """Mean seconds per branch: copy-the-run versus re-simulate-the-prefix."""
    search = _Search(chain, Bounds(max_faults=1), None, None)
    queue = deque(search.start())
    nodes = []
    while queue and len(nodes) < samples:
        node = queue.popleft()
        nodes.append(node)
        queue.extend(search.expand(node))
    pairs = [(n, c) for n in nodes if n.path for c in search.choices(n.run)[:1]]
    started = time.perf_counter()
    for node, choice in pairs:
        _apply(chain, _fork(node.run), choice.event)
    copy = (time.perf_counter() - started) / len(pairs)
    intent, variant = search.roots[0]
    started = time.perf_counter()
    for node, choice in pairs:
        assert node.path is not None
        events = [*node.path.events(), choice.event]
        intent, variant = search.roots[node.root]
        data = {"intent": intent, "variant": variant, "events": events}
        simulate(chain, Scenario.model_validate(data, strict=False))
    again = (time.perf_counter() - started) / len(pairs)
    return copy, again


def run_sharded(
    chain: ChainSpec, bounds: Bounds, shards: int, map_fn: Callable[..., Any] = map
) -> ExploreResult:
    """Every shard through ``map_fn`` (``map`` here, Celery's group on the other side), merged."""
    return merge(list(map_fn(lambda i: explore(chain, bounds, shard=(i, shards)), range(shards))))


# --- Celery speed-up (issue target: two workers ≥ 1.6× one on a large exploration) ---
#
# Separate from the in-process measurements above: this drives real `celery worker`
# processes, started and stopped here by pid, through the configured broker and
# database (Redis and PostgreSQL when the environment says so). With the default
# filesystem broker the run gets a queue folder of its own under var/bench/, so a
# `make run` worker or a test run on this machine neither steals its shards nor
# feeds it theirs.

# A worker process: the Celery app as configured, with the bench's broker folders.
_WORKER = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
from designer.celery import app
if os.environ.get("BENCH_BROKER_OPTIONS"):
    app.conf.broker_transport_options = json.loads(os.environ["BENCH_BROKER_OPTIONS"])
app.worker_main(sys.argv[1:])
"""


def _private_broker(app: Any, folder: Path) -> None:
    """Point this process's app and the workers it starts at folders of their own."""
    options = dict(app.conf.broker_transport_options or {})
    for key, name in (
        ("data_folder_in", "queue"),
        ("data_folder_out", "queue"),
        ("processed_folder", "processed"),
        ("control_folder", "control"),
    ):
        (folder / name).mkdir(parents=True, exist_ok=True)
        options[key] = str(folder / name)
    app.conf.broker_transport_options = options
    os.environ["BENCH_BROKER_OPTIONS"] = json.dumps(options)  # inherited by the workers


def _start_celery_worker(name: str, log: Path) -> subprocess.Popen:
    """One `celery worker --pool=solo` process that takes one shard at a time."""
    command = [
        sys.executable, "-c", _WORKER, "worker",
        "--pool=solo", "--prefetch-multiplier=1", "-O", "fair",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--loglevel=INFO", f"--hostname={name}@%h", f"--logfile={log}",
    ]  # fmt: skip
    log.unlink(missing_ok=True)
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def _wait_ready(workers: list[tuple[subprocess.Popen, Path]], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for process, log in workers:
        while not (log.exists() and " ready." in log.read_text(errors="replace")):
            if process.poll() is not None:
                raise RuntimeError(f"celery worker exited with {process.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"celery worker not ready after {timeout}s; see {log}")
            time.sleep(0.2)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)  # warm shutdown
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def celery_speedup(
    chain_path: Path, bounds: Bounds, shards: int = 8, timeout: float = 3600
) -> dict[str, Any]:
    """Wall time of one exploration run by one Celery worker process, then by two; the ratio.

    The database is migrated and the chain stored as a revision first. Each
    run launches ``Exploration.objects.launch(revision, bounds, shards=shards)``
    once its workers are ready and stops the clock when the exploration has
    finished, so worker start-up is not counted. More shards than workers
    keeps both workers busy to the end when shards differ in size.
    """
    # The development configuration, as `make run` has it; the workers inherit it.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from chains.models import Chain, Exploration
    from designer.celery import app

    call_command("migrate", verbosity=0)
    loaded = formats.load(chain_path.read_bytes(), filename=chain_path.name)
    if not loaded.chains:
        raise SystemExit(f"no chain in {chain_path}: {[str(p) for p in loaded.problems]}")
    revision = Chain.objects.store(formats.to_document(loaded.chains[0]), message="bench")
    folder = Path(settings.VAR_DIR) / "bench"
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        _private_broker(app, folder / "broker")
    # A SIGTERM to this script still stops the workers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    runs: dict[int, dict[str, Any]] = {}
    for count in (1, 2):
        logs = [folder / f"worker{count}-{i}.log" for i in range(count)]
        workers = [
            (_start_celery_worker(f"bench{count}-{i}", log), log) for i, log in enumerate(logs)
        ]
        try:
            _wait_ready(workers)
            started = time.perf_counter()
            exploration = Exploration.objects.launch(revision, bounds, shards=shards)
            while exploration.finished_at is None:
                if time.perf_counter() - started > timeout:
                    exploration.cancel()
                    raise RuntimeError(f"exploration not finished after {timeout}s")
                time.sleep(0.1)
                exploration.refresh_from_db()
            wall = time.perf_counter() - started
        finally:
            for process, _ in workers:
                _stop(process)
        if exploration.status != "done":
            raise RuntimeError(f"exploration {exploration.status}: {exploration.error}")
        states = (exploration.result() or {}).get("states")
        runs[count] = {"seconds": round(wall, 2), "states": states}
        print(f"celery, {shards} shards, {count} worker(s): {wall:.2f}s, {states} states")
    speedup = runs[1]["seconds"] / runs[2]["seconds"]
    print(f"speed-up of two workers over one: {speedup:.2f}x (target >= 1.6x)")
    return {
        "chain": chain_path.name,
        "bounds": asdict(bounds),
        "shards": shards,
        "one_worker": runs[1],
        "two_workers": runs[2],
        "speedup": round(speedup, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument(
        "--celery",
        action="store_true",
        help="only the Celery speed-up: one worker process against two (see celery_speedup)",
    )
    parser.add_argument("--no-celery", action="store_true", help="leave the Celery part out")
    parser.add_argument("--celery-faults", type=int, default=3, help="max_faults of that run")
    parser.add_argument("--celery-shards", type=int, default=8, help="shards of that run")
    args = parser.parse_args()
    if not args.celery:
        in_process(args.runs, args.shards)
    if args.celery or not args.no_celery:
        print()
        celery_speedup(
            FIXTURES / "flight-roundtrip.yaml",
            Bounds(max_faults=args.celery_faults),
            args.celery_shards,
        )


def in_process(runs: int, shards: int) -> None:
    """States per second on every fixture, the flight time, shards, and branch costs."""
    print(f"{'fixture':28} {'faults':>6} {'states':>8} {'paths':>8} {'seconds':>8} {'states/s':>9}")
    for name in NAMES:
        chain = load(name)
        for faults in (1, 2):
            result, seconds = timed(chain, Bounds(max_faults=faults), runs)
            rate = result.states / seconds if seconds else float("inf")
            print(
                f"{name:28} {faults:>6} {result.states:>8} {result.paths:>8} "
                f"{seconds:>8.2f} {rate:>9.0f}"
                + (f"  violations: {len(result.violations)}" if result.violations else "")
            )
    flight = load("flight-roundtrip.yaml")
    bounds = Bounds(max_faults=2)
    _, seconds = timed(flight, bounds, runs)
    print(f"\nflight-roundtrip --max-faults 2: {seconds:.2f}s (median of {runs})")
    started = time.perf_counter()
    sharded = run_sharded(flight, bounds, shards)
    serial = time.perf_counter() - started
    print(
        f"{shards} shards one after another: {serial:.2f}s in all, "
        f"{sharded.states} states after merge (overhead of the shared first levels included)"
    )
    for name in ("flight-roundtrip.yaml", "card-payment.yaml"):
        copy, again = branch_costs(load(name))
        print(
            f"\nbranch cost, {name}: copy the run {copy * 1e3:.2f} ms, "
            f"re-simulate the prefix {again * 1e3:.2f} ms ({again / copy:.0f}x)"
        )


if __name__ == "__main__":
    main()
