"""One spelling: an edit refusal, a lint finding and a SARIF result name a row alike."""

from __future__ import annotations

import pytest

from chains.commandline.files import LintedFile, sarif_log
from chains.core.edit import EditError, update_row
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.paths import ElementPath

DOC = ChainSpec.model_validate(
    {
        "id": "c",
        "actions": [{"id": "search", "effect": "read"}],
        "verdict_table": [
            {"id": "F1", "signal": ["http:404"], "verdict": "repair(to: search)"},
            {"signal": ["http:409"], "verdict": "repair(to: search)"},
        ],
    }
)


@pytest.mark.parametrize(("ref", "row"), [("F1", "verdict_table[F1]"), ("#2", "verdict_table[#2]")])
def test_an_edit_error_a_lint_finding_and_a_sarif_result_name_a_row_alike(ref, row):
    with pytest.raises(EditError) as refused:
        update_row(DOC, ref, {"verdict": "rewind"})
    report = lint(DOC)
    [finding] = [
        f for f in report.findings if f.rule == "table.repair-without-fields" and f.element == row
    ]
    log = sarif_log([LintedFile("c.yaml", None, [], [(DOC, report)])])
    names = [
        loc["fullyQualifiedName"]
        for result in log["runs"][0]["results"]
        if result["ruleId"] == "table.repair-without-fields"
        for loc in result["locations"][0]["logicalLocations"]
    ]
    assert refused.value.path == f"{row}.verdict"
    assert ElementPath.parse(refused.value.path).element == ElementPath.parse(finding.element)
    assert f"c/{row}" in names
