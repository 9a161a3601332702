"""Signal cells keep their meaning: conjunctions, predicates, and nothing unread in silence.

SPEC §3: a verdict row matches a signal; "first match wins", so a row that
matches more than its author wrote steals the signals of the rows below it.
"""

from chains.core import formats
from chains.core.export import export
from chains.core.formats.markdown import load_markdown
from chains.core.model import ChainSpec
from chains.core.sim.classifier import ClassifyContext, classify
from chains.core.sim.state import Observation

ACTIONS = """```yaml
actions:
  - id: charge
    effect: commit
    idempotency: {mode: keyed, key_scope: run}
```
"""

# Our own card-charge table, in the shape of a payment compile: a hard decline
# (a lost card) is a dead end; an ordinary decline repairs the card.
DECLINES = """
| # | Signal | Step scope | Verdict |
|---|---|---|---|
| P1 | `http:402 card_error card_declined`, reason ∈ {lost_card, stolen_card} | charge | `dead_end`
| P2 | same, reason ∈ {no_funds, expired_card} | charge | `repair(to: charge, fields: [card])` |
| P3 | same, reason = try_again | charge | `retry` |
| P4 | `status == needs_auth` (2xx body) | charge | `gate(card_check)` |
| P5 | `402` ∈ {`limit_hit`, `limit_day`} | charge | `dead_end` |
| P6 | the bank said something odd | charge | `escalate(operator)` |
| P7 | `http:409` / the bank is slow | charge | `retry` |
"""


def chain() -> ChainSpec:
    (result,) = load_markdown("# Charge\n" + ACTIONS + DECLINES).chains
    return result


def row(row_id):
    return next(r for r in chain().verdict_table if r.id == row_id)


def test_conditions_joined_in_one_signal_cell_must_all_hold():
    assert row("P1").signal == [
        "http:402 && type:card_error && code:card_declined && reason ∈ {lost_card, stolen_card}"
    ]


def test_an_ordinary_decline_reaches_the_repair_row_not_the_hard_decline_dead_end():
    """SPEC §7.3 P1: a decline repairs the instrument; only the listed hard declines dead-end."""
    doc = chain()
    decline = Observation(
        transport="http:402",
        code="card_declined",
        predicates=["type:card_error", "reason ∈ {no_funds, expired_card}"],
    )
    result = classify(doc, ClassifyContext(commit_in_flight=True), doc.actions[0], decline)
    assert result.row == "P2"


def test_same_starts_from_the_previous_row_and_replaces_its_predicate_on_that_field():
    assert row("P3").signal == [
        "http:402 && type:card_error && code:card_declined && reason = try_again"
    ]


def test_a_predicate_signal_is_kept_as_a_predicate_atom():
    """SPEC §7.3 P2: `status == requires_action` gates; dropped, the run skips the gate."""
    assert row("P4").signal == ["status == needs_auth"]


def test_a_status_with_a_set_of_codes_is_one_conjunction_per_code():
    assert row("P5").signal == ["http:402 && code:limit_hit", "http:402 && code:limit_day"]


def test_a_signal_cell_with_nothing_machine_readable_is_a_warning_at_its_line():
    result = load_markdown("# Charge\n" + ACTIONS + DECLINES)
    text = "# Charge\n" + ACTIONS + DECLINES
    line = next(n for n, t in enumerate(text.split("\n"), 1) if t.startswith("| P6"))
    (warning,) = [p for p in result.problems if "P6" in p.message]
    assert (warning.severity, warning.line) == ("warning", line)
    assert "no machine-readable signal" in warning.message
    assert row("P6").signal == []


def test_an_alternative_that_gives_no_signal_is_reported_too():
    result = load_markdown("# Charge\n" + ACTIONS + DECLINES)
    (warning,) = [p for p in result.problems if "P7" in p.message]
    assert warning.severity == "warning" and "the bank is slow" in warning.message
    assert row("P7").signal == ["http:409"]


def test_conjunctions_and_predicates_survive_yaml_json_and_the_design_document():
    doc = chain()
    for fmt in ("yaml", "json", "md"):
        (again,) = formats.load(export(doc, fmt), format=fmt).chains
        assert [r.signal for r in again.verdict_table] == [r.signal for r in doc.verdict_table]


def test_a_signal_written_all_of_reads_alike_from_yaml_json_and_a_compile_block():
    yaml_text = (
        "id: c\nverdict_table:\n"
        "  - {id: P1, signal: {all: [http:402, code:card_declined]}, verdict: dead_end}\n"
    )
    json_text = (
        '{"id": "c", "verdict_table": [{"id": "P1", "verdict": "dead_end",'
        ' "signal": {"all": ["http:402", "code:card_declined"]}}]}'
    )
    markdown = "# c\n```yaml\n" + yaml_text.split("\n", 1)[1] + "```\n"
    for text, fmt in ((yaml_text, "yaml"), (json_text, "json"), (markdown, "md")):
        (doc,) = formats.load(text, format=fmt).chains
        assert doc.verdict_table[0].signal == ["http:402 && code:card_declined"], fmt


# --- auto-repairs and probes that cannot be read ------------------------------

UNREADABLE = """id: c
actions:
  - id: search
    effect: read
    auto_repairs:
      - {trigger: "n == 0", fields: "try something a bit wider"}
      - {trigger: "n == 0 && intent.cabin != null", fields: "drop cabin"}
  - id: book
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: "look the booking up by our reference", signal: found}
"""


