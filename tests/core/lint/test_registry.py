"""Every rule is documented, and docs/lint-rules.md is the registry's own output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chains.core.lint import RULES
from chains.core.lint.docs import FAMILY_TITLES, rules_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "lint-rules.md"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_has_a_stable_id_a_reference_a_summary_and_a_hint(rule_id):
    rule = RULES[rule_id]
    assert re.fullmatch(r"[a-z]+\.[a-z0-9-]+", rule.id)
    assert rule.id.split(".")[0] == rule.family
    assert rule.family in FAMILY_TITLES
    assert rule.ref.startswith(("SPEC", "SKILL"))
    assert rule.summary and rule.summary != rule.id
    assert rule.hint


def test_the_rules_document_is_generated_from_the_registry():
    assert DOC.read_text() == rules_markdown(), (
        "docs/lint-rules.md is stale: run python manage.py chain rules --markdown > "
        "docs/lint-rules.md"
    )
