"""Lint rules: policy (SPEC §2.4, P1).

Budgets are config enforced by code, so they must be present, consistent and
sane. The one number that is not a tuning choice is an unkeyed commit's
single attempt: no bucket or per-step override may raise it. The SPEC's
default numbers are unreviewed placeholders, so a missing budget is a
warning (someone still has to choose it), not an error.

``per_step`` keys are effect classes (``read``, ``commit`` ...) or action
ids; an id that names no action is the structure rules' finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model import COMMIT_CLASS_EFFECTS, ChainSpec, StepPolicy
from .context import LintContext, is_unkeyed_commit, walk
from .registry import Found, rule

__all__: list[str] = []


@rule(
    "policy.missing-budget",
    "warning",
    "SPEC §2.4",
    hint="Set policy.per_chain.max_rewinds and max_repairs; the SPEC's defaults (3 and 2) "
    "are unreviewed placeholders, and a budget nobody chose is not reviewed.",
)
def missing_budget(spec: ChainSpec, ctx: LintContext) -> Found:
    """The run's rewind and repair budgets are declared."""
    per_chain = spec.policy.per_chain
    for name in ("max_rewinds", "max_repairs"):
        if getattr(per_chain, name) is None:
            yield "policy.per_chain", f"policy.per_chain declares no {name}."


@rule(
    "policy.repairs-exceed-rewinds",
    "error",
    "SPEC §2.4",
    hint="Lower max_repairs to at most max_rewinds: every repair also spends a rewind.",
)
def repairs_exceed_rewinds(spec: ChainSpec, ctx: LintContext) -> Found:
    """max_repairs is a subset of max_rewinds, so never larger."""
    per_chain = spec.policy.per_chain
    rewinds, repairs = per_chain.max_rewinds, per_chain.max_repairs
    if rewinds is not None and repairs is not None and repairs > rewinds:
        yield (
            "policy.per_chain",
            f"policy.per_chain allows {repairs} repairs but only {rewinds} rewinds; repairs "
            "are counted against the rewind budget.",
        )


@rule(
    "policy.missing-wall-clock",
    "warning",
    "SPEC §2.4",
    hint="Set policy.per_chain.wall_clock, e.g. the larger of 3x the summed latency hints "
    "and 2x the slowest step's timeout; parked time is excluded.",
)
def missing_wall_clock(spec: ChainSpec, ctx: LintContext) -> Found:
    """The run has a wall-clock budget."""
    if spec.policy.per_chain.wall_clock is None:
        yield "policy.per_chain", "policy.per_chain declares no wall_clock budget."


@rule(
    "policy.unkeyed-commit-retried",
    "error",
    "SPEC §2.4",
    hint="Set attempts: 1 for unkeyed commits (commit.unkeyed, compensate.unkeyed and every "
    "per-step override of an unkeyed commit); this number is not tunable.",
)
def unkeyed_commit_retried(spec: ChainSpec, ctx: LintContext) -> Found:
    """No bucket or override gives an unkeyed commit more than one attempt."""
    for key, step in spec.policy.per_step.items():
        where = f"policy.per_step.{key}"
        if key in COMMIT_CLASS_EFFECTS:
            unkeyed = step.unkeyed
            if unkeyed is not None and (unkeyed.attempts or 1) > 1:
                yield (
                    f"{where}.unkeyed",
                    f"{where}.unkeyed gives unkeyed {key}s {unkeyed.attempts} attempts.",
                )
            elif (unkeyed is None or unkeyed.attempts is None) and (step.attempts or 1) > 1:
                affected = [
                    a.id
                    for a in spec.actions
                    if a.effect == key and is_unkeyed_commit(a) and ctx.attempts(a) > 1
                ]
                if affected:
                    yield (
                        where,
                        f"{where} gives {step.attempts} attempts to every {key}, including "
                        f"the unkeyed {', '.join(affected)}.",
                    )
        elif _unkeyed(key, ctx) and (step.attempts or 1) > 1:
            yield where, f"{where} gives the unkeyed {key} {step.attempts} attempts."


def _unkeyed(action_id: str, ctx: LintContext) -> bool:
    action = ctx.actions.get(action_id)
    return action is not None and is_unkeyed_commit(action)


@rule(
    "policy.misplaced-safe-reject-redispatch",
    "warning",
    "SPEC §2.4",
    hint="Set safe_reject_redispatch only under commit.unkeyed or compensate.unkeyed (or on "
    "an unkeyed commit's own entry); other steps may already retry.",
)
def misplaced_safe_reject_redispatch(spec: ChainSpec, ctx: LintContext) -> Found:
    """safe_reject_redispatch sits only where unkeyed commits read it.

    They read it under ``commit.unkeyed`` / ``compensate.unkeyed``, on their
    own entry, and on their whole class (``compensate: {...}`` written
    without the keyed/unkeyed split) when the chain has an unkeyed one.
    """
    for where, step in _step_policies(spec):
        if step.safe_reject_redispatch is None:
            continue
        key = where.removeprefix("policy.per_step.")
        if key in ("commit.unkeyed", "compensate.unkeyed") or _unkeyed(key, ctx):
            continue
        if key in ("commit", "compensate") and any(
            a.effect == key and is_unkeyed_commit(a) for a in spec.actions
        ):
            continue
        yield (
            where,
            f"{where} sets safe_reject_redispatch, which only unkeyed commits use; "
            "here it has no effect.",
        )


def _step_policies(spec: ChainSpec) -> Iterator[tuple[str, StepPolicy]]:
    for where, element in walk(spec.policy, "policy"):
        if isinstance(element, StepPolicy):
            yield where, element


@rule(
    "policy.value-out-of-range",
    "error",
    "SPEC §2.4",
    hint="Use a positive number: attempts at least 1, budgets and counts at least 0.",
)
def value_out_of_range(spec: ChainSpec, ctx: LintContext) -> Found:
    """Policy numbers are not negative, and attempts are at least 1."""
    for where, element in walk(spec.policy, "policy"):
        for name in type(element).model_fields:
            value = getattr(element, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if value < 0:
                yield where, f"{where}.{name} is negative ({value})."
            elif name == "attempts" and value < 1:
                yield where, f"{where}.attempts is {value}: the step would never run."
