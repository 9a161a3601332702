"""The design document: a chain in the SKILL Step 6 layout that imports back to itself."""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from chains.core import design_doc, dot, formats
from chains.core.design_doc import design_document
from chains.core.dot import RenderError
from chains.core.formats.md_outline import outline
from chains.core.model import ChainSpec

from .strategies import chains

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture_chains() -> list[ChainSpec]:
    found = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        found += formats.load(path.read_bytes(), filename=path.name).chains
    found += formats.load((FIXTURES / "hotel-compile.md").read_bytes(), format="md").chains
    return found


FIXTURE_CHAINS = {c.id: c for c in fixture_chains()}


def reimported(chain: ChainSpec) -> tuple[ChainSpec, formats.ImportResult]:
    result = formats.load(design_document(chain), format="md")
    assert len(result.chains) == 1, result.problems
    return result.chains[0], result


def assert_round_trips(chain: ChainSpec) -> None:
    again, result = reimported(chain)
    assert result.errors == []
    assert formats.to_document(again) == formats.to_document(chain)


def section(text: str, number: int) -> str:
    """The text of the ``## <number>.`` section, up to the next section."""
    start = re.search(rf"^## {number}\. .*$", text, re.M)
    assert start is not None, f"no section {number}"
    end = re.search(r"^## \d+\. ", text[start.end() :], re.M)
    return text[start.start() : start.end() + end.start() if end else len(text)]


def small_doc(**extra) -> dict:
    """Search, pick, book: three handles in a line, the last one minted by a commit."""
    doc = {
        "id": "small",
        "handles": [
            {"id": "search_id", "minted_by": "search"},
            {"id": "pick", "minted_by": "choose", "derived_from": ["search_id"]},
            {"id": "order_id", "minted_by": "book", "derived_from": ["pick"]},
        ],
        "actions": [
            {"id": "search", "effect": "read", "output": {"handles": ["search_id"]}},
            {
                "id": "choose",
                "effect": "select",
                "input": {"handles": ["search_id"]},
                "output": {"handles": ["pick"]},
            },
            {
                "id": "book",
                "effect": "commit",
                "input": {"handles": ["pick"], "intent": ["dates"]},
                "output": {"handles": ["order_id"]},
            },
        ],
    }
    doc.update(extra)
    return doc


def small_chain(**extra) -> ChainSpec:
    return ChainSpec.model_validate(small_doc(**extra))


# --- the round trip --------------------------------------------------------------------


@pytest.mark.parametrize("chain_id", sorted(FIXTURE_CHAINS))
def test_every_fixture_chain_round_trips_through_its_design_document(chain_id):
    assert_round_trips(FIXTURE_CHAINS[chain_id])


def test_the_fixtures_include_the_yaml_chains_and_both_chains_of_the_compile():
    assert {"flight_roundtrip", "hotel_stay_booking", "hotel_stay_modify"} <= set(FIXTURE_CHAINS)
    assert len(FIXTURE_CHAINS) == len(list(FIXTURES.glob("*.yaml"))) + 2


