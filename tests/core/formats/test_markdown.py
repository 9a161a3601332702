"""Compile-document import: the Markdown dialect chain-compile writes."""

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.formats.markdown import load_markdown
from chains.core.formats.md_tables import signal_atoms

SAMPLES = Path(__file__).parent / "samples"
FIXTURES = Path(__file__).parents[3] / "fixtures"


def doc(*parts):
    return "\n".join(parts)


def yaml_block(body):
    return f"```yaml\n{body}```\n"


ACTIONS = yaml_block(
    "actions:\n"
    "  - id: search\n"
    "    effect: read                     # double-call: nothing new exists\n"
    "    input: {intent: {cabin: {type: enum[economy, business], required: false}}}\n"
    "    output:\n"
    '      empty: {valid: true, detect: "n == 0",\n'
    "              route: repair(to: search,      # widen\n"
    "                            fields: [cabin])}\n"
    "  - id: book\n"
    "    effect: commit\n"
    "    preconditions:\n"
    '      - {when: "price moved", verdict: gate(consent), reason: "drift"}\n'
    "    idempotency: {mode: none}\n"
    '    confirmation: {probe: search, signal: "found"}\n'
)

TABLE = doc(
    "| # | Signal | Step scope | Verdict | Source |",
    "|---|---|---|---|---|",
    "| D1 | `http:410` / `SEARCH_EXPIRED` | any consumer of `search_id` "
    "| `rewind(to: search)` — search died; re-run | documented (https://example.com/e) |",
    "| D2 | `http:402 card_error` | book | `ok(empty)` → `gate(new_card)` — decline | observed |",
    "| D3 | `http:503` | book | `retry` — declared `rejected_before_execution: true` | doc |",
    "| D4 | `http:429` | book | `reconcile` — NOT declared `no_side_effect` | assumed |",
    '| D5 | message text "sold out" | book | `dead_end` — fragile: prose-match | observed |',
    "| — | …then generic rows 1–12 from §3 | | | |",
)


def load(text):
    return load_markdown(text)


def line_of(text, marker):
    return next(n for n, line in enumerate(text.split("\n"), 1) if marker in line)


def result_text():
    return doc("# Demo", ACTIONS, TABLE)


def only_chain(result):
    assert len(result.chains) == 1, result.problems
    return result.chains[0]


# --- YAML blocks -------------------------------------------------------------


def test_unquoted_verdicts_in_flow_mappings_are_read():
    chain = only_chain(load(doc("# Demo", ACTIONS)))
    assert str(chain.action("search").output.empty.route) == "repair(to: search, fields: [cabin])"
    assert str(chain.action("book").preconditions[0].verdict) == "gate(consent)"


def test_enum_types_in_flow_mappings_are_read():
    chain = only_chain(load(doc("# Demo", ACTIONS)))
    assert chain.action("search").input.intent["cabin"].type == "enum[economy, business]"


def test_a_block_of_indented_list_items_continues_the_previous_blocks_list():
    more = yaml_block("  - id: cancel      # compensator\n    effect: compensate\n")
    result = load(doc("# Demo", ACTIONS, "More actions:", more))
    assert [a.id for a in only_chain(result).actions] == ["search", "book", "cancel"]
    assert any("continues the 'actions' list" in p.message for p in result.problems)


def test_comments_between_and_inside_sections_are_ignored():
    block = yaml_block(
        "# leading comment\nhandles:\n  # a comment line\n  search_id:   # trailing\n"
        "    minted_by: search  # why\n    # closing comment\n"
    )
    result = load(doc("# Demo", block))
    assert only_chain(result).handle("search_id").minted_by == "search"
    assert not [p for p in result.problems if "comment" in p.message]


# --- comments become notes ---------------------------------------------------


def test_comments_inside_a_handle_become_its_notes_and_section_comments_do_not():
    block = yaml_block(
        "# leading comment\nhandles:\n  # a comment line\n  search_id:   # trailing\n"
        "    minted_by: search  # why\n    # closing comment\n"
    )
    handle = only_chain(load(doc("# Demo", block))).handle("search_id")
    assert handle.notes == ["trailing", "minted_by: why", "closing comment"]


def test_a_trailing_comment_on_an_action_key_becomes_a_note_prefixed_with_the_key():
    chain = only_chain(load(doc("# Demo", ACTIONS)))
    assert chain.action("search").notes == [
        "effect: double-call: nothing new exists",
        "widen",  # written inside a verdict broken over two lines
    ]
    assert chain.action("book").notes == []


def test_a_nested_key_prefixes_its_note_with_the_path_inside_the_element():
    block = yaml_block(
        "actions:\n  - id: book     # the commit\n    effect: commit\n"
        "    confirmation:\n      probe: find   # works with a lost response\n"
    )
    action = only_chain(load(doc("# Demo", block))).action("book")
    assert action.notes == ["the commit", "confirmation.probe: works with a lost response"]


