"""Handles: rematch, detectable or durable commit inputs, single use, UNKNOWN staleness, P2."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint
from chains.core.lint.handles import is_ttl_timer

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))


def test_a_selection_pseudo_handle_without_rematch_is_invalid():
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search, staleness: {detect: [http:410]}}
          - {id: pick, minted_by: choose, derived_from: [results]}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, input: {handles: [results]}, output: {handles: [pick]}}
    """)
    assert elements(doc, "handles.selection-without-rematch") == ["handles[pick]"]


def test_a_selection_pseudo_handle_with_rematch_passes():
    doc = chain("""
        id: c
        handles:
          - id: pick
            minted_by: choose
            rematch: {key: [carrier, flight_numbers], on_ambiguous: model}
        actions:
          - {id: choose, effect: select, output: {handles: [pick]}}
    """)
    assert found(doc, "handles.selection-without-rematch") == []


def test_a_handle_a_commit_consumes_that_can_expire_unnoticed_is_invalid():
    doc = chain("""
        id: c
        handles:
          - {id: session, minted_by: open, staleness: {detect: [], ttl_hint: ~15m}}
        actions:
          - {id: open, effect: mint, output: {handles: [session]}}
          - {id: book, effect: commit, input: {handles: [session]}}
    """)
    assert elements(doc, "handles.commit-input-undetectable") == ["handles[session].staleness"]


def test_a_handle_a_commit_consumes_with_staleness_signals_passes():
    doc = chain("""
        id: c
        handles:
          - {id: session, minted_by: open, staleness: {detect: [code:SESSION_EXPIRED]}}
        actions:
          - {id: open, effect: mint, output: {handles: [session]}}
          - {id: book, effect: commit, input: {handles: [session]}}
    """)
    assert found(doc, "handles.commit-input-undetectable") == []


@pytest.mark.parametrize(
    "handle",
    [
        "{id: ref, minted_by: make, staleness: {detect: [], ttl_hint: n/a}}",
        "{id: ref, minted_by: make}",
    ],
    ids=["ttl_hint n/a", "commit-minted with no staleness block"],
)
def test_a_durable_handle_a_commit_consumes_passes(handle):
    doc = chain(f"""
        id: c
        handles:
          - {handle}
        actions:
          - {{id: make, effect: commit, output: {{handles: [ref]}}}}
          - {{id: cancel, effect: compensate, input: {{handles: [ref]}}}}
    """)
    assert found(doc, "handles.commit-input-undetectable") == []


def test_a_commit_made_handle_that_declares_a_lifetime_is_not_durable():
    doc = chain("""
        id: c
        handles:
          - {id: hold, minted_by: authorise, staleness: {ttl_hint: 7d}}
        actions:
          - {id: authorise, effect: commit, output: {handles: [hold]}}
          - {id: capture, effect: commit, input: {handles: [hold]}}
    """)
    assert elements(doc, "handles.commit-input-undetectable") == ["handles[hold].staleness"]


def test_a_single_use_handle_spent_by_two_commits_is_invalid():
    doc = chain("""
        id: c
        handles:
          - {id: lock, single_use: true, staleness: {detect: [code:LOCK_EXPIRED]}}
        actions:
          - {id: book, effect: commit, input: {handles: [lock]}}
          - {id: upsell, effect: commit, input: {handles: [lock]}}
    """)
    (finding,) = found(doc, "handles.single-use-spent-twice")
    assert finding.element == "handles[lock]"
    assert "book, upsell" in finding.message


def test_reads_before_the_spending_commit_do_not_spend_a_single_use_handle():
    doc = chain("""
        id: c
        handles:
          - {id: lock, single_use: true}
        actions:
          - {id: check, effect: read, input: {handles: [lock]}}
          - {id: book, effect: commit, input: {handles: [lock]}}
    """)
    assert found(doc, "handles.single-use-spent-twice") == []
    assert found(doc, "handles.spent-handle-reused") == []


