"""Fault-harness runs received by the app: a report of ``chain-designer harness --json``, kept.

The app never runs a client or a provider (a command given over the web
would be remote code execution): runs happen on the command line or in CI,
and the app receives their reports, uploaded on the harness page or posted
to the API. :class:`HarnessReport` is the report's one schema, strict and
capped (:data:`MAX_SCHEDULES` schedules, a few kilobytes a field), and the
shape of each result's stored ``data``. A run is stored against one
revision of the chain, the one its simulator links open, with one
:class:`HarnessResult` per schedule, in the report's order;
``HarnessRun.objects.record`` writes them in one transaction. The models
name ``Chain`` and ``Revision`` by string, so this module imports no other
model module at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from django.conf import settings
from django.db import models, transaction
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from chains.models.chains import Chain, Revision

__all__ = [
    "MAX_SCHEDULES",
    "HarnessReport",
    "HarnessResult",
    "HarnessRun",
    "HarnessRunQuerySet",
]

MAX_SCHEDULES = 10_000  # the harness samples from thousands at 2 faults; more is not a run
_LINES = 1_000  # divergences or exchange lines of one schedule
_TEXT = 4_000  # characters of a message, a label, an exchange line
_TOKEN = 200_000  # characters of a simulator token (a long run, compressed)

Text = Annotated[str, Field(max_length=_TEXT)]
Name = Annotated[str, Field(max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class FaultIn(_Strict):
    step: Name
    dispatch: int = Field(ge=1)
    kind: Name
    status: int | None = None
    code: Name | None = None
    retry_after: float | None = None


class ScheduleIn(_Strict):
    faults: list[FaultIn] = Field(max_length=20)


class DivergenceIn(_Strict):
    seq: int | None = None
    line: int | None = None
    at: Text = ""
    kind: Name
    step: Name | None = None
    message: Text
    scenario: Annotated[str, Field(max_length=_TOKEN)] | None = Field(
        None, description="the simulator's token of the run as it stood at this divergence"
    )


class ScheduleResultIn(_Strict):
    """One schedule's run, as ``ScheduleResult.as_dict`` writes it."""

    schedule: ScheduleIn
    label: Text
    clean: bool
    divergences: list[DivergenceIn] = Field(max_length=_LINES)
    client_exit: int | None = None
    seconds: float = Field(0.0, ge=0)
    trace: Text = ""
    exchanges: list[Text] = Field([], max_length=_LINES)
    problem: Text = ""


class HarnessReport(_Strict):
    """What ``chain-designer harness --json`` prints: the chain's id and every schedule's run."""

    chain: Name = Field(description="the id of the chain the client was run against")
    clean: bool
    schedules: list[ScheduleResultIn] = Field(max_length=MAX_SCHEDULES)


class HarnessRunQuerySet(models.QuerySet):
    def record(
        self,
        chain: Chain,
        revision: Revision,
        report: HarnessReport,
        *,
        by: Any = None,
        source: str = "upload",
    ) -> HarnessRun:
        """Store ``report`` (validated, for ``chain``) against ``revision``, all or nothing."""
        if report.chain != chain.key:
            raise ValueError(f"chain: the report is of {report.chain!r}, not {chain.key!r}")
        results = [s.model_dump() for s in report.schedules]
        clean = sum(1 for s in report.schedules if s.clean)
        with transaction.atomic():
            run = self.create(
                chain=chain,
                revision=revision,
                created_by=by if by is not None and by.is_authenticated else None,
                source=source,
                schedules=len(results),
                clean=clean,
                diverged=len(results) - clean,
                summary=f"{len(results)} schedules: {clean} clean, {len(results) - clean} diverged",
            )
            HarnessResult.objects.bulk_create(
                HarnessResult(run=run, number=n, label=s["label"], clean=s["clean"], data=s)
                for n, s in enumerate(results, start=1)
            )
        return run


class HarnessRun(models.Model):
    """A harness report received for a chain: its counts, stored against one revision."""

    chain = models.ForeignKey("Chain", on_delete=models.CASCADE, related_name="harness_runs")
    revision = models.ForeignKey("Revision", on_delete=models.CASCADE, related_name="harness_runs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(
        max_length=10, choices=[("upload", "upload"), ("api", "api")], default="upload"
    )
    schedules = models.PositiveIntegerField(default=0)
    clean = models.PositiveIntegerField(default=0)
    diverged = models.PositiveIntegerField(default=0)
    summary = models.CharField(max_length=200, blank=True)

    objects = HarnessRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"harness run {self.pk} of {self.chain_id}: {self.summary}"

    def url(self) -> str:
        return self.chain.url("harness_run", self.pk)


class HarnessResult(models.Model):
    """One schedule of a run: its label, whether it kept to the chain, and all it recorded."""

    run = models.ForeignKey(HarnessRun, on_delete=models.CASCADE, related_name="results")
    number = models.PositiveIntegerField()  # the schedule's place in the report, from 1
    label = models.TextField()
    clean = models.BooleanField()
    data = models.JSONField()  # ScheduleResultIn.model_dump(): divergences, exchanges, ...

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="one_result_per_schedule")
        ]

    def __str__(self) -> str:
        return f"{self.number}. {self.label}"