def test_consecutive_comment_lines_make_one_note():
    block = yaml_block(
        "actions:\n  - id: book\n    effect: commit\n    idempotency: {mode: none}  # Q4: no key\n"
        "    # correlation record persisted BEFORE dispatch;\n"
        "    # cancellation shield on the in-flight attempt\n"
        "    timeout: 90s      # generous: a tight timeout manufactures\n"
        "                      # reconciles\n"
    )
    assert only_chain(load(doc("# Demo", block))).action("book").notes == [
        "idempotency: Q4: no key",
        "correlation record persisted BEFORE dispatch; "
        "cancellation shield on the in-flight attempt",
        "timeout: generous: a tight timeout manufactures reconciles",
    ]


def test_comments_on_gates_in_mapping_form_become_their_notes():
    block = yaml_block(
        "gates:\n  consent:            # money, so user only\n    audience: user\n"
        "    timeout: {after: 8m, verdict: dead_end}   # under the 10m quote\n"
        "  other:\n    audience: operator\n"
    )
    chain = only_chain(load(doc("# Demo", ACTIONS, block)))
    assert chain.gate("consent").notes == ["money, so user only", "timeout: under the 10m quote"]
    assert chain.gate("other").notes == []


def test_a_hash_inside_a_quoted_string_or_a_value_is_not_a_comment():
    block = yaml_block(
        'handles:\n  h:\n    minted_by: a\n    description: "see #4 # not a comment"\n'
        "    staleness: {detect: [http:410#x]}\n"
    )
    handle = only_chain(load(doc("# Demo", ACTIONS, block))).handle("h")
    assert handle.description == "see #4 # not a comment"
    assert handle.staleness.detect == ["http:410#x"]
    assert handle.notes == []


def test_ruled_scope_markers_are_not_notes():
    chain = marked().chains[0]
    assert all(a.notes == [] for a in chain.actions)


def test_notes_survive_dump_and_load_without_doubling():
    chain = only_chain(load(doc("# Demo", ACTIONS)))
    (again,) = formats.load(formats.dump(chain), format="yaml").chains
    assert again.action("search").notes == chain.action("search").notes
    assert again == chain


def test_a_value_holding_two_keys_on_one_line_is_read_as_both_keys():
    block = yaml_block(
        "actions:\n  - id: pay\n    effect: commit\n    idempotency:\n"
        "      mode: keyed, key_scope: run\n"
    )
    result = load(doc("# Demo", block))
    idem = only_chain(result).action("pay").idempotency
    assert (idem.mode, idem.key_scope) == ("keyed", "run")
    assert any(p.line == 7 and p.severity == "info" for p in result.problems)


# --- verdict tables ----------------------------------------------------------


def rows_of(text):
    chain = only_chain(load(doc("# Demo", ACTIONS, "## Verdict table", TABLE)))
    return {row.id: row for row in chain.verdict_table}


def test_verdict_table_row_keeps_signal_scope_verdict_note_and_source():
    row = rows_of(TABLE)["D1"]
    assert row.signal == ["http:410", "code:SEARCH_EXPIRED"]
    assert row.description == "`http:410` / `SEARCH_EXPIRED`"
    assert row.scope.consumers_of == ["search_id"]
    assert str(row.verdict) == "rewind(to: search)"
    assert row.note == "search died; re-run"
    assert row.source.tag == "documented" and row.source.urls == ["https://example.com/e"]


def test_verdict_chain_written_with_an_arrow_takes_the_last_verdict_and_keeps_the_text():
    row = rows_of(TABLE)["D2"]
    assert str(row.verdict) == "gate(new_card)"
    assert row.note == "as written: `ok(empty)` → `gate(new_card)`; decline"


def test_a_row_declaring_rejected_before_execution_is_no_side_effect():
    assert rows_of(TABLE)["D3"].no_side_effect is True


def test_a_row_saying_not_declared_is_not_no_side_effect():
    assert rows_of(TABLE)["D4"].no_side_effect is False


def test_a_row_mentioning_prose_match_is_fragile():
    assert rows_of(TABLE)["D5"].fragile == "prose-match"


def test_a_pointer_row_to_the_generic_rows_is_reported_as_info():
    result = load(result_text())
    assert [r.id for r in only_chain(result).verdict_table] == ["D1", "D2", "D3", "D4", "D5"]
    (pointer,) = [p for p in result.problems if "generic rows" in p.message]
    assert pointer.severity == "info" and pointer.line == line_of(result_text(), "…then generic")


