"""Policy (SPEC §2.4): attempts, backoff and budgets, per step and per chain.

:class:`Policy` holds a :class:`StepPolicy` per effect class or action id
(commit-class policies split into ``keyed`` and ``unkeyed``, so
:class:`StepPolicy` refers to itself and is rebuilt once defined), the
per-chain budgets (:class:`PerChain`) and the escalation ladder.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .elements import Element
from .fields import DurationText, StrList


class Backoff(Element):
    base: DurationText | None = None
    factor: float | None = None
    jitter: str | None = None
    max: DurationText | None = None


class StepPolicy(Element):
    """Attempts and backoff for an effect class or one action.

    ``commit`` and ``compensate`` split into ``keyed`` and ``unkeyed``.
    """

    attempts: int | None = None
    backoff: Backoff | None = None
    timeout: DurationText | None = None
    safe_reject_redispatch: int | None = None
    keyed: StepPolicy | None = None
    unkeyed: StepPolicy | None = None


class PerChain(Element):
    max_rewinds: int | None = None
    max_repairs: int | None = None
    compensation_order: Literal["reverse"] | list[str] | None = None
    wall_clock: DurationText | None = None
    gate_timeout: DurationText | None = None


class EscalationStep(Element):
    audience: Literal["user", "operator", "model"]
    may: StrList = Field(default_factory=list)


class Policy(Element):
    per_step: dict[str, StepPolicy] = Field(
        default_factory=dict, description="keys: read, mint, commit, compensate or an action id"
    )
    per_chain: PerChain = Field(default_factory=PerChain)
    escalation: list[EscalationStep] = Field(default_factory=list)


StepPolicy.model_rebuild()
