"""The coverage matrix: steps × signal classes, every cell decided by the real classifier."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from chains.core import coverage as coverage_module
from chains.core import formats
from chains.core.coverage import CoverageError, coverage
from chains.core.errors import ChainError

from .lint.helpers import chain

FIXTURES = Path(__file__).parents[2] / "fixtures"


def fixture(name: str):
    path = FIXTURES / name
    return formats.load(path.read_bytes(), filename=path.name).chains[0]


@pytest.fixture(scope="module")
def flight_matrix(flight_spec):
    """The flight fixture's coverage matrix."""
    return coverage(flight_spec)


NO_DOMAIN_ROWS = """
    id: bare
    handles:
      - {id: results, minted_by: search, staleness: {detect: [code:RESULTS_GONE], refresh: search}}
    actions:
      - {id: search, effect: read, output: {handles: [results]}}
      - {id: lookup, effect: read, probe_only: true}
      - {id: book, effect: commit, input: {handles: [results]}, idempotency: {mode: none},
         confirmation: {probe: lookup, signal: found}}
"""

RAILS = """
    id: rails
    variants: {axis: rail, values: [GDS, NDC]}
    actions:
      - {id: search, effect: read}
      - {id: ndc_offer, effect: read, only: [NDC]}
    verdict_table:
      - {id: N1, signal: [timeout], verdict: "dead_end(reason: ndc_timeout)", only: [NDC]}
"""


def test_the_columns_come_in_the_documented_order():
    doc = chain(NO_DOMAIN_ROWS)
    assert [c.key for c in coverage(doc).columns] == [
        "success",
        "valid_empty",
        "stale:code:RESULTS_GONE",
        "timeout",
        "http_5xx",
        "http_429",
        "terms_changed",
        "deterministic_reject",
        "unknown_code",
    ]


def test_a_staleness_column_is_labelled_with_its_atom(flight_matrix):
    labels = {c.key: c.label for c in flight_matrix.columns}
    assert labels["stale:code:SEARCH_TOKEN_EXPIRED"] == "stale: code:SEARCH_TOKEN_EXPIRED"


def test_probe_only_actions_are_not_steps(flight_matrix):
    assert "find_trips_by_reference" not in flight_matrix.steps
    assert flight_matrix.steps[:3] == ["outbound_search", "select_outbound", "return_search"]


def test_a_timeout_of_the_unkeyed_booking_is_reconciled_by_row_f17(flight_matrix):
    cell = flight_matrix.cells[("book_trip", "timeout")]
    assert (cell.verdict, cell.row, cell.source) == ("reconcile", "F17", "table")


def test_a_timeout_of_a_read_falls_to_generic_retry_row_6(flight_matrix):
    cell = flight_matrix.cells[("outbound_search", "timeout")]
    assert (cell.verdict, cell.row, cell.source) == ("retry", "#6", "table")


def test_a_rate_limit_on_a_read_falls_to_generic_retry_row_4(flight_matrix):
    cell = flight_matrix.cells[("seat_map", "http_429")]
    assert (cell.verdict, cell.row) == ("retry", "#4")


def test_success_is_decided_by_row_3(flight_matrix):
    cell = flight_matrix.cells[("price_quote", "success")]
    assert (cell.verdict, cell.row) == ("ok", "#3")


def test_the_valid_empty_cell_is_none_for_a_step_without_a_valid_empty(flight_matrix):
    assert flight_matrix.cells[("price_quote", "valid_empty")] is None


def test_a_valid_empty_is_decided_by_row_2_and_names_its_route(flight_matrix):
    cell = flight_matrix.cells[("seat_map", "valid_empty")]
    assert (cell.verdict, cell.row) == ("ok(empty)", "#2")
    assert cell.reason.endswith("routed to ok")


def test_a_valid_empty_on_an_error_transport_is_still_an_empty_answer():
    doc = chain("""
        id: pay
        actions:
          - id: charge
            effect: commit
            idempotency: {mode: keyed}
            confirmation: {by_key_replay: replay returns the original outcome}
            output:
              empty:
                valid: true
                detect: "status == 402 && error.type == 'card_error'"
                route: "repair(to: charge, fields: [card])"
    """)
    cell = coverage(doc).cells[("charge", "valid_empty")]
    assert (cell.verdict, cell.row) == ("ok(empty)", "#2")


def test_a_valid_empty_with_no_route_says_the_run_dead_ends():
    doc = chain("""
        id: pay
        actions:
          - id: charge
            effect: read
            output: {empty: {valid: true, detect: "status == 402"}}
    """)
    cell = coverage(doc).cells[("charge", "valid_empty")]
    assert (cell.verdict, cell.row) == ("ok(empty)", "#2")
    assert cell.reason.endswith("no empty.route, so the run dead-ends")