def test_a_table_restating_the_generic_skeleton_is_reported_not_imported():
    generic = doc(
        "## 8. Shared verdict-table core",
        "| # | Signal | Applies to | Verdict | Source |",
        "|---|---|---|---|---|",
        "| G1 | staleness | consumers | `rewind(to: refresh)` | spec |",
        "| G2 | unmatched, otherwise | any | `dead_end` | spec |",
    )
    result = load(doc("# Demo", ACTIONS, generic))
    assert only_chain(result).verdict_table == []
    (info,) = [p for p in result.problems if "generic skeleton" in p.message]
    assert info.severity == "info" and "G1, G2" in info.message


def test_tables_that_are_not_verdict_tables_are_ignored_without_noise():
    other = doc("| Question | Answer |", "|---|---|", "| UNKNOWN-1 | who knows |")
    result = load(doc("# Demo", ACTIONS, other))
    assert result.problems == []


def test_a_row_whose_verdict_cannot_be_read_is_reported_with_its_line():
    bad = doc(
        "| # | Signal | Step scope | Verdict |",
        "|---|---|---|---|",
        "| X1 | `http:500` | book | probe first, then decide |",
        "| X2 | `http:410` | book | `rewind(to: <the refresh>)` |",
    )
    text = doc("# Demo", ACTIONS, bad)
    result = load(text)
    assert only_chain(result).verdict_table == []
    lines = sorted(p.line for p in result.errors)
    assert lines == [line_of(text, "| X1"), line_of(text, "| X2")]


# --- known_unmatched ---------------------------------------------------------


def test_known_unmatched_bullets_under_a_heading_become_entries():
    text = doc(
        "# Demo",
        ACTIONS,
        "### known_unmatched (left to the default rows)",
        "- `offer_expired` — only seen in a search snippet",
        "- every other 4xx",
    )
    entries = only_chain(load(text)).known_unmatched
    assert [(e.signal, e.note) for e in entries] == [
        ("offer_expired", "only seen in a search snippet"),
        ("every other 4xx", None),
    ]


def test_known_unmatched_after_a_bold_label_paragraph_become_entries():
    text = doc(
        "# Demo",
        ACTIONS,
        "**known_unmatched** (fixed default rows apply):",
        "`bad_param`, `405` — config bugs; a client never sends them, `409 dup` (cars only).",
    )
    entries = only_chain(load(text)).known_unmatched
    assert [e.signal for e in entries] == ["bad_param", "405", "409 dup"]
    assert "a client never sends them" in entries[1].note


# --- scopes ------------------------------------------------------------------


def test_each_scope_heading_with_actions_becomes_a_chain_named_by_its_backticked_id():
    result = formats.load((SAMPLES / "two_scopes.chain.md").read_bytes(), filename="x.md")
    assert [c.id for c in result.chains] == ["locker_reserve", "locker_extend"]


def test_a_scope_gets_the_steps_its_prose_says_it_reuses_and_the_probes_it_names():
    result = formats.load((SAMPLES / "two_scopes.chain.md").read_bytes(), filename="x.md")
    extend = result.chains[1]
    assert sorted(a.id for a in extend.actions) == ["extend", "find_slot", "quote"]
    assert sorted(h.id for h in extend.handles) == ["quote_id", "slot_id"]
    assert [g.id for g in extend.gates] == ["pay_consent"]
    assert any("copied" in p.message and p.severity == "info" for p in result.problems)


def test_a_scopes_own_definition_overrides_the_earlier_one_with_the_same_id():
    result = formats.load((SAMPLES / "two_scopes.chain.md").read_bytes(), filename="x.md")
    assert result.chains[1].handle("slot_id").minted_by == "external"
    assert result.chains[0].handle("slot_id").minted_by == "reserve"


def test_a_shared_policy_section_applies_to_every_chain():
    result = formats.load((SAMPLES / "two_scopes.chain.md").read_bytes(), filename="x.md")
    assert [c.policy.per_chain.max_rewinds for c in result.chains] == [2, 2]


def test_a_scope_heading_without_actions_shares_its_content():
    text = doc("# Pay", ACTIONS, "### Chain M rows", TABLE)
    result = load(text)
    assert only_chain(result).id == "pay"
    assert len(result.chains[0].verdict_table) == 5
    assert any("defines no actions" in p.message for p in result.problems)


def test_a_document_without_scope_headings_is_one_chain_named_after_its_title():
    assert only_chain(load(doc("# Card Payments — Compile", ACTIONS))).id == (
        "card_payments_compile"
    )


def test_a_spec_like_document_yields_its_examples_and_reports_grammar_blocks():
    result = formats.load((SAMPLES / "spec_like.md").read_bytes(), filename="spec.md")
    assert [c.id for c in result.chains] == [
        "worked_example_a_small_locker_chain",
        "worked_example_b_big_locker_chain",
    ]
    assert result.chains[0].variants is None
    assert [r.id for r in result.chains[0].verdict_table] == ["D1"]
    infos = {p.line for p in result.problems if p.severity == "info"}
    assert {6, 14, 21} <= infos  # grammar block, its sibling, the generic table
    assert result.errors == []


