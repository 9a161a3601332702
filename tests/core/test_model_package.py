"""The model package keeps the single module's import surface (issue 13 split)."""

import chains.core.model as model

# Every public name chains/core/model.py had before it became a package.
NAMES = [
    "EVIDENCE_TAGS",
    "SIGNAL_TERMS_LIMIT",
    "Action",
    "ActionInput",
    "ActionOutput",
    "AsyncFinality",
    "AutoRepair",
    "Backoff",
    "BusinessExpiry",
    "ByKeyReplay",
    "Chain",
    "Compensation",
    "Confirmation",
    "Duration",
    "DurationText",
    "Element",
    "Empty",
    "EscalationStep",
    "Gate",
    "GateTimeout",
    "Handle",
    "Idempotency",
    "Independence",
    "IntentField",
    "KnownUnmatched",
    "LadderRung",
    "Outcome",
    "PayloadExpiry",
    "PerChain",
    "Policy",
    "Precondition",
    "Rematch",
    "Revocation",
    "Scope",
    "SignalTerms",
    "Source",
    "Staleness",
    "StepPolicy",
    "StrList",
    "Sweep",
    "VerdictExpr",
    "VerdictRow",
    "Variant",
    "Variants",
    "compensators",
    "in_variant",
    "is_commit_class",
    "is_external",
    "is_keyed",
    "is_unkeyed_commit",
    "main_steps",
    "parse_duration",
    "scope_from_text",
    "signal_terms",
    "source_from_text",
]


def test_every_name_of_the_single_module_is_importable_from_the_package():
    assert [name for name in NAMES if not hasattr(model, name)] == []


def test_a_self_referencing_step_policy_validates_its_keyed_split():
    policy = model.StepPolicy.model_validate({"keyed": {"attempts": 3}, "unkeyed": {}})
    assert policy.keyed is not None and policy.keyed.attempts == 3
