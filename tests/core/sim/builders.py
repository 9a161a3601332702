"""Small literal chains and drivers shared by the simulator tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from chains.core import formats
from chains.core.model import ChainSpec
from chains.core.sim.palette import choices
from chains.core.sim.runtime import Run
from chains.core.sim.search import apply_event
from chains.core.sim.state import Event, Observation, Option

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def chain(text: str) -> ChainSpec:
    """Validate a YAML chain document; fails the test loudly when it does not load."""
    result = formats.load(textwrap.dedent(text), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


def fixture(name: str) -> ChainSpec:
    result = formats.load((FIXTURES / name).read_text(), format="yaml")
    assert result.chains, [str(p) for p in result.problems]
    return result.chains[0]


OK = Observation()


def obs(transport: str = "http:200", code: str | None = None, **kw) -> Observation:
    return Observation(transport=transport, code=code, **kw)


def events(run: Run, event_type: str | None = None, step: str | None = None) -> list[Event]:
    return [
        e
        for e in run.trace
        if (event_type is None or e.event_type == event_type)
        and (step is None or e.step_id == step)
    ]


def verdicts(run: Run, step: str | None = None) -> list[str | None]:
    return [e.verdict for e in events(run, step=step) if e.verdict is not None]


# A booking with an unkeyed commit: search → choose → quote → lock_price → book.
BOOKING = """
id: booking
handles:
  - {id: search_id, minted_by: search,
     staleness: {detect: [http:410, code:SEARCH_EXPIRED], ttl_hint: 20m, refresh: search}}
  - {id: pick, minted_by: choose, derived_from: [search_id],
     rematch: {key: [carrier, flight], on_ambiguous: model}}
  - {id: quote_id, minted_by: quote, derived_from: [pick],
     staleness: {detect: [http:410, code:QUOTE_EXPIRED], ttl_hint: 10m, refresh: quote}}
  - {id: lock, minted_by: lock_price, derived_from: [quote_id], single_use: true,
     staleness: {detect: [http:410, code:LOCK_EXPIRED], ttl_hint: 15m, refresh: lock_price}}
  - {id: booking_ref, minted_by: book, derived_from: [lock]}
actions:
  - id: search
    effect: read
    input: {intent: [dates]}
    output:
      handles: [search_id]
      empty:
        valid: true
        detect: "results.length == 0"
        route: "repair(to: search, fields: [dates])"
  - {id: choose, effect: select, input: {handles: [search_id]}, output: {handles: [pick]}}
  - id: quote
    effect: mint
    input: {handles: [pick]}
    output: {handles: [quote_id]}
    preconditions:
      - {when: "fare.refundable == false", verdict: "gate(nonrefundable_ok)", reason: consent}
      - {when: "fare.no_seats", verdict: ok, reason: proceed without seats}
  - {id: lock_price, effect: mint, input: {handles: [search_id, quote_id]},
     output: {handles: [lock]}}
  - id: book
    effect: commit
    input: {intent: [card], handles: [lock]}
    output: {handles: [booking_ref]}
    idempotency: {mode: none}
    confirmation:
      probe: find_booking
      signal: booking exists
      async: {channel: webhook, deadline: 24h}
      sweep: {interval: 6h, escalate_after: 72h}
    compensation: {action: cancel}
  - {id: find_booking, effect: read, probe_only: true, input: {intent: [dates]}}
  - id: cancel
    effect: compensate
    input: {handles: [booking_ref]}
    idempotency: {mode: none}
    confirmation: {probe: find_booking, signal: booking cancelled}
gates:
  - id: nonrefundable_ok
    audience: user
    outcomes: {accept: ok, decline: "dead_end(reason: declined_nonrefundable, permanent: true)"}
    timeout: {after: 10m, verdict: "dead_end(reason: consent_timeout, permanent: false)"}
verdict_table:
  - {id: B1, signal: [code:SOLD_OUT], scope: {steps: [quote, lock_price]},
     verdict: "reselect(to: choose)"}
  - {id: B2, signal: [http:429], scope: {steps: [book]}, verdict: retry, no_side_effect: true}
  - {id: B3, signal: [code:CARD_DECLINED], scope: {steps: [book]},
     verdict: "repair(to: book, fields: [card])"}
  - {id: B4, signal: [code:FRAUD], scope: {steps: [book]},
     verdict: "dead_end(reason: fraud, permanent: true)"}
