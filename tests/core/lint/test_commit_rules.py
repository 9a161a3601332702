"""Commit safety: confirmation, probes, attempts, P3 mechanics, mutations, compensation."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.lint import lint
from chains.core.model import ChainSpec

from .helpers import chain, elements, found

FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))

UNKEYED_BOOK_WITH_PROBE = """
    id: c
    actions:
      - id: find_by_reference
        effect: read
        input: {intent: [reference]}
      - id: book
        description: >-
          Correlation record in booking_attempts before dispatch; the attempt runs under a
          cancellation shield.
        effect: commit
        input: {intent: [reference]}
        idempotency: {mode: none}
        confirmation: {probe: find_by_reference, signal: one booking with our reference}
        compensation: {action: none, ordering_note: consent gate before it}
"""


def test_a_commit_without_confirmation_is_blocked():
    doc = chain("""
        id: c
        actions:
          - {id: book, effect: commit, idempotency: {mode: keyed}}
    """)
    assert elements(doc, "commit.missing-confirmation") == ["actions[book]"]
    assert lint(doc).status == "BLOCKED"


def test_a_compensator_without_confirmation_is_reported():
    doc = chain("""
        id: c
        actions:
          - {id: cancel, effect: compensate, idempotency: {mode: natural}}
    """)
    assert elements(doc, "commit.missing-confirmation") == ["actions[cancel]"]


def test_a_commit_with_a_confirmation_block_passes_the_confirmation_rule():
    assert found(chain(UNKEYED_BOOK_WITH_PROBE), "commit.missing-confirmation") == []


def test_reads_and_mints_need_no_confirmation():
    doc = chain("""
        id: c
        actions:
          - {id: search, effect: read}
          - {id: quote, effect: mint}
    """)
    assert found(doc, "commit.missing-confirmation") == []


def test_unkeyed_commit_without_probe_is_blocked():
    doc = chain("""
        id: c
        actions:
          - id: book
            effect: commit
            idempotency: {mode: none}
            confirmation: {signal: booking exists}
    """)
    assert elements(doc, "commit.missing-probe") == ["actions[book].confirmation"]
    assert lint(doc).status == "BLOCKED"


def test_an_async_keyed_commit_with_only_key_replay_needs_a_probe():
    doc = chain("""
        id: c
        actions:
          - id: capture
            effect: commit
            idempotency: {mode: keyed}
            confirmation:
              by_key_replay: a replay returns the stored response
              async: {channel: webhook}
    """)
    assert elements(doc, "commit.missing-probe") == ["actions[capture].confirmation"]


def test_a_keyed_synchronous_commit_may_rely_on_key_replay():
    doc = chain("""
        id: c
        actions:
          - id: capture
            effect: commit
            idempotency: {mode: keyed}
            confirmation: {by_key_replay: a replay inside 24h returns the original outcome}
    """)
    assert found(doc, "commit.missing-probe") == []


def test_a_naturally_idempotent_commit_cannot_rely_on_key_replay():
    doc = chain("""
        id: c
        actions:
          - id: bind
            effect: commit
            idempotency: {mode: natural}
            confirmation: {by_key_replay: PUT is idempotent}
    """)
    assert elements(doc, "commit.missing-probe") == ["actions[bind].confirmation"]


def test_an_unkeyed_commit_with_a_probe_is_not_blocked_for_lack_of_one():
    assert found(chain(UNKEYED_BOOK_WITH_PROBE), "commit.missing-probe") == []


def test_a_probe_that_is_not_a_read_is_reported():
    doc = chain("""
        id: c
        actions:
          - {id: reprice, effect: mint}
          - id: book
            effect: commit
            idempotency: {mode: none}
            confirmation: {probe: reprice, signal: price is locked}
    """)
    assert elements(doc, "commit.probe-not-read") == ["actions[book].confirmation"]


def test_a_read_probe_is_accepted():
    assert found(chain(UNKEYED_BOOK_WITH_PROBE), "commit.probe-not-read") == []


# An unkeyed booking probed by get-by-locator, the locator being the booking's own output.
LOCATOR_PROBE = """
    id: c
    handles:
      - {id: locator, minted_by: book, staleness: {ttl_hint: n/a}}
    actions:
      - {id: get_booking, effect: read, input: {handles: [locator]}, notes: [READ_NOTES]}
      - id: book
        effect: commit
        idempotency: {mode: none}
        output: {handles: [locator]}
        confirmation: {probe: get_booking, signal: booking.status == 'CONFIRMED'}
        notes: [BOOK_NOTES]
