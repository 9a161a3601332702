"""Harness schedules run by one Celery worker process, then by two: the wall times and the ratio.

The careful sample client (fixtures/harness/careful_client.py) is put through
every schedule of ``fixtures/harness/booking.yaml`` up to ``--faults`` faults,
against the sample provider started once for the bench, each run sent to the
workers as ``manage.py chain harness --celery`` sends it
(``chains.harness_schedule``), ``--in-flight`` runs at a time. Each worker is
a real `celery worker --pool=solo` process (one run at a time), started and
stopped here by pid, with a broker folder of its own (bench/_celery.py). The
time counts from the first run sent to the last result back, workers ready
before. Target (issue 40): two workers at least 1.8x as fast as one.

    .venv/bin/python bench/harness_celery.py [--faults 1] [--in-flight 8] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _celery import private_broker, start_celery_worker, stop, wait_ready

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "harness"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=1)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings

    from chains.core import formats
    from chains.core.sim.schedules import schedules
    from chains.harness.runner import Client, Target, provider_started, run_schedules
    from chains.tasks import harness_schedule
    from designer.celery import app

    folder = Path(settings.VAR_DIR) / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        private_broker(app, folder / "harness-broker")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    spec = formats.load((SAMPLES / "booking.yaml").read_bytes(), filename="booking.yaml").chains[0]
    found = schedules(spec, args.faults)
    client = Client(
        [sys.executable, str(SAMPLES / "careful_client.py")], {"CLIENT_TIMEOUT": "1"}, timeout=60
    )
    ratios = []
    with provider_started([sys.executable, str(SAMPLES / "provider.py"), "--port", "0"]) as url:
        target = Target(url, hold_seconds=1.2)
        for n in range(args.rounds):
            order = (1, 2) if n % 2 == 0 else (2, 1)  # neither side always runs first
            seconds = {}
            for count in order:
                logs = [folder / f"harness-worker-{count}-{i}.log" for i in range(count)]
                workers = [
                    (start_celery_worker(f"harness{count}-{i}", log), log)
                    for i, log in enumerate(logs)
                ]
                try:
                    wait_ready(workers)
                    with tempfile.TemporaryDirectory(prefix="harness-bench-") as out:
                        started = time.perf_counter()
                        results = run_schedules(
                            spec,
                            found,
                            client,
                            target,
                            Path(out),
                            jobs=args.in_flight,
                            send=harness_schedule.delay,
                        )
                        seconds[count] = time.perf_counter() - started
                finally:
                    for process, _ in workers:
                        stop(process)
                clean = sum(1 for r in results if r.clean)
                print(
                    f"{count} worker(s): {len(results)} schedules in {seconds[count]:.1f} s "
                    f"({clean} clean)",
                    flush=True,
                )
            ratios.append(seconds[1] / seconds[2])
            print(f"speed-up of two workers over one: {ratios[-1]:.2f}x (target >= 1.8x)")
    if len(ratios) > 1:
        print(f"median speed-up over {len(ratios)} rounds: {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
