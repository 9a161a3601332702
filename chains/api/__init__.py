"""The chains API (django-ninja): what the pages do, as JSON for pipelines and tools.

One router, mounted on the project's ``NinjaAPI`` (``designer/api.py``). Every
operation takes a person from the session (browser, with CSRF on unsafe
methods) or from a personal token (``Authorization: Bearer cd_…``), and
reaches a chain only through ``services.access.chain_access`` with the role
it needs, exactly as the pages do. Every operation declares the shape of its
answers: an ``…Out`` schema for success and ``ErrorOut`` for its errors
(both in ``chains/api/schemas.py``), so ``/api/openapi.json`` describes every
response and the fuzzer checks them. Output schemas refuse keys they do not
declare, so an answer cannot silently lose a field. Domain errors become
JSON once, in ``designer/api.py``: a machine-readable ``code``, a ``message``
and, where there is one, the ``location`` of the problem. Every operation on
``/chains/{key}`` declares ``?team=`` (``TeamQuery``), since a key is unique
within its team only.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Literal

from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from ninja import P, Query, QueryEx, Router, Status

from chains.api.schemas import (
    ERRORS,
    CampaignOut,
    CascadeOut,
    ChainOut,
    CommentOut,
    DiffOut,
    DocumentIn,
    ErrorOut,
    HarnessRunDetailOut,
    HarnessRunOut,
    ImportIn,
    ImportOut,
    JsonSchemaOut,
    KeptRunOut,
    LintOut,
    RepairScopeOut,
    ReviewOut,
    RevisionDocumentOut,
    RevisionLintOut,
    RevisionOut,
    SavedOut,
    SavedScenarioOut,
    ScenarioCheckOut,
    ScenarioIn,
    ScenarioSave,
    SimulationOut,
    TestVectorsOut,
)
from chains.core import formats
from chains.core.diff import diff
from chains.core.errors import DocumentError, Problem
from chains.core.graph import cascade, repair_scope
from chains.core.lint import lint, worst_status
from chains.core.sim.regression import test_vectors
from chains.core.sim.scenario import Scenario, load_scenario, simulate
from chains.models import (
    Chain,
    Comment,
    Exploration,
    HarnessReport,
    HarnessRun,
    Review,
    Revision,
    Role,
    saved_scenarios,
    scenario_checks,
)
from chains.services import campaigns, editing, exports, harness, review, runs, scenarios
from chains.services.access import (
    NoTeam,
    chain_access,
    creating_team,
    get_head,
    get_revision,
    spec_of,
)
from chains.services.campaigns import CampaignIn
from chains.services.editing import EditIn, UndoIn
from chains.services.imports import import_document
from chains.services.limits import spend
from chains.services.review import CommentIn, PageIn, ReviewIn, VoteIn

router = Router(tags=["chains"])

# A key is unique within its team only, so every operation on /chains/{key}
# declares ``?team=`` (and the OpenAPI document and the fuzzer see it).
TeamQuery = QueryEx[
    str | None,
    P(
        description="The slug of the team whose chain {key} is ('-' for a chain without a "
        "team). Needed only when several of your teams have a chain of this key: without "
        "it the key names the one chain of that key you may see, and several are a 409 "
        "ambiguous_key listing their teams."
    ),
]

MAX_TEXT = 2 * 1024 * 1024  # characters of a posted document or scenario


class Refused(Exception):
    """A request the API understood and will not carry out (400 with ``code``)."""

    def __init__(self, code: str, message: str, location: str | None = None, status: int = 400):
        super().__init__(message)
        self.code, self.location, self.status = code, location, status


# --- chains and revisions ---------------------------------------------------------------


@router.get("/chains", response={200: list[ChainOut], **ERRORS}, summary="The chains you may see")
def list_chains(request: HttpRequest) -> list[dict[str, Any]]:
    newest = Revision.objects.filter(chain=OuterRef("pk")).order_by("-number")
    chains = (
        Chain.objects.visible_to(request.user)
        .select_related("team")
        .annotate(
            head_number=Subquery(newest.values("number")[:1]),
            head_status=Subquery(newest.values("status")[:1]),
        )
        .order_by("key")
    )
    return [_chain_out(c, c.head_number, c.head_status) for c in chains]


@router.post(
    "/chains",
    response={201: ImportOut, **ERRORS},
    summary="Import a document: its usable chains, with confirm when it has errors",
)
def import_chains(request: HttpRequest, body: ImportIn) -> Status:
    spend("import", user=request.user)
    try:
        team = creating_team(request.user, body.team)
    except NoTeam as exc:
        raise Refused("no_team", str(exc), "team") from None
    imported = import_document(
        _text(body.document, "document"),
        filename=body.filename,
        author=request.user,
        team=team,
        confirm=body.confirm,
        message="import through the API",
    )
    if imported.awaits_confirmation:
        ids = ", ".join(c.id for c in imported.chains)
        hint = Problem(f"nothing stored; send confirm: true to store {ids}", severity="info")
        raise DocumentError([*imported.problems, hint])
    if imported.stored is None:
        raise DocumentError(imported.problems)
    return Status(201, {**imported.report(), "stored": imported.stored})


@router.get("/chains/{key}", response={200: ChainOut, **ERRORS}, summary="One chain and its head")
def get_chain_summary(request: HttpRequest, key: str, team: TeamQuery = None) -> dict[str, Any]:
    return _chain_out(_chain(request, key, team))


@router.get(
    "/chains/{key}/revisions",
    response={200: list[RevisionOut], **ERRORS},
    summary="History, newest first",
)
def list_revisions(request: HttpRequest, key: str, team: TeamQuery = None) -> list[dict[str, Any]]:
    chain = _chain(request, key, team)
    revisions = chain.revisions.select_related("author").order_by("-number")
    return [_revision_out(r) for r in revisions]


@router.get(
    "/chains/{key}/revisions/{number}",
    response={200: RevisionDocumentOut, **ERRORS},
    summary="A revision's document (JSON)",
)
def get_revision_document(
    request: HttpRequest, key: str, number: int, team: TeamQuery = None
) -> dict[str, Any]:
    revision = get_revision(_chain(request, key, team), number)
    return {**_revision_out(revision), "document": revision.document}


@router.get(
    "/chains/{key}/diff",
    response={200: DiffOut, **ERRORS},
    by_alias=True,
    summary="What changed between two revisions",
)
def revision_diff(
    request: HttpRequest,
    key: str,
    from_: int = Query(..., alias="from"),
    to: int | None = None,
    team: TeamQuery = None,
) -> dict[str, Any]:
    chain = _chain(request, key, team)
    new = get_revision(chain, to)
    old = get_revision(chain, from_)
    changes = diff(spec_of(old), spec_of(new))
    return {"from": old.number, "to": new.number, "changes": [asdict(c) for c in changes]}


# --- edits ------------------------------------------------------------------------------

EDITED = {201: SavedOut, **ERRORS, 409: ErrorOut}  # 409: the base is no longer the head


@router.post("/chains/{key}/edits", response=EDITED, summary="Apply an edit: a new revision")
def edit_chain(request: HttpRequest, key: str, body: EditIn, team: TeamQuery = None) -> Status:
    chain = _chain(request, key, team, Role.EDITOR)
    saved = editing.save_edit(chain, body.op, body.args, base=body.base, author=request.user)
    return Status(201, _saved_out(saved.revision, body.base))


@router.post("/chains/{key}/undo", response=EDITED, summary="Undo the last edit: a new revision")
def undo_edit(request: HttpRequest, key: str, body: UndoIn, team: TeamQuery = None) -> Status:
    revision = editing.undo(
        _chain(request, key, team, Role.EDITOR), base=body.base, author=request.user
    )
    return Status(201, _saved_out(revision, body.base))


@router.post("/chains/{key}/redo", response=EDITED, summary="Redo the last undo: a new revision")
def redo_edit(request: HttpRequest, key: str, body: UndoIn, team: TeamQuery = None) -> Status:
    revision = editing.redo(
        _chain(request, key, team, Role.EDITOR), base=body.base, author=request.user
    )
    return Status(201, _saved_out(revision, body.base))


# --- checks and queries -----------------------------------------------------------------


@router.post(
    "/lint",
    response={200: LintOut, **ERRORS},
    summary="Lint a document without storing it (for CI)",
)
def lint_document(request: HttpRequest, body: DocumentIn) -> dict[str, Any]:
    spend("lint", user=request.user)
    result = formats.load(_text(body.document, "document"), filename=body.filename)
    reports = [{"chain": c.id, **lint(c).as_dict()} for c in result.chains]
    return {
        "status": worst_status([r["status"] for r in reports]),
        "chains": reports,
        "import_problems": [p.as_dict() for p in result.problems],
    }


@router.get(
    "/chains/{key}/lint",
    response={200: RevisionLintOut, **ERRORS},
    summary="Lint a stored revision (default: the head)",
)
def lint_revision(
    request: HttpRequest, key: str, revision: int | None = None, team: TeamQuery = None
) -> dict[str, Any]:
    stored = get_revision(_chain(request, key, team), revision)
    return {"revision": stored.number, **lint(spec_of(stored)).as_dict()}


@router.get(
    "/chains/{key}/cascade/{handle}",
    response={200: CascadeOut, **ERRORS},
    summary="What dies if a handle is re-minted",
)
def handle_cascade(
    request: HttpRequest, key: str, handle: str, revision: int | None = None, team: TeamQuery = None
) -> dict[str, Any]:
    spec = spec_of(get_revision(_chain(request, key, team), revision))
    if spec.handle(handle) is None:
        raise Refused("unknown_handle", f"the chain has no handle {handle!r}", "handle", 404)
    return asdict(cascade(spec, handle))


@router.get(
    "/chains/{key}/repair-scope",
    response={200: RepairScopeOut, **ERRORS},
    summary="What a repair of intent fields at a step kills",
)
def repair(
    request: HttpRequest,
    key: str,
    step: str,
    fields: str,
    revision: int | None = None,
    team: TeamQuery = None,
) -> dict[str, Any]:
    spec = spec_of(get_revision(_chain(request, key, team), revision))
    if spec.action(step) is None:
        raise Refused("unknown_step", f"the chain has no action {step!r}", "step", 404)
    names = [f.strip() for f in fields.split(",") if f.strip()]
    return asdict(repair_scope(spec, step, names))


@router.post(
    "/chains/{key}/simulate",
    response={200: SimulationOut, **ERRORS},
    summary="Run a scenario; the trace and the outcome",
)
def run_scenario(
    request: HttpRequest, key: str, body: ScenarioIn, team: TeamQuery = None
) -> dict[str, Any]:
    spend("simulate", user=request.user)
    spec = spec_of(get_revision(_chain(request, key, team), body.revision))
    return simulate(spec, _scenario(body.scenario)).as_dict()


@router.post(
    "/chains/{key}/runs",
    response={200: KeptRunOut, **ERRORS},
    summary="Start a kept run by its run_key, or get the one the key started",
)
def start_run(
    request: HttpRequest, key: str, body: ScenarioIn, team: TeamQuery = None
) -> dict[str, Any]:
    spend("simulate", user=request.user)
    chain = _chain(request, key, team, Role.EDITOR)
    spec = spec_of(get_revision(chain, body.revision))
    return runs.start_run(chain, spec, _scenario(body.scenario)).as_dict()


# --- scenarios --------------------------------------------------------------------------


@router.get(
    "/chains/{key}/scenarios",
    response={200: list[ScenarioCheckOut], **ERRORS},
    summary="Saved scenarios, replayed on the head",
)
def list_scenarios(request: HttpRequest, key: str, team: TeamQuery = None) -> list[dict[str, Any]]:
    chain = _chain(request, key, team)
    return [c.as_dict() for c in scenario_checks(chain, spec_of(get_head(chain)))]


@router.post(
    "/chains/{key}/scenarios", response={201: SavedScenarioOut, **ERRORS}, summary="Keep a scenario"
)
def save_scenario(
    request: HttpRequest, key: str, body: ScenarioSave, team: TeamQuery = None
) -> Status:
    saved = scenarios.save_scenario(
        _chain(request, key, team, Role.EDITOR),
        body.name,
        _scenario(body.scenario),
        author=request.user,
        record=body.record,
        revision=body.revision,
        replace=True,  # a pipeline re-running its script updates the scenario it keeps
    )
    return Status(201, {"name": saved.name, "expect": saved.document.get("expect")})


@router.get(
    "/chains/{key}/test-vectors",
    response={200: TestVectorsOut, **ERRORS},
    summary="Conformance test vectors of the head",
)
def vectors(request: HttpRequest, key: str, team: TeamQuery = None) -> dict[str, Any]:
    chain = _chain(request, key, team)
    head = get_head(chain)
    return {**test_vectors(spec_of(head), saved_scenarios(chain)), "revision": head.number}


# --- campaigns --------------------------------------------------------------------------


@router.post(
    "/chains/{key}/campaigns",
    response={201: CampaignOut, 503: ErrorOut, **ERRORS},
    summary="Launch the explorer",
)
def start_campaign(
    request: HttpRequest, key: str, body: CampaignIn, team: TeamQuery = None
) -> Status:
    spend("campaign", user=request.user)
    exploration = campaigns.launch_campaign(
        _chain(request, key, team, Role.EDITOR), body, by=request.user
    )
    return Status(201, _campaign_out(exploration))


@router.get(
    "/chains/{key}/campaigns/{pk}",
    response={200: CampaignOut, **ERRORS},
    summary="A campaign's progress, and its result",
)
def get_campaign(request: HttpRequest, key: str, pk: int, team: TeamQuery = None) -> dict[str, Any]:
    return _campaign_out(campaigns.watch_campaign(_chain(request, key, team), pk))


@router.post(
    "/chains/{key}/campaigns/{pk}/cancel",
    response={200: CampaignOut, **ERRORS},
    summary="Stop a campaign",
)
def cancel_campaign(
    request: HttpRequest, key: str, pk: int, team: TeamQuery = None
) -> dict[str, Any]:
    return _campaign_out(campaigns.cancel_campaign(_chain(request, key, team, Role.EDITOR), pk))


# --- fault-harness runs ----------------------------------------------------------------


@router.post(
    "/chains/{key}/harness-runs",
    response={201: HarnessRunOut, **ERRORS},
    summary="Keep a fault-harness report (the output of chain-designer harness --json)",
)
def post_harness_run(
    request: HttpRequest,
    key: str,
    body: HarnessReport,
    r: int | None = None,
    team: TeamQuery = None,
) -> Status:
    chain = _chain(request, key, team, Role.EDITOR)
    if len(request.body) > harness.report_limit():
        limit = harness.report_limit()
        raise Refused("too_large", f"the report is over the limit of {limit:,} bytes", None, 413)
    spend("import", user=request.user)
    run = harness.record_report(chain, get_revision(chain, r), body, by=request.user, source="api")
    return Status(201, _harness_out(run))


@router.get(
    "/chains/{key}/harness-runs",
    response={200: list[HarnessRunOut], **ERRORS},
    summary="The chain's fault-harness runs, newest first",
)
def list_harness_runs(
    request: HttpRequest, response: HttpResponse, key: str, page: int = 1, team: TeamQuery = None
) -> list[dict[str, Any]]:
    listed = harness.list_runs(_chain(request, key, team), page)
    response["X-Total-Count"] = str(listed.total)
    return [_harness_out(run) for run in listed.items]


@router.get(
    "/chains/{key}/harness-runs/{pk}",
    response={200: HarnessRunDetailOut, **ERRORS},
    summary="One fault-harness run with every schedule",
)
def get_harness_run(
    request: HttpRequest, key: str, pk: int, team: TeamQuery = None
) -> dict[str, Any]:
    run = harness.get_run(_chain(request, key, team), pk)
    return {**_harness_out(run), "results": harness.as_data(run)["schedules"]}


# --- comments and review ----------------------------------------------------------------


@router.get(
    "/chains/{key}/comments",
    response={200: list[CommentOut], **ERRORS},
    summary="Comment threads, a page at a time: open first, newest first",
)
def list_comments(
    request: HttpRequest,
    response: HttpResponse,
    key: str,
    page: Query[PageIn],
    anchor: str = "",
    team: TeamQuery = None,
) -> list[dict[str, Any]]:
    listed = review.list_threads(_chain(request, key, team), **page.model_dump(), anchor=anchor)
    return _paged(request, response, listed)


@router.get(
    "/chains/{key}/comments/{pk}/replies",
    response={200: list[CommentOut], **ERRORS},
    summary="The replies of a thread, a page at a time, oldest first",
)
def list_replies(
    request: HttpRequest,
    response: HttpResponse,
    key: str,
    pk: int,
    page: Query[PageIn],
    team: TeamQuery = None,
) -> list[dict[str, Any]]:
    listed = review.list_replies(_chain(request, key, team), pk, **page.model_dump())
    return _paged(request, response, listed)


@router.post(
    "/chains/{key}/comments", response={201: CommentOut, **ERRORS}, summary="Comment, or reply"
)
def post_comment(request: HttpRequest, key: str, body: CommentIn, team: TeamQuery = None) -> Status:
    spend("comment", user=request.user)
    chain = _chain(request, key, team, Role.REVIEWER)
    comment = review.post_comment(chain, request.user, **body.model_dump())
    return Status(201, _comment_out(comment))


@router.post(
    "/chains/{key}/comments/{pk}/resolve",
    response={200: CommentOut, **ERRORS},
    summary="Resolve a thread, or reopen it",
)
def resolve_comment(
    request: HttpRequest, key: str, pk: int, team: TeamQuery = None
) -> dict[str, Any]:
    chain = _chain(request, key, team, Role.REVIEWER)
    return _comment_out(review.toggle_comment(chain, pk, request.user))


@router.get(
    "/chains/{key}/reviews",
    response={200: list[ReviewOut], **ERRORS},
    summary="Reviews, newest first, with each decision",
)
def list_reviews(request: HttpRequest, key: str, team: TeamQuery = None) -> list[dict[str, Any]]:
    chain = _chain(request, key, team)
    return [
        _review_out(r)
        for r in chain.reviews.order_by("-created_at")
        .select_related("revision", "requested_by")
        .prefetch_related("votes__reviewer")
    ]


@router.post(
    "/chains/{key}/reviews", response={201: ReviewOut, **ERRORS}, summary="Ask people to review"
)
def request_review(
    request: HttpRequest, key: str, body: ReviewIn, team: TeamQuery = None
) -> Status:
    chain = _chain(request, key, team, Role.EDITOR)
    requested = review.request_review(chain, request.user, **body.model_dump())
    return Status(201, _review_out(requested))


@router.post(
    "/chains/{key}/reviews/{pk}/vote",
    response={200: ReviewOut, **ERRORS},
    summary="Approve, or request changes",
)
def vote(
    request: HttpRequest, key: str, pk: int, body: VoteIn, team: TeamQuery = None
) -> dict[str, Any]:
    chain = _chain(request, key, team, Role.REVIEWER)
    return _review_out(review.vote(chain, pk, request.user, body.vote, body.note))


# --- exports ----------------------------------------------------------------------------

EXPORTS = exports.CONTENT_TYPES
# The YAML and JSON exports are the chain document (its JSON Schema: GET /api/schema).
EXPORT_SCHEMAS: dict[str, dict[str, str]] = {
    "yaml": {"type": "object"},
    "json": {"type": "object"},
    "openapi": {"type": "object"},
    "postman": {"type": "object"},
    "png": {"type": "string", "format": "binary"},
}
EXPORT_RESPONSE = {
    "description": "the file; X-Revision and X-Content-Hash say which revision it is",
    "content": {
        kind: {"schema": EXPORT_SCHEMAS.get(name, {"type": "string"})}
        for name, kind in EXPORTS.items()
    },
}


@router.get(
    "/chains/{key}/revisions/{number}/export",
    response=ERRORS,
    openapi_extra={"responses": {"200": EXPORT_RESPONSE}},
    summary="A revision as a file",
)
def export(
    request: HttpRequest,
    key: str,
    number: int,
    format: exports.Download = "yaml",
    graph: Literal["handles", "flow"] = "handles",
    team: TeamQuery = None,
) -> HttpResponse:
    return exports.download(get_revision(_chain(request, key, team), number), format, graph)


@router.get(
    "/schema",
    auth=None,
    response=JsonSchemaOut,
    summary="The JSON Schema of chain documents",
)
def schema(request: HttpRequest) -> dict[str, Any]:
    return formats.json_schema()


# --- helpers ----------------------------------------------------------------------------


def _chain_out(
    chain: Chain, head_number: int | None = None, head_status: str | None = None
) -> dict[str, Any]:
    """``head_number`` and ``head_status`` when the list query read them (one query in all)."""
    if head_number is None or not head_status:  # not read, or a status never stored yet
        head = chain.head()
        head_number = head.number if head else None
        head_status = head.lint_status() if head else None
    return {
        "key": chain.key,
        "title": chain.title,
        "team": chain.team.slug if chain.team else None,
        "head": head_number,
        "status": head_status,
    }


def _revision_out(revision: Revision) -> dict[str, Any]:
    return {
        "number": revision.number,
        "message": revision.message,
        "content_hash": revision.content_hash,
        "status": revision.lint_status(),
        "author": revision.author.username if revision.author else None,
        "created_at": revision.created_at.isoformat(),
    }


def _saved_out(revision: Revision, base: int) -> dict[str, Any]:
    """A stored change; ``base`` was the head, so another number is a new revision."""
    return {**_revision_out(revision), "created": revision.number != base}


def _chain(request: HttpRequest, key: str, team: str | None, role: str = Role.VIEWER) -> Chain:
    """The chain ``key`` of ``team`` (``?team=``); without it, the one the person may see."""
    return chain_access(request.user, key, role, team=team or None).chain


def _paged(request: HttpRequest, response: HttpResponse, page: review.Page) -> list[dict]:
    """The page's comments; ``X-Total-Count`` and a ``Link`` to the next page say the rest."""
    response["X-Total-Count"] = str(page.total)
    if page.next_offset is not None:
        query = request.GET.copy()
        query["limit"], query["offset"] = str(page.limit), str(page.next_offset)
        response["Link"] = f'<{request.path}?{query.urlencode()}>; rel="next"'
    return [_comment_out(c) for c in page.items]