def test_an_auto_repair_written_in_prose_is_a_warning_at_its_line_not_a_silent_no_op():
    """SPEC §2.1: an auto-repair declares the intent transform; prose never fires."""
    result = formats.load(UNREADABLE, format="yaml")
    (warning,) = [p for p in result.problems if "auto-repair" in p.message]
    assert (warning.severity, warning.line) == ("warning", 6)
    assert warning.path == "actions[search].auto_repairs[#1].fields"


def test_a_probe_that_is_not_a_step_id_is_a_warning_at_its_line():
    result = formats.load(UNREADABLE, format="yaml")
    (warning,) = [p for p in result.problems if "probe" in p.message]
    assert (warning.severity, warning.line) == ("warning", 11)


def test_a_compile_block_reports_an_unreadable_auto_repair_at_its_line_too():
    text = "# c\n```yaml\n" + UNREADABLE.split("\n", 1)[1] + "```\n"
    result = formats.load(text, format="md")
    (warning,) = [p for p in result.problems if "auto-repair" in p.message]
    assert warning.line == 7


def test_the_row_signals_example_in_the_format_reference_reads_as_it_says():
    from pathlib import Path

    reference = (Path(__file__).parents[3] / "docs" / "format.md").read_text()
    example = reference.split("### Row signals")[1].split("```yaml\n")[1].split("```")[0]
    (doc,) = formats.load("id: c\n" + example, format="yaml").chains
    assert [r.signal for r in doc.verdict_table] == [
        ["http:402 && code:card_declined && decline_code ∈ {stolen_card, lost_card}"],
        ["http:402 && code:card_declined"],
    ]


MESSAGES = """
| # | Signal | Step scope | Verdict |
|---|---|---|---|
| M1 | `bad_input` "Booking not found" / "Room not found" | charge | `dead_end` |
| M2 | `bad_input` "Booking is cancelled" | charge | `dead_end(permanent: true)` |
| M3 | `409` + `item_gone` "Items are gone: item '<id>'" | charge | `retry` |
| M4 | `bad_input` "Stay is over (checked out)" (at cancel) | charge | `dead_end` |
"""


def message_rows():
    (doc,) = load_markdown("# Charge\n" + ACTIONS + MESSAGES).chains
    return {r.id: r for r in doc.verdict_table}


def test_rows_told_apart_by_their_message_keep_the_message_as_a_condition():
    """One code, several messages (SPEC §3 fragile: prose-match): without the message
    every row after the first would be shadowed by it."""
    rows = message_rows()
    assert rows["M2"].signal == ['code:bad_input && message contains "Booking is cancelled"']


def test_a_second_message_alternative_keeps_the_code_of_the_first():
    assert message_rows()["M1"].signal == [
        'code:bad_input && message contains "Booking not found"',
        'code:bad_input && message contains "Room not found"',
    ]


def test_a_message_is_cut_before_a_placeholder():
    assert message_rows()["M3"].signal == [
        'http:409 && code:item_gone && message contains "Items are gone: item"'
    ]


def test_parentheses_inside_a_message_are_part_of_it_not_a_remark():
    assert message_rows()["M4"].signal == [
        'code:bad_input && message contains "Stay is over (checked out)"'
    ]


# --- error types are not codes ---------------------------------------------------


def test_a_backticked_error_type_alone_is_read_as_a_type_not_a_code():
    """SPEC §2.1 tells them apart (`status == 402 && error.type == 'card_error'`): a
    provider's error envelope carries a type and a code, and a row written for a type
    must match every code of that type."""
    (found,) = load_markdown(
        "# Charge\n" + ACTIONS + "| # | Signal | Step scope | Verdict |\n|---|---|---|---|\n"
        "| T1 | `bad_input_error` on the amount | charge | `dead_end` |\n"
    ).chains
    assert found.verdict_table[0].signal == ["type:bad_input_error"]


def test_an_error_type_written_as_a_code_stays_a_code():
    (found,) = load_markdown(
        "# Charge\n" + ACTIONS + "| # | Signal | Step scope | Verdict |\n|---|---|---|---|\n"
        "| T1 | `code:bad_input_error` | charge | `dead_end` |\n"
    ).chains
    assert found.verdict_table[0].signal == ["code:bad_input_error"]


def test_two_statuses_written_with_a_slash_in_one_span_are_two_alternatives():
    (found,) = load_markdown(
        "# Charge\n" + ACTIONS + "| # | Signal | Step scope | Verdict |\n|---|---|---|---|\n"
        "| T1 | `http:401/403` auth errors | charge | `dead_end` |\n"
    ).chains
    assert found.verdict_table[0].signal == ["http:401", "http:403"]


# --- a remark that says what the row includes -------------------------------------


def one_row(cell: str):
    (found,) = load_markdown(
        "# Charge\n" + ACTIONS + "| # | Signal | Step scope | Verdict |\n|---|---|---|---|\n"
        f"| R1 | {cell} | charge | `dead_end` |\n"
    ).chains
    return found.verdict_table[0]


def test_a_predicate_a_remark_says_the_row_includes_is_a_signal_of_the_row():
    row = one_row("risky card (incl. `reason == masked_decline` hiding theft)")
    assert row.signal == ["reason == masked_decline"]


def test_the_included_predicate_joins_the_alternatives_written_outside_the_remark():
    row = one_row("`http:451` / risky card (including `reason == masked_decline`)")
    assert row.signal == ["http:451", "reason == masked_decline"]


def test_a_remark_that_only_mentions_a_code_is_still_not_a_signal():
    row = one_row("risky card (see `reason == masked_decline` in the notes)")
    assert row.signal == []
