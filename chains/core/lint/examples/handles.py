"""Bad and good examples of the handles rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "handles.commit-input-undetectable": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: rate_lock, minted_by: lock_rate, staleness: {ttl_hint: ~15m}}
              - {id: booking_ref, minted_by: book_room}
            actions:
              - {id: lock_rate, effect: mint, output: {handles: [rate_lock]}}
              - id: book_room
                effect: commit
                input: {handles: [rate_lock]}
                output: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: a replay returns the stored booking}}
            verdict_table:
              - {id: H1, signal: [code:ROOM_GONE], scope: {steps: [book_room]}, verdict: dead_end}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: rate_lock, minted_by: lock_rate,
                 staleness: {detect: [code:RATE_LOCK_EXPIRED], ttl_hint: ~15m, refresh: lock_rate}}
              - {id: booking_ref, minted_by: book_room}
            actions:
              - {id: lock_rate, effect: mint, output: {handles: [rate_lock]}}
              - id: book_room
                effect: commit
                input: {handles: [rate_lock]}
                output: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: a replay returns the stored booking}}
            verdict_table:
              - {id: H1, signal: [code:ROOM_GONE], scope: {steps: [book_room]}, verdict: dead_end}
        """,
        why="The rate lock expires, and the booking commit now knows the error code a dead "
        "lock returns (code:RATE_LOCK_EXPIRED) and where to re-lock, so it cannot book on an "
        "expired lock unnoticed (SKILL Step 7).",
    ),
    "handles.rematch-key-placeholder": Example(
        bad="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights,
                 staleness: {detect: [code:OFFERS_EXPIRED], refresh: search_flights}}
              - id: chosen_flight
                minted_by: pick_flight
                derived_from: [offers]
                rematch: {key: ["<intent fields>"], on_ambiguous: gate}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offers]}}
              - {id: pick_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen_flight]}}
        """,
        good="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights,
                 staleness: {detect: [code:OFFERS_EXPIRED], refresh: search_flights}}
              - id: chosen_flight
                minted_by: pick_flight
                derived_from: [offers]
                rematch: {key: [carrier, flight_numbers, departure_time], on_ambiguous: gate}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offers]}}
              - {id: pick_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen_flight]}}
        """,
        why="The rematch key now names the fields that identify the traveller's flight, so after "
        "a rewind a fresh search can find the same flight again (SPEC §2.2).",
    ),
    "handles.rewind-presents-dead-handle": Example(
        bad="""
            id: hotel_payment
            handles:
              - {id: quote_id, minted_by: price_stay,
                 staleness: {detect: [code:QUOTE_EXPIRED], refresh: price_stay}}
              - {id: rate_lock, minted_by: lock_rate, derived_from: [quote_id],
                 staleness: {detect: [code:LOCK_EXPIRED], refresh: lock_rate}}
            actions:
              - {id: price_stay, effect: mint, output: {handles: [quote_id]}}
              - {id: lock_rate, effect: mint, input: {handles: [quote_id]},
                 output: {handles: [rate_lock]}}
              - {id: pay, effect: commit, input: {handles: [rate_lock]}, idempotency: {mode: keyed},
                 confirmation: {probe: get_payment, signal: payment is paid}}
              - {id: get_payment, effect: read, probe_only: true}
            verdict_table:
              - {id: Q1, signal: [code:QUOTE_EXPIRED], scope: {steps: [lock_rate]},
                 verdict: "rewind(to: lock_rate)"}
        """,
        good="""
            id: hotel_payment
            handles:
              - {id: quote_id, minted_by: price_stay,
                 staleness: {detect: [code:QUOTE_EXPIRED], refresh: price_stay}}
              - {id: rate_lock, minted_by: lock_rate, derived_from: [quote_id],
                 staleness: {detect: [code:LOCK_EXPIRED], refresh: lock_rate}}
            actions:
              - {id: price_stay, effect: mint, output: {handles: [quote_id]}}
              - {id: lock_rate, effect: mint, input: {handles: [quote_id]},
                 output: {handles: [rate_lock]}}
              - {id: pay, effect: commit, input: {handles: [rate_lock]}, idempotency: {mode: keyed},
                 confirmation: {probe: get_payment, signal: payment is paid}}
              - {id: get_payment, effect: read, probe_only: true}
            verdict_table:
              - {id: Q1, signal: [code:QUOTE_EXPIRED], scope: {steps: [lock_rate]},
                 verdict: "rewind(to: price_stay)"}
        """,
        why="An expired quote is answered by rewinding to price_stay, the quote's refresh, so "
        "the replay prices a new quote instead of sending the dead one to lock_rate again "
        "(SPEC §2.2).",
    ),
    "handles.selection-without-rematch": Example(
        bad="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights,
                 staleness: {detect: [code:OFFERS_EXPIRED], refresh: search_flights}}
              - {id: chosen_flight, minted_by: pick_flight, derived_from: [offers]}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offers]}}
              - {id: pick_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen_flight]}}
        """,
        good="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights,
                 staleness: {detect: [code:OFFERS_EXPIRED], refresh: search_flights}}
              - {id: chosen_flight, minted_by: pick_flight, derived_from: [offers],
                 rematch: {key: [carrier, flight_numbers, departure_time], on_ambiguous: gate}}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offers]}}
              - {id: pick_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen_flight]}}
        """,
        why="The chosen flight now says how to find it again (carrier, flight numbers, "
        "departure time) and to ask when several offers match, so a rewind through the search "
        "can restore the pick (SPEC §2.2).",
    ),
    "handles.single-use-never-spent": Example(
        bad="""
            id: card_checkout
            handles:
              - {id: card_token, minted_by: tokenise_card, single_use: true,
                 staleness: {detect: [code:TOKEN_EXPIRED], refresh: tokenise_card}}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: check_card, effect: read, input: {handles: [card_token]}}
        """,
        good="""
            id: card_checkout
            handles:
              - {id: card_token, minted_by: tokenise_card,
                 staleness: {detect: [code:TOKEN_EXPIRED], refresh: tokenise_card}}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: check_card, effect: read, input: {handles: [card_token]}}
        """,
        why="No commit ever spends the card token here, only a read looks at it, so the "
        "single_use flag promised something the chain never does and is dropped (SPEC §2.2).",
    ),
    "handles.single-use-spent-twice": Example(
        bad="""
            id: deposit_and_balance
            handles:
              - {id: card_token, minted_by: tokenise_card, single_use: true,
                 staleness: {detect: [code:TOKEN_USED], refresh: tokenise_card}}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: charge_deposit, effect: commit, input: {handles: [card_token]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
              - {id: charge_balance, effect: commit, input: {handles: [card_token]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
        """,
        good="""
            id: deposit_and_balance
            handles:
              - {id: card_token, minted_by: tokenise_card, single_use: true,
                 staleness: {detect: [code:TOKEN_USED], refresh: tokenise_card}}
              - {id: balance_token, minted_by: tokenise_again, single_use: true,
                 staleness: {detect: [code:TOKEN_USED], refresh: tokenise_again}}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: charge_deposit, effect: commit, input: {handles: [card_token]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
              - {id: tokenise_again, effect: mint, output: {handles: [balance_token]}}
              - {id: charge_balance, effect: commit, input: {handles: [balance_token]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
        """,
        why="A one-time card token is used up by the deposit charge, so the balance charge now "
        "gets a token of its own, minted just before it (SPEC §4 I4).",
    ),
    "handles.spent-handle-reused": Example(
        bad="""
            id: card_checkout
            handles:
              - {id: card_token, minted_by: tokenise_card, single_use: true,
                 staleness: {detect: [code:TOKEN_USED], refresh: tokenise_card}}
              - {id: charge_id, minted_by: charge_card}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: charge_card, effect: commit, input: {handles: [card_token]},
                 output: {handles: [charge_id]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
              - {id: fetch_receipt, effect: read, input: {handles: [card_token]}}
        """,
        good="""
            id: card_checkout
            handles:
              - {id: card_token, minted_by: tokenise_card, single_use: true,
                 staleness: {detect: [code:TOKEN_USED], refresh: tokenise_card}}
              - {id: charge_id, minted_by: charge_card}
            actions:
              - {id: tokenise_card, effect: mint, output: {handles: [card_token]}}
              - {id: charge_card, effect: commit, input: {handles: [card_token]},
                 output: {handles: [charge_id]},
                 idempotency: {mode: keyed}, confirmation: {by_key_replay: {note: keyed}}}
              - {id: fetch_receipt, effect: read, input: {handles: [charge_id]}}
        """,
        why="Once the charge has spent the one-time card token, the receipt is fetched by the "
        "charge id the charge returned instead of presenting the used token again (SPEC §4 I4).",
    ),
    "handles.staleness-detect-not-signal": Example(
        bad="""
            id: shop_checkout
            handles:
              - {id: cart_id, minted_by: open_cart,
                 staleness: {detect: [cart_rejected_at_checkout], refresh: open_cart}}
            actions:
              - {id: open_cart, effect: mint, output: {handles: [cart_id]}}
              - {id: add_items, effect: mint, input: {handles: [cart_id]}}
        """,
        good="""
            id: shop_checkout
            handles:
              - {id: cart_id, minted_by: open_cart,
                 staleness: {detect: [code:CART_EXPIRED], refresh: open_cart}}
            actions:
              - {id: open_cart, effect: mint, output: {handles: [cart_id]}}
              - {id: add_items, effect: mint, input: {handles: [cart_id]}}
        """,
        why="The detect entry is now the error code the shop returns for an expired cart, "
        "something code can match in a response, instead of a name for the situation "
        "(SPEC §2.2).",
    ),
    "handles.staleness-undetectable": Example(
        bad="""
            id: cloud_provisioning
            handles:
              - {id: upload_url, minted_by: request_upload,
                 staleness: {detect: [], ttl_hint: ~1h, refresh: request_upload}}
            actions:
              - {id: request_upload, effect: mint, output: {handles: [upload_url]}}
              - {id: upload_image, effect: mint, input: {handles: [upload_url]}}
        """,
        good="""
            id: cloud_provisioning
            handles:
              - {id: upload_url, minted_by: request_upload,
                 staleness: {detect: [http:403], ttl_hint: ~1h, refresh: request_upload}}
            actions:
              - {id: request_upload, effect: mint, output: {handles: [upload_url]}}
              - {id: upload_image, effect: mint, input: {handles: [upload_url]}}
        """,
        why="The signed upload URL expires, and the chain now records what an upload to an "
        "expired URL returns (HTTP 403), so a stale URL is recognised and re-requested "
        "(SKILL Step 2).",
    ),
    "handles.ttl-enforced": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: rate_lock, minted_by: lock_rate,
                 staleness: {detect: [code:RATE_LOCK_EXPIRED], ttl_hint: ~15m, refresh: lock_rate}}
            actions:
              - {id: lock_rate, effect: mint, output: {handles: [rate_lock]}}
              - {id: confirm_price, effect: read, input: {handles: [rate_lock]}}
            verdict_table:
              - {id: R1, signal: ["rate_lock.age > 14m"], scope: {steps: [confirm_price]},
                 verdict: "rewind(to: lock_rate)"}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: rate_lock, minted_by: lock_rate,
                 staleness: {detect: [code:RATE_LOCK_EXPIRED], ttl_hint: ~15m, refresh: lock_rate}}
            actions:
              - {id: lock_rate, effect: mint, output: {handles: [rate_lock]}}
              - {id: confirm_price, effect: read, input: {handles: [rate_lock]}}
            verdict_table:
              - {id: R1, signal: ["code:RATE_LOCK_EXPIRED"], scope: {steps: [confirm_price]},
                 verdict: "rewind(to: lock_rate)"}
        """,
        why="The row now rewinds on the error code the hotel returns for a dead lock instead of "
        "on the lock's age measured against our own guess of its lifetime; the ttl_hint stays "
        "a planning hint (SPEC P2).",
    ),
}