# --- bad input ---------------------------------------------------------------


def test_malformed_yaml_in_a_block_is_reported_with_the_file_line_and_column():
    text = doc("# Demo", "", "```yaml", "actions:", "  - id: a", "    effect: [read", "```")
    result = load(text)
    error = next(e for e in result.errors if "malformed YAML" in e.message)
    assert (error.line, error.column) == (7, 1)


def test_one_invalid_action_is_reported_while_the_rest_imports():
    block = yaml_block(
        "actions:\n  - id: ok_one\n    effect: read\n  - id: broken\n    effect: teleport\n"
    )
    result = load(doc("# Demo", block))
    assert [a.id for a in only_chain(result).actions] == ["ok_one"]
    (error,) = result.errors
    assert (error.line, error.path) == (7, "actions[broken].effect")


def test_an_invalid_field_is_dropped_and_the_rest_of_its_action_kept():
    block = yaml_block(
        "actions:\n  - id: a\n    effect: read\n    output:\n"
        "      empty: {valid: true, route: gate}\n"
    )
    result = load(doc("# Demo", block))
    action = only_chain(result).action("a")
    assert action.output.empty.route is None and action.output.empty.valid
    assert result.errors[0].path == "actions[a].output.empty.route"


def test_unknown_keys_are_kept_in_extras_and_reported():
    block = yaml_block("actions:\n  - id: a\n    effect: read\n    colour: blue\n")
    result = load(doc("# Demo", block))
    assert only_chain(result).action("a").extras == {"colour": "blue"}
    (info,) = result.problems
    assert (info.severity, info.line, info.path) == ("info", 6, "actions[a].colour")


def test_chain_level_source_extras_and_independence_are_read():
    block = yaml_block(
        "id: demo\n"
        "source: {tag: assumed, note: from a call with the owner}\n"
        "extras: {fit_test: {single_call: 'no'}}\n"
        "independence:\n"
        "  - {handles: [a, b], note: separate calls}\n"
    )
    result = load(doc("# Demo", ACTIONS, block))
    chain = only_chain(result)
    assert chain.source.tag == "assumed"
    assert chain.extras == {"fit_test": {"single_call": "no"}}
    assert chain.independence[0].handles == ["a", "b"]
    assert result.errors == []


def test_a_block_naming_the_chain_makes_a_chain_even_before_it_has_elements():
    result = load(doc("# Demo", yaml_block("id: fresh\ntitle: A new chain\n")))
    assert [(c.id, c.title) for c in result.chains] == [("fresh", "A new chain")]
    assert result.errors == []


def test_a_placeholder_inside_a_quoted_value_does_not_make_a_grammar_block():
    block = yaml_block(
        "actions:\n"
        "  - id: a\n"
        "    effect: read\n"
        '    description: "read | mint | commit | <step id> or <gate id>"\n'
    )
    result = load(doc("# Demo", block))
    assert [a.id for a in only_chain(result).actions] == ["a"]


def test_a_yaml_block_without_chain_sections_is_reported():
    result = load(doc("# Demo", ACTIONS, yaml_block("servers: [a, b]\n")))
    assert any("holds no chain section" in p.message for p in result.problems)


@pytest.mark.parametrize(
    "text",
    ["", "```yaml\n", "# T\n```yaml\n: : :\n```\n", "| a |\n|---|\n| b |", "```yaml\n- 1\n```"],
)
def test_load_markdown_never_raises(text):
    result = load(text)
    assert isinstance(result.problems, list)


# --- scopes marked inside a YAML block ---------------------------------------


def marked():
    return formats.load((SAMPLES / "marked_scopes.chain.md").read_bytes(), filename="x.md")


def test_marker_comments_in_a_yaml_block_split_its_items_into_chains():
    chains = {c.id: c for c in marked().chains}
    assert list(chains) == ["chain_p_buy_permit", "chain_q_refund_permit"]
    assert [a.id for a in chains["chain_p_buy_permit"].actions][:2] == ["quote", "buy"]
    assert [a.id for a in chains["chain_q_refund_permit"].actions] == ["get_permit", "refund"]


def test_a_refund_chain_does_not_buy_again_the_permit_it_refunds():
    """The shape of a payment compile's refund chain: it consumes what the payment chain
    made; it does not create a customer or a payment of its own (SPEC §2.1)."""
    q = {c.id: c for c in marked().chains}["chain_q_refund_permit"]
    assert q.handle("permit_id").minted_by == "external(chain P buy)"
    assert q.handle("permit_id").derived_from == []
    assert "derived from quote_id of another chain" in q.handle("permit_id").notes


def test_a_ruled_comment_that_names_no_scope_makes_the_items_below_it_shared():
    p, q = marked().chains
    assert "get_permit" in {a.id for a in p.actions} & {a.id for a in q.actions}
    assert any("actions get_permit from shared" in m.message for m in marked().problems)


