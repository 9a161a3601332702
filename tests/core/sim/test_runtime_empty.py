"""A valid empty result follows its route, and with no route the run fails closed (SPEC §3)."""

from __future__ import annotations

from chains.core.sim.runtime import Run

from .builders import OK, chain, events, obs

# A card authorization whose decline is a valid empty; capture needs the hold it mints.
CARD = """
id: card
handles:
  - {id: hold, minted_by: authorize}
actions:
  - id: authorize
    effect: commit
    output:
      handles: [hold]
      empty: {valid: true, detect: "signal is http:402 code:card_declined"%s}
    idempotency: {mode: keyed}
    confirmation: {by_key_replay: true}
  - id: capture
    effect: commit
    input: {handles: [hold]}
    idempotency: {mode: keyed}
    confirmation: {by_key_replay: true}
gates:
  - id: new_card
    audience: user
    outcomes: {retry: "repair(to: authorize, fields: [instrument])"}
    timeout: {after: 1h, verdict: dead_end}
"""
DECLINED = obs("http:402", "card_declined", predicates=["signal is http:402 code:card_declined"])


def test_a_declined_authorization_with_no_empty_route_dead_ends_before_capture():
    run = Run.start(chain(CARD % ""))
    run.observe(DECLINED)
    assert events(run, "attempt", "authorize")[-1].verdict == "ok(empty)"
    routed = events(run, "transition", "authorize")[-1]
    assert (routed.row, routed.verdict) == ("empty.route", "dead_end(reason: empty_without_route)")
    assert routed.note == "empty result with no route"
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.dispatches.get("capture", 0) == 0


def test_a_declined_authorization_follows_the_route_it_declares():
    run = Run.start(chain(CARD % ", route: gate(new_card)"))
    run.observe(DECLINED)
    assert events(run, "transition", "authorize")[-1].verdict == "gate(new_card)"
    assert run.waiting().gate == "new_card"


def test_an_empty_routed_ok_proceeds_degraded():
    run = Run.start(chain(CARD % ", route: ok"))
    run.observe(DECLINED)
    assert run.waiting().step == "capture"


def test_a_row_naming_ok_empty_on_a_step_with_no_empty_block_dead_ends():
    """ok(empty) follows the action's empty.route; a step that declares no valid empty has none."""
    doc = chain(
        (CARD % "").replace(
            '      empty: {valid: true, detect: "signal is http:402 code:card_declined"}\n', ""
        )
        + "verdict_table:\n"
        + '  - {id: R1, signal: ["code:card_declined"], scope: {steps: [authorize]},'
        ' verdict: "ok(empty)"}\n'
    )
    assert doc.actions[0].output.empty is None
    run = Run.start(doc)
    run.observe(DECLINED)
    assert events(run, "transition", "authorize")[-1].note == "empty result with no route"
    assert run.snapshot.state == "dead_end"
    assert run.snapshot.dispatches.get("capture", 0) == 0


def test_a_step_with_no_empty_block_treats_an_empty_looking_success_as_ok():
    """SPEC §3 row 2 applies only to actions with a valid empty; row 3 takes the rest."""
    doc = chain(
        (CARD % "").replace(
            '      empty: {valid: true, detect: "signal is http:402 code:card_declined"}\n', ""
        )
    )
    run = Run.start(doc)
    run.observe(obs(predicates=["signal is http:402 code:card_declined"]))
    assert events(run, "attempt", "authorize")[-1].verdict == "ok"
    assert run.waiting().step == "capture"
    run.observe(OK)
    assert run.snapshot.state == "done"
