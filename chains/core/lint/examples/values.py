"""Bad and good examples of the value rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "values.duration-unparsed": Example(
        bad="""
            id: provision_database
            handles:
              - {id: db_id, minted_by: "external(the cluster chain)"}
            actions:
              - {id: get_database, effect: read, input: {handles: [db_id]},
                 timeout: forty seconds}
        """,
        good="""
            id: provision_database
            handles:
              - {id: db_id, minted_by: "external(the cluster chain)"}
            actions:
              - {id: get_database, effect: read, input: {handles: [db_id]},
                 timeout: 40s}
        """,
        why="The runtime cannot enforce a timeout written in words; 40s is a number and a "
        "unit it can read (SPEC §2.1).",
    ),
    "values.hint-unparsed": Example(
        bad="""
            id: hotel_booking
            handles:
              - id: rate_quote
                minted_by: quote_rate
                staleness: {detect: [code:RATE_EXPIRED], ttl_hint: about a quarter hour,
                            refresh: quote_rate}
            actions:
              - {id: quote_rate, effect: mint, input: {intent: [hotel, nights]},
                 output: {handles: [rate_quote]}}
        """,
        good="""
            id: hotel_booking
            handles:
              - id: rate_quote
                minted_by: quote_rate
                staleness: {detect: [code:RATE_EXPIRED], ttl_hint: ~15m,
                            refresh: quote_rate}
            actions:
              - {id: quote_rate, effect: mint, input: {intent: [hotel, nights]},
                 output: {handles: [rate_quote]}}
        """,
        why="A planner cannot read 'about a quarter hour'; ~15m says the same as a "
        "duration, and stays a hint that is never enforced (SPEC §2.2).",
    ),
    "values.placeholder": Example(
        bad="""
            id: card_payment
            handles:
              - {id: intent_id, minted_by: create_intent}
            actions:
              - id: create_intent
                effect: mint
                input: {intent: [amount]}
                output: {handles: [intent_id]}
                request_invariants: {currency: TBD, capture_method: manual}
        """,
        good="""
            id: card_payment
            handles:
              - {id: intent_id, minted_by: create_intent}
            actions:
              - id: create_intent
                effect: mint
                input: {intent: [amount]}
                output: {handles: [intent_id]}
                request_invariants: {currency: EUR, capture_method: manual}
        """,
        why="The currency sent with every intent was left as TBD, which no code can send; "
        "the good chain writes the real value, as code evaluates what a chain says (SPEC §3).",
    ),
    "values.placeholder-in-prose": Example(
        bad="""
            id: hotel_search
            handles:
              - {id: offers, minted_by: search_rooms}
            actions:
              - id: search_rooms
                description: Finds rooms for the stay. TBD which filters we send.
                effect: read
                input: {intent: [city, check_in, nights]}
                output: {handles: [offers]}
        """,
        good="""
            id: hotel_search
            handles:
              - {id: offers, minted_by: search_rooms}
            actions:
              - id: search_rooms
                description: Finds rooms for the stay, filtered by city and dates only.
                effect: read
                input: {intent: [city, check_in, nights]}
                output: {handles: [offers]}
        """,
        why="A reviewer reading the description met an unfinished TBD; the good chain "
        "finishes the sentence, so the prose says what the step does (SKILL Step 6).",
    ),
}
