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
    bind: StrList = Field(default_factory=list)
    set: dict[str, Any] = Field(default_factory=dict)
    verdict: VerdictExpr

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, (str, Verdict)):  # ``accept: ok``
            return {"verdict": value}
        return value


class GateTimeout(Element):
    after: DurationText
    outcome: str | None = None
    verdict: VerdictExpr | None = None


class PayloadExpiry(Element):
    field: str
    verdict: VerdictExpr


class Gate(Variant):
    """A pause for an external decision; resumes with a declared outcome."""

    id: str
    description: str | None = None
    audience: Literal["user", "operator", "model"]
    payload: Any = None
    outcomes: dict[str, Outcome] = Field(default_factory=dict)
    timeout: GateTimeout | None = None
    payload_expiry: PayloadExpiry | None = None