def test_a_marked_chain_takes_its_title_and_description_from_the_bold_summaries():
    p = marked().chains[0]
    assert (p.title, p.description) == ("Chain P — buy permit", "Quote a permit and buy it.")


def test_chain_rows_headings_route_their_rows_to_the_named_chain():
    p, q = marked().chains
    assert [r.id for r in p.verdict_table] == ["K1", "P1"]
    assert [r.id for r in q.verdict_table][:2] == ["K1", "Q1"]


def test_a_marker_naming_a_chain_heading_routes_items_to_that_chain():
    text = doc(
        "# Demo",
        "## Chain A — buy",
        yaml_block("actions:\n  - id: buy\n    effect: read\n"),
        "## Handles",
        yaml_block("handles:\n  # ---- Chain A ----\n  h1: {minted_by: buy}\n"),
        "## Chain B — other",
        yaml_block("actions:\n  - id: other\n    effect: read\n"),
    )
    a, b = load(text).chains
    assert [h.id for h in a.handles] == ["h1"]
    assert b.handles == []


# --- what a scope shares --------------------------------------------------------

TWO_SCOPES = doc(
    "# Demo",
    "## Scope 1 — `first`",
    yaml_block(
        "actions:\n  - id: find\n    effect: read\n    output: {handles: [slot]}\n"
        "  - id: take\n    effect: commit\n    input: {handles: [slot]}\n"
        "    idempotency: {mode: keyed, key_scope: run}\n"
    ),
    "| # | Signal | Step scope | Verdict |",
    "|---|---|---|---|",
    "| F1 | `http:410` | find, take | `rewind(to: find)` |",
    "| F2 | `http:409` | take | `dead_end` |",
    "| F3 | `http:404` | any consumer of `slot` | `rewind(to: find)` |",
    "",
    "## Scope 2 — `second`",
    yaml_block(
        "handles:\n  slot: {minted_by: take}\nactions:\n  - id: use\n    effect: read\n"
        "    input: {handles: [slot]}\n"
    ),
    "| # | Signal | Step scope | Verdict |",
    "|---|---|---|---|",
    "| S1 | `http:500` | use | `retry` |",
)

SHARING = TWO_SCOPES.replace(
    "## Scope 2 — `second`",
    "## Scope 2 — `second`\n\nShares `find` with Scope 1 (same rows F1, F3).\n",
)


def test_a_scope_gets_no_step_or_row_of_another_scope_because_a_handle_names_it():
    """The modify chain of a booking compile must not book again (SPEC §2.1: commits are
    exactly-once per run); the handle it reads comes from outside the chain."""
    second = load(TWO_SCOPES).chains[1]
    assert [a.id for a in second.actions] == ["use"]
    assert [r.id for r in second.verdict_table] == ["S1"]
    assert second.handle("slot").minted_by == "external(scope 1 take)"


def test_a_handle_another_scope_makes_is_external_with_its_origin_and_said_so():
    result = load(TWO_SCOPES)
    (info,) = [p for p in result.problems if "external here" in p.message]
    assert info.severity == "info" and "slot (external(scope 1 take))" in info.message


def test_steps_and_rows_the_prose_says_a_scope_shares_are_copied_narrowed():
    result = load(SHARING)
    second = result.chains[1]
    assert [a.id for a in second.actions] == ["find", "use"]
    rows = {r.id: r for r in second.verdict_table}
    assert list(rows) == ["S1", "F1", "F3"]
    assert rows["F1"].scope.steps == ["find"]
    assert rows["F3"].scope.consumers_of == ["slot"]
    assert any("verdict rows F1, F3 from first" in p.message for p in result.problems)


def test_a_shared_row_is_not_taken_twice_when_the_chain_has_its_id():
    text = SHARING.replace("| S1 | `http:500` | use |", "| F1 | `http:500` | use |")
    second = load(text).chains[1]
    assert [r.id for r in second.verdict_table] == ["F1", "F3"]
    assert str(second.verdict_table[0].verdict) == "retry"


def test_a_shared_step_keeps_its_place_before_the_scopes_own_steps():
    second = load(SHARING).chains[1]
    assert [a.id for a in second.actions] == ["find", "use"]


def test_the_summary_gives_a_scope_another_scopes_step_only_when_it_uses_what_it_makes():
    summary = "- **Scope 2** — uses: `find → use`.\n- **Scope 1** — books: `find → take`.\n"
    text = TWO_SCOPES.replace("## Scope 1", summary + "\n## Scope 1", 1)
    text = text.replace("handles:\n  slot: {minted_by: take}\n", "handles:\n  slot: {}\n")
    result = load(text)
    assert [a.id for a in result.chains[1].actions] == ["find", "use"]
    other = text.replace("`find → use`", "`take → use`")
    assert [a.id for a in load(other).chains[1].actions] == ["use"]
    assert any("names take of another scope" in p.message for p in load(other).problems)


