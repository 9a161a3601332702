"""Campaigns: an Exploration is a model-checker run over one revision, cut into shards.

Celery workers claim shards with conditional updates (the rows are the lock,
so it works the same on SQLite and PostgreSQL). Shards are not all sent to the
broker at launch: :func:`dispatch` sends the next ones whenever one ends, at
most ``CAMPAIGN_TEAM_SHARDS`` per team at a time and from the team's first
``CAMPAIGN_TEAM_CAMPAIGNS`` active campaigns, taking turns between teams. So
the broker's queue never holds a big campaign's every shard ahead of another
team's small one, with the filesystem broker and Redis alike. The search itself is
``chains.core.sim.explorer``; this module only records who runs what, how far
it got, and the merged result.

The dependency goes one way: ``chains.tasks`` imports this module, and this
module never imports ``chains.tasks``. How a shard's task reaches the queue is
a hook: :func:`connect_queue` takes the function that sends it, and the app
connects ``chains.tasks.send_shard`` when Django starts
(``chains.apps.ChainsConfig.ready``). Until something is connected, a launch
fails with :class:`QueueDown` like one the broker refuses.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, models, transaction
from django.db.models import F, Q
from django.utils import timezone

from chains.core.sim.explorer import Bounds, ExploreResult, merge, pack_states, unpack_states
from chains.core.sim.search import Exchange
from chains.models.chains import Revision
from chains.models.errors import QueueDown


class ExplorationStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE = (ExplorationStatus.QUEUED, ExplorationStatus.RUNNING)

# A running shard beats at least this often while the explorer calls back...
HEARTBEAT_EVERY = 0.5  # seconds
# ...so one silent for this long belongs to a worker that died or hangs.
STALE_AFTER = timedelta(minutes=2)
# Claims per shard before a stale one fails the exploration instead of going back in the queue.
MAX_ATTEMPTS = 2
MAX_SHARDS = 256
# Celery's limits on a shard's task, past the explorer's own time cap (CAMPAIGN_TIME_LIMIT):
# the soft one ends the search with what it found, the hard one kills the process.
TIME_LIMIT_GRACE = 30  # seconds
WAITING_FOR_TEAM = "waiting for the team's earlier campaigns"
_TIMED_OUT = "timed out: ran past the hard time limit of {} s"

logger = logging.getLogger(__name__)


def soft_time_limit() -> int:
    """Seconds after which Celery interrupts a shard's search (it then stores what it found)."""
    return settings.CAMPAIGN_TIME_LIMIT + TIME_LIMIT_GRACE


def hard_time_limit() -> int:
    """Seconds after which Celery kills a shard's process; recovery then fails the shard."""
    return soft_time_limit() + TIME_LIMIT_GRACE


# What sends one shard's task, as (exploration id, shard index); set by connect_queue().
_send_shard: Callable[[int, int], None] | None = None


def connect_queue(send: Callable[[int, int], None]) -> None:
    """Send every shard task through ``send(exploration_id, index)`` from now on.

    The app connects ``chains.tasks.send_shard`` at start-up; this is the only
    way the models reach the task queue, so they never import ``chains.tasks``.
    """
    global _send_shard
    _send_shard = send


def dispatch() -> tuple[list[ExplorationShard], list[tuple[ExplorationShard, Exception]]]:
    """Send the tasks of the shards whose turn it is (:func:`_turns`); those sent, those refused.

    Called after a launch commits, whenever a shard ends, on cancel, and by
    every recovery, so nothing waits for a turn that never comes. Each send
    is claimed with a conditional update on ``sent_at``, so callers racing
    here send a shard once (they may briefly let a team exceed its limit by
    one). A send the broker refuses leaves the shard waiting for the next
    dispatch.
    """
    now = timezone.now()
    sent, refused = [], []
    for pk in _turns():
        mine = ExplorationShard.objects.filter(
            pk=pk, status=ExplorationStatus.QUEUED, sent_at__isnull=True
        )
        if not mine.update(sent_at=now, queued_at=now):
            continue
        shard = ExplorationShard.objects.get(pk=pk)
        try:
            shard.enqueue()
        except Exception as exc:  # kombu's OperationalError, or whatever the transport raises
            logger.warning("could not send %s: %s", shard, exc)
            ExplorationShard.objects.filter(pk=pk, sent_at=now).update(sent_at=None)
            refused.append((shard, exc))
        else:
            sent.append(shard)
    return sent, refused


