"""The Step scope cell keeps its meaning: prose names steps, or says it names none.

SPEC §3: the table is "an ordered list of matchers", each applying to the
attempts its scope names. A scope that names no step matches nothing, so
its signals fall to the generic rows: a retryable read error dead-ends, a
refund failure is never routed. The importer maps an author's words to
the steps they name by the chain's own actions, or warns at the row.
"""

from chains.core.formats.markdown import load_markdown
from chains.core.model import ChainSpec
from chains.core.sim.classifier import ClassifyContext, classify
from chains.core.sim.state import Observation

# Our own seat-booking chain: a read, a quote, an unkeyed hold, a keyed
# payment, a refund confirmed by its own read.
ACTIONS = """```yaml
actions:
  - id: look_up
    effect: read
  - id: quote
    effect: mint
  - id: hold_seat
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look_up, signal: "seat held"}
  - id: settle_bill
    effect: commit
    idempotency: {mode: keyed, key_scope: run}
  - id: refund_bill
    effect: commit
    idempotency: {mode: keyed, key_scope: run}
    confirmation: {probe: look_refund, signal: "refund settled"}
  - id: look_refund
    effect: read
```
"""

HEADER = "| # | Signal | Step scope | Verdict |\n|---|---|---|---|\n"
FIRST_ROW_LINE = ("# Seats\n" + ACTIONS + HEADER).count("\n") + 1


def load(*rows):
    return load_markdown("# Seats\n" + ACTIONS + HEADER + "\n".join(rows) + "\n")


def row(rows, row_id="R1"):
    (chain,) = load(*rows).chains
    return next(r for r in chain.verdict_table if r.id == row_id)


def problems_of(rows, row_id="R1"):
    return [p for p in load(*rows).problems if f"{row_id}:" in p.message]


def test_those_commits_are_the_commits_the_signal_cell_names():
    found = row(
        [
            "| R1 | `code:77` on the reply of `hold_seat` / `look_up` itself "
            "| those commits | `reconcile` |"
        ]
    )
    assert (found.scope.steps, found.scope.text) == (["hold_seat"], "those commits")


def test_effect_words_joined_with_a_plus_are_those_effect_classes():
    found = row(["| R1 | `code:88` BUSY, TRY AGAIN | read + mint steps | `retry` |"])
    assert (found.scope.steps, found.scope.effects) == ([], ["read", "mint"])


def test_a_busy_code_on_a_read_retries_by_the_row_written_for_reads_and_mints():
    (chain,) = load("| R1 | `code:88` BUSY, TRY AGAIN | read + mint steps | `retry` |").chains
    busy = Observation(transport="http:200", code="88")
    result = classify(chain, ClassifyContext(), chain.action("look_up"), busy)
    assert (result.row, str(result.verdict)) == ("R1", "retry")


def test_any_with_a_remark_applies_to_every_step_and_keeps_the_remark():
    found = row(["| R1 | `http:429` | any (every commit keyed) | `retry` |"])
    assert (found.scope.any, found.scope.text) == (True, "any (every commit keyed)")


def test_any_step_this_run_applies_to_every_step():
    found = row(["| R1 | webhook `seat.moved` | any step, this run | `gate(review)` |"])
    assert found.scope.any


def test_a_steps_confirmation_is_that_step():
    """Its probe's findings are classified as that commit's outcome (SPEC §2.1 confirmation)."""
    found = row(
        ["| R1 | `refund.state == 'failed'` | `refund_bill` confirmation | `gate(other_refund)` |"]
    )
    assert found.scope.steps == ["refund_bill"]


def test_a_word_starting_one_action_id_is_that_action_with_an_info():
    rows = ["| R1 | `code:odd_state` | settle / hold_seat | `reconcile` |"]
    assert row(rows).scope.steps == ["settle_bill", "hold_seat"]
    (info,) = problems_of(rows)
    assert info.severity == "info" and "settle_bill" in info.message and info.line == FIRST_ROW_LINE


def test_a_word_starting_several_action_ids_names_none_and_warns():
    rows = ["| R1 | `code:odd_state` | look / hold_seat | `reconcile` |"]
    assert row(rows).scope.steps == ["hold_seat"]
    (warning,) = problems_of(rows)
    assert warning.severity == "warning" and "`look`" in warning.message


def test_probes_are_the_reads_the_commits_name_as_their_probes():
    found = row(["| R1 | `http:429` | quote, probes | `retry` |"])
    assert found.scope.steps == ["quote", "look_up", "look_refund"]


def test_a_scope_cell_naming_no_step_is_a_warning_at_its_line_naming_the_words():
    rows = ["| R1 | `code:99` | whenever it rains | `dead_end` |"]
    found = row(rows)
    assert (found.scope.steps, found.scope.any, found.scope.text) == (
        [],
        False,
        "whenever it rains",
    )
    (warning,) = problems_of(rows)
    assert warning.severity == "warning" and warning.line == FIRST_ROW_LINE
    assert "`whenever it rains`" in warning.message


def test_a_step_named_before_a_remark_is_read_without_a_message():
    rows = ["| R1 | `code:99` | hold_seat (GDS) | `dead_end` |"]
    assert row(rows).scope.steps == ["hold_seat"]
    assert problems_of(rows) == []


def test_a_row_scoped_to_words_matching_nothing_applies_to_no_step():
    (chain,) = load("| R1 | `code:99` | whenever it rains | `retry` |").chains
    result = classify(chain, ClassifyContext(), chain.action("look_up"), Observation(code="99"))
    assert result.row != "R1"


def test_scopes_written_as_plain_ids_are_unchanged():
    found = row(["| R1 | `code:99` | look_up, quote | `retry` |"])
    assert (found.scope.steps, found.scope.text) == (["look_up", "quote"], None)


def test_a_spec_row_scope_dump_round_trips():
    found = row(["| R1 | `code:88` | read + mint steps | `retry` |"])
    again = ChainSpec.model_validate({"id": "c", "verdict_table": [found.model_dump()]})
    assert again.verdict_table[0].scope == found.scope


def test_a_remark_listing_steps_with_commas_is_a_remark_not_more_parts():
    rows = ["| R1 | `http:429` | unkeyed commits (hold_seat, settle_bill) | `reconcile` |"]
    assert row(rows).scope.effects == ["unkeyed_commit"]
    assert problems_of(rows) == []


def test_any_with_an_exception_is_not_every_step_and_warns():
    rows = ["| R1 | `http:429` | any, except commits | `retry` |"]
    assert row(rows).scope.any is False
    (warning,) = problems_of(rows)
    assert warning.severity == "warning"