def test_a_single_use_handle_no_commit_consumes_is_warned_about():
    doc = chain("""
        id: c
        handles:
          - {id: lock, single_use: true}
        actions:
          - {id: check, effect: read, input: {handles: [lock]}}
    """)
    assert elements(doc, "handles.single-use-never-spent") == ["handles[lock]"]


def test_a_single_use_handle_spent_by_one_commit_passes():
    doc = chain("""
        id: c
        handles:
          - {id: lock, single_use: true}
        actions:
          - {id: book, effect: commit, input: {handles: [lock]}}
    """)
    assert found(doc, "handles.single-use-never-spent") == []
    assert found(doc, "handles.single-use-spent-twice") == []


def test_presenting_a_spent_handle_after_its_commit_is_warned_about():
    doc = chain("""
        id: c
        handles:
          - {id: lock, single_use: true}
        actions:
          - {id: book, effect: commit, input: {handles: [lock]}, confirmation: {probe: find}}
          - {id: find, effect: read, input: {handles: [lock]}}
          - {id: upgrade, effect: mint, input: {handles: [lock]}}
    """)
    (finding,) = found(doc, "handles.spent-handle-reused")
    assert "presented again by upgrade" in finding.message


def test_a_handle_with_empty_detection_that_can_expire_is_an_unknown():
    doc = chain("""
        id: c
        handles:
          - {id: quote, minted_by: price, staleness: {detect: [], ttl_hint: unknown}}
        actions:
          - {id: price, effect: mint, output: {handles: [quote]}}
    """)
    report = lint(doc)
    (finding,) = [f for f in report.unknowns if f.rule == "handles.staleness-undetectable"]
    assert finding.element == "handles[quote].staleness"
    assert finding.severity == "info"
    assert "default rows" in finding.message


def test_durable_and_selection_handles_are_not_staleness_unknowns():
    doc = chain("""
        id: c
        handles:
          - {id: results, minted_by: search, staleness: {detect: [http:410]}}
          - {id: pick, minted_by: choose, derived_from: [results], rematch: {key: [name]}}
          - {id: booking, minted_by: book}
        actions:
          - {id: search, effect: read, output: {handles: [results]}}
          - {id: choose, effect: select, output: {handles: [pick]}}
          - {id: book, effect: commit, output: {handles: [booking]}}
    """)
    assert found(doc, "handles.staleness-undetectable") == []


@pytest.mark.parametrize(
    "predicate",
    [
        "quote.age > 14m",
        "age(price_lock) >= 14m",
        "minted_at + 15m < now",
        "price_lock.minted_at < now - 10m",
        "age > ttl",
        "now - session.minted_at > session.ttl_hint",
        "handle older than 20 minutes",
    ],
)
def test_a_predicate_comparing_a_handle_age_to_a_duration_is_a_ttl_timer(predicate):
    assert is_ttl_timer(predicate)


@pytest.mark.parametrize(
    "predicate",
    [
        "expires_at < now",
        "payment_required_by < now + 1h",
        "authorization.capture_before < now",
        "traveller.age < 2",
        "results.length == 0",
        "status >= 500",
        "quota.vcpus_remaining < intent.vcpus",
        "stale quote -> rewind; the ttl_hint is a planning hint",
    ],
)
def test_provider_deadlines_and_ordinary_comparisons_are_not_ttl_timers(predicate):
    assert not is_ttl_timer(predicate)


def test_a_precondition_that_expires_a_handle_by_age_is_invalid():
    doc = chain("""
        id: c
        actions:
          - id: book
            effect: commit
            preconditions:
              - {when: "price_lock.age > 14m", verdict: "rewind(to: book)"}
    """)
    assert elements(doc, "handles.ttl-enforced") == ["actions[book].preconditions[#1]"]


def test_a_verdict_row_that_fires_on_mint_age_is_invalid():
    doc = chain("""
        id: c
        verdict_table:
          - {id: T1, signal: ["minted_at + 15m < now"], verdict: "dead_end(reason: stale)"}
    """)
    assert elements(doc, "handles.ttl-enforced") == ["verdict_table[T1]"]