def _turns() -> list[int]:
    """The shards to send now, in order, as pks.

    A team may have ``CAMPAIGN_TEAM_SHARDS`` shards sent or running at once,
    taken from its first ``CAMPAIGN_TEAM_CAMPAIGNS`` active campaigns in
    launch order (the later ones wait). Teams take turns, the least busy
    first, so a shard of another team goes before a big campaign's next one.
    Chains without a team count as one team.
    """
    active = Exploration.objects.filter(status__in=ACTIVE).order_by("created_at", "pk")
    team_of = dict(active.values_list("pk", "revision__chain__team"))
    order = {pk: i for i, pk in enumerate(team_of)}  # launch order (dicts keep it)
    launched: Counter[Any] = Counter()
    admitted = set()
    for pk, team in team_of.items():
        launched[team] += 1
        if launched[team] <= settings.CAMPAIGN_TEAM_CAMPAIGNS:
            admitted.add(pk)
    busy: Counter[Any] = Counter()
    waiting: dict[Any, list[tuple[int, int, int]]] = {}
    shards = ExplorationShard.objects.filter(exploration__in=list(team_of), status__in=ACTIVE)
    fields = ("pk", "exploration", "index", "status", "sent_at")
    for pk, exploration, index, status, sent_at in shards.values_list(*fields):
        team = team_of[exploration]
        if status == ExplorationStatus.RUNNING or sent_at is not None:
            busy[team] += 1
        elif exploration in admitted:
            waiting.setdefault(team, []).append((order[exploration], index, pk))
    for queue in waiting.values():
        queue.sort(reverse=True)  # the next one last, to pop
    turns = []
    limit = settings.CAMPAIGN_TEAM_SHARDS
    while open_teams := [t for t, queue in waiting.items() if queue and busy[t] < limit]:
        team = min(open_teams, key=lambda t: (busy[t], waiting[t][-1]))
        busy[team] += 1
        turns.append(waiting[team].pop()[2])
    return turns