def test_a_verdict_naming_another_scopes_step_does_not_copy_that_step():
    text = TWO_SCOPES.replace(
        "| S1 | `http:500` | use | `retry` |", "| S1 | `http:500` | use | `rewind(to: find)` |"
    )
    assert [a.id for a in load(text).chains[1].actions] == ["use"]


def test_compensation_and_probe_steps_a_scope_names_come_from_the_scope_defining_them():
    text = doc(
        "# Demo",
        "## Scope 1 — `book`",
        yaml_block(
            "actions:\n  - id: buy\n    effect: commit\n"
            "    idempotency: {mode: keyed, key_scope: run}\n"
            "    confirmation: {probe: look}\n    compensation: {action: undo}\n"
        ),
        "## Scope 2 — `cancel`",
        yaml_block(
            "actions:\n  - id: undo\n    effect: compensate\n  - id: look\n    effect: read\n"
        ),
    )
    first = load(text).chains[0]
    assert [a.id for a in first.actions] == ["buy", "undo", "look"]


COMPENSATED_ELSEWHERE = doc(
    "# Demo",
    "## Scope 1 — `book`",
    yaml_block(
        "actions:\n  - id: buy\n    effect: commit\n"
        "    idempotency: {mode: keyed, key_scope: run}\n"
        "    confirmation: {probe: look}\n    compensation: {chain: [quote_undo, undo]}\n"
        "  - id: look\n    effect: read\n"
    ),
    "## Scope 2 — `cancel` (also Scope 1's compensation sub-chain)",
    yaml_block(
        "actions:\n  - id: quote_undo\n    effect: read\n"
        "  - id: undo\n    effect: compensate\n  - id: audit\n    effect: read\n"
    ),
    "| # | Signal | Step scope | Verdict |",
    "|---|---|---|---|",
    "| C1 | `code:ALREADY_UNDONE` | undo | `ok` |",
    "| C2 | `http:409` | undo, audit | `dead_end` |",
    "| C3 | `http:500` | audit | `retry` |",
)


def test_a_compensator_taken_from_another_scope_brings_the_rows_written_for_it():
    """A booking compile's cancel chain is also the stay chain's compensation sub-chain:
    when the stay chain unwinds, its cancel step fails as it does at home (SPEC §2.1
    compensation.chain runs under the run's policy; §3 classifies every attempt)."""
    book = load(COMPENSATED_ELSEWHERE).chains[0]
    rows = {r.id: r for r in book.verdict_table}
    assert list(rows) == ["C1", "C2"]
    assert rows["C2"].scope.steps == ["undo"]


def test_declared_shared_rows_are_the_whole_answer_even_for_a_compensator():
    text = COMPENSATED_ELSEWHERE.replace("## Scope 2", "Same rows C1 as Scope 2.\n\n## Scope 2", 1)
    book = load(text).chains[0]
    assert [r.id for r in book.verdict_table] == ["C1"]


def test_a_shared_row_naming_steps_of_several_chains_keeps_this_chains_and_records_the_rest():
    """SKILL Step 6 lets the chains of one compile share a verdict-table core."""
    text = doc(
        TWO_SCOPES,
        "## Shared rows",
        "| # | Signal | Step scope | Verdict |",
        "|---|---|---|---|",
        "| C1 | `http:502` | take, use | `reconcile` |",
    )
    first, second = load(text).chains
    c1 = next(r for r in second.verdict_table if r.id == "C1")
    assert c1.scope.steps == ["use"]
    assert "steps of other chains left out of its scope: take" in c1.note
    assert next(r for r in first.verdict_table if r.id == "C1").scope.steps == ["take"]


# --- policy keyed by chain name ----------------------------------------------


def test_per_chain_policy_keyed_by_chain_name_goes_to_that_chain_only():
    p, q = marked().chains
    assert (p.policy.per_chain.max_rewinds, q.policy.per_chain.max_rewinds) == (4, 1)
    assert p.policy.per_chain.compensation_order == q.policy.per_chain.compensation_order
    assert p.policy.per_chain.extras == {}
    assert not [m for m in marked().problems if "unknown key" in m.message]


# --- signal atoms ------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "atoms"),
    [
        ("`timeout` / `conn_reset` / `http:5xx`", ["timeout", "conn_reset", "http:5xx"]),
        ("timeout / conn drop / ambiguous 5xx", ["timeout", "conn_drop", "http:5xx"]),
        ("`409` + `order_gone` (at commit)", ["http:409 && code:order_gone"]),
        ("`422 card_refused` / `card_lost`", ["http:422 && code:card_refused", "code:card_lost"]),
        (
            '`bad_params` "Reservation not found"',
            ['code:bad_params && message contains "Reservation not found"'],
        ),
        ("`validation_error` on the amount", ["type:validation_error"]),
        (
            "probe/webhook: `status == 'x'` or `charge.expired`",
            ["status == 'x'", "webhook:charge.expired"],
        ),
        ("precondition: `total_amount` drifted", []),
        ("`code:77` timeout / conn drop", ["code:77", "timeout", "conn_drop"]),
    ],
)
def test_signal_atoms_are_read_from_backticks_and_clear_prose(cell, atoms):
    assert signal_atoms(cell) == atoms


