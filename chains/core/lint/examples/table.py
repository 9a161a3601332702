"""Bad and good examples of the table rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "table.catch-all-row": Example(
        bad="""
            id: hotel_booking
            actions:
              - {id: find_room, effect: read}
              - {id: book_room, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: find_booking, signal: a reservation for the guest}}
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [code:ROOM_GONE], scope: {steps: [book_room]}, verdict: dead_end}
              - {id: B2, signal: [any other error], scope: {steps: [book_room]},
                 verdict: "rewind(to: find_room)"}
        """,
        good="""
            id: hotel_booking
            actions:
              - {id: find_room, effect: read}
              - {id: book_room, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: find_booking, signal: a reservation for the guest}}
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [code:ROOM_GONE], scope: {steps: [book_room]}, verdict: dead_end}
        """,
        why="The catch-all row that sent every unknown booking error back to the search is "
        "gone: an error nobody classified now falls to the fixed rows, which reconcile a "
        "booking that may have landed instead of guessing (SPEC §3).",
    ),
    "table.documented-error-uncovered": Example(
        bad="""
            id: hotel_booking
            actions:
              - {id: find_room, effect: read}
              - id: book_room
                effect: commit
                idempotency: {mode: none}
                confirmation: {probe: find_booking, signal: a reservation for the guest}
                documented_errors: [http:409 && code:ROOM_SOLD_OUT, http:422 && code:BAD_DATES]
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [code:BAD_DATES], scope: {steps: [book_room]}, verdict: dead_end}
        """,
        good="""
            id: hotel_booking
            actions:
              - {id: find_room, effect: read}
              - id: book_room
                effect: commit
                idempotency: {mode: none}
                confirmation: {probe: find_booking, signal: a reservation for the guest}
                documented_errors: [http:409 && code:ROOM_SOLD_OUT, http:422 && code:BAD_DATES]
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [code:BAD_DATES], scope: {steps: [book_room]}, verdict: dead_end}
              - {id: B2, signal: [code:ROOM_SOLD_OUT], scope: {steps: [book_room]},
                 verdict: "rewind(to: find_room)"}
        """,
        why="The hotel documents a sold-out error for the booking call, and a row now says what "
        "to do with it (search again), so every documented error has a decided answer "
        "(SPEC §3).",
    ),
    "table.fragile-without-fallback": Example(
        bad="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read, input: {intent: {postcode: string}}}
            verdict_table:
              - {id: S1, signal: ["code:INVALID_ADDRESS && error.message contains 'postcode'"],
                 fragile: prose-match, scope: {steps: [quote_rates]},
                 verdict: "repair(to: quote_rates, fields: [postcode])"}
        """,
        good="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read, input: {intent: {postcode: string}}}
            verdict_table:
              - {id: S1, signal: ["code:INVALID_ADDRESS && error.message contains 'postcode'"],
                 fragile: prose-match, scope: {steps: [quote_rates]},
                 verdict: "repair(to: quote_rates, fields: [postcode])"}
            known_unmatched: [code:INVALID_ADDRESS]
        """,
        why="The row depends on the wording of the carrier's message, so known_unmatched now "
        "lists its error code: when the wording changes, the error falls to the default rows "
        "on purpose instead of by surprise (SPEC §3).",
    ),
    "table.model-classifies": Example(
        bad="""
            id: card_payment
            actions:
              - {id: charge_card, effect: commit, input: {intent: {card: string}},
                 idempotency: {mode: keyed},
                 confirmation: {by_key_replay: {note: a replay returns the stored charge}}}
            gates:
              - {id: decline_review, audience: model,
                 outcomes: {new_card: "repair(to: charge_card, fields: [card])", give_up: dead_end},
                 timeout: {after: 10m, verdict: dead_end}}
            verdict_table:
              - {id: P1, signal: [code:card_declined], scope: {steps: [charge_card]},
                 verdict: gate(decline_review)}
        """,
        good="""
            id: card_payment
            actions:
              - {id: charge_card, effect: commit, input: {intent: {card: string}},
                 idempotency: {mode: keyed},
                 confirmation: {by_key_replay: {note: a replay returns the stored charge}}}
            gates:
              - {id: decline_review, audience: user,
                 outcomes: {new_card: "repair(to: charge_card, fields: [card])", give_up: dead_end},
                 timeout: {after: 10m, verdict: dead_end}}
            verdict_table:
              - {id: P1, signal: [code:card_declined], scope: {steps: [charge_card]},
                 verdict: gate(decline_review)}
        """,
        why="A declined card is now put to the customer, who offers another card or gives up; "
        "the model no longer picks the outcome, so code, not the model, decides what the "
        "decline leads to (SPEC §5).",
    ),
    "table.no-domain-rows": Example(
        bad="""
            id: vm_provisioning
            actions:
              - {id: check_quota, effect: read}
              - id: create_vm
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: a replay returns the same VM}}
        """,
        good="""
            id: vm_provisioning
            actions:
              - {id: check_quota, effect: read}
              - id: create_vm
                effect: commit
                idempotency: {mode: keyed, key_scope: run}
                confirmation: {by_key_replay: {note: a replay returns the same VM}}
            verdict_table:
              - {id: V1, signal: [code:QUOTA_EXCEEDED], scope: {steps: [create_vm]},
                 verdict: "dead_end(reason: quota_exceeded)"}
              - {id: V2, signal: [http:429], scope: {steps: [create_vm]}, verdict: retry}
        """,
        why="The table now maps the cloud's documented errors for VM creation (quota exceeded, "
        "rate limited) to verdicts, so they are no longer left to the generic rows "
        "(SKILL Step 4).",
    ),
    "table.no-side-effect-on-ambiguous-signal": Example(
        bad="""
            id: hotel_booking
            actions:
              - {id: book_room, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: find_booking, signal: a reservation for the guest}}
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [timeout], scope: {steps: [book_room]}, verdict: retry,
                 no_side_effect: true}
        """,
        good="""
            id: hotel_booking
            actions:
              - {id: book_room, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: find_booking, signal: a reservation for the guest}}
              - {id: find_booking, effect: read, probe_only: true}
            verdict_table:
              - {id: B1, signal: [timeout], scope: {steps: [book_room]}, verdict: reconcile}
        """,
        why="A timeout brings no answer from the hotel, so nobody can vouch that no room was "
        "booked; the row now reconciles, letting the find_booking probe decide before any "
        "second attempt (SPEC §3).",
    ),
    "table.payload-row-after-success": Example(
        bad="""
            id: flight_booking
            handles:
              - {id: offer_id, minted_by: search_flights,
                 staleness: {detect: [code:OFFER_EXPIRED], refresh: search_flights}}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offer_id]}}
              - {id: price_offer, effect: read, input: {handles: [offer_id]}}
            verdict_table:
              - {id: F1, signal: [http:200], scope: any, verdict: ok}
              - {id: F2, signal: [code:OFFER_EXPIRED], scope: {steps: [price_offer]},
                 verdict: "rewind(to: search_flights)"}
        """,
        good="""
            id: flight_booking
            handles:
              - {id: offer_id, minted_by: search_flights,
                 staleness: {detect: [code:OFFER_EXPIRED], refresh: search_flights}}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offer_id]}}
              - {id: price_offer, effect: read, input: {handles: [offer_id]}}
            verdict_table:
              - {id: F2, signal: [code:OFFER_EXPIRED], scope: {steps: [price_offer]},
                 verdict: "rewind(to: search_flights)"}
              - {id: F1, signal: [http:200], scope: any, verdict: ok}
        """,
        why="The airline can report an expired offer inside a 200 response, so the expiry row "
        "now comes before the row that accepts every 200 and gets to see it (SPEC §3).",
    ),
    "table.prose-match-not-fragile": Example(
        bad="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read, input: {intent: {postcode: string}}}
            verdict_table:
              - {id: S1, signal: ["code:INVALID_ADDRESS && error.message contains 'postcode'"],
                 scope: {steps: [quote_rates]},
                 verdict: "repair(to: quote_rates, fields: [postcode])"}
        """,
        good="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read, input: {intent: {postcode: string}}}
            verdict_table:
              - {id: S1, signal: ["code:INVALID_ADDRESS && error.message contains 'postcode'"],
                 fragile: prose-match, scope: {steps: [quote_rates]},
                 verdict: "repair(to: quote_rates, fields: [postcode])"}
            known_unmatched: [code:INVALID_ADDRESS]
        """,
        why="The row reads the carrier's message text, so it is now marked fragile and its "
        "error code is kept in known_unmatched as the fallback for when the wording changes "
        "(SPEC §3).",
    ),
    "table.repair-without-fields": Example(
        bad="""
            id: hotel_search
            actions:
              - {id: search_hotels, effect: read,
                 input: {intent: {city: string, check_in: date, check_out: date}}}
            verdict_table:
              - {id: H1, signal: [code:INVALID_DATES], scope: {steps: [search_hotels]},
                 verdict: "repair(to: search_hotels)"}
        """,
        good="""
            id: hotel_search
            actions:
              - {id: search_hotels, effect: read,
                 input: {intent: {city: string, check_in: date, check_out: date}}}
            verdict_table:
              - {id: H1, signal: [code:INVALID_DATES], scope: {steps: [search_hotels]},
                 verdict: "repair(to: search_hotels, fields: [check_in, check_out])"}
        """,
        why="The repair now names the intent fields to correct, the two dates, so the traveller "
        "is asked for exactly those before the search runs again (SPEC §2.3).",
    ),
    "table.retry-on-unkeyed-commit": Example(
        bad="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read}
              - {id: buy_label, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: list_labels, signal: a label for the order}}
              - {id: list_labels, effect: read, probe_only: true}
            verdict_table:
              - {id: L1, signal: [http:502], scope: {steps: [buy_label]}, verdict: retry}
        """,
        good="""
            id: parcel_shipping
            actions:
              - {id: quote_rates, effect: read}
              - {id: buy_label, effect: commit, idempotency: {mode: none},
                 confirmation: {probe: list_labels, signal: a label for the order}}
              - {id: list_labels, effect: read, probe_only: true}
            verdict_table:
              - {id: L1, signal: [http:502], scope: {steps: [buy_label]}, verdict: reconcile}
        """,
        why="Buying a label takes no idempotency key, and a 502 may come after the label was "
        "bought; the row now reconciles, so the list_labels probe checks before anything is "
        "bought twice (SPEC §3).",
    ),
    "table.row-without-signal": Example(
        bad="""
            id: card_payment
            actions:
              - {id: charge_card, effect: commit, idempotency: {mode: keyed},
                 confirmation: {by_key_replay: {note: a replay returns the stored charge}}}
            verdict_table:
              - {id: P1, description: the bank wants the customer to confirm the payment,
                 scope: {steps: [charge_card]}, verdict: "dead_end(reason: needs_3ds)"}
        """,
        good="""
            id: card_payment
            actions:
              - {id: charge_card, effect: commit, idempotency: {mode: keyed},
                 confirmation: {by_key_replay: {note: a replay returns the stored charge}}}
            verdict_table:
              - {id: P1, description: the bank wants the customer to confirm the payment,
                 signal: ["status == 'requires_action'"],
                 scope: {steps: [charge_card]}, verdict: "dead_end(reason: needs_3ds)"}
        """,
        why="The row now carries a matcher code can test on the response (status == "
        "'requires_action'); the sentence stays as its description, and the row can "
        "finally fire (SPEC §3).",
    ),
    "table.shadowed-row": Example(
        bad="""
            id: vm_provisioning
            actions:
              - {id: check_quota, effect: read}
            verdict_table:
              - {id: V1, signal: [http:4xx], scope: {steps: [check_quota]},
                 verdict: "dead_end(reason: rejected)"}
              - {id: V2, signal: [http:429], scope: {steps: [check_quota]}, verdict: retry}
        """,
        good="""
            id: vm_provisioning
            actions:
              - {id: check_quota, effect: read}
            verdict_table:
              - {id: V2, signal: [http:429], scope: {steps: [check_quota]}, verdict: retry}
              - {id: V1, signal: [http:4xx], scope: {steps: [check_quota]},
                 verdict: "dead_end(reason: rejected)"}
        """,
        why="The first matching row wins, so the rate-limit row now sits above the row for all "
        "4xx statuses, which used to catch every 429 before it could be retried (SPEC §3).",
    ),
}