policy:
  per_step:
    read: {attempts: 3, backoff: {base: 1s, factor: 2, max: 8s, jitter: full}}
    mint: {attempts: 2, backoff: {base: 1s, factor: 2, max: 10s, jitter: full}}
    commit: {unkeyed: {attempts: 1, safe_reject_redispatch: 2}}
  per_chain: {max_rewinds: 3, max_repairs: 2, gate_timeout: 30m, wall_clock: 10m}
"""

OPTIONS = [
    Option(id="o1", key={"carrier": "XA", "flight": "101"}),
    Option(id="o2", key={"carrier": "XB", "flight": "202"}),
]


def altered(doc: ChainSpec, path: str, value: object) -> ChainSpec:
    """A copy of ``doc`` with the value at a dotted ``path`` (``gates.0.timeout``) replaced.

    Specs are frozen, so a test that needs a variant of a literal chain builds a
    new one: the document is dumped, changed and validated again, so ``value``
    is written as a document would write it (``"30m"``, ``None``, a list).
    """
    document = formats.to_document(doc)
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    holder = document
    for part in parents:
        holder = holder[part] if isinstance(part, int) else holder.setdefault(part, {})
    holder[last] = value
    return formats.from_document(document)


def booking(**changes) -> ChainSpec:
    doc = chain(BOOKING)
    return doc.model_copy(update=changes) if changes else doc


def start_booking(doc: ChainSpec | None = None, **kw) -> Run:
    kw.setdefault("intent", {"dates": "2026-12-01", "card": "visa"})
    return Run.start(doc or booking(), **kw)


def drive_to_book(run: Run, options: list[Option] | None = None) -> Run:
    """Search, choose o1, quote and lock: the run then waits for book's response."""
    run.observe(Observation(options=options or OPTIONS))
    run.select((options or OPTIONS)[0].id)
    run.observe(OK)
    run.observe(OK)
    assert run.waiting().kind == "observe" and run.waiting().step == "book"
    return run


# A keyed commit whose key the provider keeps for 24 hours.
KEYED = """
id: keyed_payment
actions:
  - id: pay
    effect: commit
    idempotency: {mode: keyed, key_scope: run, key_retention: 24h, replay_semantics: returns_cached}
    confirmation: {probe: get_payment, signal: paid}
  - {id: get_payment, effect: read, probe_only: true}
policy:
  per_step:
    commit: {keyed: {attempts: 3, backoff: {base: 2s, factor: 2, max: 30s, jitter: full}}}
"""

# Two keyed commits, each with its own compensator, then a read that can dead-end.
TWO_COMMITS = """
id: trip
actions:
  - {id: book_hotel, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_hotel, signal: booked}, compensation: {action: cancel_hotel}}
  - {id: book_car, effect: commit, idempotency: {mode: keyed},
     confirmation: {probe: get_car, signal: booked}, compensation: {action: cancel_car}}
  - {id: notify, effect: read}
  - {id: cancel_hotel, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_hotel, signal: cancelled}}
  - {id: cancel_car, effect: compensate, idempotency: {mode: keyed},
     confirmation: {probe: get_car, signal: cancelled}}
  - {id: get_hotel, effect: read, probe_only: true}
  - {id: get_car, effect: read, probe_only: true}
verdict_table:
  - {id: T1, signal: [code:GONE], verdict: "dead_end(reason: gone, permanent: true)"}
  - {id: T2, signal: [code:CANNOT_CANCEL],
     verdict: "dead_end(reason: cannot_cancel, permanent: true)"}
"""

