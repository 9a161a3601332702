"""Celery tasks: thin wrappers that take ids and call the core.

Each task claims its work with a conditional update (``ExplorationShard.objects.claim``),
so a duplicate or late message does nothing, and writes its progress back to
the database; the search is ``chains.core.sim.explorer`` and the bookkeeping
is verbs on the models. A worker that starts recovers every active
exploration (``Exploration.recover``), so work a dead worker abandoned or a
message the broker lost resumes without anyone opening a page.

The dependency goes one way: this module imports ``chains.models``, never the
reverse. The models send a shard's task through the function given to
``chains.models.connect_queue``; the app connects :func:`send_shard` when
Django starts (``chains.apps.ChainsConfig.ready``).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import task_failure, worker_ready

from chains.core import formats
from chains.core.sim.explorer import explore
from chains.harness.runner import run_job
from chains.models import (
    HEARTBEAT_EVERY,
    STALE_AFTER,
    Exploration,
    ExplorationShard,
    Notification,
)
from chains.models.campaigns import dispatch, hard_time_limit, soft_time_limit

__all__ = [
    "explore_shard",
    "hard_time_limit",
    "queue_mail",
    "resend_after_reconnect",
    "send_mail",
    "send_shard",
    "soft_time_limit",
]

logger = logging.getLogger(__name__)


@shared_task(name="chains.harness_schedule")
def harness_schedule(job: dict[str, Any]) -> dict[str, Any]:
    """One run of a client under one fault schedule (``manage.py chain harness --celery``):
    the job is plain data (``chains.harness.runner.job_of``), the answer the run's result.
    An operator starts these from the shell; no page or API ever sends one."""
    return run_job(job)


@shared_task(name="chains.ping")
def ping() -> str:
    """Health check: answers "pong" once a worker has taken it off the broker."""
    return "pong"


class _Pulse:
    """The explorer's callbacks: count states, and beat to the database at most every ``every`` s.

    The beat both records progress and asks whether to go on, so a cancel is
    seen within about ``every`` seconds and never costs a query per state.
    """

    def __init__(self, shard: ExplorationShard, every: float = HEARTBEAT_EVERY) -> None:
        self.shard = shard
        self.every = every
        self.states = 0
        self.stopped = False
        self.last = time.monotonic()

    def progress(self, states: int) -> None:
        self.states = states
        self._beat()

    def should_stop(self) -> bool:
        self._beat()
        return self.stopped

    def _beat(self) -> None:
        now = time.monotonic()
        if not self.stopped and now - self.last >= self.every:
            self.last = now
            self.stopped = not self.shard.beat(self.states)


# acks_late: a worker takes its next shard only after finishing this one, so
# shards spread over workers instead of queueing behind a busy one.
# The explorer stops itself at CAMPAIGN_TIME_LIMIT; past it, Celery's soft limit
# interrupts the search (the result so far is stored, "stopped by time"), and its
# hard limit kills the process (the shard then fails as timed out: fail_timed_out_shard,
# or the next recovery).
# They are read once, when the worker imports this module.
@shared_task(
    bind=True,
    name="chains.explore_shard",
    acks_late=True,
    ignore_result=True,  # the shard's row holds it; sending never waits on a result store
    soft_time_limit=soft_time_limit(),
    time_limit=hard_time_limit(),
)
def explore_shard(self, exploration_id: int, index: int) -> str:
    """Run one shard of an exploration; the worker that settles the last shard merges them.

    Every send goes through :func:`chains.models.campaigns.dispatch`, which
    this shard's end calls again to send the next one.
    """
    shard = ExplorationShard.objects.claim(
        exploration_id, index, worker=self.request.hostname or "local"
    )
    if shard is None:
        return "skipped"
    exploration = shard.exploration
    pulse = _Pulse(shard)
    try:
        result = explore(
            formats.from_document(exploration.revision.document),
            exploration.get_bounds(),
            shard=(index, exploration.shard_count),
            claim=shard.part_claims(),
            should_stop=pulse.should_stop,
            progress=pulse.progress,
            time_up=(SoftTimeLimitExceeded,),
            exchange=shard.state_exchange(),
            split_into=shard.cut_into,
        )
    except Exception as exc:
        logger.exception("exploration %s shard %s failed", exploration_id, index)
        shard.fail(f"{type(exc).__name__}: {exc}")
        return "failed"
    shard.finish(result, stopped=pulse.stopped)
    return "stopped" if pulse.stopped else "done"


@task_failure.connect(sender=explore_shard)
def fail_timed_out_shard(
    sender: Any = None, exception: BaseException | None = None, args: Any = None, **kwargs: Any
) -> None:
    """A shard whose process the hard time limit killed fails at once, as timed out.

    Celery reports the kill from the worker's main process; recovery
    (``ShardQuerySet.time_out``) catches the same shard later should this miss it.
    """
    if isinstance(exception, TimeLimitExceeded) and args:
        ExplorationShard.objects.timed_out(*args)


def send_shard(exploration_id: int, index: int) -> None:
    """Queue the task that runs one shard: what the models send through ``connect_queue``."""
    explore_shard.delay(exploration_id, index)


@shared_task(name="chains.reap_explorations", ignore_result=True)
def reap_explorations() -> int:
    """Take back shards whose worker went silent (queue them again or fail them); how many."""
    return len(ExplorationShard.objects.reap())


@shared_task(name="chains.recover_explorations", ignore_result=True)
def recover_explorations() -> int:
    """Recover every active exploration (``Exploration.recover``); how many shards it touched."""
    return Exploration.objects.recover()


@worker_ready.connect
def recover_on_start(sender: Any = None, **kwargs: Any) -> None:
    """A starting worker resumes what a dead one left, now and once more after ``STALE_AFTER``.

    Now: shards silent for long are reaped and lost messages re-sent. A worker
    that died a moment ago still looks alive (its shards are not stale yet),
    so one more recovery is queued for when they will be. A failure here is
    logged, never fatal: the campaign pages recover on every poll as well.
    """
    try:
        Exploration.objects.recover()
        recover_explorations.apply_async(countdown=STALE_AFTER.total_seconds() + 5)
    except Exception:
        logger.exception("could not recover explorations at worker start")
    _send_waiting_mail()


def resend_after_reconnect() -> None:
    """After the worker lost its broker and found it again: send anew what may be lost.

    A broker restarted without persistence forgets every message it held, so
    each shard sent but not yet claimed gets its task again now rather than
    after ``STALE_AFTER``; where nothing was lost, the duplicate is skipped by
    the claim. Called by ``designer.celery.Reconnected``; a failure is logged.
    """
    try:
        resent = ExplorationShard.objects.resend(stale_after=timedelta(0))
        dispatch()
    except Exception:
        logger.exception("could not send lost shards again after reconnecting")
    else:
        logger.info("connected again: sent %d shard(s) anew", len(resent))
    _send_waiting_mail()


# --- e-mail -------------------------------------------------------------------------

# Pauses between the tries of a send that failed: 30 s, 1, 2, 4 min, then 8 min.
MAIL_RETRY_FIRST = 30  # seconds
MAIL_RETRY_LONGEST = 8 * 60


@shared_task(bind=True, name="chains.send_mail", ignore_result=True, max_retries=None)
def send_mail(self) -> int:
    """Send every mail waiting in the outbox (``Notification.objects.mail``); how many went.

    When one fails (the server is down, or hangs past EMAIL_TIMEOUT), the task
    runs again later with a longer pause, until nothing is left to try: each
    mail stops after its own ``MAIL_ATTEMPTS``.
    """
    sent, failed = Notification.objects.mail()
    if failed and Notification.objects.unmailed().exists():
        pause = min(MAIL_RETRY_FIRST * 2**self.request.retries, MAIL_RETRY_LONGEST)
        raise self.retry(countdown=pause)
    return sent


def queue_mail() -> None:
    """Queue :func:`send_mail`: what the models call once a notification to mail commits."""
    send_mail.delay()


def _send_waiting_mail() -> None:
    """Queue the mails a queue that was down could not take (a starting or reconnected worker)."""
    try:
        if Notification.objects.unmailed().exists():
            send_mail.delay()
    except Exception:
        logger.exception("could not queue the waiting mails")