def test_a_backticked_step_name_in_a_signal_cell_is_not_a_code():
    assert signal_atoms("`code:4100` on `book` / `pay`", names={"book", "pay"}) == ["code:4100"]


def test_the_signal_cell_is_kept_as_written_beside_its_atoms():
    table = doc(
        "| # | Signal | Step scope | Verdict |",
        "|---|---|---|---|",
        "| T1 | `timeout` / `conn_drop` | book | `reconcile` |",
    )
    row = only_chain(load(doc("# Demo", ACTIONS, table))).verdict_table[0]
    assert (row.signal, row.description) == (["timeout", "conn_drop"], "`timeout` / `conn_drop`")


# --- malformed Markdown ------------------------------------------------------


def test_an_unclosed_fence_is_reported_with_its_line_and_column_and_still_read():
    text = doc("# Demo", "", "  ```yaml", "actions:", "  - {id: a, effect: read}")
    result = load(text)
    (warning,) = [p for p in result.problems if "never closed" in p.message]
    assert (warning.line, warning.column, warning.severity) == (3, 3, "warning")
    assert [a.id for a in only_chain(result).actions] == ["a"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("| X1 | `http:409` | book |", "has 3 cells, the header 4"),
        ("| X1 | `http:409` | book | `retry` | extra |", "has 5 cells, the header 4"),
    ],
)
def test_a_row_with_the_wrong_number_of_cells_is_reported_with_its_line(row, message):
    text = doc("# Demo", ACTIONS, "| # | Signal | Step scope | Verdict |", "|---|---|---|---|", row)
    result = load(text)
    assert [p.line for p in result.problems if message in p.message] == [line_of(text, "| X1")]


def test_a_verdict_table_without_a_verdict_column_is_reported_not_imported():
    table = doc("| # | Signal | Step scope |", "|---|---|---|", "| X1 | `http:409` | book |")
    text = doc("# Demo", ACTIONS, "## Verdict rows", table)
    result = load(text)
    assert only_chain(result).verdict_table == []
    (warning,) = [p for p in result.problems if "no Verdict column" in p.message]
    assert warning.line == line_of(text, "| # | Signal")


@pytest.mark.parametrize(
    "text",
    [
        "```yaml\nactions:\n  # ---- Chain Z ----\n  - {id: a, effect: read}\n",
        "| # | Signal |\n|---|---|\n| 1 |",
        "**Chain A.**\n```yaml\n  # === Chain A ===\n- 1\n```",
        "```yaml\npolicy: {per_chain: {chain_A: 3}}\n```",
    ],
)
def test_malformed_documents_never_raise(text):
    assert isinstance(load(text).problems, list)


