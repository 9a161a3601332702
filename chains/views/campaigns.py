"""The explorer in the browser: a chain's campaigns, launched, watched and cancelled.

A campaign is an :class:`~chains.models.Exploration` of one revision; the
services in ``chains.services.campaigns`` launch, watch and cancel it (the
API calls the same ones) and the Celery tasks run it. The launch form is read
bound to the service's ``CampaignIn`` (``views.forms.posted``), whose ranges
and meanings also label its boxes; a refused form is a 400 re-rendering the
bound form, the reason beside the box it names.
Every view that shows campaigns first recovers them, so a reload or a poll
takes work back from a dead worker and re-sends a lost message: a campaign is
never left "running" only because nobody looked. A launch the broker refuses
is answered 503 and leaves a failed campaign, never a queued one.
``save_check`` is the shallow search every saved revision gets: the
workspace loads it beside lint (``chains.services.save_check``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import OuterRef, Subquery, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect
from pydantic import ValidationError

from chains.core.selection import finding_key
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
from chains.services.access import ChainAccess, find_revision, get_head
from chains.services.campaigns import (
    BadCampaign,
    CampaignIn,
    cancel_campaign,
    caps,
    launch_campaign,
    limits,
    watch_campaign,
)
from chains.services.save_check import BOUNDS as SAVE_CHECK_BOUNDS
from chains.services.save_check import save_check as saved_exploration
from chains.views.common import get_access
from chains.views.forms import SchemaForm, plain_number, posted
from chains.views.limits import rate_limited

LISTED = 100  # campaigns on the list page, newest first

# The cap that ended a search early (ExploreResult.stopped_by), in the words of the pages;
# a cancel ("request") is said by the campaign's status already.
STOPPED_AT = {"states": "state cap", "time": "time limit", "memory": "memory cap"}


@require_http_methods(["GET", "POST"])
@rate_limited("campaign")
def campaigns(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The chain's campaigns and the form that launches one (POST), then its page."""
    access = get_access(
        request, team, key, Role.EDITOR if request.method == "POST" else Role.VIEWER
    )
    chain = access.chain
    head = get_head(chain)
    # A browser sends no unticked checkbox: the bound form reads that as no, not the API's yes.
    form = posted(request, CampaignIn, initial=_defaults(head))
    if request.method == "GET" or not form.is_valid():
        return _list(request, access, head, form, status=200 if not form.is_bound else 400)
    try:
        exploration = launch_campaign(chain, form.value, by=request.user)
    except BadCampaign as exc:
        form.refuse(exc, exc.field)
        return _list(request, access, head, form, status=400)
    except QueueDown as exc:
        form.refuse(exc)
        return _list(request, access, head, form, status=503)
    url = chain.url("campaign", exploration.pk)
    if request.htmx:  # htmx would follow a redirect and swap the page into the form
        return HttpResponseClientRedirect(url)
    return HttpResponseRedirect(url, status=303)


# The same URL answers the page and its polled partial; caches must keep them apart.
@vary_on_headers("HX-Request")
@require_GET
def campaign(request: HttpRequest, key: str, pk: int, team: str | None = None) -> HttpResponse:
    """One campaign: bounds, progress (polled while active), then its results."""
    access = get_access(request, team, key)
    exploration = watch_campaign(access.chain, pk)
    template = "chains/campaign.html#progress" if request.htmx else "chains/campaign.html"
    return render(request, template, campaign_context(request, access, exploration))


@require_POST
def cancel(request: HttpRequest, key: str, pk: int, team: str | None = None) -> HttpResponse:
    """Stop a campaign; its shards stop at their next beat and keep what they found."""
    access = get_access(request, team, key, Role.EDITOR)
    exploration = cancel_campaign(access.chain, pk)
    if request.htmx:
        context = campaign_context(request, access, exploration)
        return render(request, "chains/campaign.html#progress", context)
    return redirect(access.chain.url("campaign", exploration.pk))


