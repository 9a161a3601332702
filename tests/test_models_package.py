"""The models package: one module per area, the old names kept, and no import cycle with tasks."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import chains.models
from chains import tasks
from chains.core import formats
from chains.models import Chain, Exploration, QueueDown, campaigns

PACKAGE = Path(chains.models.__file__).parent

# Every public name the single chains/models.py defined before the split.
BEFORE_THE_SPLIT = [
    "content_hash",
    "StaleRevision",
    "NothingToUndo",
    "document_status",
    "Role",
    "RANK",
    "at_least",
    "LastOwner",
    "TeamQuerySet",
    "Team",
    "Membership",
    "ChainRole",
    "ChainQuerySet",
    "Chain",
    "Revision",
    "store_all",
    "DuplicateScenario",
    "SavedScenarioQuerySet",
    "SavedScenario",
    "saved_scenarios",
    "scenario_checks",
    "APPROVABLE",
    "MAX_COMMENT",
    "ReviewError",
    "NotApprovable",
    "ImmutableRevision",
    "CommentQuerySet",
    "Comment",
    "Decision",
    "VOTES",
    "ReviewQuerySet",
    "Review",
    "ReviewVote",
    "ExplorationStatus",
    "ACTIVE",
    "HEARTBEAT_EVERY",
    "STALE_AFTER",
    "MAX_ATTEMPTS",
    "MAX_SHARDS",
    "QueueDown",
    "ExplorationQuerySet",
    "Exploration",
    "ShardQuerySet",
    "ExplorationShard",
    "ApiTokenQuerySet",
    "ApiToken",
]

SHIP = """
id: ship
actions:
  - {id: send, effect: commit, idempotency: {mode: none}}
"""


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_name_of_the_single_module_is_still_importable_from_chains_models():
    assert [name for name in BEFORE_THE_SPLIT if not hasattr(chains.models, name)] == []
    assert set(BEFORE_THE_SPLIT) <= set(chains.models.__all__)


def test_the_models_keep_the_chains_app_label():
    labels = {model._meta.app_label for model in vars(chains.models).values() if _is_model(model)}
    assert labels == {"chains"}


def _is_model(value: object) -> bool:
    return isinstance(value, type) and hasattr(value, "_meta") and hasattr(value, "objects")


@pytest.mark.parametrize("module", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_of_the_models_package_imports_the_tasks(module):
    assert not {name for name in imported_modules(module) if name.startswith("chains.tasks")}


# The layers of chains/models/__init__.py: each module imports only those before it.
LAYERS = ["errors", "fields", "people", "scenarios", "chains", "review", "campaigns"]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_models_module_imports_at_run_time_only_the_layers_below_it(layer):
    tree = ast.parse((PACKAGE / f"{layer}.py").read_text())
    run_time = [node for node in tree.body if isinstance(node, ast.ImportFrom)]  # not TYPE_CHECKING
    used = {
        node.module.rsplit(".", 1)[-1]
        for node in run_time
        if node.module.startswith("chains.models.")
    }
    assert used <= set(LAYERS[: LAYERS.index(layer)])


def test_the_tasks_import_the_models_so_the_dependency_goes_one_way():
    assert any(name.startswith("chains.models") for name in imported_modules(Path(tasks.__file__)))


def test_the_app_connects_the_task_queue_when_django_starts():
    assert campaigns._send_shard is tasks.send_shard


@pytest.mark.django_db
def test_a_launch_with_no_task_queue_connected_fails_at_once_saying_so(
    monkeypatch, django_capture_on_commit_callbacks
):
    chain = formats.load(textwrap.dedent(SHIP), format="yaml").chains[0]
    revision = Chain.objects.store(formats.to_document(chain))
    monkeypatch.setattr(campaigns, "_send_shard", None)
    with (
        pytest.raises(QueueDown, match="no task queue is connected"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        Exploration.objects.launch(revision, shards=1)
    assert Exploration.objects.get().status == "failed"