"""


def locator_probe(read_notes: str = "", book_notes: str = "") -> ChainSpec:
    return chain(LOCATOR_PROBE.replace("READ_NOTES", read_notes).replace("BOOK_NOTES", book_notes))


def test_a_commit_whose_only_probe_is_get_by_locator_on_the_commits_own_output_is_blocked():
    doc = locator_probe()
    assert elements(doc, "commit.probe-needs-commit-output") == ["actions[book].confirmation"]
    assert lint(doc).status == "BLOCKED"


def test_a_probe_needing_a_handle_derived_from_the_commits_output_is_blocked():
    doc = chain("""
        id: c
        handles:
          - {id: locator, minted_by: book, staleness: {ttl_hint: n/a}}
          - {id: ticket, minted_by: ticket_it, derived_from: [locator]}
        actions:
          - {id: get_ticket, effect: read, input: {handles: [ticket]}}
          - id: book
            effect: commit
            idempotency: {mode: none}
            output: {handles: [locator]}
            confirmation: {probe: get_ticket, signal: ticket issued}
          - {id: ticket_it, effect: mint, input: {handles: [locator]}, output: {handles: [ticket]}}
    """)
    assert elements(doc, "commit.probe-needs-commit-output") == ["actions[book].confirmation"]


def test_a_probe_that_uses_only_handles_known_before_dispatch_is_not_blocked():
    doc = chain("""
        id: c
        handles:
          - {id: intent_ref, minted_by: create_intent, staleness: {detect: [code:gone]}}
          - {id: hold, minted_by: confirm, derived_from: [intent_ref]}
        actions:
          - {id: create_intent, effect: mint, output: {handles: [intent_ref]}}
          - {id: get_intent, effect: read, input: {handles: [intent_ref]}}
          - id: confirm
            effect: commit
            idempotency: {mode: none}
            input: {handles: [intent_ref]}
            output: {handles: [hold]}
            confirmation: {probe: get_intent, signal: intent.status == 'held'}
    """)
    assert found(doc, "commit.probe-needs-commit-output") == []


# A keyed refund that finalises by webhook, probed by get-by-id on the refund it
# creates; a reconcile row says how our reference finds it without the id.
KEYED_ASYNC_REFUND = """
    id: c
    handles:
      - {id: payment, minted_by: pay, staleness: {ttl_hint: n/a}}
      - {id: refund_ref, minted_by: refund, derived_from: [payment],
         staleness: {ttl_hint: n/a, refresh: n/a}}
    actions:
      - id: pay
        effect: commit
        idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
        output: {handles: [payment]}
        confirmation: {by_key_replay: {note: the replay returns the first answer}}
        compensation: {action: refund}
      - id: refund
        effect: compensate
        input: {handles: [payment]}
        output: {handles: [refund_ref]}
        idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
        confirmation:
          probe: read_refund
          signal: refund.state == 'done'
          async: {channel: webhook, deadline: 7d}
      - {id: read_refund, effect: read, input: {handles: [refund_ref]}}
    verdict_table:
      - id: R1
        signal: [code:already_refunded]
        scope: [refund]
        verdict: reconcile
        note: probe, or list the payment's refunds matched via metadata.our_ref
