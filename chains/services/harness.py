"""Fault-harness reports in the app: received, listed and shown, for the pages and the API.

The app never starts a client or a provider: a command given over the web
would be remote code execution. ``chain-designer harness ... --json`` runs on
the command line or in CI, and its report reaches the app as text (the
harness page's upload, :func:`read_report`) or as the API's JSON body; both
go through :class:`~chains.models.HarnessReport`, and :func:`record_report`
refuses a report of another chain. A report is at most :func:`report_limit`
bytes, the limit of an uploaded trace. :func:`shown_results` gives one page
of a run's schedules as the page shows them: the gravest divergence first
(the harness's own choice, ``ScheduleResult.worst``), each with the
simulator's address of the run as it stood there, opened on the revision the
run is stored against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404
from pydantic import ValidationError

from chains.core.errors import DocumentError, Problem
from chains.core.sim.schedules import Schedule
from chains.harness.report import ScheduleResult
from chains.models import Chain, HarnessReport, HarnessResult, HarnessRun, Revision

__all__ = [
    "PER_PAGE",
    "Listed",
    "as_data",
    "ShownResult",
    "get_run",
    "list_runs",
    "read_report",
    "record_report",
    "report_limit",
    "shown_results",
    "validated",
]

PER_PAGE = 100  # schedules (or runs) on one page


def report_limit() -> int:
    """The most bytes a report may have: as much as an uploaded trace (2 MiB by default)."""
    return settings.CHAIN_UPLOAD_MAX_BYTES


def read_report(text: str) -> HarnessReport:
    """``text`` (the ``--json`` output) as a report; ``DocumentError`` says where it fails."""
    if len(text.encode("utf-8")) > report_limit():
        raise DocumentError([Problem(f"the report is over the limit of {report_limit():,} bytes")])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(
            [Problem(f"not JSON: {exc.msg}", line=exc.lineno, column=exc.colno)]
        ) from None
    return validated(data)


def validated(data: Any) -> HarnessReport:
    """``data`` (parsed JSON) as a report, each refusal with its path."""
    try:
        return HarnessReport.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(str(e["msg"]), path=".".join(str(p) for p in e["loc"]) or None)
            for e in exc.errors()[:20]
        ]
        raise DocumentError(problems) from None


def record_report(
    chain: Chain, revision: Revision, report: HarnessReport, *, by: Any, source: str
) -> HarnessRun:
    """Keep ``report`` as a run of ``chain`` stored against ``revision``."""
    if report.chain != chain.key:
        why = f"the report is of chain {report.chain!r}; this chain is {chain.key!r}"
        raise DocumentError([Problem(why, path="chain")])
    return HarnessRun.objects.record(chain, revision, report, by=by, source=source)


@dataclass(frozen=True)
class Listed:
    """One page of a listing: its items, and where it sits among all ``total`` of them."""

    items: list[Any]
    total: int
    page: int
    pages: int


def _page(query: Any, total: int, page: int) -> Listed:
    pages = max(1, -(-total // PER_PAGE))
    page = min(max(1, page), pages)
    items = list(query[(page - 1) * PER_PAGE : page * PER_PAGE])
    return Listed(items, total, page, pages)


def list_runs(chain: Chain, page: int = 1) -> Listed:
    """One page of ``chain``'s runs, newest first."""
    runs = chain.harness_runs.select_related("revision", "created_by")
    return _page(runs, runs.count(), page)


def get_run(chain: Chain, pk: int) -> HarnessRun:
    """``chain``'s run ``pk``, or 404 (another chain's run is not found here)."""
    found = chain.harness_runs.select_related("chain", "revision", "created_by").filter(pk=pk)
    run = found.first()
    if run is None:
        raise Http404(f"{chain.key} has no harness run {pk}")
    return run


@dataclass(frozen=True)
class ShownResult:
    """A schedule as the run's page shows it: the gravest divergence first, each with a
    ``simulator`` address (None where the report carries no token)."""

    number: int
    label: str
    clean: bool
    first: str
    divergences: list[dict[str, Any]]
    data: dict[str, Any]


def shown_results(run: HarnessRun, page: int = 1, diverged_only: bool = False) -> Listed:
    """One page of ``run``'s schedules (only the diverged ones when asked), ready to show."""
    results = HarnessResult.objects.filter(run=run)
    if diverged_only:
        results = results.filter(clean=False)
    listed = _page(results, results.count(), page)
    shown = [_shown(run, r) for r in listed.items]
    return Listed(shown, listed.total, listed.page, listed.pages)


def as_data(run: HarnessRun) -> dict[str, Any]:
    """The run with every schedule as the report gave it, for the API."""
    results = HarnessResult.objects.filter(run=run).values_list("data", flat=True)
    return {"schedules": list(results)}


def _shown(run: HarnessRun, result: HarnessResult) -> ShownResult:
    data = result.data
    found = ScheduleResult(
        Schedule(()), divergences=list(data["divergences"]), problem=data["problem"]
    )
    worst = found.worst
    ordered = ([worst] if worst else []) + [d for d in data["divergences"] if d is not worst]
    simulate = run.chain.url("simulate")
    divergences = [
        {**d, "simulator": _simulator(simulate, run.revision.number, d.get("scenario"))}
        for d in ordered
    ]
    return ShownResult(result.number, result.label, result.clean, found.first, divergences, data)


def _simulator(simulate: str, revision: int, token: str | None) -> str | None:
    if not token:
        return None
    return f"{simulate}?{urlencode({'r': revision, 's': token})}"
