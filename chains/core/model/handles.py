"""Handles (SPEC §2.2): opaque tokens minted by one action and consumed by later ones.

A :class:`Handle` records who mints it, what it is derived from, whether it is
single-use, how it goes stale (:class:`Staleness`) and how a fresh one is
matched back to the old intent (:class:`Rematch`). :func:`is_external` tells
a handle minted outside the chain (``minted_by: external(...)``).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from .elements import Element, Variant
from .fields import DurationText, StrList


class Staleness(Element):
    detect: StrList = Field(default_factory=list, description="signals observed on use")
    ttl_hint: DurationText | None = Field(None, description="planning hint, never enforced")
    contractual: bool = False
    refresh: str | None = Field(None, description="cheapest step that re-mints the handle")


class Rematch(Element):
    key: StrList = Field(default_factory=list, description="intent-level identity fields")
    on_ambiguous: Literal["model", "gate"] = "model"


class Handle(Variant):
    """An opaque token minted by one action and consumed by later ones."""

    id: str
    description: str | None = None
    minted_by: str | None = None
    derived_from: StrList = Field(default_factory=list)
    single_use: bool = False
    staleness: Staleness | None = None
    rematch: Rematch | None = None


_EXTERNAL = re.compile(r"^external\s*(?:\(.*\))?$", re.IGNORECASE | re.DOTALL)


def is_external(handle: Handle) -> bool:
    """Minted outside this chain: ``minted_by: external``, with or without its origin.

    >>> is_external(Handle(id="order_id", minted_by="external(scope A create_order)"))
    True
    >>> is_external(Handle(id="order_id", minted_by="create_order"))
    False
    """
    return bool(handle.minted_by and external_minter(handle.minted_by))


def external_minter(minted_by: str) -> bool:
    """Whether a ``minted_by`` text names the outside world (``external``, ``external(...)``)."""
    return bool(_EXTERNAL.match(minted_by.strip()))