"""


def test_a_keyed_commit_whose_probe_needs_its_own_output_is_warned_not_blocked():
    """SPEC §2.1 blocks only "if neither exists"; the key replays a lost response."""
    doc = chain(KEYED_ASYNC_REFUND)
    assert found(doc, "commit.probe-needs-commit-output") == []
    assert elements(doc, "commit.probe-lookup-undeclared") == ["actions[refund].confirmation"]
    assert lint(doc).status != "BLOCKED"


def test_the_warning_names_the_lookup_the_document_describes():
    (finding,) = found(chain(KEYED_ASYNC_REFUND), "commit.probe-lookup-undeclared")
    assert "list the payment's refunds matched via metadata.our_ref" in finding.message


def test_an_unkeyed_commit_with_a_documented_correlation_lookup_is_warned_not_blocked():
    """SPEC §2.1: the correlation record carrying lookup keys is the other way out."""
    doc = locator_probe(
        read_notes="when the locator is lost, list bookings by agency_ref from the record"
    )
    assert found(doc, "commit.probe-needs-commit-output") == []
    (finding,) = found(doc, "commit.probe-lookup-undeclared")
    assert "list bookings by agency_ref" in finding.message


def test_an_unkeyed_commit_whose_notes_deny_any_lookup_stays_blocked():
    """A correlation record that no read can search is no lookup (SPEC §2.1)."""
    doc = locator_probe(
        book_notes='"correlation record {run_id, cart_id} persisted before dispatch", '
        '"there is no documented listing of bookings by traveller or date"'
    )
    assert elements(doc, "commit.probe-needs-commit-output") == ["actions[book].confirmation"]
    assert lint(doc).status == "BLOCKED"


def test_an_unkeyed_commit_given_more_than_one_attempt_is_reported():
    doc = chain(
        UNKEYED_BOOK_WITH_PROBE
        + """
    policy:
      per_step:
        book: {attempts: 3}
"""
    )
    assert elements(doc, "commit.unkeyed-retried") == ["actions[book]"]


def test_an_unkeyed_commit_on_the_default_policy_gets_one_attempt():
    assert found(chain(UNKEYED_BOOK_WITH_PROBE), "commit.unkeyed-retried") == []


def test_an_unkeyed_commit_that_mentions_neither_p3_mechanic_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - {id: book, effect: commit, idempotency: {mode: none}}
    """)
    (finding,) = found(doc, "commit.unkeyed-without-p3-mechanics")
    assert finding.element == "actions[book]"
    assert "correlation record or a cancellation shield" in finding.message


def test_an_unkeyed_commit_missing_only_the_shield_is_told_which_one():
    doc = chain("""
        id: c
        actions:
          - id: book
            effect: commit
            idempotency: {mode: none}
            confirmation: {note: the correlation-record row is matched by the sweep}
    """)
    (finding,) = found(doc, "commit.unkeyed-without-p3-mechanics")
    assert "cancellation shield" in finding.message
    assert "correlation record" not in finding.message


def test_an_unkeyed_commit_that_notes_both_p3_mechanics_passes():
    assert found(chain(UNKEYED_BOOK_WITH_PROBE), "commit.unkeyed-without-p3-mechanics") == []


def test_an_in_place_commit_confirmed_by_existence_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - id: grow
            effect: commit
            mutates: volume
            confirmation: {probe: get_volume, signal: the volume exists}
            compensation: {action: none, ordering_note: consent gate first}
    """)
    assert elements(doc, "commit.mutates-existence-signal") == ["actions[grow].confirmation"]


def test_an_in_place_commit_without_a_signal_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - id: grow
            effect: commit
            mutates: volume
            confirmation: {probe: get_volume}
    """)
    assert elements(doc, "commit.mutates-existence-signal") == ["actions[grow].confirmation"]


def test_an_in_place_commit_confirmed_by_content_passes():
    doc = chain("""
        id: c
        actions:
          - id: grow
            effect: commit
            mutates: volume
            confirmation: {probe: get_volume, signal: volume.size_gb == intent.disk_gb}
    """)
    assert found(doc, "commit.mutates-existence-signal") == []


def test_an_in_place_cancel_confirmed_by_the_state_it_shows_passes():
    """ "Shows cancelled state" observes the mutated content, not mere existence (SPEC §2.1)."""
    doc = chain("""
        id: c
        actions:
          - id: cancel
            effect: compensate
            mutates: booking
            confirmation: {probe: get_booking,
                           signal: booking shows cancelled state / cancel receipt present}
    """)
    assert found(doc, "commit.mutates-existence-signal") == []


def test_an_in_place_commit_without_a_compensation_stance_is_invalid():
    doc = chain("""
        id: c
        actions:
          - {id: grow, effect: commit, mutates: volume}
    """)
    assert elements(doc, "commit.mutates-without-compensation-stance") == ["actions[grow]"]


