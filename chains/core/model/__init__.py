"""The chain spec: pydantic models of the SPEC v0.4 §2 grammar.

This package is the one source of truth for what a chain document holds; the
loaders, the JSON Schema, the API and the database all go through it. It is
cut by concern — :mod:`.fields` (durations, verdict expressions),
:mod:`.elements` (evidence and the element base), :mod:`.handles`,
:mod:`.actions`, :mod:`.table` (verdict rows and their signals),
:mod:`.gates`, :mod:`.policy` and :mod:`.chain` — and every name is imported
from here, ``from chains.core.model import ChainSpec``.

Vocabulary: a *document* is plain data (a dict, as stored, posted or
exported); a :class:`ChainSpec` is a validated document, the object every
later layer works on.

Assumptions worth knowing before editing:

* Documents are validated strictly (wrong types and unknown enum values fail
  with a path), but keys the grammar does not know are *kept*: every element
  moves them into its ``extras`` map, and the import report lists them.
* Collections are lists of elements with an ``id`` (handles, actions, gates,
  verdict rows) so that duplicates survive loading and can be reported by the
  linter; the SPEC's mapping form (``handles: {search_id: {...}}``) is
  accepted on input.
* Verdicts are :class:`~chains.core.verdicts.Verdict` values and durations are
  :class:`Duration` values; both are written as their canonical text.
* Evidence (``source``) may sit on any element.
"""

# Every name the single module ``chains/core/model.py`` had is importable from
# here (``from chains.core.model import Scope``); ``__all__`` is unchanged, so
# the names outside it are re-exports, not unused imports.
# ruff: noqa: F401
from .actions import (
    COMMIT_CLASS_EFFECTS,
    EFFECT_MEANINGS,
    EFFECTS,
    HTTP_METHODS,
    Action,
    ActionInput,
    ActionOutput,
    AsyncFinality,
    AutoRepair,
    BusinessExpiry,
    ByKeyReplay,
    Compensation,
    Confirmation,
    Effect,
    Empty,
    HttpBinding,
    Idempotency,
    IntentField,
    LadderRung,
    Precondition,
    Revocation,
    Sweep,
    auto_repair_transform,
    compensators,
    is_commit_class,
    is_keyed,
    is_unkeyed_commit,
)
from .chain import (
    ChainSpec,
    Independence,
    Variants,
    commit_steps,
    first_by_id,
    in_variant,
    main_steps,
    money_or_consent,
)
from .elements import EVIDENCE_TAGS, Element, Source, Variant, source_from_text
from .fields import Duration, DurationText, StrList, VerdictExpr, parse_duration
from .gates import Gate, GateTimeout, Outcome, PayloadExpiry
from .handles import Handle, Rematch, Staleness, external_minter, is_external
from .policy import Backoff, EscalationStep, PerChain, Policy, StepPolicy
from .table import (
    SIGNAL_TERMS_LIMIT,
    KnownUnmatched,
    Scope,
    SignalTerms,
    VerdictRow,
    generic_row_ref,
    row_ref,
    rows_by_ref,
    scope_from_text,
    signal_terms,
    trace_row_ref,
)

__all__ = [
    "COMMIT_CLASS_EFFECTS",
    "EFFECT_MEANINGS",
    "EFFECTS",
    "EVIDENCE_TAGS",
    "HTTP_METHODS",
    "Action",
    "ChainSpec",
    "Duration",
    "Effect",
    "Element",
    "Gate",
    "Handle",
    "HttpBinding",
    "Independence",
    "Policy",
    "Source",
    "VerdictRow",
    "commit_steps",
    "auto_repair_transform",
    "compensators",
    "first_by_id",
    "generic_row_ref",
    "in_variant",
    "is_commit_class",
    "is_external",
    "is_keyed",
    "is_unkeyed_commit",
    "main_steps",
    "money_or_consent",
    "parse_duration",
    "row_ref",
    "rows_by_ref",
    "signal_terms",
    "trace_row_ref",
]
