"""The campaign caps and per-team limits are settings read from the environment."""

from __future__ import annotations

import pytest

from tests.test_settings import run_python, settings_json

CAPS = (
    "[settings.CAMPAIGN_MAX_STATES, settings.CAMPAIGN_TIME_LIMIT, settings.CAMPAIGN_MAX_MEMORY_MB, "
    "settings.CAMPAIGN_TEAM_CAMPAIGNS, settings.CAMPAIGN_TEAM_SHARDS]"
)


def test_campaign_caps_have_defaults_and_come_from_the_environment():
    assert settings_json(CAPS, DEBUG="1") == [50_000, 300, 768, 2, 2]
    changed = settings_json(CAPS, DEBUG="1", CAMPAIGN_MAX_STATES="1000", CAMPAIGN_TEAM_SHARDS="4")
    assert changed == [1000, 300, 768, 2, 4]


def test_a_worker_process_past_the_memory_cap_is_replaced_after_its_task():
    expression = (
        "[settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD, settings.CELERY_WORKER_PREFETCH_MULTIPLIER]"
    )
    assert settings_json(expression, DEBUG="1", CAMPAIGN_MAX_MEMORY_MB="500") == [756 * 1024, 1]


@pytest.mark.parametrize("name", ["CAMPAIGN_MAX_STATES", "CAMPAIGN_TEAM_SHARDS"])
def test_a_campaign_cap_below_one_stops_the_process(name):
    result = run_python("import django; django.setup()", DEBUG="1", **{name: "0"})
    assert result.returncode != 0
    assert f"{name} must be at least 1" in result.stderr