def test_an_in_place_commit_with_an_explicit_none_has_a_stance():
    doc = chain("""
        id: c
        actions:
          - {id: grow, effect: commit, mutates: volume, compensation: none}
    """)
    assert found(doc, "commit.mutates-without-compensation-stance") == []


def test_an_irreversible_in_place_commit_with_no_pre_commit_safety_is_invalid():
    doc = chain("""
        id: c
        actions:
          - {id: grow, effect: commit, mutates: volume, compensation: none}
    """)
    assert elements(doc, "commit.irreversible-mutation-unprotected") == [
        "actions[grow].compensation"
    ]


def test_an_irreversible_in_place_commit_behind_an_entry_gate_passes():
    doc = chain("""
        id: c
        gates:
          - {id: consent, audience: user, outcomes: {approve: ok}}
        actions:
          - {id: grow, effect: commit, mutates: volume, entry_gate: consent, compensation: none}
    """)
    assert found(doc, "commit.irreversible-mutation-unprotected") == []


def test_an_irreversible_in_place_commit_with_an_ordering_note_passes():
    doc = chain("""
        id: c
        actions:
          - id: grow
            effect: commit
            mutates: volume
            compensation: {action: none, ordering_note: the growth consent gate runs before it}
    """)
    assert found(doc, "commit.irreversible-mutation-unprotected") == []


def test_a_keyed_commit_without_key_retention_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - {id: pay, effect: commit, idempotency: {mode: keyed, replay_semantics: returns_cached}}
    """)
    assert elements(doc, "commit.keyed-without-retention") == ["actions[pay].idempotency"]
    assert found(doc, "commit.keyed-without-replay-semantics") == []


def test_a_keyed_commit_without_replay_semantics_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - {id: pay, effect: commit, idempotency: {mode: keyed, key_retention: 24h}}
    """)
    assert elements(doc, "commit.keyed-without-replay-semantics") == ["actions[pay].idempotency"]
    assert found(doc, "commit.keyed-without-retention") == []


def test_unkeyed_commits_are_not_asked_for_key_retention():
    doc = chain(UNKEYED_BOOK_WITH_PROBE)
    assert found(doc, "commit.keyed-without-retention") == []
    assert found(doc, "commit.keyed-without-replay-semantics") == []


def test_a_no_side_effect_row_that_covers_no_unkeyed_commit_is_warned_about():
    doc = chain(
        UNKEYED_BOOK_WITH_PROBE
        + """
    verdict_table:
      - {id: R1, signal: [http:429], scope: {steps: [find_by_reference]}, verdict: retry,
         no_side_effect: true}
      - {signal: [http:409], scope: {effects: [read]}, verdict: retry, no_side_effect: true}
"""
    )
    assert set(elements(doc, "commit.no-side-effect-outside-unkeyed")) == {
        "verdict_table[R1]",
        "verdict_table[#2]",
    }


def test_a_no_side_effect_row_on_an_unkeyed_commit_passes():
    doc = chain(
        UNKEYED_BOOK_WITH_PROBE
        + """
    verdict_table:
      - {id: R1, signal: [http:429], scope: {steps: [book]}, verdict: retry, no_side_effect: true}
      - {id: R2, signal: [code:LOCK], scope: unkeyed commit, verdict: retry, no_side_effect: true}
"""
    )
    assert found(doc, "commit.no-side-effect-outside-unkeyed") == []


def test_a_commit_without_a_compensation_stance_is_warned_about():
    doc = chain("""
        id: c
        actions:
          - {id: pay, effect: commit, compensation: {window: 30 days}}
    """)
    assert elements(doc, "commit.compensation-not-declared") == ["actions[pay]"]


def test_a_commit_with_compensation_none_has_declared_its_stance():
    doc = chain("""
        id: c
        actions:
          - {id: pay, effect: commit, compensation: none}
          - {id: refund, effect: compensate}
    """)
    assert found(doc, "commit.compensation-not-declared") == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_sample_fixtures_have_no_commit_errors(path):
    (doc,) = formats.load(path.read_bytes(), filename=str(path)).chains
    errors = [f for f in lint(doc).findings if f.severity == "error"]
    assert [f for f in errors if f.rule.startswith("commit.")] == []


# --- preconditions on a landed commit --------------------------------------------

