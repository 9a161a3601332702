"""Bad and good examples of the edge rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "edges.missing-derivation": Example(
        bad="""
            id: flight_seats
            handles:
              - {id: offer_id, minted_by: price_offer}
              - {id: seat_map_id, minted_by: get_seat_map, derived_from: [offer_id]}
              - {id: seat_hold, minted_by: hold_seats, derived_from: [offer_id]}
            actions:
              - {id: price_offer, effect: mint, input: {intent: [flight_number]},
                 output: {handles: [offer_id]}}
              - {id: get_seat_map, effect: read, input: {handles: [offer_id]},
                 output: {handles: [seat_map_id]}}
              - {id: hold_seats, effect: mint, input: {handles: [offer_id, seat_map_id]},
                 output: {handles: [seat_hold]}}
        """,
        good="""
            id: flight_seats
            handles:
              - {id: offer_id, minted_by: price_offer}
              - {id: seat_map_id, minted_by: get_seat_map, derived_from: [offer_id]}
              - {id: seat_hold, minted_by: hold_seats, derived_from: [seat_map_id]}
            actions:
              - {id: price_offer, effect: mint, input: {intent: [flight_number]},
                 output: {handles: [offer_id]}}
              - {id: get_seat_map, effect: read, input: {handles: [offer_id]},
                 output: {handles: [seat_map_id]}}
              - {id: hold_seats, effect: mint, input: {handles: [offer_id, seat_map_id]},
                 output: {handles: [seat_hold]}}
        """,
        why="The seat hold is made from the seat map too, so a fresh seat map must kill the "
        "old hold; deriving seat_hold from seat_map_id (which itself derives from offer_id) "
        "covers both inputs (SKILL Step 2, SPEC §4 I1).",
    ),
    "edges.repair-kills-replayed-input": Example(
        bad="""
            id: hotel_hold
            handles:
              - {id: offer_id, minted_by: search_rooms}
              - {id: room_hold, minted_by: hold_room, derived_from: [offer_id]}
            actions:
              - {id: search_rooms, effect: read, input: {intent: [city, guests]},
                 output: {handles: [offer_id]}}
              - {id: hold_room, effect: mint, input: {intent: [guests], handles: [offer_id]},
                 output: {handles: [room_hold]}}
            verdict_table:
              - {id: H1, signal: [code:TOO_MANY_GUESTS], scope: [hold_room],
                 verdict: "repair(to: hold_room, fields: [guests])"}
        """,
        good="""
            id: hotel_hold
            handles:
              - {id: offer_id, minted_by: search_rooms}
              - {id: room_hold, minted_by: hold_room, derived_from: [offer_id]}
            actions:
              - {id: search_rooms, effect: read, input: {intent: [city, guests]},
                 output: {handles: [offer_id]}}
              - {id: hold_room, effect: mint, input: {intent: [guests], handles: [offer_id]},
                 output: {handles: [room_hold]}}
            verdict_table:
              - {id: H1, signal: [code:TOO_MANY_GUESTS], scope: [hold_room],
                 verdict: "repair(to: search_rooms, fields: [guests])"}
        """,
        why="Changing the guest count kills the offer, which was searched for the old count, "
        "yet the repair resumed at hold_room, which needs that offer; repairing from "
        "search_rooms finds a new offer first (SPEC §4 I6).",
    ),
    "edges.repair-skips-upstream-minter": Example(
        bad="""
            id: car_rental
            handles:
              - {id: rate_quote, minted_by: quote_rates}
              - {id: reservation_hold, minted_by: hold_car}
            actions:
              - {id: quote_rates, effect: mint, input: {intent: [pickup_date, driver_age]},
                 output: {handles: [rate_quote]}}
              - {id: hold_car, effect: mint, input: {intent: [car_class, driver_age]},
                 output: {handles: [reservation_hold]}}
            verdict_table:
              - {id: C1, signal: [code:DRIVER_TOO_YOUNG], scope: [hold_car],
                 verdict: "repair(to: hold_car, fields: [driver_age])"}
        """,
        good="""
            id: car_rental
            handles:
              - {id: rate_quote, minted_by: quote_rates}
              - {id: reservation_hold, minted_by: hold_car}
            actions:
              - {id: quote_rates, effect: mint, input: {intent: [pickup_date, driver_age]},
                 output: {handles: [rate_quote]}}
              - {id: hold_car, effect: mint, input: {intent: [car_class, driver_age]},
                 output: {handles: [reservation_hold]}}
            verdict_table:
              - {id: C1, signal: [code:DRIVER_TOO_YOUNG], scope: [hold_car],
                 verdict: "repair(to: quote_rates, fields: [driver_age])"}
        """,
        why="The rate quote was priced for the old driver age, so the repair invalidates it, "
        "and resuming at hold_car would never quote again; repairing from quote_rates, the "
        "first step that takes driver_age, re-mints it (SPEC §4 I6).",
    ),
    "edges.selection-coupling": Example(
        bad="""
            id: round_trip
            handles:
              - {id: outbound_offers, minted_by: search_outbound}
              - {id: outbound, minted_by: choose_outbound, derived_from: [outbound_offers],
                 rematch: {key: [carrier, flight_number]}}
              - {id: return_offers, minted_by: search_returns, derived_from: [outbound_offers]}
            actions:
              - {id: search_outbound, effect: read, input: {intent: [origin, destination]},
                 output: {handles: [outbound_offers]}}
              - {id: choose_outbound, effect: select, input: {handles: [outbound_offers]},
                 output: {handles: [outbound]}}
              - {id: search_returns, effect: read, input: {handles: [outbound_offers, outbound]},
                 output: {handles: [return_offers]}}
        """,
        good="""
            id: round_trip
            handles:
              - {id: outbound_offers, minted_by: search_outbound}
              - {id: outbound, minted_by: choose_outbound, derived_from: [outbound_offers],
                 rematch: {key: [carrier, flight_number]}}
              - {id: return_offers, minted_by: search_returns, derived_from: [outbound]}
            actions:
              - {id: search_outbound, effect: read, input: {intent: [origin, destination]},
                 output: {handles: [outbound_offers]}}
              - {id: choose_outbound, effect: select, input: {handles: [outbound_offers]},
                 output: {handles: [outbound]}}
              - {id: search_returns, effect: read, input: {handles: [outbound_offers, outbound]},
                 output: {handles: [return_offers]}}
        """,
        why="The return flights are searched for the chosen outbound flight, so a new pick "
        "must invalidate them; deriving return_offers from the outbound selection (which "
        "derives from the search) does that (SPEC §4 I3).",
    ),
    "edges.unverified-independence": Example(
        bad="""
            id: international_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: customs_id, minted_by: create_customs_form}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id, customs_id]}
            actions:
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
              - {id: create_customs_form, effect: mint, input: {intent: [contents, value]},
                 output: {handles: [customs_id]}}
              - {id: get_rates, effect: read, input: {handles: [shipment_id, customs_id]},
                 output: {handles: [rates_id]}}
        """,
        good="""
            id: international_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
              - {id: customs_id, minted_by: create_customs_form}
              - {id: rates_id, minted_by: get_rates, derived_from: [shipment_id, customs_id]}
            actions:
              - {id: create_shipment, effect: mint, input: {intent: [address, weight]},
                 output: {handles: [shipment_id]}}
              - {id: create_customs_form, effect: mint, input: {intent: [contents, value]},
                 output: {handles: [customs_id]}}
              - {id: get_rates, effect: read, input: {handles: [shipment_id, customs_id]},
                 output: {handles: [rates_id]}}
            independence:
              - {handles: [shipment_id, customs_id], independent: confirmed,
                 note: the carrier keeps customs forms apart from shipments}
        """,
        why="get_rates takes the shipment and the customs form together, and nothing said "
        "whether a new shipment leaves the old form valid; the good chain records that the "
        "two are confirmed independent (SKILL Step 2).",
    ),
}
