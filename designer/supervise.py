"""Keep the Celery worker running: ``python -m designer.supervise worker [OPTION ...]``.

The Celery worker retries a lost broker connection for ever (``designer.settings``),
but a worker can still exit on an error it does not count as a connection
error (kombu has had several on a Redis restart). ``make run`` and the
container's ``worker`` role (``deploy/entrypoint.sh``) therefore start it
under this loop: a command that exits non-zero, or is killed, is started
again after a pause that doubles from ``FIRST_PAUSE`` up to ``LONGEST_PAUSE``
and falls back once a run has lasted ``STEADY`` seconds. A command that exits
0 ends the loop, and so does SIGTERM or SIGINT, which is passed on to the
command first (Celery then finishes its tasks: a warm shutdown). What a
running worker left behind is taken back when the next one starts
(``chains.tasks.recover_on_start``).

``worker`` stands for :data:`WORKER`, the one definition of how the worker
runs: in worker processes (prefork), where Celery's time limits and the
memory cap per process hold (the solo pool enforces neither), and without
gossip and mingle, which the campaigns do not use (the database is their
shared state) and which are where kombu has failed on a lost connection.
Any other command is supervised as given.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["WORKER", "supervise"]

FIRST_PAUSE = 1.0  # seconds
LONGEST_PAUSE = 30.0
STEADY = 60.0  # a run this long counts as healthy: the next pause starts small again

WORKER = [
    sys.executable,
    *("-m", "celery", "-A", "designer", "worker"),
    *("--pool=prefork", "--without-gossip", "--without-mingle"),
]

logger = logging.getLogger("designer.supervise")


def supervise(
    command: Sequence[str],
    *,
    first_pause: float = FIRST_PAUSE,
    longest_pause: float = LONGEST_PAUSE,
    steady: float = STEADY,
) -> int:
    """Run ``command`` until it exits 0 or we are told to stop; its last exit code."""
    stopping = threading.Event()
    child: subprocess.Popen[Any] | None = None

    def stop(signum: int, frame: Any) -> None:
        stopping.set()
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    handlers = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        pause = first_pause
        while True:
            started = time.monotonic()
            child = subprocess.Popen(command)
            code = child.wait()
            if code == 0 or stopping.is_set():
                return code
            if time.monotonic() - started >= steady:
                pause = first_pause
            logger.warning("%s exited with %s; starting it again in %g s", command[0], code, pause)
            if stopping.wait(pause):
                return code
            pause = min(pause * 2, longest_pause)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def main(argv: Sequence[str] = sys.argv[1:]) -> int:
    if not argv:
        print("usage: python -m designer.supervise worker|COMMAND [ARGUMENT ...]", file=sys.stderr)
        return 2
    logging.basicConfig(format="[%(asctime)s: %(levelname)s/supervise] %(message)s")
    command = [*WORKER, *argv[1:]] if argv[0] == "worker" else list(argv)
    code = supervise(command)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