def test_a_precondition_on_a_deadline_the_provider_returned_passes():
    doc = chain("""
        id: c
        actions:
          - id: ticket
            effect: commit
            preconditions:
              - {when: "booking.payment_required_by < now", verdict: "dead_end(reason: lapsed)"}
        verdict_table:
          - {id: T1, signal: [code:QUOTE_EXPIRED], verdict: retry}
    """)
    assert found(doc, "handles.ttl-enforced") == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_sample_fixtures_have_no_handles_errors(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    errors = [f for f in lint(doc).findings if f.severity == "error"]
    assert [f for f in errors if f.rule.startswith("handles.")] == []


# --- client-held results and handles that die with their parent ------------

CANCEL_WITH_QUOTE = """
    id: c
    handles:
      - {id: stay_ref, minted_by: external, staleness: {ttl_hint: n/a, refresh: n/a}}
      - id: fee_quote
        minted_by: read_fee
        derived_from: [stay_ref]
        notes: ["{notes}"]
        staleness: {ttl_hint: unknown, refresh: read_fee}
    actions:
      - {id: read_fee, effect: {minter}, input: {handles: [stay_ref]},
         output: {handles: [fee_quote]}}
      - id: cancel_stay
        effect: compensate
        entry_gate: fee_consent
        input: {handles: [stay_ref, fee_quote]}
        idempotency: {mode: natural}
        confirmation: {probe: read_fee}
"""


def test_a_client_held_result_a_commit_consumes_is_not_undetectable():
    """SPEC §2.2 Client-held results: "no provider staleness; any validity limit is
    business-level" (here the fee consent shown on every arrival)."""
    doc = chain(
        CANCEL_WITH_QUOTE.replace("{notes}", "cached {fee, refund deadline} payload").replace(
            "{minter}", "read"
        )
    )
    assert found(doc, "handles.commit-input-undetectable") == []
    assert found(doc, "handles.staleness-undetectable") == []


@pytest.mark.parametrize(
    "note", ["client-held result set", "code-held results (no provider token)", "pseudo-handle"]
)
def test_a_read_result_whose_notes_say_it_is_client_held_is_exempt(note):
    doc = chain(CANCEL_WITH_QUOTE.replace("{notes}", note).replace("{minter}", "read"))
    assert found(doc, "handles.commit-input-undetectable") == []


def test_a_provider_token_a_read_mints_is_still_judged():
    doc = chain(
        CANCEL_WITH_QUOTE.replace("{notes}", "the provider's quote token").replace(
            "{minter}", "read"
        )
    )
    assert elements(doc, "handles.commit-input-undetectable") == ["handles[fee_quote].staleness"]


def test_a_mint_that_calls_its_handle_client_held_is_still_judged():
    """Client-held results come from reads (SPEC §2.2); a mint makes provider state."""
    doc = chain(CANCEL_WITH_QUOTE.replace("{notes}", "client-held").replace("{minter}", "mint"))
    assert elements(doc, "handles.commit-input-undetectable") == ["handles[fee_quote].staleness"]


def test_a_handle_with_no_lifetime_of_its_own_that_dies_with_its_parent_passes():
    """``ttl_hint: n/a (dies with the cart)``: its death is the cart's, which the same
    commit consumes and detects."""
    doc = chain("""
        id: c
        handles:
          - {id: cart, minted_by: open_cart,
             staleness: {detect: [code:CART_GONE], refresh: open_cart}}
          - {id: guests, minted_by: add_guests, derived_from: [cart],
             staleness: {ttl_hint: n/a (dies with the cart), refresh: add_guests}}
        actions:
          - {id: open_cart, effect: mint, output: {handles: [cart]}}
          - {id: add_guests, effect: mint, input: {handles: [cart]}, output: {handles: [guests]}}
          - {id: place, effect: commit, input: {handles: [cart, guests]},
             idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: replays}}}
    """)
    assert found(doc, "handles.commit-input-undetectable") == []


# --- handles.staleness-detect-not-signal --------------------------------------------


def token_detected_by(atom: str) -> object:
    return chain(f"""
        id: c
        handles:
          - {{id: token, minted_by: quote, staleness: {{detect: [{atom}], refresh: quote}}}}
        actions:
          - {{id: quote, effect: mint, output: {{handles: [token]}}}}
          - {{id: use, effect: read, input: {{handles: [token]}}}}
    """)


def test_a_staleness_detect_entry_that_only_names_the_condition_warns():
    doc = token_detected_by("token_rejected_at_checkout")
    [finding] = found(doc, "handles.staleness-detect-not-signal")
    assert finding.element == "handles[token].staleness.detect"
    assert finding.severity == "warning"


@pytest.mark.parametrize(
    "atom",
    [
        "http:410",
        "http:5xx",
        "code:TOKEN_EXPIRED",
        "webhook:token.expired",
        "timeout",
        "'error.expires_at < now'",
        "'payload:\"expires_at < now\"'",
        "error.token_expired",
        "'\"token has expired\"'",
    ],
)
def test_staleness_detect_entries_of_every_signal_kind_are_silent(atom):
    assert found(token_detected_by(atom), "handles.staleness-detect-not-signal") == []


# A card payment: a quote is priced, then a price lock is taken from it, then it is paid.
PRICED_PAYMENT = """
    id: pay
    handles:
      - {id: quote_id, minted_by: price, staleness: {detect: [code:QUOTE_EXPIRED], refresh: price}}
      - {id: lock, minted_by: lock_price, derived_from: [quote_id],
         staleness: {detect: [code:LOCK_EXPIRED], refresh: lock_price}}
    actions:
      - {id: price, effect: mint, output: {handles: [quote_id]}}
      - {id: lock_price, effect: mint, input: {handles: [quote_id]}, output: {handles: [lock]}}
      - {id: pay, effect: commit, input: {handles: [lock]}, idempotency: {mode: keyed},
         confirmation: {probe: get_payment, signal: paid}}
      - {id: get_payment, effect: read, probe_only: true}
    verdict_table:
      - {id: P1, signal: ["%s"], scope: {steps: [%s]}, verdict: "rewind(to: %s)"}
"""


def test_a_row_rewinding_to_the_step_that_presents_the_expired_quote_is_invalid():
    doc = chain(PRICED_PAYMENT % ("code:QUOTE_EXPIRED", "lock_price", "lock_price"))
    (finding,) = found(doc, "handles.rewind-presents-dead-handle")
    assert finding.severity == "error" and finding.element == "verdict_table[P1]"
    assert "presents quote_id again" in finding.message and "refresh is price" in finding.message


def test_a_row_rewinding_to_the_expired_quote_s_refresh_passes():
    doc = chain(PRICED_PAYMENT % ("code:QUOTE_EXPIRED", "lock_price", "price"))
    assert found(doc, "handles.rewind-presents-dead-handle") == []


def test_a_row_rewinding_coarser_than_the_refresh_passes():
    doc = chain(PRICED_PAYMENT % ("code:LOCK_EXPIRED", "pay", "price"))
    assert found(doc, "handles.rewind-presents-dead-handle") == []


def test_a_bare_status_every_input_lists_attributes_no_dead_handle():
    doc = chain("""
        id: c
        handles:
          - {id: a, minted_by: mint_a, staleness: {detect: [http:410], refresh: mint_a}}
          - {id: b, minted_by: mint_b, staleness: {detect: [http:410], refresh: mint_b}}
        actions:
          - {id: mint_a, effect: mint, output: {handles: [a]}}
          - {id: mint_b, effect: mint, output: {handles: [b]}}
          - {id: use, effect: read, input: {handles: [a, b]}}
        verdict_table:
          - {id: U1, signal: [http:410], scope: {steps: [use]}, verdict: "rewind(to: mint_b)"}
    """)
    assert found(doc, "handles.rewind-presents-dead-handle") == []
