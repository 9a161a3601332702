"""The pytest fixture ``chain_harness`` (chains/harness/pytest_plugin.py), as a team's suite
would use it: installed with Chain Designer, no conftest needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "harness"
PROVIDER = [sys.executable, str(SAMPLES / "provider.py"), "--port", "0"]


def run(chain_harness, client: str):
    return chain_harness(
        SAMPLES / "booking.yaml",
        client=[sys.executable, str(SAMPLES / client)],
        provider=PROVIDER,
        env={"CLIENT_TIMEOUT": "1"},
        hold_seconds=1.2,
        jobs=8,
    )


def test_a_careful_client_passes_assert_clean(chain_harness):
    run(chain_harness, "careful_client.py").assert_clean()


def test_a_naive_client_fails_assert_clean_naming_the_lost_booking(chain_harness):
    outcome = run(chain_harness, "naive_client.py")
    with pytest.raises(AssertionError) as failed:
        outcome.assert_clean()
    said = str(failed.value)
    assert "book call 1: response lost after the provider applied it: [unkeyed_redispatch]" in said


def test_provider_and_upstream_together_are_refused(chain_harness):
    with pytest.raises(Exception, match="give provider or upstream, not both"):
        chain_harness(SAMPLES / "booking.yaml", client=["true"], provider=PROVIDER, upstream="x")
