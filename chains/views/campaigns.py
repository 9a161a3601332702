"""The explorer in the browser: a chain's campaigns, launched, watched and cancelled.

A campaign is an :class:`~chains.models.Exploration` of one revision; the
model verbs launch, recover and cancel it and the Celery tasks run it. Every
view that shows campaigns first calls ``recover``, so a reload or a poll takes
work back from a dead worker and re-sends a lost message: a campaign is never
left "running" only because nobody looked. A launch the broker refuses is
answered 503 and leaves a failed campaign, never a queued one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import OuterRef, Subquery, Sum
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect
from pydantic import ValidationError

from chains.core import formats
from chains.core.errors import ChainError, DocumentError
from chains.core.sim.explorer import Bounds
from chains.core.sim.scenario import Scenario
from chains.core.sim.session import encode
from chains.models import (
    ACTIVE,
    Chain,
    Exploration,
    ExplorationShard,
    QueueDown,
    Revision,
    Role,
)
from chains.views.common import get_chain, get_head

# The launch form's numbers: what each means, its range and its default.
FIELDS = {
    "max_faults": {"meaning": "faults per path", "low": 0, "high": 6, "default": 2},
    "max_events": {"meaning": "inputs per path", "low": 1, "high": 500, "default": 60},
    "shards": {"meaning": "shards (one task each)", "low": 1, "high": 16, "default": 1},
}
LISTED = 100  # campaigns on the list page, newest first


class BadLaunch(ChainError):
    """The launch form holds a value that cannot be launched; ``field`` names which."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


@require_http_methods(["GET", "POST"])
def campaigns(request: HttpRequest, key: str) -> HttpResponse:
    """The chain's campaigns and the form that launches one (POST), then its page."""
    chain = get_chain(request, key, Role.EDITOR if request.method == "POST" else Role.VIEWER)
    head = get_head(chain)
    typed = _typed(request, head)
    if request.method == "GET":
        return _list(request, chain, head, typed)
    try:
        revision, bounds, shards = _launch_args(chain, head, typed)
    except BadLaunch as exc:
        return _list(request, chain, head, typed, error=str(exc), field=exc.field, status=400)
    try:
        exploration = Exploration.objects.launch(revision, bounds, shards=shards)
    except QueueDown as exc:
        return _list(request, chain, head, typed, error=str(exc), status=503)
    url = reverse("chains:campaign", args=[chain.key, exploration.pk])
    if request.htmx:  # htmx would follow a redirect and swap the page into the form
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url, status=303)