HOLD_WITH_PRECONDITION = """
    id: c
    handles:
      - {id: fare, minted_by: quote}
      - {id: pick, minted_by: choose, derived_from: [fare]}
    actions:
      - {id: quote, effect: read, output: {handles: [fare]}}
      - {id: choose, effect: select, input: {handles: [fare]}, output: {handles: [pick]}}
      - id: hold_seat
        effect: commit
        input: {handles: [pick]}
        idempotency: {mode: MODE}
        confirmation: {probe: quote}
        preconditions:
          - {when: "fare.instant_payment_only == true", verdict: "reselect(to: choose)"}
"""


def test_an_unkeyed_commit_whose_precondition_sends_the_run_back_before_it_is_invalid():
    """SPEC §2.1: preconditions are "evaluated after ok", so the hold has landed; the
    reselect replays the commit and holds twice (P3: exactly once). The shape of an
    order compile's "offer cannot be held" check written on the hold itself."""
    doc = chain(HOLD_WITH_PRECONDITION.replace("MODE", "none"))
    (finding,) = found(doc, "commit.precondition-replays-landed-commit")
    assert finding.element == "actions[hold_seat].preconditions[#1].verdict"
    assert "after hold_seat landed" in finding.message
    assert "dispatches it again" in finding.message


def test_a_keyed_commit_replayed_by_its_precondition_passes():
    """The replay carries the same key, so the provider answers with the first result."""
    doc = chain(HOLD_WITH_PRECONDITION.replace("MODE", "keyed"))
    assert found(doc, "commit.precondition-replays-landed-commit") == []


def test_a_precondition_that_ends_the_run_after_the_commit_passes():
    doc = chain(
        HOLD_WITH_PRECONDITION.replace("MODE", "none").replace('"reselect(to: choose)"', "dead_end")
    )
    assert found(doc, "commit.precondition-replays-landed-commit") == []


def test_a_precondition_sending_the_run_back_to_a_step_the_chain_lacks_is_left_to_other_rules():
    """No step to replay from, so no replay to report (the dangling name is reported apart)."""
    doc = chain(HOLD_WITH_PRECONDITION.replace("MODE", "none").replace("to: choose", "to: nowhere"))
    assert found(doc, "commit.precondition-replays-landed-commit") == []


AFTER_THE_BOOKING = """
    id: c
    handles:
      - {id: offer, minted_by: search, staleness: {detect: [http:410], refresh: search}}
      - {id: booking, minted_by: book, derived_from: [offer],
         staleness: {detect: [code:GONE], refresh: search}}
    actions:
      - {id: search, effect: read, output: {handles: [offer]}}
      - id: book
        effect: commit
        input: {handles: [offer]}
        output: {handles: [booking]}
        idempotency: {mode: none}
        confirmation: {probe: find_by_offer}
      - {id: find_by_offer, effect: read, PROBE_ONLY input: {handles: [INPUT]}}
"""


def test_a_stale_offer_at_a_read_after_the_booking_rewinds_into_a_second_booking():
    """The shape of an order compile's list-orders-by-offer read: not probe_only, so it runs
    after the booking (SPEC §2.1), and the offer's staleness rewinds to the search; the replay
    books again with no key (P3)."""
    doc = chain(AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "offer"))
    (finding,) = found(doc, "commit.rewind-past-landed-commit")
    assert finding.element == "handles[offer].staleness.refresh"
    assert "can fire at find_by_offer, after book landed" in finding.message
    assert "dispatches book again with no key" in finding.message


def test_a_probe_only_read_after_the_booking_is_not_a_step_of_the_run():
    doc = chain(
        AFTER_THE_BOOKING.replace("PROBE_ONLY", "probe_only: true,").replace("INPUT", "offer")
    )
    assert found(doc, "commit.rewind-past-landed-commit") == []


