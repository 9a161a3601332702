"""The JSON API's own schemas: the shape of every answer and of the requests only it takes.

``chains/api/__init__.py`` declares each operation with these; an input the pages take
too (an edit, a comment, a campaign) is a service's schema instead
(``chains/services/``). Answers refuse keys they do not declare (:class:`Out`),
so an answer cannot silently lose a field, and ``/api/openapi.json`` describes
every response, errors included (:class:`ErrorOut`).
"""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema
from pydantic import BaseModel, ConfigDict

from chains.services.scenarios import ScenarioName

# --- schemas: answers ------------------------------------------------------------------


class Out(Schema):
    """The shape of an answer. A key it does not declare is an error, not a silent loss."""

    model_config = ConfigDict(extra="forbid")


class ErrorDetail(Out):
    code: str = Field(description="machine-readable: not_found, invalid_document, ...")
    message: str
    location: str | None = Field(description="the field, path or line the error is about")


class RequestProblemOut(Out):
    message: str
    location: str


class ProblemOut(Out):
    message: str
    line: int | None
    column: int | None
    path: str | None
    severity: Literal["error", "warning", "info"]


class ErrorOut(Out):
    """Every error: ``{"error": {...}}``, with ``problems`` for a document or body that fails."""

    error: ErrorDetail
    problems: list[ProblemOut] | list[RequestProblemOut] | None = Field(
        None, description="invalid_document: each problem; invalid_request: each field"
    )


# The errors any operation may answer with (designer/api.py writes them).
ERRORS: dict[int, type[Schema]] = {
    c: ErrorOut for c in (400, 401, 403, 404, 409, 413, 422, 429, 500)
}


class ChainOut(Out):
    key: str
    title: str
    team: str | None
    head: int | None
    status: str | None


class RevisionOut(Out):
    number: int
    message: str
    content_hash: str
    status: str
    author: str | None
    created_at: str


class SavedOut(RevisionOut):
    created: bool = Field(description="false when the content was already so: the head, unchanged")


class RevisionDocumentOut(RevisionOut):
    document: dict[str, Any] = Field(description="the chain document, as JSON")


class ChangeOut(Out):
    kind: Literal["added", "removed", "changed"]
    element: str
    id: str
    fields: list[str]
    summary: str


class DiffOut(Out):
    from_: int = Field(alias="from")
    to: int
    changes: list[ChangeOut]


class ImportedChainOut(Out):
    id: str
    handles: int
    actions: int
    gates: int
    verdict_rows: int


class StoredOut(Out):
    id: str
    team: str = Field(description="the slug of the chain's team; '-' for a chain without one")
    revision: int
    created: bool = Field(description="false when the content equals the head: no new revision")


class ImportOut(Out):
    format: str | None
    chains: list[ImportedChainOut] = Field(description="the usable chains the import read")
    stored: list[StoredOut]
    problems: list[ProblemOut] = Field(description="errors first, each with its line")


class FindingOut(Out):
    rule: str
    severity: Literal["error", "warning", "info"]
    element: str
    message: str
    hint: str
    ref: str


LintStatus = Literal["VALID", "WARNINGS", "INVALID", "BLOCKED"]


class ChainLintOut(Out):
    chain: str
    status: LintStatus
    findings: list[FindingOut]
    unknowns: list[FindingOut]
    cascades: dict[str, list[str]]


class LintOut(Out):
    status: LintStatus = Field(description="the worst status of the chains (INVALID if none)")
    chains: list[ChainLintOut]
    import_problems: list[ProblemOut]


class RevisionLintOut(Out):
    revision: int
    status: LintStatus
    findings: list[FindingOut]
    unknowns: list[FindingOut]
    cascades: dict[str, list[str]] = Field(description="each handle: the handles its re-mint kills")


class CascadeOut(Out):
    handle: str
    invalidated: list[str]
    facts: list[str]


class RepairScopeOut(Out):
    step: str
    fields: list[str]
    invalidated: list[str]
    survives: list[str]


class ExpectationOut(Out):
    check: str
    expected: Any
    actual: Any
    held: bool


class ProposalOut(Out):
    event: int
    accepted: bool


class SimulationOut(Out):
    state: str
    cursor: str | None
    dispatches: dict[str, int]
    commits_landed: list[str]
    trace: list[dict[str, Any]] = Field(description="one entry per event, as the run saw it")
    snapshot: dict[str, Any] = Field(description="the run's final snapshot")
    expectations: list[ExpectationOut]
    proposals: list[ProposalOut]


