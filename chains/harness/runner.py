"""Running a client under test once per schedule, through the fault proxy, and auditing it.

For each schedule (:mod:`chains.core.sim.schedules`) a fresh
:class:`~.proxy.FaultProxy` is put in front of the provider, and the
client's command is started with the proxy's base URL in its environment
(``PROVIDER_URL`` unless told otherwise) and a directory of its own in
``RUN_DIR``, where it may keep what it records. A ``kill_client`` fault
kills the client's whole process group right after the provider applied the
call; the client is then started again once, on the same ``RUN_DIR``, as a
process restarted after a crash would be. When the client exits (or runs
past its time and is stopped), the proxy's exchange log is written as the
run's HAR file and audited against the chain: clean, or the divergences
with where they show. Each run has its own port and directory, so runs may
go side by side (``jobs``).

The client is any command: nothing here knows its language. The harness
starts it with ``start_new_session`` so that killing it kills what it started.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chains.core import formats, traces
from chains.core.errors import DocumentError, Problem
from chains.core.model import ChainSpec
from chains.core.sim.audit import AuditResult, Divergence, audit, scenario_at
from chains.core.sim.schedules import Fault, Schedule
from chains.core.sim.session import encode

from .exchanges import Exchange
from .faults import DEFAULT_ERROR_BODY
from .proxy import FaultProxy
from .report import ScheduleResult

__all__ = [
    "Client",
    "Target",
    "job_of",
    "provider_started",
    "run_job",
    "run_schedule",
    "run_schedules",
]

_LISTENING = re.compile(r"https?://127\.0\.0\.1:\d+")


@dataclass(frozen=True)
class Client:
    """The client under test: a command, and how it is told where the provider is."""

    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    url_variable: str = "PROVIDER_URL"
    timeout: float = 60.0  # seconds one run may take, restarts included


@dataclass(frozen=True)
class Target:
    """The provider the proxy forwards to, and how the proxy speaks for it."""

    upstream: str
    error_body: Any = field(default_factory=lambda: DEFAULT_ERROR_BODY)
    hold_seconds: float = 5.0  # how long a ``timeout`` fault holds a call unanswered


def run_schedules(
    spec: ChainSpec,
    schedules: Iterable[Schedule],
    client: Client,
    target: Target,
    out: Path,
    *,
    jobs: int = 1,
    progress: Callable[[ScheduleResult], None] | None = None,
    send: Callable[[dict[str, Any]], Any] | None = None,
    wait: float = 3600.0,
) -> list[ScheduleResult]:
    """Every schedule run and audited (``jobs`` at a time), in the schedules' order; each
    run's files in ``out/<n>/``.

    With ``send``, each run is a job (:func:`job_of`) sent to workers (the
    Celery task ``chains.harness_schedule``: ``send`` returns what has a
    ``get(timeout=...)``), each of which must see the client, the provider and
    ``out``; ``jobs`` runs are waited for at a time.
    """
    listed = list(schedules)
    if jobs < 1:
        raise DocumentError([Problem(f"jobs: at least 1; got {jobs}")])
    document = formats.to_document(spec) if send is not None else None

    def one(numbered: tuple[int, Schedule]) -> ScheduleResult:
        n, schedule = numbered
        if send is not None:
            job = job_of(document, schedule, client, target, out / str(n))
            result = ScheduleResult.from_dict(send(job).get(timeout=wait))
        else:
            result = run_schedule(spec, schedule, client, target, out / str(n))
        result.trace = str(Path(str(n)) / "trace.har.json")
        if progress is not None:
            progress(result)
        return result

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, enumerate(listed)))


def job_of(
    document: Any, schedule: Schedule, client: Client, target: Target, workdir: Path
) -> dict[str, Any]:
    """One run as plain data, for a worker (:func:`run_job`)."""
    return {
        "chain": document,
        "schedule": schedule.as_dict(),
        "client": {
            "command": list(client.command),
            "env": dict(client.env),
            "url_variable": client.url_variable,
            "timeout": client.timeout,
        },
        "target": {
            "upstream": target.upstream,
            "error_body": target.error_body,
            "hold_seconds": target.hold_seconds,
        },
        "workdir": str(workdir.resolve()),
    }


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """A worker's side of :func:`job_of`: the run made and audited, as data."""
    spec = formats.from_document(job["chain"])
    schedule = Schedule.from_dict(job["schedule"])
    result = run_schedule(
        spec, schedule, Client(**job["client"]), Target(**job["target"]), Path(job["workdir"])
    )
    return result.as_dict()


