"""Real `celery worker` processes for the benches that compare one worker with two
(bench/explore_shards.py, bench/harness_celery.py).

This drives real `celery worker` processes, started and stopped here by pid,
through the configured broker and database (Redis and PostgreSQL when the
environment says so). With the default filesystem broker a run gets a queue
folder of its own under var/bench/, so a `make run` worker or a test run on
this machine neither steals its tasks nor feeds it theirs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["private_broker", "start_celery_worker", "stop", "wait_ready"]

# A worker process: the Celery app as configured, with the bench's broker folders.
_WORKER = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
from designer.celery import app
if os.environ.get("BENCH_BROKER_OPTIONS"):
    app.conf.broker_transport_options = json.loads(os.environ["BENCH_BROKER_OPTIONS"])
app.worker_main(sys.argv[1:])
"""


def private_broker(app: Any, folder: Path) -> None:
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


def start_celery_worker(name: str, log: Path) -> subprocess.Popen:
    """One `celery worker --pool=solo` process that takes one shard at a time."""
    command = [
        sys.executable, "-c", _WORKER, "worker",
        "--pool=solo", "--prefetch-multiplier=1", "-O", "fair",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--loglevel=INFO", f"--hostname={name}@%h", f"--logfile={log}",
    ]  # fmt: skip
    log.unlink(missing_ok=True)
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def wait_ready(workers: list[tuple[subprocess.Popen, Path]], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for process, log in workers:
        while not (log.exists() and " ready." in log.read_text(errors="replace")):
            if process.poll() is not None:
                raise RuntimeError(f"celery worker exited with {process.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"celery worker not ready after {timeout}s; see {log}")
            time.sleep(0.2)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)  # warm shutdown
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