def test_a_markdown_document_without_chain_definitions_yields_no_chain_and_says_so():
    result = load("# Notes\n\nJust prose, and a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert result.chains == []
    assert [p.severity for p in result.problems] == ["error"]
    assert "not a chain" in result.problems[0].message


def test_a_scope_title_keeps_its_words_without_backticks():
    text = (
        "# Demo compile\n\n## Scope 1 — `demo_booking`\n\n```yaml\n"
        "actions:\n  - {id: search, effect: read}\n```\n"
    )
    [chain] = load(text).chains
    assert (chain.id, chain.title) == ("demo_booking", "Scope 1 — demo_booking")


def test_shared_per_step_entries_for_another_chains_actions_are_left_out():
    policy = yaml_block(
        "policy:\n  per_step:\n    read: {attempts: 3}\n    take: {attempts: 1}\n"
        "    use: {attempts: 2}\n    nowhere: {attempts: 4}\n"
    )
    result = load(doc(TWO_SCOPES, "## Policy", policy))
    first, second = result.chains
    assert set(first.policy.per_step) == {"read", "take", "nowhere"}
    assert set(second.policy.per_step) == {"read", "use", "nowhere"}
    messages = [p.message for p in result.problems if "per_step entries" in p.message]
    assert messages == [  # at the line of the entry left out
        "chain 'second': policy.per_step entries for other chains' actions left out: take",
        "chain 'first': policy.per_step entries for other chains' actions left out: use",
    ]


# --- a shared prefix, as a multi-scope compile writes it -----------------------


def shared_prefix():
    return formats.load((SAMPLES / "shared_prefix.chain.md").read_bytes(), filename="x.md")


def test_a_scope_sharing_a_prefix_gets_the_prefix_and_not_the_other_scopes_commit():
    """A hold chain shares search and pricing with the buy chain; it must not buy too
    (SPEC §2.1: an unkeyed commit dispatches at most once, and only where it belongs)."""
    hold = shared_prefix().chains[1]
    assert [a.id for a in hold.actions] == [
        "find_sailings",
        "pick_fare",
        "get_fare",
        "get_cabins",
        "find_ticket",
        "quote_refund",
        "confirm_refund",
        "hold_seat",
        "pay_hold",
    ]


def test_a_scope_sharing_rows_by_range_gets_exactly_those_rows():
    hold = shared_prefix().chains[1]
    assert [r.id for r in hold.verdict_table] == ["H1", "B1", "B2", "B3", "B5"]
    assert hold.verdict_table[1].scope.steps == ["get_fare"]


def test_the_hotel_compile_modify_chain_reads_the_reservation_without_booking_it():
    result = formats.load((FIXTURES / "hotel-compile.md").read_bytes(), filename="x.md")
    modify = result.chains[1]
    assert [a.id for a in modify.actions] == [
        "get_reservation",
        "quote_modification",
        "modify_stay",
    ]
    assert modify.handle("reservation_id").minted_by == "external(scope 1 book_stay)"


def test_a_scope_writing_its_own_handle_as_another_scopes_external_gets_its_own_minter():
    text = doc(
        "# Demo",
        "## Scope A — book",
        yaml_block("actions:\n  - id: buy\n    effect: read\n    output: {handles: [res]}\n"),
        "## Scope B — cancel",
        yaml_block(
            "handles:\n  res: {minted_by: external(scope A buy output)}\n"
            "actions:\n  - id: undo\n    effect: read\n    input: {handles: [res]}\n"
        ),
    )
    a, b = load(text).chains
    assert a.handle("res").minted_by == "buy"
    assert b.handle("res").minted_by == "external(scope A buy output)"


# --- prose words in a Step scope cell ------------------------------------------

PROSE_SCOPES = doc(
    "# Demo",
    ACTIONS,
    "| # | Signal | Step scope | Verdict |",
    "|---|---|---|---|",
    "| W1 | `http:429` | search, book, probes | `retry` |",
    "| W2 | `timeout` | reads | `retry` |",
    "| W3 | `timeout` | whatever comes | `retry` |",
)


def test_a_prose_word_in_a_step_scope_cell_is_not_an_action_id():
    """Only names the document defines are steps; lint would call `probes` dangling."""
    rows = {r.id: r for r in only_chain(load(PROSE_SCOPES)).verdict_table}
    assert rows["W1"].scope.steps == ["search", "book"]
    assert rows["W1"].scope.text == "search, book, probes"


def test_a_plural_effect_word_in_a_step_scope_cell_is_that_effect_class():
    rows = {r.id: r for r in only_chain(load(PROSE_SCOPES)).verdict_table}
    assert (rows["W2"].scope.steps, rows["W2"].scope.effects) == ([], ["read"])


def test_a_step_scope_cell_naming_no_step_is_reported_and_kept_as_text():
    result = load(PROSE_SCOPES)
    rows = {r.id: r for r in only_chain(result).verdict_table}
    assert (rows["W3"].scope.steps, rows["W3"].scope.text) == ([], "whatever comes")
    (problem,) = [p for p in result.problems if "W1" in p.message]
    assert problem.severity == "info" and "probes" in problem.message


def test_a_step_named_before_a_remark_in_a_scope_cell_is_a_step():
    text = PROSE_SCOPES.replace(
        "| W3 | `timeout` | whatever comes |", "| W3 | `timeout` | book (GDS) |"
    )
    rows = {r.id: r for r in only_chain(load(text)).verdict_table}
    assert (rows["W3"].scope.steps, rows["W3"].scope.text) == (["book"], "book (GDS)")


def test_a_shared_row_giving_each_chain_its_own_verdict_gives_each_chain_its_own():
    """A shared core row may say `rewind(to: a)` (Chain A) / `rewind(to: b)` (Chain B);
    each chain must rewind to its own step, never to a step it does not have."""
    text = doc(
        "# Demo",
        "## Chain A — first",
        yaml_block("actions:\n  - id: find\n    effect: read\n"),
        "## Chain B — second",
        yaml_block("actions:\n  - id: seek\n    effect: read\n"),
        "## Shared rows",
        "| # | Signal | Step scope | Verdict |",
        "|---|---|---|---|",
        "| C1 | `http:410` | find, seek "
        "| `rewind(to: find)` (Chain A) / `rewind(to: seek)` (Chain B) |",
    )
    a, b = load(text).chains
    assert str(a.verdict_table[0].verdict) == "rewind(to: find)"
    assert str(b.verdict_table[0].verdict) == "rewind(to: seek)"
