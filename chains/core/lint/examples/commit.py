"""Bad and good examples of the commit rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "commit.compensation-not-declared": Example(
        bad="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
              - {id: booking_ref, minted_by: book_room, derived_from: [room_offer]}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                output: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
              - id: cancel_booking
                effect: compensate
                input: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored cancellation}
        """,
        good="""
            id: hotel_booking
            handles:
              - {id: room_offer, minted_by: search_rooms,
                 staleness: {detect: [http:410], refresh: search_rooms}}
              - {id: booking_ref, minted_by: book_room, derived_from: [room_offer]}
            actions:
              - {id: search_rooms, effect: read, output: {handles: [room_offer]}}
              - id: book_room
                effect: commit
                input: {handles: [room_offer]}
                output: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: cancel_booking}
              - id: cancel_booking
                effect: compensate
                input: {handles: [booking_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored cancellation}
        """,
        why="The booking now names cancel_booking as its compensation, so a failed run knows "
        "how to undo it. SKILL Step 3 asks every commit to state its stance; when nothing can "
        "undo it, write action: none with the reason.",
    ),
    "commit.compensation-without-target": Example(
        bad="""
            id: order_payment
            handles:
              - {id: cart_ref, minted_by: create_cart, staleness: {ttl_hint: n/a}}
              - {id: payment_ref, minted_by: charge_card, derived_from: [cart_ref]}
              - {id: invoice_ref, minted_by: send_invoice, derived_from: [payment_ref]}
            actions:
              - {id: create_cart, effect: mint, output: {handles: [cart_ref]}}
              - id: charge_card
                effect: commit
                input: {handles: [cart_ref]}
                output: {handles: [payment_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored charge}
                compensation: {action: refund_charge}
              - {id: send_invoice, effect: mint, input: {handles: [payment_ref]},
                 output: {handles: [invoice_ref]}}
              - id: refund_charge
                effect: compensate
                input: {handles: [invoice_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored refund}
        """,
        good="""
            id: order_payment
            handles:
              - {id: cart_ref, minted_by: create_cart, staleness: {ttl_hint: n/a}}
              - {id: payment_ref, minted_by: charge_card, derived_from: [cart_ref]}
              - {id: invoice_ref, minted_by: send_invoice, derived_from: [payment_ref]}
            actions:
              - {id: create_cart, effect: mint, output: {handles: [cart_ref]}}
              - id: charge_card
                effect: commit
                input: {handles: [cart_ref]}
                output: {handles: [payment_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored charge}
                compensation: {action: refund_charge}
              - {id: send_invoice, effect: mint, input: {handles: [payment_ref]},
                 output: {handles: [invoice_ref]}}
              - id: refund_charge
                effect: compensate
                input: {handles: [payment_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored refund}
        """,
        why="The refund now takes payment_ref, which the charge it undoes mints, instead of "
        "the invoice that a later step makes and an unwind may not have. Per SPEC §2.1 a "
        "compensator must act on what its own commit produced.",
    ),
    "commit.irreversible-mutation-unprotected": Example(
        bad="""
            id: grow_disk
            handles:
              - {id: volume, minted_by: find_volume, staleness: {ttl_hint: n/a}}
            actions:
              - {id: find_volume, effect: read, output: {handles: [volume]}}
              - id: resize_volume
                effect: commit
                input: {handles: [volume], intent: [size_gb]}
                mutates: volume
                idempotency: {mode: natural}
                confirmation: {probe: find_volume, signal: volume.size_gb == intent.size_gb}
                compensation: none
        """,
        good="""
            id: grow_disk
            handles:
              - {id: volume, minted_by: find_volume, staleness: {ttl_hint: n/a}}
            gates:
              - {id: resize_consent, audience: user, outcomes: {approve: ok},
                 timeout: {after: 1h, verdict: dead_end}}
            actions:
              - {id: find_volume, effect: read, output: {handles: [volume]}}
              - id: resize_volume
                effect: commit
                input: {handles: [volume], intent: [size_gb]}
                mutates: volume
                entry_gate: resize_consent
                idempotency: {mode: natural}
                confirmation: {probe: find_volume, signal: volume.size_gb == intent.size_gb}
                compensation:
                  action: none
                  ordering_note: a volume cannot shrink, so the user approves at resize_consent
        """,
        why="A grown volume cannot be shrunk back, so the good chain asks the user first: "
        "resize_consent is the entry gate and the ordering_note names it. SPEC §2.1 wants "
        "that safety stated before any change that has no undo.",
    ),
    "commit.keyed-without-replay-semantics": Example(
        bad="""
            id: card_charge
            actions:
              - id: charge_card
                effect: commit
                input: {intent: [amount, card_token]}
                idempotency: {mode: keyed, key_retention: 24h}
                confirmation: {by_key_replay: a replay inside 24h returns the first charge}
                compensation: {action: none, ordering_note: refunds go through support}
        """,
        good="""
            id: card_charge
            actions:
              - id: charge_card
                effect: commit
                input: {intent: [amount, card_token]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay inside 24h returns the first charge}
                compensation: {action: none, ordering_note: refunds go through support}
        """,
        why="The charge now says a replayed key returns the cached response, so recovery knows "
        "a replay brings back the first outcome (errors too) rather than charging again, as "
        "SPEC §2.1 asks of keyed commits.",
    ),
    "commit.keyed-without-retention": Example(
        bad="""
            id: provision_vm
            actions:
              - id: create_instance
                effect: commit
                input: {intent: [region, machine_type, client_token]}
                idempotency: {mode: keyed, replay_semantics: returns_cached}
                confirmation: {by_key_replay: the same client_token returns the same instance}
                compensation: {action: none, ordering_note: an idle instance is swept nightly}
        """,
        good="""
            id: provision_vm
            actions:
              - id: create_instance
                effect: commit
                input: {intent: [region, machine_type, client_token]}
                idempotency: {mode: keyed, key_retention: 8h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: the same client_token returns the same instance}
                compensation: {action: none, ordering_note: an idle instance is swept nightly}
        """,
        why="The good chain records that the provider keeps the client token for 8 hours. "
        "Beyond that the key no longer deduplicates, so SPEC §2.1 has recovery probe instead "
        "of replaying.",
    ),
    "commit.missing-confirmation": Example(
        bad="""
            id: ship_parcel
            handles:
              - {id: label_ref, minted_by: create_shipment}
            actions:
              - id: create_shipment
                effect: commit
                input: {intent: [order_number, address]}
                output: {handles: [label_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                compensation: {action: none, ordering_note: the carrier voids unused labels}
        """,
        good="""
            id: ship_parcel
            handles:
              - {id: label_ref, minted_by: create_shipment}
            actions:
              - id: create_shipment
                effect: commit
                input: {intent: [order_number, address]}
                output: {handles: [label_ref]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay within 24h returns the stored label}
                compensation: {action: none, ordering_note: the carrier voids unused labels}
        """,
        why="The shipment now declares how a lost response is resolved: replaying its key "
        "returns the stored label. Without a confirmation block SPEC §2.1 leaves no safe way "
        "to learn whether the commit landed.",
    ),
    "commit.missing-probe": Example(
        bad="""
            id: create_database
            actions:
              - id: create_db
                effect: commit
                input: {intent: [db_name, tier]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation:
                  by_key_replay: a replay returns the stored create request
                  async: {channel: webhook, deadline: 30m}
                compensation: {action: none, ordering_note: an empty database is cheap}
        """,
        good="""
            id: create_database
            actions:
              - id: create_db
                effect: commit
                input: {intent: [db_name, tier]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation:
                  by_key_replay: a replay returns the stored create request
                  async: {channel: webhook, deadline: 30m}
                  probe: list_databases
                  signal: a database named intent.db_name in state AVAILABLE
                compensation: {action: none, ordering_note: an empty database is cheap}
              - {id: list_databases, effect: read, probe_only: true, input: {intent: [db_name]}}
        """,
        why="The database finishes asynchronously, so replaying the key only shows the "
        "request was accepted; the good chain adds a read probe that looks up the database by "
        "name and checks its state, which SPEC §2.1 needs to tell whether it landed.",
    ),
    "commit.mutates-existence-signal": Example(
        bad="""
            id: grow_disk
            handles:
              - {id: volume, minted_by: find_volume, staleness: {ttl_hint: n/a}}
            actions:
              - {id: find_volume, effect: read, output: {handles: [volume]}}
              - id: resize_volume
                effect: commit
                input: {handles: [volume], intent: [size_gb]}
                mutates: volume
                idempotency: {mode: natural}
                confirmation: {probe: find_volume, signal: the volume exists}
                compensation: {action: none, ordering_note: the user approves the size first}
        """,
        good="""
            id: grow_disk
            handles:
              - {id: volume, minted_by: find_volume, staleness: {ttl_hint: n/a}}
            actions:
              - {id: find_volume, effect: read, output: {handles: [volume]}}
              - id: resize_volume
                effect: commit
                input: {handles: [volume], intent: [size_gb]}
                mutates: volume
                idempotency: {mode: natural}
                confirmation: {probe: find_volume, signal: volume.size_gb == intent.size_gb}
                compensation: {action: none, ordering_note: the user approves the size first}
        """,
        why="The volume existed before the resize, so finding it proves nothing; the good "
        "signal compares its size with the size asked for, which is the content-based check "
        "SPEC §2.1 wants for an in-place change.",
    ),
    "commit.mutates-without-compensation-stance": Example(
        bad="""
            id: open_port
            handles:
              - {id: firewall, minted_by: get_firewall, staleness: {ttl_hint: n/a}}
            actions:
              - {id: get_firewall, effect: read, output: {handles: [firewall]}}
              - id: allow_https
                effect: commit
                input: {handles: [firewall]}
                mutates: firewall
                idempotency: {mode: natural}
                confirmation: {probe: get_firewall, signal: firewall.rules contains tcp/443}
        """,
        good="""
            id: open_port
            handles:
              - {id: firewall, minted_by: get_firewall, staleness: {ttl_hint: n/a}}
            actions:
              - {id: get_firewall, effect: read, output: {handles: [firewall]}}
              - id: allow_https
                effect: commit
                input: {handles: [firewall]}
                mutates: firewall
                idempotency: {mode: natural}
                confirmation: {probe: get_firewall, signal: firewall.rules contains tcp/443}
                compensation: {action: revoke_https}
              - id: revoke_https
                effect: compensate
                input: {handles: [firewall]}
                idempotency: {mode: natural}
                confirmation: {probe: get_firewall, signal: tcp/443 not in firewall.rules}
        """,
        why="Opening the port changes the existing firewall in place, so the good chain says "
        "how to take it back: revoke_https closes the port again. SPEC §2.1 requires an "
        "in-place change to declare its undo, or action: none with its safety.",
    ),
    "commit.no-side-effect-outside-unkeyed": Example(
        bad="""
            id: card_charge
            actions:
              - id: charge_card
                effect: commit
                input: {intent: [amount, card_token]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay inside 24h returns the first charge}
                compensation: {action: none, ordering_note: refunds go through support}
            verdict_table:
              - {id: R1, signal: [http:429], scope: [charge_card], verdict: retry,
                 no_side_effect: true}
        """,
        good="""
            id: card_charge
            actions:
              - id: charge_card
                effect: commit
                input: {intent: [amount, card_token]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay inside 24h returns the first charge}
                compensation: {action: none, ordering_note: refunds go through support}
            verdict_table:
              - {id: R1, signal: [http:429], scope: [charge_card], verdict: retry}
        """,
        why="The charge is keyed, so its retry is already safe and the no_side_effect flag "
        "changes nothing; the good row drops it. Per SPEC §3 the flag only matters for "
        "re-sending an unkeyed commit.",
    ),
    "commit.precondition-replays-landed-commit": Example(
        bad="""
            id: flight_hold
            handles:
              - {id: fares, minted_by: search_fares,
                 staleness: {detect: [http:410], refresh: search_fares}}
              - {id: fare, minted_by: choose_fare, derived_from: [fares],
                 rematch: {key: [flight_number, cabin]}}
            actions:
              - {id: search_fares, effect: read, output: {handles: [fares]}}
              - {id: choose_fare, effect: select, input: {handles: [fares]},
                 output: {handles: [fare]}}
              - id: price_fare
                effect: read
                input: {handles: [fare]}
              - id: hold_seat
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {handles: [fare], intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_hold, signal: one hold with our booking_reference}
                compensation: {action: none, ordering_note: an unpaid hold lapses by itself}
                preconditions:
                  - {when: "fare.instant_payment_only == true",
                     verdict: "reselect(to: choose_fare)"}
              - {id: find_hold, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
        """,
        good="""
            id: flight_hold
            handles:
              - {id: fares, minted_by: search_fares,
                 staleness: {detect: [http:410], refresh: search_fares}}
              - {id: fare, minted_by: choose_fare, derived_from: [fares],
                 rematch: {key: [flight_number, cabin]}}
            actions:
              - {id: search_fares, effect: read, output: {handles: [fares]}}
              - {id: choose_fare, effect: select, input: {handles: [fares]},
                 output: {handles: [fare]}}
              - id: price_fare
                effect: read
                input: {handles: [fare]}
                preconditions:
                  - {when: "fare.instant_payment_only == true",
                     verdict: "reselect(to: choose_fare)"}
              - id: hold_seat
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {handles: [fare], intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_hold, signal: one hold with our booking_reference}
                compensation: {action: none, ordering_note: an unpaid hold lapses by itself}
              - {id: find_hold, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
        """,
        why="A commit's preconditions are checked only after it has landed, so sending the run "
        "back to choose_fare would place a second unkeyed hold. The good chain checks the fare "
        "on price_fare, before the hold is sent (SPEC §2.1).",
    ),
    "commit.probe-before-commit": Example(
        bad="""
            id: ferry_booking
            actions:
              - {id: search_sailings, effect: read}
              - {id: find_ticket, effect: read, input: {intent: [booking_reference]}}
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: email_ticket, effect: mint}
        """,
        good="""
            id: ferry_booking
            actions:
              - {id: search_sailings, effect: read}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch and
                  runs the call under a cancellation shield.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: email_ticket, effect: mint}
        """,
        why="Run as an ordinary step before the booking, find_ticket looks for a ticket that "
        "cannot exist yet and its empty answer would steer the run. Marked probe_only, it runs "
        "only when recovery needs to confirm book_ticket (SPEC §2.1).",
    ),
    "commit.probe-lookup-undeclared": Example(
        bad="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
            actions:
              - id: create_shipment
                effect: commit
                input: {intent: [order_number, address]}
                output: {handles: [shipment_id]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation:
                  by_key_replay: a replay within 24h returns the stored shipment
                  probe: get_shipment
                  signal: a shipment for our order_number
                compensation: {action: none, ordering_note: the carrier voids unused labels}
              - {id: get_shipment, effect: read, probe_only: true, input: {handles: [shipment_id]}}
        """,
        good="""
            id: ship_parcel
            handles:
              - {id: shipment_id, minted_by: create_shipment}
            actions:
              - id: create_shipment
                effect: commit
                input: {intent: [order_number, address]}
                output: {handles: [shipment_id]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation:
                  by_key_replay: a replay within 24h returns the stored shipment
                  probe: find_shipment
                  signal: a shipment for our order_number
                compensation: {action: none, ordering_note: the carrier voids unused labels}
              - {id: find_shipment, effect: read, probe_only: true, input: {intent: [order_number]}}
        """,
        why="get_shipment needs the shipment id that the lost response carried, so once the "
        "key has expired nothing can find the shipment. The good probe searches by our own "
        "order number, known before dispatch (SPEC §2.1).",
    ),
    "commit.probe-needs-commit-output": Example(
        bad="""
            id: tour_booking
            handles:
              - {id: voucher_code, minted_by: book_tour}
            actions:
              - id: book_tour
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {intent: [tour_date, agency_reference]}
                output: {handles: [voucher_code]}
                idempotency: {mode: none}
                confirmation: {probe: get_voucher, signal: voucher.status == 'CONFIRMED'}
                compensation: {action: none, ordering_note: the traveller accepted the terms}
              - {id: get_voucher, effect: read, probe_only: true, input: {handles: [voucher_code]}}
        """,
        good="""
            id: tour_booking
            handles:
              - {id: voucher_code, minted_by: book_tour}
            actions:
              - id: book_tour
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {intent: [tour_date, agency_reference]}
                output: {handles: [voucher_code]}
                idempotency: {mode: none}
                confirmation: {probe: find_voucher, signal: voucher.status == 'CONFIRMED'}
                compensation: {action: none, ordering_note: the traveller accepted the terms}
              - {id: find_voucher, effect: read, probe_only: true,
                 input: {intent: [agency_reference]}}
        """,
        why="The unkeyed booking was probed by the voucher code its own lost response held, "
        "so nothing could find it. The good probe looks the booking up by our agency "
        "reference, which we hold before dispatch (SPEC §2.1).",
    ),
    "commit.probe-not-read": Example(
        bad="""
            id: money_transfer
            handles:
              - {id: rate_quote, minted_by: quote_rate, staleness: {detect: [code:QUOTE_EXPIRED],
                 refresh: quote_rate}}
            actions:
              - {id: quote_rate, effect: mint, output: {handles: [rate_quote]}}
              - id: send_transfer
                effect: commit
                input: {handles: [rate_quote], intent: [amount, transfer_reference]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {probe: quote_rate, signal: a transfer with our reference}
                compensation: {action: none, ordering_note: the sender confirmed the amount}
        """,
        good="""
            id: money_transfer
            handles:
              - {id: rate_quote, minted_by: quote_rate, staleness: {detect: [code:QUOTE_EXPIRED],
                 refresh: quote_rate}}
            actions:
              - {id: quote_rate, effect: mint, output: {handles: [rate_quote]}}
              - id: send_transfer
                effect: commit
                input: {handles: [rate_quote], intent: [amount, transfer_reference]}
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {probe: find_transfer, signal: a transfer with our reference}
                compensation: {action: none, ordering_note: the sender confirmed the amount}
              - {id: find_transfer, effect: read, probe_only: true,
                 input: {intent: [transfer_reference]}}
        """,
        why="Asking for a fresh quote creates something and says nothing about the transfer. "
        "The good chain probes with find_transfer, a read that is safe to repeat, as SPEC "
        "§2.1 requires of a probe.",
    ),
    "commit.replaced-by-not-a-later-commit": Example(
        bad="""
            id: room_upgrade
            actions:
              - id: book_standard
                effect: commit
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: cancel_standard, replaced_by: check_suites}
              - {id: check_suites, effect: read}
              - id: book_suite
                effect: commit
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: the suite is the goal of the run}
              - id: cancel_standard
                effect: compensate
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored cancellation}
        """,
        good="""
            id: room_upgrade
            actions:
              - id: book_standard
                effect: commit
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: cancel_standard, replaced_by: book_suite}
              - {id: check_suites, effect: read}
              - id: book_suite
                effect: commit
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored booking}
                compensation: {action: none, ordering_note: the suite is the goal of the run}
              - id: cancel_standard
                effect: compensate
                idempotency: {mode: keyed, key_retention: 24h, replay_semantics: returns_cached}
                confirmation: {by_key_replay: a replay returns the stored cancellation}
        """,
        why="replaced_by must name the later booking that takes this one's place; check_suites "
        "is only a read and never lands. Naming book_suite lets a dead end keep the standard "
        "room until the suite is booked (SPEC §2.1 compensation.ordering_note).",
    ),
    "commit.rewind-past-landed-commit": Example(
        bad="""
            id: flight_booking
            handles:
              - {id: offer, minted_by: search_flights,
                 staleness: {detect: [http:410], refresh: search_flights}}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offer]}}
              - id: book_flight
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {handles: [offer]}
                idempotency: {mode: none}
                confirmation: {probe: find_booking, signal: one booking for our offer}
                compensation: {action: none, ordering_note: the fare is non-refundable}
              - {id: find_booking, effect: read, input: {handles: [offer]}}
        """,
        good="""
            id: flight_booking
            handles:
              - {id: offer, minted_by: search_flights,
                 staleness: {detect: [http:410], refresh: search_flights}}
            actions:
              - {id: search_flights, effect: read, output: {handles: [offer]}}
              - id: book_flight
                description: Correlation record saved first; runs under a cancellation shield.
                effect: commit
                input: {handles: [offer]}
                idempotency: {mode: none}
                confirmation: {probe: find_booking, signal: one booking for our offer}
                compensation: {action: none, ordering_note: the fare is non-refundable}
              - {id: find_booking, effect: read, probe_only: true, input: {handles: [offer]}}
        """,
        why="As a step after the booking, find_booking could hit an expired offer and rewind "
        "to the search, which would book the unkeyed flight a second time. Marked "
        "probe_only it is no step of the run, so that rewind cannot happen (SPEC §2.1).",
    ),
    "commit.unkeyed-retried": Example(
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
              per_step:
                book_ticket: {attempts: 3}
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
              per_step:
                book_ticket: {attempts: 1}
        """,
        why="The ferry booking has no idempotency key, so a second attempt after a lost "
        "response could buy two tickets. The good policy gives it one attempt and leaves "
        "the doubt to the find_ticket probe (SPEC §2.4).",
    ),
    "commit.unkeyed-without-p3-mechanics": Example(
        bad="""
            id: ferry_booking
            actions:
              - id: book_ticket
                description: >-
                  Writes a correlation record with our booking_reference before dispatch.
                effect: commit
                input: {intent: [booking_reference]}
                idempotency: {mode: none}
                confirmation: {probe: find_ticket, signal: one ticket with our booking_reference}
                compensation: {action: none, ordering_note: tickets are non-refundable}
              - {id: find_ticket, effect: read, probe_only: true,
                 input: {intent: [booking_reference]}}
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
        """,
        why="The description now also says the call runs under a cancellation shield, so a "
        "cancelled run cannot abandon a booking halfway; with the correlation record saved "
        "first, that is what SPEC P3 needs for an unkeyed commit.",
    ),
}
