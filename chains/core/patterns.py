"""Patterns a new chain can start from: small valid chains that show the discipline.

Each :class:`Pattern` is a whole chain in YAML (the SPEC dialect the import
reads) whose every element says in its description why it is there: the
double-call test behind each effect, the probe behind an unkeyed commit, the
key behind a keyed one, the gate before money moves. A test holds each to
lint VALID and to an exploration at two faults with no broken invariant,
so a pattern never teaches a mistake. :func:`pattern_document` gives a
pattern as a new chain's first document, under the chain's own id.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

from . import formats

__all__ = ["PATTERNS", "Pattern", "pattern_document"]


@dataclass(frozen=True)
class Pattern:
    """A chain to start from: its id, name, the flow in a line, when to use it, the chain."""

    id: str
    name: str
    flow: str
    use_when: str
    text: str

    @functools.cached_property
    def document(self) -> dict[str, Any]:
        result = formats.load(self.text, format="yaml")
        if not result.chains:  # a test keeps this from happening
            raise ValueError(f"pattern {self.id} does not load: {result.problems}")
        found: dict[str, Any] = formats.to_document(result.chains[0])
        return found


_UNKEYED = Pattern(
    "search_price_book",
    "Search, price, unkeyed booking with a probe",
    "search → price (an expiring quote) → book (unkeyed commit) + find_booking (probe)",
    "The provider takes no idempotency key: a booking, an order, a VM create. "
    "A lost answer is reconciled by a lookup, never sent again.",
    """\
id: search_price_book
title: Search, price, then an unkeyed booking confirmed by a probe
description: >-
  A read finds options, a mint prices one into a quote that expires, and an
  unkeyed commit books it. The provider takes no idempotency key, so a lost
  answer is never retried: the run asks the probe whether the booking landed.
handles:
  - id: search_id
    minted_by: search
    description: The result set; a new search replaces it.
    staleness: {detect: ["code:SEARCH_EXPIRED"], refresh: search}
  - id: quote_id
    minted_by: price
    derived_from: [search_id]
    description: A priced offer that expires; re-minted by pricing again.
    staleness: {detect: ["code:QUOTE_EXPIRED"], refresh: price, ttl_hint: 15m}
  - id: booking_id
    minted_by: book
    description: The booking; a fact once it has landed.
actions:
  - id: search
    effect: read
    description: Finds the options; repeating it only finds them again.
    input: {intent: {dates: date, place: string}}
    output: {handles: [search_id]}
    timeout: 20s
  - id: price
    effect: mint
    description: Prices the chosen option into a quote; a second quote costs nothing.
    input: {handles: [search_id]}
    output: {handles: [quote_id]}
    timeout: 20s
  - id: book
    effect: commit
    description: >-
      Books the quote once. Writes a correlation record with our reference
      before it is sent and runs under a cancellation shield, so a lost
      answer is reconciled by the probe, never sent again.
    input: {handles: [quote_id]}
    output: {handles: [booking_id]}
    timeout: 60s
    idempotency: {mode: none}
    confirmation: {probe: find_booking, signal: exactly one booking with our reference}
    compensation: {action: cancel_booking, window: until the start date}
  - id: find_booking
    effect: read
    probe_only: true
    description: Looks a booking up by our reference; the probe of book.
    timeout: 20s
  - id: cancel_booking
    effect: compensate
    description: Cancels a landed booking; the business undo of book.
    input: {handles: [booking_id]}
    idempotency: {mode: natural}
    confirmation: {probe: find_booking, signal: the booking shows as cancelled}
    timeout: 30s
verdict_table:
  - id: quote_expired
    signal: ["code:QUOTE_EXPIRED"]
    scope: {steps: [book]}
    verdict: "rewind(to: price)"
  - id: lost_answer
    signal: [timeout, http:5xx]
    scope: {steps: [book]}
    verdict: reconcile
  - id: sold_out
    signal: ["code:SOLD_OUT"]
    scope: {steps: [price, book]}
    verdict: "dead_end(reason: sold_out, permanent: true)"
policy:
  per_step:
    read: {attempts: 3, backoff: {base: 500ms, factor: 2, max: 8s}}
    mint: {attempts: 2}
    commit: {unkeyed: {attempts: 1}, keyed: {attempts: 3}}
    compensate: {unkeyed: {attempts: 1}, keyed: {attempts: 3}}
  per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 10m, gate_timeout: 15m}""",
)
_KEYED = Pattern(
    "hold_and_capture",
    "Keyed payment: hold, then capture",
    "authorize (keyed commit: a hold) → capture (keyed commit); cancel and refund undo them",
    "The provider honours an idempotency key: a card payment, a transfer API with keys. "
    "A lost answer is asked again with the same key.",
    """\
id: hold_and_capture
title: A keyed card payment, held first and captured later
description: >-
  The card is authorized (a hold) and captured once the order is ready. The
  provider honours an idempotency key, so a lost answer is asked again with
  the same key: the provider answers with the first result instead of
  charging twice.
handles:
  - id: payment_id
    minted_by: authorize
    description: The authorized payment; capture and cancel present it.
    staleness: {detect: ["code:AUTHORIZATION_EXPIRED"], contractual: true, ttl_hint: 7d}
