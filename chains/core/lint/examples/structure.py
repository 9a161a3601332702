"""Bad and good examples of the structure rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "structure.consumed-before-minted": Example(
        bad="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id]}
            actions:
              - {id: get_rates, effect: read, input: {handles: [shipment_id]},
                 output: {handles: [rates_id]}}
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
        """,
        good="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id]}
            actions:
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
              - {id: get_rates, effect: read, input: {handles: [shipment_id]},
                 output: {handles: [rates_id]}}
        """,
        why="Actions run in the order they are listed, so get_rates asked for a shipment "
        "that did not exist yet; the good chain lists create_shipment first (SPEC §2.2).",
    ),
    "structure.dangling-reference": Example(
        bad="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id]}
            actions:
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
              - {id: get_rates, effect: read, input: {handles: [shipment_ref]},
                 output: {handles: [rates_id]}}
        """,
        good="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id]}
            actions:
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
              - {id: get_rates, effect: read, input: {handles: [shipment_id]},
                 output: {handles: [rates_id]}}
        """,
        why="get_rates consumed shipment_ref, a handle the chain never declares; the good "
        "chain names the declared shipment_id, so every reference resolves (SPEC §2).",
    ),
    "structure.derivation-cycle": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: rate_quote, minted_by: quote_rate, derived_from: [room_hold]}
              - {id: room_hold, minted_by: hold_room, derived_from: [rate_quote]}
            actions:
              - {id: quote_rate, effect: mint, input: {intent: [hotel, nights]},
                 output: {handles: [rate_quote]}}
              - {id: hold_room, effect: mint, input: {handles: [rate_quote]},
                 output: {handles: [room_hold]}}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: rate_quote, minted_by: quote_rate}
              - {id: room_hold, minted_by: hold_room, derived_from: [rate_quote]}
            actions:
              - {id: quote_rate, effect: mint, input: {intent: [hotel, nights]},
                 output: {handles: [rate_quote]}}
              - {id: hold_room, effect: mint, input: {handles: [rate_quote]},
                 output: {handles: [room_hold]}}
        """,
        why="The hold is made from the quote, not the other way round; dropping the edge "
        "from rate_quote back to room_hold leaves an order in which a re-mint invalidates "
        "what depends on it (SPEC §4 I1).",
    ),
    "structure.duplicate-id": Example(
        bad="""
            id: card_payment
            handles:
              - {id: intent_id, minted_by: create_intent}
            actions:
              - {id: create_intent, effect: mint, input: {intent: [amount, currency]},
                 output: {handles: [intent_id]}}
              - {id: get_intent, effect: read, input: {handles: [intent_id]}}
              - {id: attach_card, effect: mint, input: {intent: [card], handles: [intent_id]}}
              - {id: get_intent, effect: read, input: {handles: [intent_id]}}
        """,
        good="""
            id: card_payment
            handles:
              - {id: intent_id, minted_by: create_intent}
            actions:
              - {id: create_intent, effect: mint, input: {intent: [amount, currency]},
                 output: {handles: [intent_id]}}
              - {id: get_intent, effect: read, input: {handles: [intent_id]}}
              - {id: attach_card, effect: mint, input: {intent: [card], handles: [intent_id]}}
              - {id: recheck_intent, effect: read, input: {handles: [intent_id]}}
        """,
        why="Two steps were both called get_intent, so a verdict or policy naming it could "
        "not tell them apart; renaming the second check gives every action its own id "
        "(SPEC §2.1).",
    ),
    "structure.empty-without-route": Example(
        bad="""
            id: hotel_search
            handles:
              - {id: offers, minted_by: search_rooms}
            actions:
              - id: search_rooms
                effect: read
                input: {intent: [city, check_in, nights]}
                output:
                  handles: [offers]
                  empty: {valid: true, detect: "offers.length == 0"}
        """,
        good="""
            id: hotel_search
            handles:
              - {id: offers, minted_by: search_rooms}
            actions:
              - id: search_rooms
                effect: read
                input: {intent: [city, check_in, nights]}
                output:
                  handles: [offers]
                  empty: {valid: true, detect: "offers.length == 0", route: dead_end(no_rooms)}
        """,
        why="A search that finds no rooms is a valid answer, but the bad chain never says "
        "where it leads; the good chain routes it to a dead end, so the run stops cleanly "
        "(SPEC §2.1 empty, §3 row 2).",
    ),
    "structure.external-handle": Example(
        bad="""
            id: refund_order
            handles:
              - {id: payment_id, minted_by: "external(the checkout chain's capture step)"}
            actions:
              - {id: get_payment, effect: read, input: {handles: [payment_id]}}
        """,
        good="""
            id: refund_order
            handles:
              - {id: payment_id, minted_by: find_payment}
            actions:
              - {id: find_payment, effect: read, input: {intent: [order_number]},
                 output: {handles: [payment_id]}}
              - {id: get_payment, effect: read, input: {handles: [payment_id]}}
        """,
        why="The payment came from another chain, so nothing here could check how it was "
        "made; the good chain looks it up itself from the order number, so its minting is "
        "part of this chain (SPEC §2.2). An info finding: nothing is wrong if it really is "
        "minted elsewhere.",
    ),
    "structure.minted-by-mismatch": Example(
        bad="""
            id: flight_hold
            handles:
              - {id: offer_id, minted_by: price_offer}
              - {id: seat_hold, minted_by: hold_seats, derived_from: [offer_id]}
            actions:
              - {id: price_offer, effect: mint, input: {intent: [flight_number]},
                 output: {handles: [offer_id]}}
              - {id: hold_seats, effect: mint, input: {handles: [offer_id]}}
        """,
        good="""
            id: flight_hold
            handles:
              - {id: offer_id, minted_by: price_offer}
              - {id: seat_hold, minted_by: hold_seats, derived_from: [offer_id]}
            actions:
              - {id: price_offer, effect: mint, input: {intent: [flight_number]},
                 output: {handles: [offer_id]}}
              - {id: hold_seats, effect: mint, input: {handles: [offer_id]},
                 output: {handles: [seat_hold]}}
        """,
        why="seat_hold says hold_seats mints it, but hold_seats did not list it as an "
        "output; the good chain adds it to output.handles, so both sides agree (SPEC §2.2).",
    ),
    "structure.no-actions": Example(
        bad="""
            id: flight_status
            title: Tell a traveller whether their flight leaves on time
            handles:
              - {id: flight_ref}
        """,
        good="""
            id: flight_status
            title: Tell a traveller whether their flight leaves on time
            handles:
              - {id: flight_ref, minted_by: get_status}
            actions:
              - {id: get_status, effect: read, input: {intent: [flight_number, date]},
                 output: {handles: [flight_ref]}}
        """,
        why="A chain with no actions has nothing to run or review; the good chain declares "
        "the status lookup it exists for (SPEC §2.1).",
    ),
    "structure.refresh-does-not-remint": Example(
        bad="""
            id: ship_parcel
            handles:
              - id: rate_id
                minted_by: get_rates
                staleness: {detect: [code:RATE_EXPIRED], refresh: create_label}
              - {id: label_id, minted_by: create_label, derived_from: [rate_id]}
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]},
                 output: {handles: [rate_id]}}
              - {id: create_label, effect: mint, input: {handles: [rate_id]},
                 output: {handles: [label_id]}}
        """,
        good="""
            id: ship_parcel
            handles:
              - id: rate_id
                minted_by: get_rates
                staleness: {detect: [code:RATE_EXPIRED], refresh: get_rates}
              - {id: label_id, minted_by: create_label, derived_from: [rate_id]}
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]},
                 output: {handles: [rate_id]}}
              - {id: create_label, effect: mint, input: {handles: [rate_id]},
                 output: {handles: [label_id]}}
        """,
        why="Rewinding to create_label, the step that saw the expired rate, would send the "
        "same dead rate again; refreshing at get_rates, its minter, fetches a fresh one "
        "(SPEC §2.2).",
    ),
    "structure.reselect-target-not-select": Example(
        bad="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights}
              - {id: chosen, minted_by: choose_flight, derived_from: [offers],
                 rematch: {key: [carrier, flight_number]}}
              - {id: fare_quote, minted_by: price_flight, derived_from: [chosen]}
            actions:
              - {id: search_flights, effect: read, input: {intent: [origin, destination]},
                 output: {handles: [offers]}}
              - {id: choose_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen]}}
              - {id: price_flight, effect: mint, input: {handles: [chosen]},
                 output: {handles: [fare_quote]}}
            verdict_table:
              - {id: F1, signal: [code:OFFER_SOLD_OUT], scope: [price_flight],
                 verdict: "reselect(to: search_flights)"}
        """,
        good="""
            id: flight_booking
            handles:
              - {id: offers, minted_by: search_flights}
              - {id: chosen, minted_by: choose_flight, derived_from: [offers],
                 rematch: {key: [carrier, flight_number]}}
              - {id: fare_quote, minted_by: price_flight, derived_from: [chosen]}
            actions:
              - {id: search_flights, effect: read, input: {intent: [origin, destination]},
                 output: {handles: [offers]}}
              - {id: choose_flight, effect: select, input: {handles: [offers]},
                 output: {handles: [chosen]}}
              - {id: price_flight, effect: mint, input: {handles: [chosen]},
                 output: {handles: [fare_quote]}}
            verdict_table:
              - {id: F1, signal: [code:OFFER_SOLD_OUT], scope: [price_flight],
                 verdict: "reselect(to: choose_flight)"}
        """,
        why="A sold-out flight means picking another one, and reselect must land on the "
        "select step that does the picking, not on the search read; the good row names "
        "choose_flight (SPEC §2.3).",
    ),
    "structure.scope-names-absent-steps": Example(
        bad="""
            id: ship_parcel
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]}}
              - {id: get_transit_time, effect: read, input: {intent: [address]}}
            verdict_table:
              - {id: R1, signal: [http:429], scope: [get_rates, get_transit_times],
                 verdict: retry}
        """,
        good="""
            id: ship_parcel
            actions:
              - {id: get_rates, effect: read, input: {intent: [address, weight]}}
              - {id: get_transit_time, effect: read, input: {intent: [address]}}
            verdict_table:
              - {id: R1, signal: [http:429], scope: [get_rates, get_transit_time],
                 verdict: retry}
        """,
        why="The row's scope misspelt get_transit_time, so rate limits on that read were "
        "not covered by it; naming the real step makes the row apply to both reads "
        "(SKILL Step 6).",
    ),
}
