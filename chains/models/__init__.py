"""The stored state of the app, one module per area; import every name from here.

- ``errors``: what the model verbs refuse.
- ``fields``: a JSON field that keeps the order of a document's mappings on PostgreSQL.
- ``people``: roles, teams, members, per-chain grants, personal API tokens.
- ``scenarios``: scenarios saved with a chain, replayed as regression checks.
- ``chains``: chains and their immutable revisions, storing, undo and redo, approval.
- ``layouts``: where each revision's graphs were drawn (the canvas's layout memory).
- ``review``: comments on revisions, review requests and votes.
- ``campaigns``: explorations (model-checker runs) and the shards workers claim.
- ``notifications``: review requests, mentions and decisions, for each person's inbox.
- ``runs``: runs kept by their caller's run_key, one per key and chain (SPEC §2.8).
- ``uploads``: a person's provider OpenAPI document on a chain's OpenAPI page, with its ticks.
- ``harness``: fault-harness reports received from the command line or CI, one row per schedule.

Each module imports (at run time) only those listed before it, and none imports
``chains.tasks``: the tasks import the models. The campaign models reach the
task queue through :func:`connect_queue`, which ``chains.apps`` calls with
``chains.tasks.send_shard`` when Django starts.

All models keep the app label ``chains`` and their tables, so splitting the
module changed no migration.
"""

from chains.models.campaigns import (
    ACTIVE,
    HEARTBEAT_EVERY,
    MAX_ATTEMPTS,
    MAX_SHARDS,
    STALE_AFTER,
    ExchangedStates,
    Exploration,
    ExplorationQuerySet,
    ExplorationShard,
    ExplorationStatus,
    ShardQuerySet,
    connect_queue,
)
from chains.models.chains import (
    APPROVABLE,
    NO_TEAM,
    Chain,
    ChainQuerySet,
    Revision,
    content_hash,
    document_status,
    store_all,
)
from chains.models.errors import (
    AlreadyMember,
    ChainUnavailable,
    DuplicateScenario,
    GrantRefused,
    ImmutableRevision,
    InvitationClosed,
    LastOwner,
    NotApprovable,
    NothingToUndo,
    QueueDown,
    ReviewError,
    StaleRevision,
    TeamTaken,
    TooManyTeams,
)
from chains.models.harness import (
    MAX_SCHEDULES,
    HarnessReport,
    HarnessResult,
    HarnessRun,
    HarnessRunQuerySet,
)
from chains.models.layouts import RevisionLayout, RevisionLayoutQuerySet
from chains.models.notifications import (
    Notification,
    NotificationKind,
    NotificationQuerySet,
    connect_mailer,
)
from chains.models.people import (
    RANK,
    ApiToken,
    ApiTokenQuerySet,
    ChainRole,
    Invitation,
    InvitationQuerySet,
    InvitationStatus,
    Membership,
    Role,
    Team,
    TeamQuerySet,
    at_least,
)
from chains.models.review import (
    MAX_COMMENT,
    VOTES,
    Comment,
    CommentQuerySet,
    Decision,
    Review,
    ReviewQuerySet,
    ReviewVote,
)
from chains.models.runs import MAX_RUN_KEY, KeptRun
from chains.models.scenarios import (
    SavedScenario,
    SavedScenarioQuerySet,
    saved_scenarios,
    scenario_checks,
)
from chains.models.uploads import UPLOAD_KEPT_FOR, OpenApiUpload, OpenApiUploadQuerySet

__all__ = [
    "ACTIVE",
    "Notification",
    "NotificationKind",
    "NotificationQuerySet",
    "APPROVABLE",
    "HEARTBEAT_EVERY",
    "MAX_ATTEMPTS",
    "MAX_COMMENT",
    "MAX_RUN_KEY",
    "MAX_SCHEDULES",
    "MAX_SHARDS",
    "RANK",
    "STALE_AFTER",
    "UPLOAD_KEPT_FOR",
    "VOTES",
    "AlreadyMember",
    "ApiToken",
    "ApiTokenQuerySet",
    "Chain",
    "ChainQuerySet",
    "ChainRole",
    "ChainUnavailable",
    "NO_TEAM",
    "Comment",
    "CommentQuerySet",
    "Decision",
    "DuplicateScenario",
    "ExchangedStates",
    "Exploration",
    "ExplorationQuerySet",
    "ExplorationShard",
    "ExplorationStatus",
    "GrantRefused",
    "HarnessReport",
    "HarnessResult",
    "HarnessRun",
    "HarnessRunQuerySet",
    "ImmutableRevision",
    "Invitation",
    "InvitationClosed",
    "InvitationQuerySet",
    "InvitationStatus",
    "KeptRun",
    "LastOwner",
    "Membership",
    "NotApprovable",
    "NothingToUndo",
    "OpenApiUpload",
    "OpenApiUploadQuerySet",
    "QueueDown",
    "Review",
    "ReviewError",
    "ReviewQuerySet",
    "ReviewVote",
    "Revision",
    "RevisionLayout",
    "RevisionLayoutQuerySet",
    "Role",
    "SavedScenario",
    "SavedScenarioQuerySet",
    "ShardQuerySet",
    "StaleRevision",
    "Team",
    "TeamQuerySet",
    "TeamTaken",
    "TooManyTeams",
    "at_least",
    "connect_mailer",
    "connect_queue",
    "content_hash",
    "document_status",
    "saved_scenarios",
    "scenario_checks",
    "store_all",
]
