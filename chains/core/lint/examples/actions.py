"""Bad and good examples of the action rules (see the package's docstring)."""

from __future__ import annotations

from .example import Example

EXAMPLES: dict[str, Example] = {
    "actions.business-expiry-undeclared": Example(
        bad="""
            id: flight_hold
            handles:
              - {id: order_id, minted_by: hold_order}
            actions:
              - id: hold_order
                effect: commit
                input: {intent: [offer, passengers]}
                output:
                  payload: {order_id: string, payment_required_by: datetime}
                  handles: [order_id]
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: {action: cancel_order}
              - {id: cancel_order, effect: compensate, input: {handles: [order_id]},
                 idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                               replay_semantics: returns_cached},
                 confirmation: {by_key_replay: true}}
        """,
        good="""
            id: flight_hold
            handles:
              - {id: order_id, minted_by: hold_order}
            actions:
              - id: hold_order
                effect: commit
                input: {intent: [offer, passengers]}
                output:
                  payload: {order_id: string, payment_required_by: datetime}
                  handles: [order_id]
                  business_expiry: {field: payment_required_by, on_expiry: dead_end}
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: {action: cancel_order}
              - {id: cancel_order, effect: compensate, input: {handles: [order_id]},
                 idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                               replay_semantics: returns_cached},
                 confirmation: {by_key_replay: true}}
        """,
        why="The airline releases the held order at payment_required_by, and a landed hold "
        "is never re-minted; declaring output.business_expiry makes every later step and "
        "gate resume check that deadline (SPEC §2.1 output.business_expiry).",
    ),
    "actions.precondition-verdict-not-allowed": Example(
        bad="""
            id: provision_server
            handles:
              - {id: instance_id, minted_by: "external(the launch chain)"}
            actions:
              - id: get_instance
                effect: read
                input: {handles: [instance_id]}
                preconditions:
                  - {when: "state == 'terminated'", verdict: retry}
        """,
        good="""
            id: provision_server
            handles:
              - {id: instance_id, minted_by: "external(the launch chain)"}
            actions:
              - id: get_instance
                effect: read
                input: {handles: [instance_id]}
                preconditions:
                  - {when: "state == 'terminated'", verdict: "dead_end(instance_terminated)"}
        """,
        why="A precondition judges an ok answer, and retrying the read cannot bring a "
        "terminated server back; the good chain ends the run there, one of the verdicts a "
        "precondition may give (SPEC §2.1 preconditions).",
    ),
    "actions.revocation-undeclared": Example(
        bad="""
            id: refund_order
            handles:
              - {id: refund_id, minted_by: refund}
            actions:
              - id: refund
                effect: commit
                notes: [A refund that succeeded can still fail up to 10 days later.]
                input: {intent: [payment_id, amount]}
                output: {handles: [refund_id]}
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: none
        """,
        good="""
            id: refund_order
            handles:
              - {id: refund_id, minted_by: refund}
            actions:
              - id: refund
                effect: commit
                notes: [A refund that succeeded can still fail up to 10 days later.]
                input: {intent: [payment_id, amount]}
                output: {handles: [refund_id]}
                idempotency: {mode: keyed, key_scope: run, key_retention: 24h,
                              replay_semantics: returns_cached}
                confirmation: {by_key_replay: true}
                compensation: none
                revocation: {watch: [webhook:refund.failed], window: 10d,
                             route: escalate(operator)}
        """,
        why="The notes say a successful refund can still fail days later, and nothing "
        "listened for it; the good chain declares a revocation that watches the "
        "refund.failed webhook and routes it to an operator (SPEC §2.1 revocation).",
    ),
}