class KeptRunOut(SimulationOut):
    created: bool = Field(
        description="true when this call started the run; false when the run_key's run "
        "was returned as it stands, with none of the posted events applied"
    )


class ScenarioCheckOut(Out):
    name: str
    held: bool
    changes: list[str] = Field(description="one sentence per expectation that changed")
    error: str | None = Field(description="why it no longer replays")


class SavedScenarioOut(Out):
    name: str
    expect: dict[str, Any] | None


class TestVectorsOut(Out):
    format: str
    version: int
    chain: str
    vectors: list[dict[str, Any]] = Field(description="one per saved scenario (scenarios.md)")
    revision: int


class ShardOut(Out):
    index: int
    status: str
    states: int
    claimed_by: str
    heartbeat_at: str | None
    stale: bool
    attempts: int
    error: str


class HarnessRunOut(Out):
    """A fault-harness report kept for a chain (``chain-designer harness --json``)."""

    id: int
    url: str = Field(description="the run's page")
    revision: int = Field(description="the revision its simulator links open")
    source: str = Field(description="upload (the page) or api")
    created_by: str | None
    created_at: str
    schedules: int
    clean: int
    diverged: int
    summary: str


class HarnessRunDetailOut(HarnessRunOut):
    results: list[dict[str, Any]] = Field(
        description="every schedule's run as the report gave it, in its order"
    )


class CampaignOut(Out):
    id: int
    author: str | None = Field(description="who launched it (None for campaigns before authors)")
    status: str
    shard_count: int
    shards_done: int
    states: int
    states_max: int | None = Field(
        description="the most states the campaign may explore (max_states times shards), "
        "which states counts toward while it runs; None without a cap"
    )
    started_at: str | None
    finished_at: str | None
    error: str
    waiting: str | None = Field(
        description="why a queued campaign has not started (its team runs as many as it may)"
    )
    shards: list[ShardOut]
    revision: int
    bounds: dict[str, Any] = Field(
        description="what it was asked for, with the caps it runs under (max_states, "
        "max_seconds, max_memory_mb); result.stopped_by names the cap that ended it"
    )
    result: dict[str, Any] | None = Field(
        description="the explorer's merged result once finished (see docs/api.md)"
    )


class CommentOut(Out):
    id: int
    thread: int
    anchor: str
    revision: int
    author: str | None
    body: str
    mentions: list[str]
    created_at: str
    resolved: bool
    replies: list[CommentOut] = Field(
        description="a thread's first replies (COMMENT_REPLIES_SHOWN); the rest: /replies"
    )
    reply_count: int = Field(description="all of a thread's replies; 0 for a reply")


class VoteOut(Out):
    reviewer: str
    decision: str = Field(description="as stored: pending, approved or changes_requested")
    shown: str = Field(
        description="what the vote means now, as the reviews page says it: a pending vote "
        "of someone whose approval would not count (an author of the changes it covers, "
        "or their invitee) says why, and once the revision is approved one "
        "never cast is not needed"
    )
    note: str


class ReviewOut(Out):
    id: int
    revision: int
    state: str
    requested_by: str | None
    note: str
    votes: list[VoteOut]
    approved: str | None = Field(description="the revision's tag once approved")


class JsonSchemaOut(BaseModel):
    """A JSON Schema document; only its frame is named here, the rest passes as it is.

    (A plain pydantic model with no fields, so every key passes in its order;
    ninja's ``Schema`` reads objects by field and would drop the keys it does
    not name.)
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "properties": {"$schema": {"type": "string"}, "title": {"type": "string"}},
            "required": ["$schema", "title"],
        },
    )


# --- schemas: requests -----------------------------------------------------------------


class DocumentIn(Schema):
    document: str = Field(description="the chain document: YAML, JSON or a compile in Markdown")
    filename: str | None = Field(None, description="tells the format, e.g. chain.yaml")
    team: str | None = Field(None, description="slug of the team that owns new chains")


class ImportIn(DocumentIn):
    confirm: bool = Field(
        False,
        description="store the usable chains even though the import has error problems",
    )


class ScenarioIn(Schema):
    scenario: str | dict[str, Any] = Field(description="a scenario: YAML/JSON text or an object")
    revision: int | None = None


class ScenarioSave(ScenarioIn):
    name: ScenarioName
    record: bool = Field(True, description="replay it and keep its outcome as its expect")
