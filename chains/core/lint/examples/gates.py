"""Bad and good examples of the gates rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "gates.bind-not-intent": Example(
        bad="""
            id: ship_parcel
            actions:
              - id: get_rates
                effect: read
                input: {intent: {destination: address, weight_kg: number}}
                preconditions: [{when: rates.length > 1, verdict: gate(pick_carrier)}]
              - id: buy_label
                effect: commit
                input: {intent: {carrier: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: pick_carrier
                audience: user
                payload: {rates: "rate[]"}
                outcomes:
                  choose: {params: {carrier: string}, bind: [service_level], verdict: ok}
                  cancel: dead_end
                timeout: {after: 2h, verdict: dead_end}
        """,
        good="""
            id: ship_parcel
            actions:
              - id: get_rates
                effect: read
                input: {intent: {destination: address, weight_kg: number}}
                preconditions: [{when: rates.length > 1, verdict: gate(pick_carrier)}]
              - id: buy_label
                effect: commit
                input: {intent: {carrier: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: pick_carrier
                audience: user
                payload: {rates: "rate[]"}
                outcomes:
                  choose: {params: {carrier: string}, bind: [carrier], verdict: ok}
                  cancel: dead_end
                timeout: {after: 2h, verdict: dead_end}
        """,
        why="The answer now binds into carrier, the intent field buy_label reads, instead of "
        "service_level, which no step reads; SPEC §2.6 lets an outcome write only intent that "
        "the raising step or a later one uses.",
    ),
    "gates.consent-behind-unreadable-precondition": Example(
        bad="""
            id: cancel_trip
            actions:
              - id: quote_refund
                effect: mint
                preconditions: [{when: "refund quote returned", verdict: gate(refund_consent)}]
              - id: cancel_booking
                effect: compensate
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: refund_consent
                audience: user
                payload: {refund_amount: money, penalty: money}
                outcomes: {confirm: ok, keep_booking: dead_end}
                timeout: {after: 72h, verdict: dead_end}
        """,
        good="""
            id: cancel_trip
            actions:
              - id: quote_refund
                effect: mint
                preconditions: [{when: "refund_amount > 0", verdict: gate(refund_consent)}]
              - id: cancel_booking
                effect: compensate
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: refund_consent
                audience: user
                payload: {refund_amount: money, penalty: money}
                outcomes: {confirm: ok, keep_booking: dead_end}
                timeout: {after: 72h, verdict: dead_end}
        """,
        why="The precondition now tests refund_amount, a field the quote's response carries, so "
        "the runtime can see it hold and park at the refund consent; 'refund quote returned' is "
        "prose no response matches, so the cancellation went ahead unasked (SPEC §2.6).",
    ),
    "gates.default-timeout-only": Example(
        bad="""
            id: provision_cluster
            actions:
              - {id: price_cluster, effect: read, input: {intent: {region: string, nodes: int}}}
              - id: create_cluster
                effect: commit
                entry_gate: launch_consent
                input: {intent: {region: string, nodes: int}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: launch_consent
                audience: user
                payload: {monthly_cost: money}
                outcomes: {launch: ok, abandon: dead_end}
            policy: {per_chain: {gate_timeout: 4h}}
        """,
        good="""
            id: provision_cluster
            actions:
              - {id: price_cluster, effect: read, input: {intent: {region: string, nodes: int}}}
              - id: create_cluster
                effect: commit
                entry_gate: launch_consent
                input: {intent: {region: string, nodes: int}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: launch_consent
                audience: user
                payload: {monthly_cost: money}
                outcomes: {launch: ok, abandon: dead_end}
                timeout: {after: 4h, outcome: abandon}
            policy: {per_chain: {gate_timeout: 4h}}
        """,
        why="The gate now has its own timeout that says an unanswered launch is abandoned; the "
        "chain-wide gate_timeout only bounds the wait, while SPEC §2.6 wants each gate to name "
        "what happens when time runs out.",
    ),
    "gates.entry-outcome-loops": Example(
        bad="""
            id: grow_volume
            actions:
              - {id: get_volume, effect: read, input: {intent: {volume_id: string}}}
              - id: resize_volume
                effect: commit
                entry_gate: resize_consent
                input: {intent: {size_gb: int}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {probe: get_volume}
            gates:
              - id: resize_consent
                audience: user
                payload: {new_monthly_cost: money}
                outcomes:
                  approve:
                    params: {size_gb: int}
                    bind: [size_gb]
                    verdict: "repair(to: resize_volume, fields: [size_gb])"
                  decline: dead_end
                timeout: {after: 1h, verdict: dead_end}
        """,
        good="""
            id: grow_volume
            actions:
              - {id: get_volume, effect: read, input: {intent: {volume_id: string}}}
              - id: resize_volume
                effect: commit
                entry_gate: resize_consent
                input: {intent: {size_gb: int}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {probe: get_volume}
            gates:
              - id: resize_consent
                audience: user
                payload: {new_monthly_cost: money}
                outcomes:
                  approve:
                    params: {size_gb: int}
                    bind: [size_gb]
                    verdict: ok
                  decline: dead_end
                timeout: {after: 1h, verdict: dead_end}
        """,
        why="Approving now answers ok and binds the size into intent before the resize runs; a "
        "repair back into resize_volume arrives at its entry gate again, which SPEC §3 asks on "
        "every arrival, so the resize was never dispatched.",
    ),
    "gates.model-answers-money-or-consent": Example(
        bad="""
            id: refund_order
            actions:
              - id: get_order
                effect: read
                input: {intent: {order_id: string}}
                preconditions: [{when: order.total > 500, verdict: gate(large_refund_review)}]
              - id: issue_refund
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: large_refund_review
                audience: model
                payload: {refund_amount: money, reason: string}
                outcomes: {approve: ok, reject: dead_end}
                timeout: {after: 24h, verdict: dead_end}
        """,
        good="""
            id: refund_order
            actions:
              - id: get_order
                effect: read
                input: {intent: {order_id: string}}
                preconditions: [{when: order.total > 500, verdict: gate(large_refund_review)}]
              - id: issue_refund
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: large_refund_review
                audience: operator
                payload: {refund_amount: money, reason: string}
                outcomes: {approve: ok, reject: dead_end}
                timeout: {after: 24h, verdict: dead_end}
        """,
        why="An operator now answers the large-refund review instead of the model; SPEC §2.6 "
        "never lets the model decide a gate about money or consent.",
    ),
    "gates.no-outcomes": Example(
        bad="""
            id: export_shipment
            actions:
              - {id: quote_freight, effect: read, input: {intent: {destination: address}}}
              - id: book_freight
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: customs_hold
                audience: operator
                timeout: {after: 48h, verdict: dead_end}
            verdict_table:
              - {id: C1, signal: [code:CUSTOMS_HOLD], scope: {steps: [book_freight]},
                 verdict: gate(customs_hold)}
        """,
        good="""
            id: export_shipment
            actions:
              - {id: quote_freight, effect: read, input: {intent: {destination: address}}}
              - id: book_freight
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: customs_hold
                audience: operator
                outcomes: {cleared: ok, refused: dead_end}
                timeout: {after: 48h, verdict: dead_end}
            verdict_table:
              - {id: C1, signal: [code:CUSTOMS_HOLD], scope: {steps: [book_freight]},
                 verdict: gate(customs_hold)}
        """,
        why="The customs hold now declares the two answers an operator can give, cleared or "
        "refused, each with its verdict; without outcomes (SPEC §2.6) no answer could ever "
        "resume the parked run.",
    ),
    "gates.no-timeout": Example(
        bad="""
            id: book_flight
            actions:
              - {id: search_flights, effect: read,
                 input: {intent: {origin: airport, destination: airport}}}
              - id: issue_ticket
                effect: commit
                entry_gate: fare_consent
                input: {intent: {origin: airport, destination: airport}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fare_consent
                audience: user
                payload: {fare: money}
                outcomes: {accept: ok, decline: dead_end}
        """,
        good="""
            id: book_flight
            actions:
              - {id: search_flights, effect: read,
                 input: {intent: {origin: airport, destination: airport}}}
              - id: issue_ticket
                effect: commit
                entry_gate: fare_consent
                input: {intent: {origin: airport, destination: airport}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fare_consent
                audience: user
                payload: {fare: money}
                outcomes: {accept: ok, decline: dead_end}
                timeout: {after: 30m, outcome: decline}
        """,
        why="The fare consent now times out after 30 minutes as a decline; with no timeout and "
        "no chain gate_timeout the run could stay parked forever (SKILL Step 7).",
    ),
    "gates.outcome-verdict-not-allowed": Example(
        bad="""
            id: pay_invoice
            actions:
              - {id: get_invoice, effect: read, input: {intent: {invoice_id: string}}}
              - id: charge_card
                effect: commit
                input: {intent: {card_token: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: card_declined
                audience: user
                outcomes:
                  other_card:
                    params: {card_token: string}
                    bind: [card_token]
                    verdict: retry
                  give_up: dead_end
                timeout: {after: 1h, verdict: dead_end}
            verdict_table:
              - {id: P1, signal: [code:CARD_DECLINED], scope: {steps: [charge_card]},
                 verdict: gate(card_declined)}
        """,
        good="""
            id: pay_invoice
            actions:
              - {id: get_invoice, effect: read, input: {intent: {invoice_id: string}}}
              - id: charge_card
                effect: commit
                input: {intent: {card_token: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: card_declined
                audience: user
                outcomes:
                  other_card:
                    params: {card_token: string}
                    bind: [card_token]
                    verdict: "repair(to: charge_card, fields: [card_token])"
                  give_up: dead_end
                timeout: {after: 1h, verdict: dead_end}
            verdict_table:
              - {id: P1, signal: [code:CARD_DECLINED], scope: {steps: [charge_card]},
                 verdict: gate(card_declined)}
        """,
        why="Paying with another card now resumes with a repair of charge_card's card_token "
        "instead of retry; SPEC §2.6 lets a resumed gate only go on, repair, rewind, reselect "
        "or stop.",
    ),
    "gates.params-without-bind": Example(
        bad="""
            id: book_flight
            actions:
              - id: search_fares
                effect: read
                input: {intent: {origin: airport, destination: airport}}
                preconditions: [{when: fares.length > 1, verdict: gate(choose_fare)}]
              - id: hold_seat
                effect: mint
                input: {intent: {fare_class: string}}
            gates:
              - id: choose_fare
                audience: user
                payload: {fares: "fare[]"}
                outcomes:
                  choose: {params: {fare_class: string}, verdict: ok}
                  none_suit: dead_end
                timeout: {after: 1h, verdict: dead_end}
        """,
        good="""
            id: book_flight
            actions:
              - id: search_fares
                effect: read
                input: {intent: {origin: airport, destination: airport}}
                preconditions: [{when: fares.length > 1, verdict: gate(choose_fare)}]
              - id: hold_seat
                effect: mint
                input: {intent: {fare_class: string}}
            gates:
              - id: choose_fare
                audience: user
                payload: {fares: "fare[]"}
                outcomes:
                  choose: {params: {fare_class: string}, bind: [fare_class], verdict: ok}
                  none_suit: dead_end
                timeout: {after: 1h, verdict: dead_end}
        """,
        why="The chosen fare class is now bound into the fare_class intent that hold_seat reads; "
        "without bind (SPEC §2.6) the traveller's pick was thrown away.",
    ),
    "gates.repair-fields-mismatch": Example(
        bad="""
            id: ship_parcel
            actions:
              - id: validate_address
                effect: read
                input: {intent: {address: address}}
                preconditions: [{when: address.deliverable == false, verdict: gate(fix_address)}]
              - id: create_shipment
                effect: commit
                input: {intent: {address: address, postcode: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fix_address
                audience: user
                outcomes:
                  correct:
                    params: {address: address}
                    bind: [address]
                    verdict: "repair(to: validate_address, fields: [postcode])"
                  cancel: dead_end
                timeout: {after: 24h, verdict: dead_end}
        """,
        good="""
            id: ship_parcel
            actions:
              - id: validate_address
                effect: read
                input: {intent: {address: address}}
                preconditions: [{when: address.deliverable == false, verdict: gate(fix_address)}]
              - id: create_shipment
                effect: commit
                input: {intent: {address: address, postcode: string}}
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fix_address
                audience: user
                outcomes:
                  correct:
                    params: {address: address}
                    bind: [address]
                    verdict: "repair(to: validate_address, fields: [address])"
                  cancel: dead_end
                timeout: {after: 24h, verdict: dead_end}
        """,
        why="The repair now lists address, the field the answer binds; SPEC §2.6 lets a repair "
        "touch only the fields it names, so the corrected address had no way in.",
    ),
    "gates.set-without-repair": Example(
        bad="""
            id: book_hotel
            actions:
              - id: search_rooms
                effect: read
                input: {intent: {city: string, nights: int, flexible_dates: bool}}
                output: {empty: {detect: rooms.length == 0, route: gate(no_rooms)}}
              - {id: hold_room, effect: mint, input: {intent: {nights: int}}}
            gates:
              - id: no_rooms
                audience: user
                outcomes:
                  try_nearby_dates:
                    set: {flexible_dates: true}
                    verdict: ok
                  give_up: dead_end
                timeout: {after: 2h, verdict: dead_end}
        """,
        good="""
            id: book_hotel
            actions:
              - id: search_rooms
                effect: read
                input: {intent: {city: string, nights: int, flexible_dates: bool}}
                output: {empty: {detect: rooms.length == 0, route: gate(no_rooms)}}
              - {id: hold_room, effect: mint, input: {intent: {nights: int}}}
            gates:
              - id: no_rooms
                audience: user
                outcomes:
                  try_nearby_dates:
                    set: {flexible_dates: true}
                    verdict: "repair(to: search_rooms, fields: [flexible_dates])"
                  give_up: dead_end
                timeout: {after: 2h, verdict: dead_end}
        """,
        why="Widening the dates now resumes with a repair of search_rooms over flexible_dates, "
        "so the search runs again on the new intent; SPEC §2.6 treats set as a proposed repair, "
        "and ok would change intent without redoing what was derived from it.",
    ),
    "gates.timeout-not-duration": Example(
        bad="""
            id: book_flight
            actions:
              - {id: price_itinerary, effect: read,
                 input: {intent: {origin: airport, destination: airport}}}
              - id: issue_ticket
                effect: commit
                entry_gate: fare_consent
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fare_consent
                audience: user
                payload: {fare: money, offer: {expires_at: datetime}}
                outcomes: {accept: ok, decline: dead_end}
                timeout: {after: offer.expires_at, verdict: dead_end}
        """,
        good="""
            id: book_flight
            actions:
              - {id: price_itinerary, effect: read,
                 input: {intent: {origin: airport, destination: airport}}}
              - id: issue_ticket
                effect: commit
                entry_gate: fare_consent
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fare_consent
                audience: user
                payload: {fare: money, offer: {expires_at: datetime}}
                outcomes: {accept: ok, decline: dead_end}
                timeout: {after: 30m, verdict: dead_end}
                payload_expiry: {field: offer.expires_at, verdict: "rewind(to: price_itinerary)"}
        """,
        why="The timeout now waits a length of time, 30m, and the offer's own deadline moved "
        "to payload_expiry, which re-prices when the answer comes too late; SPEC §2.6 counts a "
        "gate timeout from when the run parked, so it cannot be a payload field.",
    ),
    "gates.timeout-unresolved": Example(
        bad="""
            id: retire_database
            actions:
              - {id: get_database, effect: read, input: {intent: {database_id: string}}}
              - id: delete_database
                effect: commit
                entry_gate: deletion_consent
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {probe: get_database}
            gates:
              - id: deletion_consent
                audience: operator
                payload: {size_gb: int, last_backup: datetime}
                outcomes: {delete: ok, keep: dead_end}
                timeout: {after: 24h}
        """,
        good="""
            id: retire_database
            actions:
              - {id: get_database, effect: read, input: {intent: {database_id: string}}}
              - id: delete_database
                effect: commit
                entry_gate: deletion_consent
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {probe: get_database}
            gates:
              - id: deletion_consent
                audience: operator
                payload: {size_gb: int, last_backup: datetime}
                outcomes: {delete: ok, keep: dead_end}
                timeout: {after: 24h, outcome: keep}
        """,
        why="The timeout now names the keep outcome, so an unanswered deletion request leaves "
        "the database alone; SPEC §2.6 wants a timeout to resolve to exactly one outcome or "
        "verdict.",
    ),
    "gates.unreachable": Example(
        bad="""
            id: pay_invoice
            actions:
              - {id: get_invoice, effect: read, input: {intent: {invoice_id: string}}}
              - id: charge_card
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fraud_review
                audience: operator
                outcomes: {release: ok, block: dead_end}
                timeout: {after: 4h, verdict: dead_end}
        """,
        good="""
            id: pay_invoice
            actions:
              - {id: get_invoice, effect: read, input: {intent: {invoice_id: string}}}
              - id: charge_card
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: keyed and synchronous}}
            gates:
              - id: fraud_review
                audience: operator
                outcomes: {release: ok, block: dead_end}
                timeout: {after: 4h, verdict: dead_end}
            verdict_table:
              - {id: F1, signal: [code:FRAUD_SUSPECTED], scope: {steps: [charge_card]},
                 verdict: gate(fraud_review)}
        """,
        why="A verdict row now parks the run at fraud_review when the charge comes back "
        "FRAUD_SUSPECTED; before, nothing raised the gate (SPEC §2.6), so it could never be "
        "asked.",
    ),
}
