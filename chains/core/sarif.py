"""The SARIF 2.1.0 envelope every report of ours shares (the lint's and the harness's):
one run of one tool, its rules and its results; each caller makes its own rules and
results."""

from __future__ import annotations

from typing import Any

__all__ = ["SARIF_SCHEMA", "sarif_run"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif_run(
    tool: str, rules: list[dict[str, Any]], results: list[dict[str, Any]], version: str | None
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run of ``tool``.

    >>> sarif_run("chain-designer", [], [], "1.0")["runs"][0]["tool"]["driver"]["version"]
    '1.0'
    """
    driver: dict[str, Any] = {"name": tool, "rules": rules}
    if version:
        driver["version"] = version
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