def test_the_death_of_what_the_booking_made_may_send_the_run_back_for_a_new_one():
    """When the booking itself is gone, booking again is the point (SPEC §7 P4's shape)."""
    doc = chain(AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking"))
    assert found(doc, "commit.rewind-past-landed-commit") == []


def test_a_precondition_of_a_read_after_the_booking_that_rewinds_before_it_is_warned_about():
    text = AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking")
    doc = chain(
        text.replace(
            "input: {handles: [booking]}}",
            "input: {handles: [booking]},\n"
            "         preconditions: [{when: \"booking.status == 'lost'\", "
            'verdict: "rewind(to: search)"}]}',
        )
    )
    (finding,) = found(doc, "commit.rewind-past-landed-commit")
    assert finding.element == "actions[find_by_offer].preconditions[#1].verdict"


def test_a_row_for_the_consumers_of_what_the_booking_made_may_send_the_run_back_for_a_new_one():
    """The row fires when the booking itself is gone: booking again is the point (SPEC §7 P4)."""
    text = AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking")
    doc = chain(
        text
        + """
    verdict_table:
      - {id: X1, signal: [code:GONE], scope: {consumers_of: [booking]},
         verdict: "rewind(to: search)"}
"""
    )
    assert found(doc, "commit.rewind-past-landed-commit") == []


def test_a_row_naming_a_read_after_the_booking_that_rewinds_before_it_is_warned_about():
    text = AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking")
    doc = chain(
        text
        + """
    verdict_table:
      - {id: X1, signal: [code:OFFER_GONE], scope: [find_by_offer], verdict: "rewind(to: search)"}
"""
    )
    (finding,) = found(doc, "commit.rewind-past-landed-commit")
    assert finding.element == "verdict_table[X1]"


@pytest.mark.parametrize("scope", ["any", "{effects: [read]}", "{}"])
def test_a_row_for_any_step_or_a_class_that_rewinds_before_the_booking_is_warned_about(scope):
    """A row scoped to any step or to reads applies at the read after the booking too (SPEC
    §3 "Applies to"); its rewind replays the unkeyed booking (P3)."""
    text = AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking")
    doc = chain(
        text
        + f"""
    verdict_table:
      - {{id: X1, signal: [code:OFFER_GONE], scope: {scope}, verdict: "rewind(to: search)"}}
"""
    )
    assert elements(doc, "commit.rewind-past-landed-commit") == ["verdict_table[X1]"]


def test_a_row_for_a_class_the_later_steps_are_not_in_is_not_warned_about():
    text = AFTER_THE_BOOKING.replace("PROBE_ONLY ", "").replace("INPUT", "booking")
    doc = chain(
        text
        + """
    verdict_table:
      - {id: X1, signal: [code:OFFER_GONE], scope: {effects: [mint]}, verdict: "rewind(to: search)"}
"""
    )
    assert found(doc, "commit.rewind-past-landed-commit") == []


def test_an_offer_with_no_staleness_signal_read_after_the_booking_rewinds_nothing():
    """With detect empty no response reports the offer stale (SPEC §3 row 1 matches a handle's
    staleness.detect; SKILL Step 2: its consumers fall to the default rows), so its refresh
    never fires after the booking and the read cannot send the run back before it."""
    doc = chain(
        AFTER_THE_BOOKING.replace("PROBE_ONLY ", "")
        .replace("INPUT", "offer")
        .replace("detect: [http:410], refresh: search", "detect: [], refresh: search")
    )
    assert found(doc, "commit.rewind-past-landed-commit") == []


PROBE_AND_BOOKING = """
    id: c
    actions:
      - {id: search, effect: read}
      - {id: find_booking, effect: read, PROBE_ONLY input: {intent: [reference]}}
      - id: book
        effect: commit
        input: {intent: [reference]}
        idempotency: {mode: none}
        confirmation: {probe: find_booking, signal: one booking with our reference}
        compensation: {action: none}
      - {id: send_receipt, effect: mint}
"""


def test_a_probe_that_runs_as_a_step_before_its_commit_is_warned_about():
    """SPEC §2.1: a read without probe_only is a step; placed before the commit it confirms,
    it looks for a booking that cannot exist yet, and its answer routes the run as a step's."""
    doc = chain(PROBE_AND_BOOKING.replace("PROBE_ONLY ", ""))
    (finding,) = found(doc, "commit.probe-before-commit")
    assert finding.severity == "warning"
    assert finding.element == "actions[find_booking]"
    assert "confirmation probe of book" in finding.message
    assert "mark it probe_only, or move it after book" in finding.message


def test_a_probe_only_read_before_its_commit_is_not_warned_about():
    doc = chain(PROBE_AND_BOOKING.replace("PROBE_ONLY", "probe_only: true,"))
    assert found(doc, "commit.probe-before-commit") == []


def test_a_probe_step_after_its_commit_is_not_warned_about():
    text = PROBE_AND_BOOKING.replace("PROBE_ONLY ", "")
    probe = "      - {id: find_booking, effect: read, input: {intent: [reference]}}\n"
    doc = chain(text.replace(probe, "") + probe)
    assert [a.id for a in doc.actions] == ["search", "book", "send_receipt", "find_booking"]
    assert found(doc, "commit.probe-before-commit") == []


def test_a_probe_that_checks_a_precondition_before_its_commit_is_a_step_and_not_warned_about():
    """The reservation read that checks the payment deadline before ticketing (SPEC §2.1:
    a probe_only read takes no preconditions), so the run needs it where it is."""
    text = PROBE_AND_BOOKING.replace(
        "PROBE_ONLY ", 'preconditions: [{when: "deadline passed", verdict: dead_end}], '
    )
    assert found(chain(text), "commit.probe-before-commit") == []


def test_a_read_of_what_the_commit_mutates_before_it_is_not_warned_about():
    text = PROBE_AND_BOOKING.replace("PROBE_ONLY ", "").replace(
        "effect: commit\n", "effect: commit\n        mutates: reference\n"
    )
    assert chain(text).action("book").mutates == "reference"
    assert found(chain(text), "commit.probe-before-commit") == []


BOOKING_AND_ITS_UNDO = """
    id: c
    actions:
      - {id: search, effect: read}
      - {id: find_cancellation, effect: read, PROBE_ONLY input: {intent: [reference]}}
      - id: book
        effect: commit
        input: {intent: [reference]}
        idempotency: {mode: none}
        confirmation: {probe: find_booking, signal: one booking with our reference}
        compensation: {action: cancel}
      - {id: find_booking, effect: read, probe_only: true, input: {intent: [reference]}}
      - id: cancel
        effect: compensate
        input: {intent: [reference]}
        idempotency: {mode: none}
        confirmation: {probe: find_cancellation, signal: a cancellation for our reference}
"""


def test_a_compensators_probe_that_runs_as_a_step_before_the_commit_is_warned_about():
    """As a step before the booking, the cancellation's probe looks for the undo of a
    booking that does not exist yet, and its answer routes the run as a step's (SPEC §2.1)."""
    doc = chain(BOOKING_AND_ITS_UNDO.replace("PROBE_ONLY ", ""))
    (finding,) = found(doc, "commit.probe-before-commit")
    assert finding.element == "actions[find_cancellation]"
    assert "confirmation probe of cancel, which undoes book" in finding.message


def test_a_compensators_probe_only_read_is_not_warned_about():
    doc = chain(BOOKING_AND_ITS_UNDO.replace("PROBE_ONLY", "probe_only: true,"))
    assert found(doc, "commit.probe-before-commit") == []


def test_a_compensators_probe_running_as_a_step_after_the_commit_is_not_warned_about():
    """There it reads the booking the commit made, like any read after it."""
    text = BOOKING_AND_ITS_UNDO.replace("PROBE_ONLY ", "")
    probe = "      - {id: find_cancellation, effect: read, input: {intent: [reference]}}\n"
    doc = chain(
        text.replace(probe, "").replace(
            "      - {id: find_booking,", probe + "      - {id: find_booking,"
        )
    )
    order = [a.id for a in doc.actions]
    assert order[:4] == ["search", "book", "find_cancellation", "find_booking"]
    assert found(doc, "commit.probe-before-commit") == []


# A ferry seat hold undone by a release sub-chain: request the release, then confirm it.
SEAT_HOLD = """
    id: ferry_hold
    handles:
      - {id: account, minted_by: sign_in}
      - {id: hold_ref, minted_by: hold_seats, staleness: {detect: [], ttl_hint: n/a}}
      - {id: release_ref, minted_by: request_release}
      - {id: order_ref, description: a paid crossing's order, minted by the purchase chain}
    actions:
      - {id: sign_in, effect: mint, output: {handles: [account]}}
      - id: hold_seats
        effect: commit
        input: {handles: [account]}
        output: {handles: [hold_ref]}
        idempotency: {mode: keyed}
        confirmation: {probe: list_holds, signal: a hold for our reference}
        compensation: {chain: [request_release, confirm_release]}
      - {id: list_holds, effect: read, probe_only: true}
      - id: request_release
        effect: compensate
        input: {handles: [account, hold_ref]}
        output: {handles: [release_ref]}
        idempotency: {mode: keyed}
        confirmation: {probe: list_holds, signal: the hold is released}
      - id: confirm_release
        effect: compensate
        input: {handles: [release_ref]}
        idempotency: {mode: keyed}
        confirmation: {probe: list_holds, signal: the release is confirmed}
"""


def test_a_compensator_using_the_commits_handles_and_its_own_sub_chains_is_clean():
    assert found(chain(SEAT_HOLD), "commit.compensation-without-target") == []


def test_a_compensator_needing_a_handle_nothing_before_its_commit_mints_is_an_error():
    doc = chain(
        SEAT_HOLD.replace(
            "input: {handles: [account, hold_ref]}", "input: {handles: [account, order_ref]}"
        )
    )
    (finding,) = found(doc, "commit.compensation-without-target")
    assert finding.element == "actions[request_release].input"
    assert finding.severity == "error"
    assert finding.message == (
        "actions[request_release] undoes hold_seats but needs order_ref, which hold_seats "
        "neither presents nor mints and no step before it mints: an unwind sends it "
        "naming nothing to undo."
    )


def test_a_compensator_needing_a_handle_another_scope_mints_is_an_error():
    """The cancellation of another scope's order: this scope holds, it never orders."""
    doc = chain(
        SEAT_HOLD.replace(
            "input: {handles: [account, hold_ref]}", "input: {handles: [account, order_ref]}"
        ).replace(
            "{id: order_ref, description: a paid crossing's order, minted by the purchase chain}",
            "{id: order_ref, minted_by: external(purchase chain buy_crossing)}",
        )
    )
    (finding,) = found(doc, "commit.compensation-without-target")
    assert finding.element == "actions[request_release].input"
    assert "this chain takes it from outside (external(purchase chain buy_crossing))" in (
        finding.message
    )


UPGRADE = """
    id: c
    actions:
      - {id: book_standard, effect: commit, idempotency: {mode: keyed},
         compensation: {action: cancel_standard, replaced_by: REPLACEMENT}}
      - {id: check_suites, effect: read}
      - {id: book_suite, effect: commit, idempotency: {mode: keyed},
         compensation: {action: cancel_suite}}
      - {id: upgrade_note, effect: read}
      - {id: cancel_standard, effect: compensate, idempotency: {mode: keyed}}
      - {id: cancel_suite, effect: compensate, idempotency: {mode: keyed}}
"""


def test_an_original_replaced_by_a_later_commit_passes():
    doc = chain(UPGRADE.replace("REPLACEMENT", "book_suite"))
    assert found(doc, "commit.replaced-by-not-a-later-commit") == []


@pytest.mark.parametrize(
    ("replacement", "says"),
    [
        ("book_suit", "names book_suit, which is no action of this chain"),
        ("book_standard", "names book_standard itself"),
        ("check_suites", "check_suites is a read, not a commit"),
        ("cancel_suite", "cancel_suite is a compensator, not a commit"),
    ],
)
def test_a_replacement_that_is_not_another_commit_is_an_error(replacement, says):
    doc = chain(UPGRADE.replace("REPLACEMENT", replacement))
    (finding,) = found(doc, "commit.replaced-by-not-a-later-commit")
    assert finding.element == "actions[book_standard].compensation.replaced_by"
    assert finding.severity == "error"
    assert says in finding.message


def test_a_replacement_the_run_reaches_before_the_original_is_an_error():
    doc = chain(
        UPGRADE.replace(", replaced_by: REPLACEMENT", "").replace(
            "{action: cancel_suite}", "{action: cancel_suite, replaced_by: book_standard}"
        )
    )
    (finding,) = found(doc, "commit.replaced-by-not-a-later-commit")
    assert finding.element == "actions[book_suite].compensation.replaced_by"
    assert "book_standard comes before book_suite" in finding.message
