"""A document-wide sentence about every unkeyed commit reaches those commits.

SPEC P3 (§2.1): unkeyed commits require a correlation record and a
cancellation shield. A compile often says so once, in a self-check or a
summary ("every unkeyed commit persists a correlation record ..."), not in
each action. The import carries such a sentence into the notes of the
commits it covers, citing its line, so the action holds what the document
says of it; a document that does not say it gets nothing.
"""

import pytest

from chains.core.formats.markdown import load_markdown
from chains.core.lint import lint

CHAINS = """# Parcel lockers
## Chain A — reserve
```yaml
actions:
  - id: look
    effect: read
  - id: reserve
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "locker held"}
  - id: pay
    effect: commit
    idempotency: {mode: keyed, key_scope: run}
    confirmation: {by_key_replay: true}
```
## Chain B — release
```yaml
actions:
  - id: peek
    effect: read
  - id: release
    effect: compensate
    idempotency: {mode: none}
    confirmation: {probe: peek, signal: "locker free"}
```
"""

EVERY = """## 9. Self-check
- [x] A correlation record is written before dispatch and a cancellation shield
      guards every unkeyed commit; the record lives in the run store.
"""

NAMED = """## 9. Self-check
Both `reserve` and `release` persist a correlation record first and run under a
cancellation shield.
"""


def notes_of(text):
    return {a.id: a.notes for c in load_markdown(text).chains for a in c.actions}


def p3_warnings(text):
    return sorted(
        f.element
        for c in load_markdown(text).chains
        for f in lint(c).findings
        if f.rule == "commit.unkeyed-without-p3-mechanics"
    )


def test_without_a_statement_every_unkeyed_commit_is_warned():
    assert p3_warnings(CHAINS) == ["actions[release]", "actions[reserve]"]


def test_a_statement_about_every_unkeyed_commit_reaches_each_of_them():
    notes = notes_of(CHAINS + EVERY)
    assert any("cancellation shield" in n for n in notes["reserve"])
    assert any("cancellation shield" in n for n in notes["release"])


def test_the_carried_statement_cites_its_line_and_section():
    (note,) = [n for n in notes_of(CHAINS + EVERY)["reserve"] if "shield" in n]
    line = (CHAINS + EVERY).split("\n").index("## 9. Self-check") + 2
    assert f"line {line}" in note
    assert "9. Self-check" in note


def test_keyed_commits_and_reads_are_not_covered_by_it():
    notes = notes_of(CHAINS + EVERY)
    assert notes["pay"] == []
    assert notes["look"] == []


def test_a_statement_naming_commits_reaches_only_those():
    text = CHAINS.replace(
        "id: release\n    effect: compensate", "id: release2\n    effect: compensate"
    )
    notes = notes_of(text + NAMED)
    assert any("correlation record" in n for n in notes["reserve"])
    assert notes["release2"] == []


def test_the_p3_rule_passes_once_the_document_says_it():
    assert p3_warnings(CHAINS + EVERY) == []
    assert p3_warnings(CHAINS + NAMED) == []


@pytest.mark.parametrize(
    "words",
    [
        "- [ ] A correlation record and a cancellation shield on every unkeyed commit.",
        "No unkeyed commit has a correlation record or a cancellation shield yet.",
        "Correlation records and cancellation shields are explained in SPEC P3.",
    ],
)
def test_an_unchecked_negated_or_unscoped_sentence_is_not_carried(words):
    assert p3_warnings(CHAINS + "## 9. Notes\n" + words + "\n") == [
        "actions[release]",
        "actions[reserve]",
    ]


def test_a_statement_inside_one_chain_covers_that_chain_only():
    inside_a = CHAINS.replace(
        "## Chain B",
        "Every unkeyed commit here keeps a correlation record and a "
        "cancellation shield.\n## Chain B",
    )
    assert p3_warnings(inside_a) == ["actions[release]"]


def test_the_carried_statement_is_an_info_at_its_line_for_each_chain_it_reaches():
    problems = load_markdown(CHAINS + EVERY).problems
    line = (CHAINS + EVERY).split("\n").index("## 9. Self-check") + 2
    infos = [p.message for p in problems if p.line == line and p.severity == "info"]
    assert len(infos) == 2
    assert "notes of reserve" in infos[0] and "notes of release" in infos[1]