def run_schedule(
    spec: ChainSpec, schedule: Schedule, client: Client, target: Target, workdir: Path
) -> ScheduleResult:
    """The client run once under ``schedule``, its exchanges kept in ``workdir`` and audited."""
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    process = _Process(client, workdir)
    with FaultProxy(
        spec,
        target.upstream,
        schedule.faults,
        on_kill=process.kill,
        hold_seconds=target.hold_seconds,
        error_body=target.error_body,
    ) as proxy:
        exit_code, problem = process.run(proxy.base_url)
        exchanges = proxy.exchanges()
        har = workdir / "trace.har.json"
        proxy.write_har(har)
    result = ScheduleResult(
        schedule,
        client_exit=exit_code,
        seconds=time.monotonic() - started,
        trace=str(har),
        exchanges=[_said(e) for e in exchanges],
        problem=problem,
    )
    try:
        reading = traces.read(har.read_text(encoding="utf-8"), spec, "har")
    except DocumentError as exc:
        result.problem = result.problem or f"the recorded trace does not read: {exc.problems[0]}"
        return result
    audited = audit(spec, reading)
    result.divergences = [_with_scenario(spec, audited, d) for d in audited.divergences]
    return result


def _with_scenario(spec: ChainSpec, audited: AuditResult, divergence: Divergence) -> dict[str, Any]:
    """The divergence as data, with the simulator's token of the run as it stood there
    (``scenario``: the app's harness page opens it), when the replay can say."""
    found = divergence.as_dict()
    try:
        scenario = scenario_at(spec, audited.replayed, divergence.seq)
    except DocumentError:
        return found
    found["scenario"] = encode(scenario)
    return found


class _Process:
    """The client's process: started, killed by a ``kill_client`` fault and started again
    once, stopped when it runs past its time."""

    def __init__(self, client: Client, workdir: Path):
        self.client = client
        self.workdir = workdir
        self.lock = threading.Lock()
        self.current: subprocess.Popen[bytes] | None = None
        self.killed = False

    def run(self, base_url: str) -> tuple[int | None, str]:
        deadline = time.monotonic() + self.client.timeout
        env = {
            **os.environ,
            **self.client.env,
            self.client.url_variable: base_url,
            "RUN_DIR": str(self.workdir),
        }
        for attempt in (1, 2):
            with self.lock:
                self.killed = False
                self.current = self._start(env, attempt)
            try:
                code = self.current.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._stop()
                return None, f"the client ran past {self.client.timeout:g} s and was stopped"
            if not self.killed:
                return code, ""
        return None, "the client was killed twice"  # a plan has one kill per call at most

    def _start(self, env: dict[str, str], attempt: int) -> subprocess.Popen[bytes]:
        with (
            open(self.workdir / f"client-{attempt}.out", "wb") as out,
            open(self.workdir / f"client-{attempt}.err", "wb") as err,
        ):
            try:
                return subprocess.Popen(
                    list(self.client.command),
                    env=env,
                    stdout=out,
                    stderr=err,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError as exc:
                raise DocumentError([Problem(f"the client cannot start: {exc}")]) from None

    def kill(self, fault: Fault) -> None:
        """The ``kill_client`` fault: the client dies after the provider applied the call."""
        with self.lock:
            self.killed = True
            self._stop()

    def _stop(self) -> None:
        process = self.current
        if process is not None and process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)


def _said(exchange: Exchange) -> str:
    """One line of the exchange log: the call, its step, what the client got, the fault."""
    path = exchange.url.split("://", 1)[-1].partition("/")[2]
    call = f"{exchange.method} /{path}"
    step = f" [{exchange.step} call {exchange.dispatch}]" if exchange.step else ""
    got = f"{exchange.response.status}" if exchange.response else "no answer"
    fault = f" ({exchange.fault})" if exchange.fault else ""
    return f"{call}{step}: {got}{fault}"


@contextmanager
def provider_started(command: Sequence[str], wait: float = 10.0) -> Iterator[str]:
    """A provider stand-in started from ``command``, which prints its base URL
    (``listening on http://127.0.0.1:PORT``) on its first line; stopped afterwards."""
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        line = _first_line(process, wait)
        found = _LISTENING.search(line)
        if found is None:
            raise DocumentError(
                [Problem(f"the provider printed no http://127.0.0.1:PORT address: {line!r}")]
            )
        yield found.group(0)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def _first_line(process: subprocess.Popen[bytes], wait: float) -> str:
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(wait)
    if not got:
        raise DocumentError([Problem(f"the provider said nothing in {wait:g} s")])
    return got[0].decode("utf-8", "replace").strip()