# The same URL answers the page and its polled partial; caches must keep them apart.
@vary_on_headers("HX-Request")
@require_GET
def campaign(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """One campaign: bounds, progress (polled while active), then its results."""
    chain = get_chain(request, key)
    exploration = _get_campaign(chain, pk)
    exploration.recover()
    template = "chains/campaign.html#progress" if request.htmx else "chains/campaign.html"
    return render(request, template, campaign_context(request, chain, exploration))


@require_POST
def cancel(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """Stop a campaign; its shards stop at their next beat and keep what they found."""
    chain = get_chain(request, key, Role.EDITOR)
    exploration = _get_campaign(chain, pk)
    exploration.cancel()
    if request.htmx:
        context = campaign_context(request, chain, exploration)
        return render(request, "chains/campaign.html#progress", context)
    return redirect("chains:campaign", key=chain.key, pk=exploration.pk)


def _get_campaign(chain: Chain, pk: int) -> Exploration:
    """The exploration ``pk`` if it explores a revision of ``chain``; 404 otherwise."""
    campaigns = Exploration.objects.select_related("revision")
    return get_object_or_404(campaigns, pk=pk, revision__chain=chain)


# --- the list and the launch form ---------------------------------------------


def _list(
    request: HttpRequest,
    chain: Chain,
    head: Revision,
    typed: dict[str, Any],
    *,
    error: str = "",
    field: str = "",
    status: int = 200,
) -> HttpResponse:
    mine = Exploration.objects.filter(revision__chain=chain)
    mine.recover()
    # A subquery, not a join: a GROUP BY would drop Meta.ordering and group the documents.
    states = ExplorationShard.objects.filter(exploration=OuterRef("pk")).values("exploration")
    rows = (
        mine.select_related("revision")
        .annotate(states_so_far=Subquery(states.annotate(n=Sum("states")).values("n")))
        .order_by("-created_at", "-pk")
    )
    context = {
        "chain": chain,
        "head": head,
        "can_launch": chain.viewer_may(Role.EDITOR),
        "typed": typed,
        "inputs": [
            {"name": n, "label": n.replace("_", " ").capitalize(), "value": typed[n], **spec}
            for n, spec in FIELDS.items()
        ],
        "error": error,
        "error_field": field,
        "campaigns": [_row(e) for e in rows[:LISTED]],
    }
    template = "chains/campaigns.html#campaigns" if request.htmx else "chains/campaigns.html"
    return render(request, template, context, status=status)


def _typed(request: HttpRequest, head: Revision) -> dict[str, Any]:
    """What the form shows: the defaults, or what the user posted (kept as typed)."""
    if request.method != "POST":
        defaults = {name: spec["default"] for name, spec in FIELDS.items()}
        return {**defaults, "revision": head.number, "crashes": True}
    typed: dict[str, Any] = {n: request.POST.get(n, "").strip() for n in [*FIELDS, "revision"]}
    typed["crashes"] = "crashes" in request.POST  # an unticked checkbox is not sent
    return typed


def _launch_args(
    chain: Chain, head: Revision, typed: dict[str, Any]
) -> tuple[Revision, Bounds, int]:
    """The revision, bounds and shard count the form asks for; :class:`BadLaunch` says why not."""
    numbers = {
        name: _whole(name, typed[name], spec["low"], spec["high"], spec["default"])
        for name, spec in FIELDS.items()
    }
    number = _whole("revision", typed["revision"], 1, None, head.number)
    revision = chain.revisions.filter(number=number).first()
    if revision is None:
        message = f"{chain.key} has no revision {number} (its head is {head.number})"
        raise BadLaunch("revision", message)
    try:  # a worker would fail on it; say so now instead
        formats.from_document(revision.document)
    except DocumentError as exc:
        raise BadLaunch("revision", f"revision {number} no longer validates: {exc}") from None
    shards = numbers.pop("shards")
    return revision, Bounds(**numbers, crashes=typed["crashes"]), shards


def _whole(name: str, raw: Any, low: int, high: int | None, default: int) -> int:
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadLaunch(name, f"{raw!r} is not a whole number") from None
    if value < low or (high is not None and value > high):
        meaning = FIELDS[name]["meaning"] if name in FIELDS else "the revision number"
        limits = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise BadLaunch(name, f"{meaning} must be {limits}, not {value}")
    return value


def _row(exploration: Exploration) -> dict[str, Any]:
    result = exploration.result()
    steps = result["coverage"]["steps"] if result and "coverage" in result else None
    return {
        "exploration": exploration,
        "bounds": exploration.get_bounds(),
        "states": result["states"] if result else exploration.states_so_far or 0,
        "elapsed": _duration(exploration.elapsed()),
        "violations": len(result["violations"]) if result else None,
        "steps": steps and {"reached": len(steps["reached"]), "total": steps["total"]},
        "complete": result.get("complete") if result else None,
    }


# --- one campaign -----------------------------------------------------------------


def campaign_context(
    request: HttpRequest, chain: Chain, exploration: Exploration
) -> dict[str, Any]:
    """What the campaign page and its ``progress`` partial show."""
    revision = exploration.revision
    result = exploration.result()
    return {
        "chain": chain,
        "can_cancel": chain.viewer_may(Role.EDITOR),
        "exploration": exploration,
        "revision": revision,
        "bounds": exploration.get_bounds(),
        "progress": exploration.progress(),
        "active": exploration.status in ACTIVE,
        "elapsed": _duration(exploration.elapsed()),
        "waited": _duration(timezone.now() - exploration.created_at),
        "result": result,
        "terminals": _terminals(result),
        "violations": _violations(chain, revision, result),
        "coverage": _coverage(result),
        "never_reached": (result.get("not_covered") or {}).get("steps", []) if result else [],
        "warnings": result.get("warnings", []) if result else [],
        # None for a result stored before coverage was recorded: neither pass nor fail.
        "complete": result.get("complete") if result else None,
    }


# What each coverage kind counts, in the words of the page.
_COVERED = {
    "steps": "steps reached",
    "rows": "rows fired",
    "outcomes": "outcomes taken",
    "compensations": "compensations run",
}


def _coverage(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each kind of the result's coverage as seen out of total, with its share."""
    coverage = result.get("coverage") if result else None
    out = []
    for kind, label in _COVERED.items() if coverage else ():
        block = coverage[kind]
        seen = len(next(v for k, v in block.items() if k != "total"))
        total = block["total"]
        percent = round(100 * seen / total) if total else None
        out.append({"kind": kind, "label": label, "seen": seen, "total": total, "percent": percent})
    return out


def _terminals(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Terminal states by kind, largest first, each with its share of all of them."""
    counts = result["terminals"] if result else {}
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"kind": kind, "count": n, "total": total, "percent": round(100 * n / total)}
        for kind, n in ranked
    ]


def _violations(
    chain: Chain, revision: Revision, result: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Each broken invariant with its counterexample's length and a link that replays it."""
    simulate = reverse("chains:simulate", args=[chain.key])
    found = []
    for violation in result["violations"] if result else []:
        shown = {k: violation[k] for k in ("invariant", "message")}
        shown["events"] = len(violation["scenario"].get("events", []))
        try:
            scenario = Scenario.model_validate(violation["scenario"], strict=False)
        except ValidationError:  # stored under an older scenario grammar: no replay link
            found.append(shown)
            continue
        query = {"r": revision.number, "s": encode(scenario), "violation": violation["invariant"]}
        found.append({**shown, "url": f"{simulate}?{urlencode(query)}"})
    return found


def _duration(elapsed: timedelta | None) -> str:
    """``0.4 s``, ``12 s``, ``3 min 05 s``; empty when there is none."""
    if elapsed is None:
        return ""
    seconds = elapsed.total_seconds()
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