def _comment_out(comment: Comment) -> dict[str, Any]:
    thread = comment.thread()
    replies, count = comment.shown_replies()
    return {
        "id": comment.pk,
        "thread": thread.pk,
        "anchor": thread.anchor,
        "revision": comment.revision.number,
        "author": comment.author.username if comment.author else None,
        "body": comment.body,
        "mentions": sorted(u.username for u in comment.mentions.all()),
        "created_at": comment.created_at.isoformat(),
        "resolved": thread.resolved_at is not None,
        "replies": [_comment_out(r) for r in replies],
        "reply_count": count,
    }


def _review_out(review: Review) -> dict[str, Any]:
    return {
        "id": review.pk,
        "revision": review.revision.number,
        "state": review.state(),
        "requested_by": review.requested_by.username if review.requested_by else None,
        "note": review.note,
        "votes": [
            {
                "reviewer": v.reviewer.username,
                "decision": v.decision,
                "shown": shown,
                "note": v.note,
            }
            for v, shown in review.ballots()
        ],
        "approved": review.revision.tag or None,
    }


def _campaign_out(exploration: Exploration) -> dict[str, Any]:
    progress = exploration.progress()
    for shard in progress["shards"]:
        shard["heartbeat_at"] = shard["heartbeat_at"] and shard["heartbeat_at"].isoformat()
    return {
        **progress,
        "revision": exploration.revision.number,
        "bounds": exploration.bounds,
        "started_at": exploration.started_at and exploration.started_at.isoformat(),
        "finished_at": exploration.finished_at and exploration.finished_at.isoformat(),
        "result": exploration.result(),
    }


def _harness_out(run: HarnessRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "url": run.url(),
        "revision": run.revision.number,
        "source": run.source,
        "created_by": run.created_by.get_username() if run.created_by else None,
        "created_at": run.created_at.isoformat(),
        "schedules": run.schedules,
        "clean": run.clean,
        "diverged": run.diverged,
        "summary": run.summary,
    }


def _text(value: str, name: str) -> str:
    if len(value) > MAX_TEXT:
        raise Refused("too_large", f"{name}: more than {MAX_TEXT:,} characters", name, 413)
    return value


def _scenario(value: str | dict[str, Any]) -> Scenario:
    """A scenario posted as text (YAML or JSON) or as an object."""
    if isinstance(value, str):
        return load_scenario(_text(value, "scenario"))
    return load_scenario(_text(json.dumps(value), "scenario"), "scenario.json")
