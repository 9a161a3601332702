"""A row for "ambiguous 5xx" leaves out the 5xx the table documents as no side effect.

SPEC §3: first match wins. A compile may write a commit's ambiguous-failure
row (``timeout / ambiguous 5xx`` → ``reconcile``) above a row for one status
of that class that the provider documents as rejected before execution
(``503`` → ``retry``, ``no_side_effect``). Read as ``http:5xx`` the first row
would swallow the second; the word "ambiguous" says the documented status is
not meant, and the grammar says "except" by order, so the documented row is
placed first.
"""

from chains.core.formats.markdown import load_markdown
from chains.core.lint import lint
from chains.core.sim.classifier import ClassifyContext, classify
from chains.core.sim.state import Observation

CHAIN = """# Kayak rental
```yaml
actions:
  - id: look
    effect: read
  - id: rent
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "kayak rented"}
```
| # | Signal | Step scope | Verdict |
|---|---|---|---|
| R1 | timeout / ambiguous 5xx | rent | `reconcile` |
| R2 | `http:503` | rent | `retry` (`rejected_before_execution: true`, documented) |
| R3 | `http:502` | rent | `retry` |
"""


def chain(text=CHAIN):
    (found,) = load_markdown(text).chains
    return found


def verdict_for(status):
    c = chain()
    obs = Observation(transport=status)
    ctx = ClassifyContext(commit_in_flight=True)
    return classify(c, ctx, c.action("rent"), obs).verdict.type


def test_a_documented_no_side_effect_status_is_placed_before_the_ambiguous_row():
    assert [r.id for r in chain().verdict_table] == ["R2", "R1", "R3"]


def test_the_documented_status_retries_and_the_other_5xx_reconcile():
    assert verdict_for("http:503") == "retry"
    assert verdict_for("http:500") == "reconcile"


def test_a_later_status_without_a_no_side_effect_documentation_stays_shadowed():
    shadowed = [f.element for f in lint(chain()).findings if f.rule == "table.shadowed-row"]
    assert shadowed == ["verdict_table[R3]"]


def test_without_the_word_ambiguous_the_order_is_kept():
    plain = CHAIN.replace("ambiguous 5xx", "5xx")
    assert [r.id for r in chain(plain).verdict_table] == ["R1", "R2", "R3"]


def test_the_move_is_an_info_at_the_ambiguous_row():
    line = CHAIN.split("\n").index("| R1 | timeout / ambiguous 5xx | rent | `reconcile` |") + 1
    (info,) = [p for p in load_markdown(CHAIN).problems if p.line == line]
    assert info.severity == "info"
    assert "R2" in info.message and "R3" not in info.message
