"""The production deployment: the image, compose.yaml, the entry point, and their variables."""

from __future__ import annotations

import importlib.resources
import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = YAML(typ="safe").load((ROOT / "compose.yaml").read_text())
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"


def test_compose_yaml_validates_against_the_compose_specification():
    vendored = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    jsonschema.validate(COMPOSE, json.loads((vendored / "compose-spec.json").read_text()))


def test_compose_runs_web_and_worker_from_one_image_with_postgresql_and_redis():
    services = COMPOSE["services"]
    assert services["web"]["command"] == ["web"] and services["worker"]["command"] == ["worker"]
    assert services["web"]["image"] == services["worker"]["image"] == "chain-designer"
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    env = services["web"]["environment"]
    assert env["DEBUG"] == "0" and env["DATABASE_URL"].startswith("postgres://")
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:")


def test_every_variable_of_the_deployment_is_documented():
    read = set(
        re.findall(r'env_[a-z]+\("([A-Z_]+)"', (ROOT / "designer" / "settings.py").read_text())
    )
    read |= set(re.findall(r"\$\{([A-Z_]+)", ENTRYPOINT.read_text()))
    read |= set(re.findall(r"\$\{([A-Z_]+)", (ROOT / "compose.yaml").read_text()))
    read |= set(re.findall(r"environ\.get\('([A-Z_]+)'", (ROOT / "Dockerfile").read_text()))
    assert {"SECRET_KEY", "BIND", "CHAINS_HOST", "HEALTHCHECK_HOST"} <= read
    assert sorted(v for v in read if f"`{v}`" not in CONFIGURATION) == []


def test_the_entry_point_runs_any_other_command_as_given():
    done = subprocess.run(
        [str(ENTRYPOINT), "echo", "as given"], capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stdout) == (0, "as given\n")


def test_the_image_copies_what_the_app_needs_at_run_time():
    dockerfile = (ROOT / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (?:--from=\S+ )?(\S+)", dockerfile, re.M))
    assert {"chains", "designer", "templates", "static", "deploy"} <= copied
    assert "collectstatic" in dockerfile
    assert 'ENTRYPOINT ["/app/deploy/entrypoint.sh"]' in dockerfile


def docker_runs() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(not docker_runs(), reason="no docker daemon on this machine")
def test_the_image_builds():
    done = subprocess.run(
        ["docker", "build", "--quiet", "-t", "chain-designer:test", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