# Two expiring handles consumed together, with no domain rows.
TWO_HANDLES = """
id: two_handles
handles:
  - {id: a, minted_by: mint_a, staleness: {detect: [http:410, code:A_EXPIRED], refresh: mint_a}}
  - {id: b, minted_by: mint_b, staleness: {detect: [http:410, code:B_EXPIRED], refresh: mint_b}}
actions:
  - {id: mint_a, effect: mint, output: {handles: [a]}}
  - {id: mint_b, effect: mint, output: {handles: [b]}}
  - {id: use, effect: read, input: {handles: [a, b]}}
policy: {per_chain: {max_rewinds: 5}}
"""

# An in-place commit without an undo, protected by an entry gate.
GROW = """
id: grow_volume
handles:
  - {id: vol, minted_by: make_vol, staleness: {detect: [code:VOL_GONE], refresh: make_vol}}
actions:
  - {id: make_vol, effect: mint, output: {handles: [vol]}}
  - id: grow
    effect: commit
    mutates: vol
    entry_gate: consent
    input: {intent: [size], handles: [vol]}
    idempotency: {mode: keyed}
    confirmation: {probe: get_vol, signal: grown}
    compensation: {action: none, ordering_note: the consent entry gate protects it}
  - {id: get_vol, effect: read, probe_only: true}
gates:
  - id: consent
    audience: user
    outcomes:
      approve: ok
      change: {params: {size: int}, bind: [size], verdict: "repair(to: grow, fields: [size])"}
      decline: "dead_end(reason: declined, permanent: true)"
verdict_table:
  - {id: G1, signal: [code:TOO_SMALL], scope: {steps: [grow]},
     verdict: "repair(to: grow, fields: [size])"}
  - {id: G2, signal: [code:NO_PICK], scope: {steps: [grow]}, verdict: "dead_end(reason: x)"}
policy: {per_chain: {max_rewinds: 5, max_repairs: 5}}
"""

# A commit whose compensation is a sub-chain: read options → the user picks one → cancel.
CANCEL_FLOW = """
id: cancel_flow
handles:
  - {id: order_ref, minted_by: order}
actions:
  - id: order
    effect: commit
    idempotency: {mode: none}
    output: {handles: [order_ref]}
    confirmation: {probe: find_order, signal: order exists}
    compensation: {chain: [get_options, cancel_order]}
  - {id: ship, effect: read}
  - id: get_options
    effect: read
    input: {handles: [order_ref]}
    preconditions:
      - {when: "options.length > 0", verdict: "gate(pick_refund)", reason: the user picks}
  - id: cancel_order
    effect: compensate
    input: {intent: [option_id], handles: [order_ref]}
    idempotency: {mode: none}
    confirmation: {probe: find_order, signal: cancelled}
  - {id: find_order, effect: read, probe_only: true}
gates:
  - id: pick_refund
    audience: user
    outcomes:
      choose: {params: {option_id: string}, bind: [option_id], verdict: ok}
    timeout: {after: 72h, verdict: "dead_end(reason: refund_choice_timeout)"}
verdict_table:
  - {id: K1, signal: [code:CANCEL_REFUSED], scope: {steps: [cancel_order]},
     verdict: "dead_end(reason: cancel_refused, permanent: true)"}
"""
REFUNDS = [Option(id="refund"), Option(id="credit")]


def unwinding_cancel_flow() -> Run:
    """Order lands, ship dead-ends: the run waits for get_options in state compensating."""
    run = Run.start(chain(CANCEL_FLOW))
    run.observe(OK)
    run.observe(Observation(transport="http:400", code="UNDELIVERABLE"))
    assert run.snapshot.state == "compensating" and run.waiting().step == "get_options"
    return run


def walked(name: str, until: str | None = None) -> Run:
    """A run of the fixture along its fault-free inputs, stopped when it waits at ``until``."""
    run = Run.start(fixture(name), intent={})
    while run.snapshot.state == "running" and run.snapshot.waiting.step != until:
        free = next(c for c in choices(run.spec, run) if not c.fault)
        run = apply_event(run.spec, run, free.event)
    return run


def double_booking() -> Run:
    """The unsafe fixture's bug: book_room times out, and its table retries it unkeyed."""
    run = walked("unsafe-retry-booking.yaml", until="book_room")
    run.observe(Observation(transport="timeout"))
    run.wait(5)
    run.observe(Observation())  # the second dispatch lands: two bookings
    return run
