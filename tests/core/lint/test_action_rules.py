"""Actions: precondition verdicts, deadlines a commit's response names, reversals after ok."""

from __future__ import annotations

import pytest

from .helpers import chain, elements, found

# A read that checks an order, then a keyed commit that places it.
SHOP = """
id: shop
actions:
  - id: look
    effect: read
    preconditions:
      - {{when: "status == 'settling'", verdict: "{verdict}"}}
  - id: order
    effect: commit
    idempotency: {{mode: keyed, key_scope: run}}
    confirmation: {{by_key_replay: {{note: keyed and synchronous}}}}
gates:
  - {{id: ask, audience: user, outcomes: {{yes: ok}}, timeout: {{after: 5m, verdict: dead_end}}}}
"""


def with_precondition(verdict: str):
    return chain(SHOP.format(verdict=verdict))


# --- actions.precondition-verdict-not-allowed ---------------------------------


def test_a_precondition_that_retries_is_an_error():
    doc = with_precondition("retry")
    assert elements(doc, "actions.precondition-verdict-not-allowed") == [
        "actions[look].preconditions[#1].verdict"
    ]


def test_a_precondition_that_rewinds_is_an_error():
    doc = with_precondition("rewind(to: look)")
    [finding] = found(doc, "actions.precondition-verdict-not-allowed")
    assert finding.severity == "error"
    assert "answers rewind" in finding.message


@pytest.mark.parametrize(
    "verdict",
    ["ok", "gate(ask)", "dead_end", "repair(to: look, fields: [city])", "reselect(to: look)"],
)
def test_a_precondition_answering_a_verdict_spec_allows_is_silent(verdict):
    assert found(with_precondition(verdict), "actions.precondition-verdict-not-allowed") == []


# --- actions.business-expiry-undeclared ----------------------------------------


def held_booking(output: str, extra_handle: str = "", effect: str = "commit") -> object:
    return chain(f"""
        id: hold
        handles:
          - {{id: locator, minted_by: place_hold{extra_handle}}}
        actions:
          - id: place_hold
            effect: {effect}
            idempotency: {{mode: keyed, key_scope: run}}
            confirmation: {{by_key_replay: {{note: keyed and synchronous}}}}
            output: {output}
    """)


def test_a_hold_whose_response_names_its_payment_deadline_warns_without_business_expiry():
    doc = held_booking("{payload: {locator: string, pay_before: datetime}, handles: [locator]}")
    [finding] = found(doc, "actions.business-expiry-undeclared")
    assert finding.element == "actions[place_hold].output"
    assert finding.severity == "warning"
    assert "pay_before" in finding.message


def test_a_nested_provider_field_named_as_a_time_limit_warns():
    doc = held_booking("{payload: {status: {ticketing: TicketingTimeLimit}}, handles: [locator]}")
    assert "TicketingTimeLimit" in found(doc, "actions.business-expiry-undeclared")[0].message


def test_a_deadline_a_commit_description_names_warns():
    doc = chain("""
        id: hold
        actions:
          - id: place_hold
            description: Seats are kept until hold_expires_at, then released.
            effect: commit
            idempotency: {mode: keyed, key_scope: run}
            confirmation: {by_key_replay: {note: keyed and synchronous}}
    """)
    assert elements(doc, "actions.business-expiry-undeclared") == ["actions[place_hold].output"]


def test_a_commit_that_declares_its_business_expiry_is_silent():
    doc = held_booking(
        "{payload: {pay_before: datetime}, handles: [locator], "
        "business_expiry: {field: pay_before, on_expiry: dead_end}}"
    )
    assert found(doc, "actions.business-expiry-undeclared") == []


def test_a_deadline_on_a_mint_is_staleness_not_business_expiry():
    doc = held_booking("{payload: {expires_at: datetime}, handles: [locator]}", effect="mint")
    assert found(doc, "actions.business-expiry-undeclared") == []


def test_a_deadline_the_minted_handle_reads_as_its_staleness_is_silent():
    doc = held_booking(
        "{payload: {capture_before: timestamp}, handles: [locator]}",
        extra_handle=", staleness: {detect: [code:hold_lapsed], ttl_hint: capture_before, "
        "refresh: place_hold}",
    )
    assert found(doc, "actions.business-expiry-undeclared") == []


def test_field_names_that_say_who_or_what_but_no_deadline_are_silent():
    doc = held_booking("{payload: {created_by: string, expired: bool, booking_reference: string}}")
    assert found(doc, "actions.business-expiry-undeclared") == []


# --- actions.revocation-undeclared ----------------------------------------------


def refund(notes: str = "", revocation: str = "", compensation: str = "") -> object:
    return chain(f"""
        id: refunds
        handles:
          - {{id: refund_id, minted_by: refund}}
        actions:
          - id: refund
            effect: commit
            notes: ["{notes}"]
            idempotency: {{mode: keyed, key_scope: run}}
            confirmation: {{probe: get_refund, signal: "status == 'succeeded'"}}
            output: {{handles: [refund_id]}}
            {revocation}
            {compensation}
          - id: get_refund
            effect: read
            probe_only: true
            input: {{handles: [refund_id]}}
    """)


def test_a_commit_its_notes_say_can_fail_weeks_after_ok_warns_without_revocation():
    doc = refund(notes="A refund that succeeded can still fail up to 20 days later.")
    [finding] = found(doc, "actions.revocation-undeclared")
    assert finding.element == "actions[refund]"
    assert finding.severity == "warning"
    assert "up to 20 days" in finding.message


def test_a_commit_that_declares_its_revocation_watch_is_silent():
    doc = refund(
        notes="A refund that succeeded can still fail up to 20 days later.",
        revocation="revocation: {watch: [webhook:refund.failed], window: 20d, "
        "route: escalate(operator)}",
    )
    assert found(doc, "actions.revocation-undeclared") == []


def test_a_call_that_may_fail_when_dispatched_is_no_later_reversal():
    doc = refund(notes="The call may fail with 409 when the charge is already refunded.")
    assert found(doc, "actions.revocation-undeclared") == []


def test_a_compensation_window_speaks_of_the_undo_not_of_a_reversal_of_the_commit():
    doc = refund(
        compensation="compensation: {action: none, window: "
        '"a refund of the refund can fail up to 20 days later"}'
    )
    assert found(doc, "actions.revocation-undeclared") == []


def test_a_read_that_sees_the_property_cancel_what_a_commit_booked_warns():
    doc = chain("""
        id: stay
        handles:
          - {id: stay_id, minted_by: book}
        actions:
          - id: book
            effect: commit
            idempotency: {mode: keyed, key_scope: run}
            confirmation: {probe: get_stay, signal: "status == 'booked'"}
            output: {handles: [stay_id]}
          - id: get_stay
            effect: read
            input: {handles: [stay_id]}
            output: {payload: {status: "enum[booked, cancelled_by_guest, cancelled_by_property]"}}
    """)
    [finding] = found(doc, "actions.revocation-undeclared")
    assert finding.element == "actions[book]"
    assert "cancelled_by_property" in finding.message


def test_a_read_that_sees_only_our_own_cancellation_is_silent():
    doc = chain("""
        id: stay
        handles:
          - {id: stay_id, minted_by: book}
        actions:
          - id: book
            effect: commit
            idempotency: {mode: keyed, key_scope: run}
            confirmation: {probe: get_stay, signal: "status == 'booked'"}
            output: {handles: [stay_id]}
          - id: get_stay
            effect: read
            input: {handles: [stay_id]}
            output: {payload: {status: "enum[booked, cancelled_by_guest]"}}
    """)
    assert found(doc, "actions.revocation-undeclared") == []
