"""Bad and good examples of the evidence rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "evidence.assumed": Example(
        bad="""
            id: ship_parcel
            handles:
              - id: rate_id
                minted_by: get_rates
                staleness: {detect: [code:RATE_EXPIRED], ttl_hint: 24h, refresh: get_rates}
                source: {tag: assumed, note: rates seem to stay bookable for a day}
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]},
                 output: {handles: [rate_id]}}
        """,
        good="""
            id: ship_parcel
            handles:
              - id: rate_id
                minted_by: get_rates
                staleness: {detect: [code:RATE_EXPIRED], ttl_hint: 24h, refresh: get_rates}
                source: {tag: documented, urls: [https://docs.parcelpost.example.com/rates]}
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]},
                 output: {handles: [rate_id]}}
        """,
        why="How long a rate lives was a guess; the good chain cites the carrier's own page "
        "for it, so the claim is evidence rather than an open question (SKILL Step 1).",
    ),
    "evidence.no-compensation": Example(
        bad="""
            id: ship_parcel
            handles:
              - {id: label_id, minted_by: buy_label}
            actions:
              - id: buy_label
                effect: commit
                input: {intent: [address, weight, service]}
                output: {handles: [label_id]}
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: none
        """,
        good="""
            id: ship_parcel
            handles:
              - {id: label_id, minted_by: buy_label}
            actions:
              - id: buy_label
                effect: commit
                input: {intent: [address, weight, service]}
                output: {handles: [label_id]}
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: {action: void_label}
              - {id: void_label, effect: compensate, input: {handles: [label_id]},
                 idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                               replay_semantics: returns_cached},
                 confirmation: {by_key_replay: true}}
        """,
        why="A bought label that can never be undone leaves someone to accept the charge; "
        "the carrier lets an unused label be voided, so the good chain names void_label as "
        "its compensation (SKILL Step 6).",
    ),
    "evidence.spec-example": Example(
        bad="""
            id: card_payment
            handles:
              - id: intent_id
                minted_by: create_intent
                staleness: {detect: [code:intent_state_conflict], refresh: create_intent}
                source: {tag: spec-example, note: copied from the SPEC's card payment}
            actions:
              - {id: create_intent, effect: mint, input: {intent: [amount, currency]},
                 output: {handles: [intent_id]}}
        """,
        good="""
            id: card_payment
            handles:
              - id: intent_id
                minted_by: create_intent
                staleness: {detect: [code:intent_state_conflict], refresh: create_intent}
                source: {tag: observed, note: a cancelled intent answered this in the sandbox}
            actions:
              - {id: create_intent, effect: mint, input: {intent: [amount, currency]},
                 output: {handles: [intent_id]}}
        """,
        why="The SPEC's worked example shows how a chain is written, not how this provider "
        "behaves; the good chain rests the stale-intent signal on what was observed in the "
        "provider's sandbox (SKILL Step 1).",
    ),
}