@vary_on_headers("HX-Request")
@require_GET
def save_check(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Revision ``?revision=N`` (the head without it) explored at up to two faults: what the
    workspace shows beside lint after every save (an htmx load of its own), or, without
    htmx, a page of it."""
    access = get_access(request, team, key)
    chain = access.chain
    revision = find_revision(chain, plain_number(request.GET.get("revision")))
    if revision is None:
        raise Http404(f"revision: {chain.key} has no revision {request.GET.get('revision')!r}")
    result = saved_exploration(revision)
    violations = _violations(chain, revision, result)
    coverage = (result or {}).get("coverage", {})
    rows = coverage.get("rows", {})
    context = {
        "chain": chain,
        "revision": revision,
        "result": result,
        "faults": SAVE_CHECK_BOUNDS.max_faults,
        "violation": violations[0] if violations else None,
        "more": len(violations) - 1,
        "rows_fired": len(rows.get("fired", [])),
        "rows_total": rows.get("total", 0),
        "steps_total": coverage.get("steps", {}).get("total", 0),
        "stopped_at": _stopped_at(result),
    }
    template = "chains/_save_check.html" if request.htmx else "chains/save_check.html"
    return render(request, template, context)


# --- the list and the launch form ---------------------------------------------

# The form's number boxes, each labelled with its range and meaning from the schema.
NUMBERS = [name for name, field in CampaignIn.model_fields.items() if field.annotation is int]


def _list(
    request: HttpRequest,
    access: ChainAccess,
    head: Revision,
    form: SchemaForm[CampaignIn],
    *,
    status: int = 200,
) -> HttpResponse:
    chain = access.chain
    mine = Exploration.objects.filter(revision__chain=chain)
    mine.recover()
    # A subquery, not a join: a GROUP BY would drop Meta.ordering and group the documents.
    states = ExplorationShard.objects.filter(exploration=OuterRef("pk")).values("exploration")
    rows = (
        mine.select_related("revision", "author")
        .annotate(states_so_far=Subquery(states.annotate(n=Sum("states")).values("n")))
        .order_by("-created_at", "-pk")
    )
    context = {
        "chain": chain,
        "access": access,
        "head": head,
        "can_launch": access.may(Role.EDITOR),
        "form": form,
        "inputs": [_box(form[name]) for name in NUMBERS],
        "crashes": CampaignIn.model_fields["crashes"].description,
        "campaigns": [_row(e) for e in rows[:LISTED]],
        "caps": {name: f"{value:,}" for name, value in caps().items()},
    }
    template = "chains/campaigns.html#campaigns" if request.htmx else "chains/campaigns.html"
    return render(request, template, context, status=status)


def _box(field: Any) -> dict[str, Any]:
    """A number box of the launch form (a bound field): its range and meaning from the schema."""
    low, high = limits(field.name)
    return {
        "field": field,
        "label": field.name.replace("_", " ").capitalize(),
        "meaning": CampaignIn.model_fields[field.name].description,
        "low": low,
        "high": high,
    }


def _defaults(head: Revision) -> dict[str, Any]:
    """What the form shows before anything is posted: the head and the schema's defaults."""
    return {**CampaignIn().model_dump(), "revision": head.number}


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
        "stopped_at": _stopped_at(result),
        "waiting": exploration.waiting(),
    }


def _stopped_at(result: dict[str, Any] | None) -> str | None:
    """The cap that ended the search, in words; None for a search that ran to its bounds."""
    return STOPPED_AT.get(result.get("stopped_by") or "") if result else None


# --- one campaign -----------------------------------------------------------------


def campaign_context(
    request: HttpRequest, access: ChainAccess, exploration: Exploration
) -> dict[str, Any]:
    """What the campaign page and its ``progress`` partial show."""
    chain = access.chain
    revision = exploration.revision
    result = exploration.result()
    violations = _violations(chain, revision, result)
    explained = any(v["cause"] for v in violations)
    return {
        "chain": chain,
        "access": access,
        "can_cancel": access.may(Role.EDITOR),
        "exploration": exploration,
        "revision": revision,
        "bounds": exploration.get_bounds(),
        "progress": exploration.progress(),
        "active": exploration.status in ACTIVE,
        "elapsed": _duration(exploration.elapsed()),
        "waited": _duration(timezone.now() - exploration.created_at),
        "result": result,
        "terminals": _terminals(result),
        "violations": violations,
        # Causes link into the workspace, which shows the head: say so when it is another.
        "explained": explained,
        "head": get_head(chain) if explained else None,
        "coverage": _coverage(result),
        "never_reached": (result.get("not_covered") or {}).get("steps", []) if result else [],
        "warnings": result.get("warnings", []) if result else [],
        # None for a result stored before coverage was recorded: neither pass nor fail.
        "complete": result.get("complete") if result else None,
        "stopped_at": _stopped_at(result),
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
    if not coverage:
        return []
    out = []
    for kind, label in _COVERED.items():
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
    """Each broken invariant: its causal line, each decision linked to the element of the
    chain that took it, then its message, its counterexample's events and a link that
    replays it. A violation stored before causes were recorded has an empty line."""
    simulate = chain.url("simulate")
    found = []
    for violation in result["violations"] if result else []:
        shown = {k: violation[k] for k in ("invariant", "message")}
        shown["cause"] = [
            {**c, "url": _element_url(chain, c.get("element"))} for c in violation.get("cause", [])
        ]
        shown["events"] = len(violation["scenario"].get("events", []))
        try:
            scenario = Scenario.model_validate(violation["scenario"], strict=False)
        except ValidationError:  # stored under an older scenario grammar: no replay link
            found.append(shown)
            continue
        shown["steps"] = [e.describe() for e in scenario.events]
        query = {"r": revision.number, "s": encode(scenario), "violation": violation["invariant"]}
        found.append({**shown, "url": f"{simulate}?{urlencode(query)}"})
    return found


# The workspace tab that lists each kind of element a finding can point at.
_TABS = {"action": "actions", "handle": "handles", "gate": "gates", "row": "table"}


def _element_url(chain: Chain, element: str | None) -> str | None:
    """The workspace with ``element`` (a lint finding's element form) selected on its tab;
    the policy tab for a budget; None for what the workspace cannot point at."""
    key = finding_key(element) if element else None
    if key is not None:
        tab = _TABS.get(key.split(":", 1)[0], "actions")
        return f"{chain.url('chain')}?{urlencode({'select': key, 'tab': tab})}"
    if element and element.split(".", 1)[0].split("[", 1)[0] == "policy":
        return f"{chain.url('chain')}?tab=policy"
    return None


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
