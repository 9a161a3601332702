"""docs/ci.md's pipeline examples and the pre-commit hook fit what their tools read."""

from __future__ import annotations

import importlib.resources
import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
CI_DOC = (ROOT / "docs" / "ci.md").read_text()
BLOCKS = re.findall(r"```yaml\n(.*?)```", CI_DOC, re.S)
VENDORED = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")


def example(marker: str) -> dict:
    """The block holding ``marker``, read as YAML 1.2 as CI services read it (``on`` a key)."""
    return next(YAML(typ="safe").load(b) for b in BLOCKS if marker in b)


@pytest.mark.parametrize(
    ("marker", "schema"),
    [("runs-on:", "github-workflows.json"), ("stages:", "gitlab-ci.json")],
)
def test_the_pipeline_examples_validate_against_their_tools_schemas(marker, schema):
    jsonschema.validate(example(marker), json.loads((VENDORED / schema).read_text()))


def test_the_pipeline_examples_run_the_console_script_the_project_declares():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"chain-designer": "chains.cli:main"}
    commands = re.findall(r"(?:run:|- )\s*(chain-designer \w+)", CI_DOC)
    assert commands and {c.split()[1] for c in commands} <= {"lint", "explore"}


def test_the_pre_commit_hook_runs_lint_on_chain_documents():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "chain-designer lint" and hook["language"] == "python"
    pattern = re.compile(hook["files"])
    assert pattern.search("compiles/duffel.chain.md") and pattern.search("a/b.chain.yaml")
    assert not pattern.search("README.md")
    local = example("repo: local")["repos"][0]["hooks"][0]
    assert (local["entry"], local["files"]) == (hook["entry"], hook["files"])