@settings(
    max_examples=settings().max_examples * 3 // 2,  # 150 on CI (the ci profile), 15 locally
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(chain=chains)
def test_generated_chains_round_trip_through_their_design_document(chain):
    assert_round_trips(chain)


def test_a_chain_with_nothing_in_it_yet_round_trips():
    assert_round_trips(ChainSpec(id="fresh", title="New chain"))


def test_a_chain_without_a_title_does_not_take_the_heading_as_its_title():
    again, _ = reimported(ChainSpec(id="untitled", actions=[{"id": "a", "effect": "read"}]))
    assert again.title is None


def test_the_module_doctests_pass():
    assert doctest.testmod(design_doc).failed == 0


HOSTILE = [
    "```yaml\nactions:\n  - {id: evil, effect: commit}\n```",
    "---\n# Scope 1 — `evil`\n## Chain A — more\n",
    "| # | Signal | Scope | Verdict |\n|---|---|---|---|\n| X1 | `http:500` | any | `retry` |",
    "<script>alert('x')</script>",
    "**known_unmatched**: `code:EVIL`, `code:WORSE`",
    "  # ──── Chain M ────",
    "~~~\nfenced\n~~~\n````",
    "- a bullet\n* a star\n1. a number",
    "read | mint | <step id> | <gate id>",
    "a\r\nb\u2028c\x85d",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_in_descriptions_and_ids_survive_the_round_trip(text):
    doc = small_doc(
        title=text,
        description=text,
        gates=[{"id": text, "audience": "user", "description": text, "outcomes": {text: "ok"}}],
        verdict_table=[{"id": text, "signal": [text], "description": text, "verdict": "retry"}],
        known_unmatched=[{"signal": text, "note": text}],
    )
    doc["actions"][0]["description"] = text
    doc["handles"][0]["id"] = text
    doc["handles"][1]["derived_from"] = [text]
    doc["handles"][0]["source"] = {"tag": "observed", "note": text, "urls": [text]}
    assert_round_trips(ChainSpec.model_validate(doc))


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_open_no_heading_fence_or_table_of_their_own(text):
    plain = design_document(small_chain(id="plain"))
    hostile = design_document(small_chain(id="plain", description=text))
    headings, nodes, _ = outline(hostile)
    expected, expected_nodes, _ = outline(plain)
    assert [h.title for h in headings] == [h.title for h in expected]
    assert [n.kind for n in nodes if n.kind in ("code", "table")] == [
        n.kind for n in expected_nodes if n.kind in ("code", "table")
    ]


# --- determinism -------------------------------------------------------------------------


def test_the_same_chain_always_gives_the_same_text():
    chain = FIXTURE_CHAINS["card_payment_manual_capture"]
    again, _ = reimported(chain)
    assert design_document(chain) == design_document(chain) == design_document(again)


# --- sections ----------------------------------------------------------------------------


def test_the_sections_follow_the_skill_step_6_order():
    text = design_document(FIXTURE_CHAINS["flight_roundtrip"])
    titles = re.findall(r"^## \d+\. (.*)$", text, re.M)
    assert titles == [
        "Chain summary",
        "Fit-test verdict",
        "Evidence log",
        "Handle graph",
        "Actions",
        "Verdict table",
        "Gates",
        "Policy",
        "Invalidation walkthroughs",
        "UNKNOWNs and assumptions",
        "Boundary recap",
    ]


def test_the_summary_gives_the_title_counts_steps_and_lint_status():
    summary = section(design_document(FIXTURE_CHAINS["flight_roundtrip"]), 1)
    assert "Skyloom round-trip flight booking" in summary
    assert "9 handles, 12 actions" in summary
    assert "`outbound_search` (read) → `select_outbound` (select)" in summary
    assert "**Lint status:** **VALID**" in summary


def test_the_summary_lists_lint_errors_of_an_invalid_chain():
    summary = section(design_document(FIXTURE_CHAINS["unsafe_retry_booking"]), 1)
    assert "**Lint status:** **INVALID**" in summary
    assert "error `" in summary


def test_a_chain_without_fit_test_answers_says_the_fit_test_was_not_recorded():
    fit = section(design_document(small_chain()), 2)
    assert "was not recorded" in fit


def test_recorded_fit_test_answers_give_the_verdict_and_the_refusals():
    chain = small_chain(extras={"fit_test": {"single_call": "yes"}})
    fit = section(design_document(chain), 2)
    assert "**Verdict: not a fit.**" in fit
    assert "`single_call`" in fit


def test_unreadable_fit_test_answers_are_reported_not_raised():
    chain = small_chain(extras={"fit_test": {"single_call": "maybe"}})
    assert "could not be read" in section(design_document(chain), 2)


def test_the_fit_test_section_names_the_properties_the_chain_shows():
    fit = section(design_document(small_chain()), 2)
    assert "Commit-class actions: `book`" in fit
    assert "Landed facts (handles minted by a commit): `order_id`" in fit


def test_the_evidence_log_lists_each_claims_tag_and_urls():
    doc = small_doc()
    doc["actions"][0]["source"] = {"tag": "documented", "urls": ["https://example.com/search"]}
    log = section(design_document(ChainSpec.model_validate(doc)), 3)
    assert "| `actions[search]` | `documented` | `https://example.com/search` |" in log


def test_a_chain_without_sources_says_every_claim_is_unsourced():
    assert "unsourced" in section(design_document(small_chain()), 3)


def test_the_handle_graph_draws_each_handle_under_the_one_it_derives_from():
    graph = section(design_document(small_chain()), 4)
    assert "search_id  (minted by search)\n└── pick  (minted by choose)\n" in graph
    assert "    └── order_id  (minted by book, landed fact)" in graph
    assert "handles:\n" in graph


def test_handles_on_a_derived_from_cycle_are_still_sketched():
    chain = ChainSpec.model_validate(
        {
            "id": "loop",
            "handles": [{"id": "a", "derived_from": ["b"]}, {"id": "b", "derived_from": ["a"]}],
        }
    )
    graph = section(design_document(chain), 4)
    assert "on a derived_from cycle (no root above them):\na\n└── b\n" in graph


def test_a_lineage_deeper_than_the_recursion_limit_is_still_sketched():
    depth = sys.getrecursionlimit() + 100
    handles = [{"id": f"h{i}", "derived_from": [f"h{i - 1}"] if i else []} for i in range(depth)]
    graph = section(
        design_document(ChainSpec.model_validate({"id": "deep", "handles": handles})), 4
    )
    assert f"[level {depth - 1}] h{depth - 1}" in graph


def test_the_actions_section_tables_each_step_and_carries_their_yaml():
    actions = section(design_document(small_chain()), 5)
    assert "| 3 | `book` | commit | `pick` | `order_id` |" in actions
    assert "actions:\n" in actions


def test_the_verdict_table_is_shown_to_people_without_being_imported_twice():
    chain = FIXTURE_CHAINS["flight_roundtrip"]
    table = section(design_document(chain), 6)
    assert "| `F1` | `http:410`, `code:SEARCH_TOKEN_EXPIRED` |" in table
    assert "generic rows of SPEC §3" in table
    again, _ = reimported(chain)
    assert len(again.verdict_table) == len(chain.verdict_table)
    assert len(again.known_unmatched) == len(chain.known_unmatched)


def test_gates_and_policy_sections_carry_their_yaml():
    text = design_document(FIXTURE_CHAINS["flight_roundtrip"])
    assert "gates:\n" in section(text, 7)
    assert "policy:\n" in section(text, 8)
    assert "Escalation ladder: model → user → operator" in section(text, 8)


def test_the_two_widest_cascades_of_the_flight_chain_start_at_search_token():
    walk = section(design_document(FIXTURE_CHAINS["flight_roundtrip"]), 9)
    titles = re.findall(r"^### 9\.\d (.*)$", walk, re.M)
    assert titles == ["Re-minting `search_token`", "Re-minting `outbound_pick`"]
    assert "`quote_id` dies: it derives from `outbound_pick`" in walk
    assert "Untouched: `search_token`." in walk


def test_a_walkthrough_keeps_a_handle_minted_by_a_commit_as_a_fact():
    walk = section(design_document(small_chain()), 9)
    assert "`order_id` stays a fact: the commit `book` mints it" in walk


def test_a_derived_from_cycle_is_reported_instead_of_a_walkthrough():
    chain = ChainSpec.model_validate(
        {
            "id": "loop",
            "handles": [{"id": "a", "derived_from": ["b"]}, {"id": "b", "derived_from": ["a"]}],
        }
    )
    walk = section(design_document(chain), 9)
    assert "No walkthrough can be computed" in walk
    assert_round_trips(chain)


def test_the_unknowns_list_an_assumed_claim():
    doc = small_doc()
    doc["handles"][0]["source"] = {"tag": "assumed", "note": "tokens live an hour"}
    unknowns = section(design_document(ChainSpec.model_validate(doc)), 10)
    assert "`handles[search_id]`" in unknowns
    assert "tokens live an hour" in unknowns


def test_a_chain_with_no_unknowns_says_none():
    chain = ChainSpec(id="bare", actions=[{"id": "a", "effect": "read"}])
    assert "None:" in section(design_document(chain), 10)


def test_a_gate_answered_by_the_model_appears_in_the_boundary_recap():
    chain = small_chain(
        gates=[{"id": "pick_seat", "audience": "model", "outcomes": {"window": "ok"}}]
    )
    recap = section(design_document(chain), 11)
    assert "| gate answer | `gates[pick_seat]` | answers the gate: `window` |" in recap


def test_a_model_gate_about_money_is_marked_outside_the_boundary():
    chain = small_chain(
        gates=[{"id": "price_consent", "audience": "model", "outcomes": {"accept": "ok"}}]
    )
    recap = section(design_document(chain), 11)
    assert "no: money or consent is never model-answerable" in recap


def test_selections_rematches_and_repairs_appear_in_the_boundary_recap():
    recap = section(design_document(FIXTURE_CHAINS["flight_roundtrip"]), 11)
    assert "| selection | `actions[select_outbound]` |" in recap
    assert "| rematch | `handles[outbound_pick].rematch` |" in recap
    assert "| repair proposal | `verdict_table[F10].verdict` |" in recap
    assert "| escalation | `policy.escalation[#1]` |" in recap


def test_repair_fields_a_gate_answer_binds_are_not_model_touchpoints():
    chain = small_chain(
        gates=[
            {
                "id": "new_dates",
                "audience": "user",
                "outcomes": {
                    "change": {
                        "params": {"dates": "date_range"},
                        "bind": ["dates"],
                        "verdict": "repair(to: book, fields: [dates])",
                    }
                },
            }
        ]
    )
    assert "| repair proposal |" not in section(design_document(chain), 11)


def test_a_chain_without_model_touchpoints_says_none():
    chain = ChainSpec(id="bare", actions=[{"id": "a", "effect": "read"}])
    assert "Model touchpoints: none." in section(design_document(chain), 11)


def test_a_drawn_design_document_embeds_the_handle_graph_and_still_round_trips():
    chain = FIXTURE_CHAINS["flight_roundtrip"]
    text = design_document(chain, drawn=True)
    section = text.split("## 4. Handle graph")[1].split("\n## 5.")[0]
    assert section.count("<svg") == 1 and 'class="handle-graph"' in section
    assert formats.load(text, format="md").chains == [chain]


def test_without_graphviz_the_design_document_says_the_drawing_is_left_out(monkeypatch):
    def broken(source: str, timeout: float = 10.0) -> str:
        raise RenderError("Graphviz is not installed")

    monkeypatch.setattr(dot, "to_svg", broken)
    text = design_document(FIXTURE_CHAINS["flight_roundtrip"], drawn=True)
    assert "<svg" not in text and "drawing of the handle graph is left out" in text
