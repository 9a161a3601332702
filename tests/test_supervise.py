"""The loop that keeps the Celery worker running (designer.supervise), on small commands."""

from __future__ import annotations

import signal
import subprocess
import sys

from designer.supervise import supervise

# Counts its runs in a file; fails until its third run.
FLAKY = """
import pathlib, sys
runs = pathlib.Path(sys.argv[1])
count = len(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text("x" * count)
sys.exit(0 if count == 3 else 1)
"""

# Says it started, then waits for SIGTERM and exits 3.
PATIENT = """
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
runs = pathlib.Path(sys.argv[1])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
time.sleep(60)
"""


def test_a_command_that_fails_is_started_again_until_it_succeeds(tmp_path):
    runs = tmp_path / "runs"
    code = supervise([sys.executable, "-c", FLAKY, str(runs)], first_pause=0.01)
    assert code == 0
    assert runs.read_text() == "xxx"


def test_a_command_killed_by_a_signal_is_started_again(tmp_path):
    runs = tmp_path / "runs"
    killed_first = f"{FLAKY.replace('sys.exit(0 if count == 3 else 1)', '')}\n" + (
        "import os, signal\nif count == 1: os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert supervise([sys.executable, "-c", killed_first, str(runs)], first_pause=0.01) == 0
    assert runs.read_text() == "xx"


def test_a_stop_signal_is_passed_on_and_ends_the_loop(tmp_path, wait_until):
    runs = tmp_path / "runs"
    loop = subprocess.Popen(
        [sys.executable, "-m", "designer.supervise", sys.executable, "-c", PATIENT, str(runs)]
    )
    try:
        wait_until(runs.exists, timeout=20)
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(timeout=20) == 3
    finally:
        loop.kill()
    assert runs.read_text() == "x"
