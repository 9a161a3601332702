"""Bad and good examples of the HTTP binding rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "binding.path-parameter-unsent": Example(
        bad="""
            id: order_status
            handles:
              - {id: order_id, minted_by: "external(the booking chain)"}
            actions:
              - id: get_order
                effect: read
                input: {handles: [order_id]}
                http:
                  method: GET
                  path: /air/orders/{order_id}
        """,
        good="""
            id: order_status
            handles:
              - {id: order_id, minted_by: "external(the booking chain)"}
            actions:
              - id: get_order
                effect: read
                input: {handles: [order_id]}
                http:
                  method: GET
                  path: /air/orders/{order_id}
                  sends: {order_id: "path:order_id"}
        """,
        why="The path cannot be called until something fills {order_id}; the good binding "
        "says the order_id handle goes there.",
    ),
    "binding.unknown-name": Example(
        bad="""
            id: order_status
            handles:
              - {id: order_id, minted_by: "external(the booking chain)"}
            actions:
              - id: get_order
                effect: read
                input: {handles: [order_id]}
                http:
                  method: GET
                  path: /air/orders/{order_id}
                  sends: {orderId: "path:order_id"}
        """,
        good="""
            id: order_status
            handles:
              - {id: order_id, minted_by: "external(the booking chain)"}
            actions:
              - id: get_order
                effect: read
                input: {handles: [order_id]}
                http:
                  method: GET
                  path: /air/orders/{order_id}
                  sends: {order_id: "path:order_id"}
        """,
        why="A binding names the step's own handles and intent fields; orderId is the "
        "provider's spelling, and the step has no such input, so nothing would be sent.",
    ),
    "binding.key-header": Example(
        bad="""
            id: refund
            handles:
              - {id: charge_id, minted_by: "external(the payment chain)"}
            actions:
              - id: create_refund
                effect: commit
                input: {handles: [charge_id]}
                idempotency: {mode: keyed, key_scope: intent, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: {action: none}
                http:
                  method: POST
                  path: /v1/refunds
                  sends: {charge_id: "body:/charge"}
        """,
        good="""
            id: refund
            handles:
              - {id: charge_id, minted_by: "external(the payment chain)"}
            actions:
              - id: create_refund
                effect: commit
                input: {handles: [charge_id]}
                idempotency: {mode: keyed, key_scope: intent, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: {action: none}
                http:
                  method: POST
                  path: /v1/refunds
                  idempotency_header: Idempotency-Key
                  sends: {charge_id: "body:/charge"}
        """,
        why="The design counts on the provider de-duplicating by key; a client built from "
        "the binding must know the header that carries it (SPEC §2.1 idempotency).",
    ),
}
