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
    """How long to wait before the first retry (the second attempt), e.g. `500ms`."""
    factor: float | None = None
    """How much the wait grows with each further retry, e.g. `2` doubles it."""
    jitter: str | None = None
    """How the wait is randomised: `full` (the default: anywhere up to the computed wait) or
    `none` for exact waits."""
    max: DurationText | None = None
    """The longest a single wait may be, however many retries came before, e.g. `8s`."""


class StepPolicy(Element):
    """Attempts and backoff for an effect class or one action.

    ``commit`` and ``compensate`` split into ``keyed`` and ``unkeyed``.
    """

    attempts: int | None = None
    """Attempts allowed per arrival at the step, the first included, e.g. `3`. An unkeyed
    commit must have `1`: a lost answer is probed, never resent."""
    backoff: Backoff | None = None
    """How long to wait between attempts, growing with each retry, e.g.
    `{base: 500ms, factor: 2, max: 8s}`."""
    timeout: DurationText | None = None
    """How long one attempt of the steps this entry covers may take, e.g. `30s`."""
    safe_reject_redispatch: int | None = None
    """Unkeyed commits only: extra sends allowed after a row marked `no_side_effect` (the
    provider proved nothing happened), e.g. `2`. Other failures never resend."""
    keyed: StepPolicy | None = None
    """Under `commit` or `compensate`: the policy for keyed calls (the provider honours an
    idempotency key), which may retry safely."""
    unkeyed: StepPolicy | None = None
    """Under `commit` or `compensate`: the policy for unkeyed calls. Keep `attempts: 1`: a
    lost answer is probed, never resent."""


class PerChain(Element):
    max_rewinds: int | None = None
    """How many rewinds, repairs and reselects one run may make in all before it dead-ends,
    e.g. `3`."""
    max_repairs: int | None = None
    """How many of those may be repairs (each needs new intent from the model or a person),
    e.g. `2`."""
    compensation_order: Literal["reverse"] | list[str] | None = None
    """The order landed commits are undone in when a run dead-ends: `reverse` (latest first,
    the default) or a list of action ids."""
    wall_clock: DurationText | None = None
    """Time budget for a whole run, e.g. `20m`. Time parked at a gate or waiting to learn a
    commit's outcome does not count."""
    gate_timeout: DurationText | None = None
    """How long a gate without its own `timeout` waits, e.g. `4h`. A gate's own timeout
    wins."""


class EscalationStep(Element):
    audience: Literal["user", "operator", "model"]
    """Who is asked at this level: `model`, `user` or `operator`."""
    may: StrList = Field(default_factory=list)
    """What this audience may decide, in words, e.g. `[propose repair fields]`. The first
    level whose list mentions a repair answers repairs."""


class Policy(Element):
    """The budgets that keep a run finite: attempts per step, rewinds per chain, escalation."""

    per_step: dict[str, StepPolicy] = Field(default_factory=dict)
    """Attempts and backoff. Key: `read`, `mint`, `commit`, `compensate` or an action id (the
    most specific wins); value: that step policy, e.g. `read: {attempts: 3}`."""
    per_chain: PerChain = Field(default_factory=PerChain)
    """Budgets for the whole run: rewinds, repairs, wall clock, the default gate timeout and
    the order of undoing commits."""
    escalation: list[EscalationStep] = Field(default_factory=list)
    """Who may be asked to decide what, in order, e.g. the model proposes repairs, the user
    answers consent, an operator settles stuck commits."""


StepPolicy.model_rebuild()
