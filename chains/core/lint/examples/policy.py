"""Bad and good examples of the policy rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "policy.misplaced-safe-reject-redispatch": Example(
        bad="""
            id: ferry_booking
            actions:
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                commit: {keyed: {safe_reject_redispatch: 1}}
        """,
        good="""
            id: ferry_booking
            actions:
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                commit: {unkeyed: {safe_reject_redispatch: 1}}
        """,
        why="Only unkeyed commits consult safe_reject_redispatch, so under commit.keyed it did "
        "nothing; the good policy puts it under commit.unkeyed, where the unkeyed ferry "
        "booking reads it (SPEC §2.4).",
    ),
    "policy.missing-budget": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {wall_clock: 5m}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 1, wall_clock: 5m}
        """,
        why="The sold-out row rewinds the run, and the good policy now caps how often that "
        "may happen (3 rewinds, 1 repair). Someone picked these numbers instead of falling "
        "back on the unreviewed SPEC §2.4 defaults.",
    ),
    "policy.missing-wall-clock": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
        """,
        why="Counting rewinds does not stop a run whose steps are simply slow; the good policy "
        "also gives the whole run five minutes (time parked at a gate not counted), as SPEC "
        "§2.4 asks.",
    ),
    "policy.repairs-exceed-rewinds": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 2, max_repairs: 4, wall_clock: 5m}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 2, max_repairs: 2, wall_clock: 5m}
        """,
        why="Each repair also uses up a rewind, so 4 repairs could never happen with only 2 "
        "rewinds. The good policy lowers max_repairs to 2, no more than max_rewinds "
        "(SPEC §2.4).",
    ),
    "policy.unkeyed-commit-retried": Example(
        bad="""
            id: ferry_booking
            actions:
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                commit: {unkeyed: {attempts: 3}}
        """,
        good="""
            id: ferry_booking
            actions:
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                commit: {unkeyed: {attempts: 1}}
        """,
        why="Retrying a booking that has no idempotency key can land it twice, so the unkeyed "
        "bucket gets exactly one attempt; SPEC §2.4 fixes that number rather than leaving it "
        "to tuning.",
    ),
    "policy.value-out-of-range": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                read: {attempts: 0}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: free cancellation until check-in}
            verdict_table:
              - {id: R1, signal: [code:ROOM_SOLD_OUT], scope: [book_room],
                 verdict: "rewind(to: search_rooms)"}
            policy:
              per_chain: {max_rewinds: 3, max_repairs: 2, wall_clock: 5m}
              per_step:
                read: {attempts: 3}
        """,
        why="Attempts count every send, the first one included, so zero attempts means the "
        "room search is never sent. The good policy gives reads 3, and SPEC §2.4 budgets "
        "must be at least 1 for attempts.",
    ),
}
