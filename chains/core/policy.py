"""What a chain's policy gives one action: attempts, backoff and safe-reject re-dispatches.

SPEC §2.4 resolves a step's policy from the most specific place that says
something: a ``per_step`` entry named after the action, then the effect
class (``commit`` and ``compensate`` split into ``keyed`` and ``unkeyed``),
then the SPEC's placeholder defaults. The linter asks how many attempts a
step gets; the simulator also needs the backoff and the safe-reject
allowance. Both read them here, so the two can never disagree.

The numbers in the defaults are the SPEC's deliberately OPEN placeholders
(§8), used only when a chain's policy is silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from .memo import remember
from .model import Action, Backoff, ChainSpec, StepPolicy, is_commit_class, is_unkeyed_commit

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_BACKOFF",
    "DEFAULT_MAX_REPAIRS",
    "DEFAULT_MAX_REWINDS",
    "DEFAULT_SAFE_REJECT_REDISPATCH",
    "BackoffPolicy",
    "StepLimits",
    "attempts",
    "effect_class",
    "step_limits",
]

# SPEC §2.4 placeholders, used when a chain's policy says nothing.
DEFAULT_ATTEMPTS = {"read": 3, "mint": 2, "keyed": 3, "unkeyed": 1}
DEFAULT_SAFE_REJECT_REDISPATCH = 2
DEFAULT_MAX_REWINDS = 3
DEFAULT_MAX_REPAIRS = 2


@dataclass(frozen=True)
class BackoffPolicy:
    """``base · factor^(n-1)``, capped at ``max``, with full jitter when ``jitter`` is set."""

    base: float
    factor: float
    max: float
    jitter: bool = True

    def delay(self, retry: int, draw: float) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); ``draw`` is in [0, 1).

        >>> BackoffPolicy(0.5, 2, 8).delay(3, 0.5)
        1.0
        >>> BackoffPolicy(0.5, 2, 8, jitter=False).delay(10, 0.0)
        8.0
        """
        ceiling = float(min(self.max, self.base * self.factor ** max(retry - 1, 0)))
        return ceiling * draw if self.jitter else ceiling


DEFAULT_BACKOFF = {
    "read": BackoffPolicy(0.5, 2, 8),
    "mint": BackoffPolicy(1, 2, 10),
    "keyed": BackoffPolicy(2, 2, 30),
    "unkeyed": BackoffPolicy(2, 2, 30),
}


@dataclass(frozen=True)
class StepLimits:
    attempts: int
    backoff: BackoffPolicy
    safe_reject_redispatch: int


def effect_class(action: Action) -> str:
    """``read``, ``mint``, ``select``, or ``keyed`` / ``unkeyed`` for commit-class actions."""
    if is_commit_class(action):
        return "unkeyed" if is_unkeyed_commit(action) else "keyed"
    return action.effect


def _layers(spec: ChainSpec, action: Action) -> list[StepPolicy]:
    """Policy entries that speak for ``action``, most specific first."""
    per_step = spec.policy.per_step
    layers = []
    if (override := per_step.get(action.id)) is not None:
        layers.append(override)
    bucket = per_step.get(action.effect)
    if bucket is not None and is_commit_class(action):
        sub = bucket.unkeyed if is_unkeyed_commit(action) else bucket.keyed
        if sub is not None:
            layers.append(sub)
    if bucket is not None:
        layers.append(bucket)
    return layers


def attempts(spec: ChainSpec, action: Action) -> int:
    """Attempts the policy gives ``action``: override, then class, then SPEC default."""
    for layer in _layers(spec, action):
        if layer.attempts is not None:
            return layer.attempts
    return DEFAULT_ATTEMPTS.get(effect_class(action), 1)


def _backoff(layers: list[StepPolicy], default: BackoffPolicy) -> BackoffPolicy:
    found: Backoff | None = next((la.backoff for la in layers if la.backoff is not None), None)
    if found is None:
        return default
    base = found.base.seconds if found.base and found.base.seconds is not None else default.base
    top = found.max.seconds if found.max and found.max.seconds is not None else default.max
    factor = found.factor if found.factor is not None else default.factor
    jitter = (found.jitter or "full").lower() not in ("none", "off", "false", "no")
    return BackoffPolicy(base, factor, top, jitter)


def step_limits(spec: ChainSpec, action: Action) -> StepLimits:
    """Everything the runtime needs to pace one action's attempts.

    >>> from chains.core.model import ChainSpec
    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "a", "effect": "read"}],
    ...     "policy": {"per_step": {"read": {"attempts": 5}}}})
    >>> step_limits(doc, doc.actions[0]).attempts
    5
    """
    if spec.action(action.id) is not action:  # not the chain's own: nothing to keep it by
        return _step_limits(spec, action)
    last = _last_limits
    kept = last[1] if last[0] is spec else _kept_limits(spec)
    found = kept.get(action.id)
    if found is None:
        found = kept[action.id] = _step_limits(spec, action)
    return found


def _kept_limits(spec: ChainSpec) -> dict[str, StepLimits]:
    """What :func:`step_limits` keeps for ``chain``, by action id; kept at hand as the last."""
    global _last_limits
    kept: dict[str, StepLimits] = remember(spec, "step limits", dict)
    _last_limits = (spec, kept)
    return kept


# The last chain's table at hand: a run asks at every arrival and the invariants at every
# attempt, and the per-chain table costs two calls more (as ChainSpec keeps its indexes).
_last_limits: tuple[ChainSpec | None, dict[str, StepLimits]] = (None, {})


def _step_limits(spec: ChainSpec, action: Action) -> StepLimits:
    layers = _layers(spec, action)
    kind = effect_class(action)
    safe = next(
        (la.safe_reject_redispatch for la in layers if la.safe_reject_redispatch is not None),
        DEFAULT_SAFE_REJECT_REDISPATCH,
    )
    return StepLimits(
        attempts=attempts(spec, action),
        backoff=_backoff(layers, DEFAULT_BACKOFF.get(kind, DEFAULT_BACKOFF["read"])),
        safe_reject_redispatch=safe,
    )
