"""Gates (SPEC §2.6): a pause for an external decision.

A :class:`Gate` names its audience (user, operator or model), the payload it
shows, the outcomes it resumes with (each an :class:`Outcome` with a verdict,
written ``accept: ok`` for short), and what happens when it times out or its
payload expires.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ..verdicts import Verdict
from .elements import Element, Variant
from .fields import DurationText, StrList, VerdictExpr


class Outcome(Element):
    params: dict[str, Any] = Field(default_factory=dict)
    """Values the answer carries. Key: the parameter name; value: its type, e.g.
    `option_id: string`. An answer naming something the gate did not show is refused."""
    bind: StrList = Field(default_factory=list)
    """Intent fields the params are written into before the verdict runs, e.g.
    `[refund_option]`."""
    set: dict[str, Any] = Field(default_factory=dict)
    """Fixed intent values this answer applies. Key: the intent field; value: its new value,
    e.g. `seats: null`. The verdict must be a repair of exactly those fields."""
    verdict: VerdictExpr
    """What this answer leads to, e.g. `ok` (go on past the step that raised the gate, not
    rerun it), `repair(to: book, fields: [seats])` or `dead_end`."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, (str, Verdict)):  # ``accept: ok``
            return {"verdict": value}
        return value


class GateTimeout(Element):
    after: DurationText
    """How long the gate waits for an answer, e.g. `30m`. A deadline that comes in the
    payload belongs in `payload_expiry` instead."""
    outcome: str | None = None
    """Name of the declared outcome taken when time runs out, e.g. `decline`. Give this or
    a `verdict`."""
    verdict: VerdictExpr | None = None
    """The verdict taken when time runs out, when no declared outcome fits, e.g.
    `dead_end(reason: no_answer)`."""


class PayloadExpiry(Element):
    field: str
    """Payload field holding the shown offer's own deadline, e.g. `quote.valid_until`."""
    verdict: VerdictExpr
    """What an answer arriving after that deadline leads to instead, usually a fresh quote,
    e.g. `rewind(to: get_quote)`."""


class Gate(Variant):
    """A pause for an external decision; resumes with a declared outcome."""

    id: str
    """The gate's name, unique in this chain, e.g. `price_consent`; verdicts pause here with
    `gate(price_consent)`."""
    description: str | None = None
    """What is being decided, in plain words, e.g. `the user accepts the new total`."""
    audience: Literal["user", "operator", "model"]
    """Who answers: `user`, `operator` or `model`. The model only when explicitly allowed,
    and never at a gate about money or consent."""
    payload: Any = None
    """What the audience is shown to decide, written freely, e.g. `{old_total, new_total}`."""
    outcomes: dict[str, Outcome] = Field(default_factory=dict)
    """The answers allowed. Key: the answer's name, e.g. `accept`; value: its verdict, or
    `{verdict, params, bind, set}`. E.g. `accept: ok`."""
    timeout: GateTimeout | None = None
    """How long to wait and what happens then; without it the chain's `gate_timeout`
    applies. Waiting itself is not a failure."""
    payload_expiry: PayloadExpiry | None = None
    """When the payload carries its own deadline (a quote valid until T): which field holds
    it, and the verdict for an answer that comes too late."""
