"""The chain model accepts the SPEC dialect and keeps what it does not know."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chains.core.errors import DocumentError
from chains.core.formats import validate_chain
from chains.core.model import (
    ChainSpec,
    Compensation,
    IntentField,
    Source,
    StepPolicy,
    VerdictRow,
    commit_steps,
)
from chains.core.verdicts import parse_verdict


def chain(**body):
    return ChainSpec.model_validate({"id": "c", **body})


def action(**body):
    return chain(actions=[{"id": "a", "effect": "commit", **body}]).actions[0]


def test_handles_in_mapping_form_become_a_list_with_ids():
    c = chain(handles={"search_id": {"minted_by": "search"}, "pnr_id": {"minted_by": "create_pnr"}})
    assert [(h.id, h.minted_by) for h in c.handles] == [
        ("search_id", "search"),
        ("pnr_id", "create_pnr"),
    ]


def test_a_handle_with_an_empty_body_in_mapping_form_is_kept():
    assert chain(handles={"search_id": None}).handles[0].id == "search_id"


def test_handles_in_list_form_are_read_as_written():
    assert chain(handles=[{"id": "h", "single_use": True}]).handles[0].single_use is True


def test_a_handle_reads_its_staleness_and_rematch():
    c = chain(
        handles={
            "selected": {
                "derived_from": "search_id",
                "staleness": {"detect": ["http:410"], "ttl_hint": ">25m", "refresh": "search"},
                "rematch": {"key": ["carrier", "fare_basis"], "on_ambiguous": "gate"},
            }
        }
    )
    handle = c.handles[0]
    assert handle.derived_from == ["search_id"]
    assert handle.staleness.ttl_hint.bound == "at_least"
    assert handle.rematch.on_ambiguous == "gate"


def test_gates_in_mapping_form_become_a_list_with_ids():
    c = chain(gates={"price_change_consent": {"audience": "user"}})
    assert [(g.id, g.audience) for g in c.gates] == [("price_change_consent", "user")]


def test_an_outcome_written_as_a_verdict_is_the_verdict_shorthand():
    c = chain(
        gates={"g": {"audience": "user", "outcomes": {"accept": "ok", "decline": "dead_end"}}}
    )
    outcomes = c.gates[0].outcomes
    assert outcomes["accept"].verdict == parse_verdict("ok")
    assert outcomes["decline"].verdict == parse_verdict("dead_end")


def test_an_outcome_reads_params_bind_and_set():
    c = chain(
        gates={
            "seat_degrade": {
                "audience": "user",
                "outcomes": {
                    "proceed_seatless": {
                        "set": {"seats": None},
                        "verdict": "repair(to: initiate_booking, fields: [seats])",
                    },
                    "choose_other": {
                        "params": {"seats": "seat_selection"},
                        "bind": ["seats"],
                        "verdict": "repair(to: initiate_booking, fields: [seats])",
                    },
                },
                "timeout": {"after": "15m", "outcome": "proceed_seatless"},
            }
        }
    )
    gate = c.gates[0]
    assert gate.outcomes["proceed_seatless"].set == {"seats": None}
    assert gate.outcomes["choose_other"].bind == ["seats"]
    assert gate.timeout.outcome == "proceed_seatless"


def test_a_gate_timeout_may_name_a_verdict_directly():
    c = chain(gates={"g": {"audience": "user", "timeout": {"after": "30m", "verdict": "dead_end"}}})
    assert c.gates[0].timeout.verdict.type == "dead_end"


@pytest.mark.parametrize(
    ("written", "type_", "required"),
    [
        ("airport", "airport", True),
        ("seat_selection?", "seat_selection", False),
        (None, "string", True),
        ({"type": "money", "required": False}, "money", False),
    ],
)
def test_an_intent_field_reads_the_type_shorthand(written, type_, required):
    field = action(input={"intent": {"f": written}}).input.intent["f"]
    assert (field.type, field.required) == (type_, required)


def test_an_intent_given_as_a_list_names_string_fields():
    intent = action(input={"intent": ["dates", "cabin"]}).input.intent
    assert intent == {"dates": IntentField(), "cabin": IntentField()}


@pytest.mark.parametrize("written", ["none", None])
def test_compensation_none_is_an_explicit_none_action(written):
    assert Compensation.model_validate(written) == Compensation(action="none")


def test_compensation_written_as_an_action_id_names_that_action():
    assert action(compensation="refund").compensation.action == "refund"


def test_a_compensation_ladder_reads_else_rungs():
    ladder = action(
        compensation={
            "ladder": [
                {"when": "within void window", "action": "void"},
                {"else": "escalate(operator)"},
            ]
        }
    ).compensation.ladder
    assert ladder[1].else_ == parse_verdict("escalate(operator)")


def test_rejected_before_execution_is_read_as_no_side_effect():
    row = VerdictRow.model_validate(
        {"signal": "http:429", "verdict": "retry", "rejected_before_execution": True}
    )
    assert (row.no_side_effect, row.extras) == (True, {})


@pytest.mark.parametrize(("written", "fragile"), [(True, "prose-match"), (False, None)])
def test_a_fragile_flag_is_read_as_prose_match(written, fragile):
    row = VerdictRow.model_validate({"verdict": "dead_end", "fragile": written})
    assert row.fragile == fragile


@pytest.mark.parametrize(
    ("scope", "field", "value"),
    [
        ("any consumer of `search_id`", "consumers_of", ["search_id"]),
        ("checkout, revalidate", "steps", ["checkout", "revalidate"]),
        (["confirm"], "steps", ["confirm"]),
        ("any", "any", True),
        ("read / mint / keyed commit", "effects", ["read", "mint", "keyed_commit"]),
        ("pre-create_pnr guard", "text", "pre-create_pnr guard"),
    ],
)
def test_a_verdict_row_scope_is_read_from_a_table_cell(scope, field, value):
    row = VerdictRow.model_validate({"verdict": "retry", "scope": scope})
    assert getattr(row.scope, field) == value


def test_applies_to_is_read_as_the_scope():
    row = VerdictRow.model_validate({"verdict": "retry", "applies_to": ["confirm"]})
    assert row.scope.steps == ["confirm"]


def test_by_key_replay_written_as_text_is_its_note():
    confirmation = action(confirmation={"by_key_replay": "replaying the key returns the customer"})
    assert confirmation.confirmation.by_key_replay.note == "replaying the key returns the customer"


def test_by_key_replay_written_as_a_mapping_reads_its_note():
    a = action(confirmation={"by_key_replay": {"note": "keyed synchronous"}})
    assert a.confirmation.by_key_replay.note == "keyed synchronous"


def test_a_confirmation_reads_async_and_sweep():
    a = action(
        confirmation={
            "probe": "get_pnr",
            "signal": "pnr exists",
            "async": {"channel": "webhook", "deadline": "24h"},
            "sweep": {"interval": "12h", "escalate_after": "72h"},
        }
    )
    assert a.confirmation.async_.deadline.seconds == 86400
    assert a.confirmation.sweep.escalate_after.text == "72h"


def test_an_action_reads_every_block():
    a = action(
        mutates="hold",
        output={
            "payload": "charge",
            "handles": "charge_id",
            "business_expiry": {
                "field": "payment_time_limit",
                "on_expiry": "dead_end(permanent: false)",
            },
            "empty": {"valid": True, "detect": "results.length == 0", "route": "ok"},
        },
        preconditions=[{"when": "x", "verdict": "gate(g)", "reason": "r"}],
        auto_repairs=[{"trigger": "code:TRIP_DONE", "fields": "mint a fresh trip ref"}],
        idempotency={
            "mode": "keyed",
            "key_scope": "run",
            "key_retention": "24h",
            "replay_semantics": "returns_cached",
        },
        revocation={
            "watch": ["webhook:refund.failed"],
            "window": "30d",
            "route": "escalate(operator)",
        },
        entry_gate="payment_consent",
        request_invariants={"return_offers": True},
        timeout="200s",
        latency_hint="~2s",
        only=["NDC"],
    )
    assert a.output.handles == ["charge_id"]
    assert a.output.business_expiry.on_expiry.permanent is False
    assert a.auto_repairs[0].once is True
    assert a.idempotency.key_retention.seconds == 86400
    assert a.revocation.route.audience == "operator"
    assert (a.entry_gate, a.timeout.seconds, a.only) == ("payment_consent", 200, ["NDC"])


def test_a_policy_reads_keyed_and_unkeyed_commit_budgets():
    policy = chain(
        policy={
            "per_step": {
                "read": {
                    "attempts": 3,
                    "backoff": {"base": "500ms", "factor": 2, "jitter": "full", "max": "8s"},
                },
                "commit": {
                    "keyed": {"attempts": 3},
                    "unkeyed": {"attempts": 1, "safe_reject_redispatch": 2},
                },
                "create_pnr": {"attempts": 1, "timeout": "200s"},
            },
            "per_chain": {
                "max_rewinds": 3,
                "max_repairs": 2,
                "compensation_order": "reverse",
                "wall_clock": "20m",
                "gate_timeout": "30m",
            },
            "escalation": [{"audience": "model", "may": ["propose repair fields"]}],
        }
    ).policy
    assert policy.per_step["commit"].unkeyed.safe_reject_redispatch == 2
    assert policy.per_step["read"].backoff.base.seconds == 0.5
    assert policy.per_chain.compensation_order == "reverse"
    assert policy.escalation[0].may == ["propose repair fields"]


def test_compensation_order_may_list_action_ids():
    c = chain(policy={"per_chain": {"compensation_order": ["refund", "cancel_intent"]}})
    assert c.policy.per_chain.compensation_order == ["refund", "cancel_intent"]


def test_variants_and_known_unmatched_are_read():
    c = chain(variants={"axis": "rail", "values": ["GDS", "NDC"]}, known_unmatched=["code:4711"])
    assert c.variants.values == ["GDS", "NDC"]
    assert c.known_unmatched[0].signal == "code:4711"


def test_evidence_text_is_split_into_tag_urls_and_note():
    source = Source.model_validate("documented (https://docs.example.com/errors) see table")
    assert source.tag == "documented"
    assert source.urls == ["https://docs.example.com/errors"]


def test_evidence_with_an_unknown_tag_is_refused():
    with pytest.raises(ValidationError, match="expected documented"):
        Source.model_validate({"tag": "rumour"})


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"colour": "red"}, lambda c: c.extras),
        ({"handles": {"h": {"colour": "red"}}}, lambda c: c.handles[0].extras),
        (
            {"actions": [{"id": "a", "effect": "read", "colour": "red"}]},
            lambda c: c.actions[0].extras,
        ),
        (
            {
                "actions": [
                    {"id": "a", "effect": "read", "idempotency": {"mode": "none", "colour": "red"}}
                ]
            },
            lambda c: c.actions[0].idempotency.extras,
        ),
        ({"gates": {"g": {"audience": "user", "colour": "red"}}}, lambda c: c.gates[0].extras),
        (
            {
                "gates": {
                    "g": {"audience": "user", "outcomes": {"o": {"verdict": "ok", "colour": "red"}}}
                }
            },
            lambda c: c.gates[0].outcomes["o"].extras,
        ),
        (
            {"verdict_table": [{"verdict": "ok", "colour": "red"}]},
            lambda c: c.verdict_table[0].extras,
        ),
        ({"policy": {"per_chain": {"colour": "red"}}}, lambda c: c.policy.per_chain.extras),
    ],
)
def test_an_unknown_key_lands_in_the_extras_of_its_element(body, where):
    assert where(chain(**body)) == {"colour": "red"}


def test_written_extras_and_unknown_keys_are_merged():
    assert chain(extras={"a": 1}, b=2).extras == {"a": 1, "b": 2}


def test_extras_that_are_not_a_mapping_are_refused():
    with pytest.raises(ValidationError, match="extras"):
        chain(extras=[1, 2])


@pytest.mark.parametrize(
    ("body", "path", "message"),
    [
        (
            {"actions": [{"id": "a", "effect": "write"}]},
            "actions[a].effect",
            "expected read | mint | commit | compensate | select",
        ),
        ({"actions": [{"id": "a"}]}, "actions[a].effect", "required field is missing"),
        (
            {"actions": [{"id": "a", "effect": "read", "probe_only": "often"}]},
            "actions[a].probe_only",
            "valid boolean",
        ),
        (
            {"handles": {"h": {"staleness": {"ttl_hint": True}}}},
            "handles[h].staleness.ttl_hint",
            "expected a duration",
        ),
        (
            {"verdict_table": [{"verdict": "explode"}]},
            "verdict_table[#1].verdict",
            "unknown verdict",
        ),
        (
            {"gates": {"g": {"audience": "everyone"}}},
            "gates[g].audience",
            "expected user | operator | model",
        ),
        (
            {"policy": {"per_chain": {"max_rewinds": "many"}}},
            "policy.per_chain.max_rewinds",
            "valid integer",
        ),
        ({"handles": "search_id"}, "handles", "valid list"),
    ],
)
def test_a_wrong_type_is_an_error_with_its_path(body, path, message):
    with pytest.raises(DocumentError) as info:
        validate_chain({"id": "c", **body})
    (problem,) = info.value.problems
    assert problem.path == path
    assert message in problem.message


@pytest.mark.parametrize("chain_id", ["", "has space", "-lead", "x" * 201])
def test_a_chain_id_must_be_a_short_slug(chain_id):
    with pytest.raises(ValidationError):
        ChainSpec(id=chain_id)


def test_lookups_find_elements_by_id():
    c = chain(
        handles={"h": {}},
        actions=[{"id": "a", "effect": "read"}],
        gates={"g": {"audience": "user"}},
    )
    assert (c.handle("h").id, c.action("a").id, c.gate("g").id, c.action("zz")) == (
        "h",
        "a",
        "g",
        None,
    )


def test_lookups_on_two_chains_in_turn_each_find_their_own_elements():
    read = chain(actions=[{"id": "a", "effect": "read"}])
    commit = chain(actions=[{"id": "a", "effect": "commit"}])
    effects = [c.action("a").effect for c in (read, commit, read, commit)]
    assert effects == ["read", "commit", "read", "commit"]


# --- row signals: any of these, all of these ----------------------------------


def row(signal):
    return VerdictRow.model_validate({"signal": signal, "verdict": "retry"})


def test_a_signal_written_all_of_is_one_conjunction_atom():
    assert row({"all": ["http:402", "code:card_declined"]}).signal == [
        "http:402 && code:card_declined"
    ]


def test_a_signal_written_any_of_is_the_list_of_its_atoms():
    assert row({"any": ["timeout", "conn_reset"]}).signal == ["timeout", "conn_reset"]


def test_all_of_alternatives_multiplies_out_to_any_of_conjunctions():
    signal = {"all": ["http:422", {"any": ["code:limit_hit", "code:limit_day"]}]}
    assert row(signal).signal == ["http:422 && code:limit_hit", "http:422 && code:limit_day"]


def test_a_list_may_mix_atoms_and_conjunctions():
    assert row(["timeout", {"all": ["http:409", "code:busy"]}]).signal == [
        "timeout",
        "http:409 && code:busy",
    ]


@pytest.mark.parametrize(
    "signal", [{"all": []}, {"every": ["a"]}, {"all": ["a"], "any": ["b"]}, {"any": "a", "x": 1}]
)
def test_a_signal_mapping_other_than_one_non_empty_all_or_any_is_refused(signal):
    with pytest.raises(ValidationError):
        row(signal)


def test_the_json_schema_shows_the_all_and_any_forms_of_a_signal():
    from chains.core.formats import json_schema

    schema = json_schema()["$defs"]["VerdictRow"]["properties"]["signal"]
    keys = [next(iter(o["properties"])) for o in schema["anyOf"] if o.get("type") == "object"]
    assert keys == ["all", "any"]


def test_a_self_referencing_step_policy_validates_its_keyed_split():
    """The policy module rebuilds StepPolicy once its own keyed/unkeyed fields exist."""
    policy = StepPolicy.model_validate({"keyed": {"attempts": 3}, "unkeyed": {}})
    assert policy.keyed is not None and policy.keyed.attempts == 3


def test_commit_steps_are_the_commits_and_compensators_by_their_first_definition():
    doc = ChainSpec.model_validate(
        {
            "id": "c",
            "actions": [
                {"id": "search", "effect": "read"},
                {"id": "book", "effect": "commit"},
                {"id": "cancel", "effect": "compensate"},
                {"id": "search", "effect": "commit"},  # a duplicate id: the first wins
            ],
        }
    )
    assert commit_steps(doc) == {"book", "cancel"}