class ExplorationQuerySet(models.QuerySet):
    def launch(
        self,
        revision: Revision,
        bounds: Bounds | dict[str, Any] | None = None,
        *,
        shards: int = 1,
        by: Any = None,
    ) -> Exploration:
        """Create an exploration of ``revision`` in ``shards`` parts and queue one task per part.

        ``by`` is who launched it (the service always says; None only for the
        tools that launch on nobody's behalf).

        The tasks are sent once the surrounding transaction commits, so a worker
        never looks for rows it cannot see yet. When the broker refuses them,
        the exploration is failed at once and :class:`QueueDown` raised (out of
        the commit): a launch never leaves a campaign queued that no worker
        will ever hear of.
        """
        if isinstance(bounds, dict):
            bounds = Bounds(**bounds)
        bounds = bounds or Bounds()
        if not 1 <= shards <= MAX_SHARDS:
            raise ValueError(f"shards must be between 1 and {MAX_SHARDS}, got {shards}")
        with transaction.atomic():
            exploration = self.create(
                revision=revision, bounds=asdict(bounds), shard_count=shards, author=by
            )
            ExplorationShard.objects.bulk_create(
                ExplorationShard(exploration=exploration, index=i) for i in range(shards)
            )
            transaction.on_commit(exploration.enqueue)
        return exploration

    def recover(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> int:
        """:meth:`Exploration.recover` for each active exploration here; shards it touched.

        A worker runs it for all of them when it starts (``chains.tasks``), so a
        restarted worker resumes abandoned work without anyone opening a page.
        """
        return sum(
            exploration.recover(stale_after, max_attempts)
            for exploration in self.filter(status__in=ACTIVE)
        )


class Exploration(models.Model):
    """A model-checker run over one revision, split into shards that workers claim.

    Status moves queued → running → done, or to failed / cancelled; ``finished_at``
    is set once, by whoever settles the last shard, and with it ``merged``.

    Nothing here depends on a worker staying alive or a message arriving: a
    shard whose worker went silent is taken back, and a shard whose message
    was lost is sent again, whenever someone looks (:meth:`recover`, called by
    every view and poll of the campaign page) and whenever a worker starts.
    So an exploration ends done, failed or cancelled; it is never left running.
    """

    Status = ExplorationStatus

    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="explorations")
    # Who launched it; None for campaigns from before authors were recorded, or a deleted account.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="campaigns",
    )
    bounds = models.JSONField()
    shard_count = models.PositiveSmallIntegerField()
    # How many parts of the split level its shards have taken (ExplorationShard.part_claims).
    parts_dealt = models.PositiveIntegerField(default=0)
    # How many parts the split level has, once a shard has cut it (ExplorationShard.cut_into):
    # a shard that starts when all are taken walks nothing.
    parts_total = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=ExplorationStatus.choices, default=ExplorationStatus.QUEUED
    )
    merged = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ExplorationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"exploration {self.pk} of {self.revision} ({self.status})"

    def get_bounds(self) -> Bounds:
        return Bounds(**self.bounds)

    def enqueue(self) -> None:
        """Send the shards whose turn it is (:func:`dispatch`); fail this exploration if refused.

        Raises :class:`QueueDown` with the reason the exploration now carries
        when the broker refused one of its shards. Tasks already sent before
        the refusal find the exploration failed and are skipped.
        """
        refused = [exc for shard, exc in dispatch()[1] if shard.exploration_id == self.pk]
        if refused:
            exc = refused[0]
            reason = f"the worker queue is down: {type(exc).__name__}: {exc}"
            self.fail(reason)
            self.refresh_from_db()
            raise QueueDown(reason) from exc

    def waiting(self) -> str | None:
        """Why a queued exploration has not started: its team runs as many as it may."""
        if self.status != ExplorationStatus.QUEUED:
            return None
        earlier = Exploration.objects.filter(
            Q(created_at__lt=self.created_at) | Q(created_at=self.created_at, pk__lt=self.pk),
            status__in=ACTIVE,
            revision__chain__team=self.revision.chain.team_id,
        )
        return WAITING_FOR_TEAM if earlier.count() >= settings.CAMPAIGN_TEAM_CAMPAIGNS else None

    def recover(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> int:
        """Take back what a dead worker or a lost message left; how many shards it touched.

        - A running shard silent for longer than ``stale_after`` is reaped
          (:meth:`ShardQuerySet.reap`): queued again with a fresh task while it
          has attempts left, else failed, and the exploration with it, with a
          reason naming the silent worker.
        - A running shard claimed longer ago than Celery's hard time limit
          is failed as timed out (:meth:`ShardQuerySet.time_out`): its process
          was killed, however recently it beat.
        - A shard sent for longer than ``stale_after`` (since its dispatch,
          its last requeue or its last re-send) gets its task sent again
          (:meth:`ShardQuerySet.resend`): the message was probably lost, and a
          duplicate is skipped by the claim.

        Both are conditional updates, so any number of pages polling at once
        (and a starting worker) do each at most once per shard per
        ``stale_after``. A finished exploration is left alone.
        """
        if self.status not in ACTIVE:
            return 0
        touched = len(self.shards.time_out())
        touched += len(self.shards.reap(stale_after, max_attempts))
        touched += len(self.shards.resend(stale_after))
        dispatch()
        if touched:
            self.refresh_from_db()
        return touched

    def cancel(self) -> bool:
        """Stop the exploration: queued shards never start, running ones stop at their next beat.

        Returns False when it had already finished. The partial results of the
        shards that ran are merged (and marked truncated) once the last one stops.
        """
        won = Exploration.objects.filter(pk=self.pk, status__in=ACTIVE).update(
            status=ExplorationStatus.CANCELLED
        )
        self.shards.filter(status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.CANCELLED, finished_at=timezone.now()
        )
        self.settle()
        self.refresh_from_db()
        dispatch()  # the team's next campaign may start
        return bool(won)

    def fail(self, reason: str) -> bool:
        """Mark the exploration failed; its running shards stop at their next beat."""
        won = Exploration.objects.filter(pk=self.pk, status__in=ACTIVE).update(
            status=ExplorationStatus.FAILED, error=reason
        )
        self.shards.filter(status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.CANCELLED, finished_at=timezone.now()
        )
        self.settle()
        dispatch()
        return bool(won)

    def settle(self) -> bool:
        """Finish the exploration once no shard is queued or running; True for the caller that did.

        Every shard calls this after its own terminal update, so several may
        race here; the conditional update on ``finished_at`` lets exactly one
        of them write the merged result.
        """
        if self.shards.filter(status__in=ACTIVE).exists():
            return False
        self.exchanged.all().delete()  # no shard is left to read them
        results = [
            ExploreResult.from_dict(data)
            for data in self.shards.order_by("index").values_list("result", flat=True)
            if data is not None
        ]
        for _ in range(3):  # a cancel or failure may land between the read and the update
            status = Exploration.objects.values_list("status", flat=True).get(pk=self.pk)
            final = ExplorationStatus.DONE if status in ACTIVE else status
            merged = merge(results) if results else None
            if merged is not None and final != ExplorationStatus.DONE:
                merged.truncated = True
            won = Exploration.objects.filter(
                pk=self.pk, status=status, finished_at__isnull=True
            ).update(
                status=final,
                merged=merged.as_dict() if merged is not None else None,
                finished_at=timezone.now(),
            )
            if won:
                return True
            if Exploration.objects.filter(pk=self.pk, finished_at__isnull=False).exists():
                return False
        return False

    def progress(self) -> dict[str, Any]:
        """Where the exploration stands, for a page or the API to poll."""
        shards = list(self.shards.order_by("index"))
        cap = self.get_bounds().max_states
        return {
            "id": self.pk,
            "author": self.author.get_username() if self.author else None,
            "status": self.status,
            "shard_count": self.shard_count,
            "shards_done": sum(s.status == ExplorationStatus.DONE for s in shards),
            # Each running shard writes its states at every beat, so states move while
            # shards do not (one shard, the default, is done only at the end).
            "states": sum(s.states for s in shards),
            "states_max": cap * self.shard_count if cap else None,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "error": self.error,
            "waiting": self.waiting(),
            "shards": [s.progress() for s in shards],
        }

    def result(self) -> dict[str, Any] | None:
        """The merged result (``ExploreResult.as_dict()``) once finished, else None."""
        return self.merged

    def elapsed(self) -> timedelta | None:
        """How long it has run (until it finished); None if no worker ever started it."""
        if self.started_at is None:
            return None
        return (self.finished_at or timezone.now()) - self.started_at


class ShardQuerySet(models.QuerySet):
    def claim(self, exploration_id: int, index: int, worker: str) -> ExplorationShard | None:
        """Take a queued shard for ``worker``; None when another worker has it or it is over.

        The conditional update is the lock: of two workers claiming the same
        shard, only one changes a row. Each claim gets its own token in
        ``claimed_by``, so a worker whose stale claim was taken back cannot
        write over its successor.

        The exploration is tested with ``exploration__in`` (a subquery on the
        other table), never ``exploration__status`` (a join): Django turns a
        joined UPDATE into ``WHERE id IN (SELECT ...)``, and PostgreSQL does not
        re-evaluate that subquery for a row a concurrent claim just changed,
        so both claims would win.
        """
        now = timezone.now()
        token = f"{worker}/{uuid.uuid4().hex[:8]}"
        won = self.filter(
            exploration_id=exploration_id,
            index=index,
            status=ExplorationStatus.QUEUED,
            exploration__in=Exploration.objects.filter(status__in=ACTIVE),
        ).update(
            status=ExplorationStatus.RUNNING,
            claimed_by=token,
            claimed_at=now,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            states=0,
        )
        if not won:
            return None
        Exploration.objects.filter(pk=exploration_id, status=ExplorationStatus.QUEUED).update(
            status=ExplorationStatus.RUNNING, started_at=now
        )
        return self.select_related("exploration__revision").get(
            exploration_id=exploration_id, index=index, claimed_by=token
        )

    def stale(self, stale_after: timedelta = STALE_AFTER) -> ShardQuerySet:
        """Running shards whose worker has not beaten for longer than ``stale_after``."""
        return self.filter(
            status=ExplorationStatus.RUNNING, heartbeat_at__lt=timezone.now() - stale_after
        )

    def time_out(self) -> list[ExplorationShard]:
        """Fail each running shard claimed before the hard time limit, and its campaign."""
        overdue = self.filter(
            status=ExplorationStatus.RUNNING,
            claimed_at__lt=timezone.now() - timedelta(seconds=hard_time_limit()),
        ).select_related("exploration")
        return [shard for shard in overdue if shard.fail(_TIMED_OUT.format(hard_time_limit()))]

    def timed_out(self, exploration_id: int, index: int) -> bool:
        """Fail the running shard whose process Celery's hard time limit killed; False if none."""
        running = self.filter(status=ExplorationStatus.RUNNING).select_related("exploration")
        shard = running.filter(exploration_id=exploration_id, index=index).first()
        return shard is not None and shard.fail(_TIMED_OUT.format(hard_time_limit()))

    def reap(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> list[ExplorationShard]:
        """Take back every stale shard: queue it again, or fail it once it used its attempts."""
        return [
            shard
            for shard in self.stale(stale_after).select_related("exploration")
            if shard.reclaim(stale_after, max_attempts)
        ]

    def lost(self, stale_after: timedelta = STALE_AFTER) -> ShardQuerySet:
        """Shards of active explorations queued for longer than ``stale_after``.

        No worker claimed them in that time: their message was probably lost
        (a broker restarted without persistence, a send that failed after the
        commit), or they wait behind long shards, which a duplicate does not harm.
        """
        return self.filter(
            status=ExplorationStatus.QUEUED,
            sent_at__isnull=False,
            queued_at__lt=timezone.now() - stale_after,
            exploration__in=Exploration.objects.filter(status__in=ACTIVE),
        )

    def resend(self, stale_after: timedelta = STALE_AFTER) -> list[ExplorationShard]:
        """Send the task of every lost shard again; the shards it sent.

        Safe because the claim is a conditional update: of two messages for one
        shard the second is skipped. Moving ``queued_at`` forward is itself
        conditional, so of several callers at once only one sends, and a shard
        gets at most one new message per ``stale_after``. A send the broker
        refuses is logged; the next recovery tries again.
        """
        now = timezone.now()
        sent = []
        for shard in self.lost(stale_after):
            won = ExplorationShard.objects.filter(
                pk=shard.pk, status=ExplorationStatus.QUEUED, queued_at=shard.queued_at
            ).update(queued_at=now)
            if won:
                transaction.on_commit(shard.enqueue, robust=True)
                sent.append(shard)
        return sent


class ExplorationShard(models.Model):
    """One part of an exploration (``explore(..., shard=(index, count))``) and who runs it."""

    exploration = models.ForeignKey(Exploration, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=10, choices=ExplorationStatus.choices, default=ExplorationStatus.QUEUED
    )
    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When it last went into the queue (launch, requeue, re-send): how long it has waited.
    queued_at = models.DateTimeField(default=timezone.now)
    # When its task was last sent to the broker; None while it waits for its turn (dispatch).
    sent_at = models.DateTimeField(null=True, blank=True)
    states = models.PositiveIntegerField(default=0)
    # The parts of the split level it took, in order; searched again if it runs again.
    parts = models.JSONField(default=list, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ShardQuerySet.as_manager()

    class Meta:
        ordering = ["exploration", "index"]
        constraints = [
            models.UniqueConstraint(fields=["exploration", "index"], name="unique_shard_index")
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="shard_status_heartbeat")]

    def __str__(self) -> str:
        return f"shard {self.index} of exploration {self.exploration_id}"

    def _mine(self) -> ShardQuerySet:
        """This shard, only while it is still running under this claim."""
        return ExplorationShard.objects.filter(
            pk=self.pk, status=ExplorationStatus.RUNNING, claimed_by=self.claimed_by
        )

    def enqueue(self) -> None:
        """Send this shard's task through the connected queue (:func:`connect_queue`)."""
        if _send_shard is None:
            raise RuntimeError("no task queue is connected (chains.models.connect_queue)")
        _send_shard(self.exploration_id, self.index)

    def part_claims(self) -> Callable[[], int | None]:
        """``explore``'s ``claim`` for this shard: parts it took on an earlier run, then new ones.

        A shard's worker takes the next part of the split level whenever it is
        free, so the workers of a campaign stay busy to its end however the
        shards' work was estimated. A shard run again (its worker went silent
        and it was queued again) first searches the parts it had taken, which
        no other shard will. None once this claim is no longer the shard's
        (taken back, or it ended), or every part is taken (``cut_into``):
        its worker takes no more parts.
        """
        taken = list(self.parts)

        def claim() -> int | None:
            return taken.pop(0) if taken else self._take_part()

        return claim

    def state_exchange(self) -> Exchange | None:
        """``explore``'s ``exchange`` for this shard: its states out, the other shards' in.

        Through the database, a row of packed states per call (up to fifty a
        second while the shard searches its parts), read by the other shards in the
        order they were written; a row written late is merely read late or
        not at all, which costs a search again, never a state. None for a
        shard alone, and for a shard on its second run: the other shards may
        have skipped states its first run sent, which it must search again
        itself (``explore``).
        """
        if self.attempts > 1 or self.exploration.shard_count < 2:
            return None
        read = 0

        def exchange(fresh: list[tuple[bytes, int, int]]) -> list[tuple[bytes, int, int]]:
            nonlocal read
            # A busy database costs this exchange, never the shard: states not sent are
            # searched by the others too, and rows not read are read at the next call.
            try:
                if fresh:
                    ExchangedStates.objects.create(
                        exploration_id=self.exploration_id,
                        shard=self.index,
                        states=pack_states(fresh),
                    )
                rows = list(
                    ExchangedStates.objects.filter(exploration_id=self.exploration_id, pk__gt=read)
                    .exclude(shard=self.index)
                    .order_by("pk")
                    .values_list("pk", "states")
                )
            except DatabaseError as exc:
                logger.warning("shard %s could not exchange states: %s", self, exc)
                return []
            if rows:
                read = rows[-1][0]
            return [state for _, data in rows for state in unpack_states(bytes(data))]

        return exchange

    def cut_into(self, count: int) -> None:
        """``explore``'s ``split_into``: record how many parts the split level has.

        Every shard cuts the same level, so the first to say it is right for
        all; from then on a claim past the last part gets None, and a shard
        that starts late walks nothing.
        """
        Exploration.objects.filter(pk=self.exploration_id, parts_total__isnull=True).update(
            parts_total=count
        )

    def _take_part(self) -> int | None:
        """The exploration's next part, recorded as this shard's in the same transaction.

        The shard's row is locked first (the conditional update), so a claim
        taken back meanwhile takes nothing; the count's update then holds the
        exploration's row until the commit, so two shards never read the same
        number.
        """
        with transaction.atomic():
            if not self._mine().update(heartbeat_at=timezone.now()):
                return None
            dealt = Exploration.objects.filter(pk=self.exploration_id)
            left = Q(parts_total__isnull=True) | Q(parts_dealt__lt=F("parts_total"))
            if not dealt.filter(left).update(parts_dealt=F("parts_dealt") + 1):
                return None  # every part is taken
            part = dealt.values_list("parts_dealt", flat=True).get() - 1
            self.parts = [*self.parts, part]
            self._mine().update(parts=self.parts)
        return part

    def beat(self, states: int) -> bool:
        """Record progress and liveness; False when the worker should stop.

        It should stop when the exploration was cancelled or failed, or when
        this claim was taken back as stale. One conditional update answers both.
        """
        return bool(
            self._mine()
            .filter(exploration__in=Exploration.objects.filter(status=ExplorationStatus.RUNNING))
            .update(states=states, heartbeat_at=timezone.now())
        )

    def finish(self, result: ExploreResult, *, stopped: bool = False) -> bool:
        """Store this shard's result (``stopped``: cut short on request); settle the exploration."""
        now = timezone.now()
        won = self._mine().update(
            status=ExplorationStatus.CANCELLED if stopped else ExplorationStatus.DONE,
            result=result.as_dict(),
            states=result.states,
            heartbeat_at=now,
            finished_at=now,
        )
        if won:
            self.exploration.settle()
            dispatch()
        return bool(won)

    def fail(self, reason: str) -> bool:
        """Mark this shard failed and with it the exploration, naming the shard in the reason."""
        won = self._mine().update(
            status=ExplorationStatus.FAILED, error=reason, finished_at=timezone.now()
        )
        if won:
            self.exploration.fail(f"shard {self.index}: {reason}")
        return bool(won)

    def is_stale(self, stale_after: timedelta = STALE_AFTER) -> bool:
        return (
            self.status == ExplorationStatus.RUNNING
            and self.heartbeat_at is not None
            and self.heartbeat_at < timezone.now() - stale_after
        )

    def reclaim(
        self, stale_after: timedelta = STALE_AFTER, max_attempts: int = MAX_ATTEMPTS
    ) -> bool:
        """Take a stale shard back from its silent worker; False if it beat or finished meanwhile.

        A shard with attempts left goes back in the queue with a fresh task;
        otherwise it fails, and the exploration with it, naming the worker.
        """
        silent = (timezone.now() - self.heartbeat_at).total_seconds() if self.heartbeat_at else 0
        reason = (
            f"no heartbeat from {self.claimed_by} for {silent:.0f}s "
            f"(limit {stale_after.total_seconds():.0f}s)"
        )
        still_stale = self._mine().filter(heartbeat_at=self.heartbeat_at)
        if self.attempts < max_attempts and self.exploration.status in ACTIVE:
            won = still_stale.update(
                status=ExplorationStatus.QUEUED,
                claimed_by="",
                error=f"requeued: {reason}",
                queued_at=timezone.now(),
                sent_at=None,
            )
            if won:
                # Its turn comes again through dispatch; robust: a refused send must
                # not stop the reaping of other shards (a later dispatch retries).
                transaction.on_commit(dispatch, robust=True)
            return bool(won)
        won = still_stale.update(
            status=ExplorationStatus.FAILED, error=reason, finished_at=timezone.now()
        )
        if won:
            self.exploration.fail(f"shard {self.index}: {reason}")
        return bool(won)

    def progress(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": self.status,
            "states": self.states,
            "claimed_by": self.claimed_by,
            "heartbeat_at": self.heartbeat_at,
            "stale": self.is_stale(),
            "attempts": self.attempts,
            "error": self.error,
        }


class ExchangedStates(models.Model):
    """States one shard of a running exploration searched, for the others not to search again.

    Written and read by :meth:`ExplorationShard.state_exchange`; deleted when
    the exploration settles.
    """

    exploration = models.ForeignKey(Exploration, on_delete=models.CASCADE, related_name="exchanged")
    shard = models.PositiveSmallIntegerField()
    states = models.BinaryField()  # chains.core.sim.explorer.pack_states

    def __str__(self) -> str:
        return f"states of shard {self.shard} of exploration {self.exploration_id}"


# --- personal API tokens --------------------------------------------------------------