actions:
  - id: authorize
    effect: commit
    description: Places a hold for the amount; keyed by our order reference.
    input: {intent: {amount: money, card: payment_method}}
    output: {handles: [payment_id]}
    timeout: 30s
    idempotency:
      {mode: keyed, key_scope: intent, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {by_key_replay: the same key answers with the first authorization}
    compensation: {action: cancel_authorization, window: until captured}
    request_invariants: {capture_method: manual}
  - id: capture
    effect: commit
    description: Takes the held amount; keyed by the payment.
    input: {handles: [payment_id]}
    timeout: 30s
    idempotency:
      {mode: keyed, key_scope: intent, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {by_key_replay: the same key answers with the first capture}
    compensation: {action: refund, window: 180 days}
  - id: cancel_authorization
    effect: compensate
    description: Releases the hold; the undo of authorize before capture.
    input: {handles: [payment_id]}
    timeout: 30s
    idempotency:
      {mode: keyed, key_scope: intent, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {by_key_replay: the same key answers with the first cancel}
  - id: refund
    effect: compensate
    description: Pays the captured amount back; the undo of capture.
    input: {handles: [payment_id]}
    timeout: 30s
    idempotency:
      {mode: keyed, key_scope: intent, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {by_key_replay: the same key answers with the first refund}
verdict_table:
  - id: card_declined
    signal: ["code:card_declined"]
    scope: {steps: [authorize]}
    verdict: "dead_end(reason: card_declined, permanent: true)"
  - id: hold_expired
    signal: ["code:AUTHORIZATION_EXPIRED"]
    scope: {steps: [capture]}
    verdict: "dead_end(reason: authorization_expired, permanent: true)"
  - id: busy
    signal: [http:429]
    scope: {steps: [authorize, capture]}
    verdict: retry
policy:
  per_step:
    commit:
      keyed: {attempts: 3, backoff: {base: 1s, factor: 2, max: 20s}}
      unkeyed: {attempts: 1}
    compensate:
      keyed: {attempts: 3, backoff: {base: 1s, factor: 2, max: 20s}}
      unkeyed: {attempts: 1}
  per_chain: {max_rewinds: 2, max_repairs: 1, wall_clock: 5m, gate_timeout: 15m}""",
)
_CONSENT = Pattern(
    "quote_consent_commit",
    "Quote, the user agrees, then commit",
    "quote (expires) → price_consent (gate: the user) → transfer (keyed commit, final)",
    "Money moves at a price the user must accept first, and the quote can expire while they think.",
    """\
id: quote_consent_commit
title: A quote the user agrees to before a keyed commit
description: >-
  A quote states its price and when it expires; the user must agree to the
  price before the money moves. An expired quote is quoted again, and the
  commit waits at the consent gate every time it is reached.
handles:
  - id: quote_id
    minted_by: quote
    description: The quoted price; it expires at quote.expires_at.
    staleness: {detect: ["code:QUOTE_EXPIRED"], refresh: quote, contractual: true, ttl_hint: 10m}
actions:
  - id: quote
    effect: mint
    description: Quotes the price; a second quote costs nothing.
    input: {intent: {amount: money, destination: account}}
    output:
      handles: [quote_id]
      business_expiry: {field: quote.expires_at, on_expiry: "rewind(to: quote)"}
    timeout: 20s
  - id: transfer
    effect: commit
    description: Sends the money at the quoted price, keyed by the quote.
    entry_gate: price_consent
    input: {handles: [quote_id]}
    timeout: 30s
    idempotency:
      {mode: keyed, key_scope: intent, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {by_key_replay: the same key answers with the first transfer}
    compensation:
      action: none
      ordering_note: A sent transfer cannot be recalled; the user agreed to it at price_consent.
gates:
  - id: price_consent
    audience: user
    description: Shows the quoted price and asks the user to agree before money moves.
    payload: {price: money, expires_at: time}
    outcomes:
      accept: ok
      decline: "dead_end(reason: declined, permanent: true)"
    timeout: {after: 10m, outcome: decline}
    payload_expiry: {field: quote.expires_at, verdict: "rewind(to: quote)"}
verdict_table:
  - id: quote_expired
    signal: ["code:QUOTE_EXPIRED"]
    scope: {steps: [transfer]}
    verdict: "rewind(to: quote)"
  - id: insufficient_funds
    signal: ["code:INSUFFICIENT_FUNDS"]
    scope: {steps: [transfer]}
    verdict: "dead_end(reason: insufficient_funds, permanent: false)"
policy:
  per_step:
    mint: {attempts: 2}
    commit: {keyed: {attempts: 3, backoff: {base: 1s, factor: 2, max: 20s}}, unkeyed: {attempts: 1}}
  per_chain: {max_rewinds: 3, max_repairs: 1, wall_clock: 15m, gate_timeout: 15m}""",
)

PATTERNS: dict[str, Pattern] = {p.id: p for p in (_UNKEYED, _KEYED, _CONSENT)}


def pattern_document(pattern_id: str, key: str, title: str = "") -> dict[str, Any]:
    """Pattern ``pattern_id`` as a new chain ``key``'s document (a copy); KeyError if unknown.

    >>> pattern_document("hold_and_capture", "shop_payment")["id"]
    'shop_payment'
    """
    document = copy.deepcopy(PATTERNS[pattern_id].document)
    document["id"] = key
    document["title"] = title or document.get("title") or key
    return document