def test_a_staleness_column_applies_only_to_consumers_of_a_handle_detecting_it(flight_matrix):
    key = "stale:code:SEARCH_TOKEN_EXPIRED"
    applicable = [s for s in flight_matrix.steps if flight_matrix.cells[(s, key)] is not None]
    assert applicable == ["return_search"]


def test_a_staleness_signal_without_a_domain_row_rewinds_by_row_1():
    cell = coverage(chain(NO_DOMAIN_ROWS)).cells[("book", "stale:code:RESULTS_GONE")]
    assert (cell.verdict, cell.row, cell.source) == ("rewind(to: search)", "#1", "table")


def test_a_selection_step_is_never_classified(flight_matrix):
    cells = flight_matrix.cells
    assert all(cells[("select_outbound", c.key)] is None for c in flight_matrix.columns)


def test_a_commit_without_domain_rows_reconciles_an_unknown_code_by_row_11():
    matrix = coverage(chain(NO_DOMAIN_ROWS))
    cell = matrix.cells[("book", "unknown_code")]
    assert (cell.verdict, cell.row, cell.source) == ("reconcile", "#11", "default")
    assert ("book", "unknown_code") in matrix.gaps()


def test_a_read_without_domain_rows_dead_ends_an_unknown_code_by_row_12():
    cell = coverage(chain(NO_DOMAIN_ROWS)).cells[("search", "unknown_code")]
    assert (cell.verdict, cell.row, cell.source) == (
        "dead_end(reason: unmatched_signal)",
        "#12",
        "default",
    )


def test_gaps_are_exactly_the_cells_the_defaults_decide():
    matrix = coverage(chain(NO_DOMAIN_ROWS))
    assert matrix.gaps() == [
        ("search", "terms_changed"),
        ("search", "deterministic_reject"),
        ("search", "unknown_code"),
        ("book", "terms_changed"),
        ("book", "deterministic_reject"),
        ("book", "unknown_code"),
    ]


def test_terms_changed_is_observed_through_a_gate_row_in_scope(flight_matrix):
    cell = flight_matrix.cells[("revalidate", "terms_changed")]
    assert (cell.verdict, cell.row) == ("gate(price_change_consent)", "F8")


def test_terms_changed_without_a_gate_row_in_scope_says_it_falls_to_the_defaults(flight_matrix):
    cell = flight_matrix.cells[("book_trip", "terms_changed")]
    assert (cell.verdict, cell.row, cell.source) == ("reconcile", "#11", "default")
    assert cell.reason.startswith("no gate row in scope")


def test_a_deterministic_reject_is_observed_through_a_dead_end_row_in_scope(flight_matrix):
    cell = flight_matrix.cells[("book_trip", "deterministic_reject")]
    assert (cell.row, cell.verdict) == (
        "F13",
        "dead_end(reason: carrier_rejected, permanent: true)",
    )
    assert "also F14, F15" in cell.reason


def test_the_unknown_code_is_one_the_chain_never_mentions():
    doc = chain("""
        id: tricky
        actions:
          - {id: search, effect: read}
        verdict_table:
          - {id: T1, signal: [code:UNLISTED_CODE], verdict: retry}
    """)
    matrix = coverage(doc)
    assert matrix.cells[("search", "unknown_code")].row == "#12"
    assert "UNLISTED_CODE_2" in matrix.columns[-1].signal


def test_a_row_scoped_to_a_variant_applies_in_that_variant():
    cell = coverage(chain(RAILS), "NDC").cells[("search", "timeout")]
    assert (cell.verdict, cell.row) == ("dead_end(reason: ndc_timeout)", "N1")


def test_a_row_scoped_to_a_variant_does_not_apply_in_another():
    cell = coverage(chain(RAILS), "GDS").cells[("search", "timeout")]
    assert (cell.verdict, cell.row) == ("retry", "#6")


def test_a_row_scoped_to_a_variant_applies_nowhere_without_a_variant():
    cell = coverage(chain(RAILS)).cells[("search", "timeout")]
    assert cell.row == "#6"


def test_steps_another_variant_owns_are_left_out():
    assert coverage(chain(RAILS), "GDS").steps == ["search"]
    assert coverage(chain(RAILS), "NDC").steps == ["search", "ndc_offer"]


def test_an_unknown_variant_is_refused():
    with pytest.raises(CoverageError, match="one of"):
        coverage(chain(RAILS), "SABRE")


def test_a_variant_of_a_chain_without_variants_is_refused():
    with pytest.raises(ChainError, match="declares no variants"):
        coverage(chain(NO_DOMAIN_ROWS), "GDS")


def test_the_module_doctests_pass():
    assert doctest.testmod(coverage_module).failed == 0
