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
    detect: StrList = Field(default_factory=list)
    """Signals that say this handle has died, seen when a later step uses it, e.g.
    `[http:410, code:SEARCH_EXPIRED]`. Expiry is found this way, never by a timer."""
    ttl_hint: DurationText | None = Field(None)
    """Roughly how long the handle lives, e.g. `~15m`, for planning only. It is never
    enforced: the handle is stale only when a use of it says so."""
    contractual: bool = False
    """True when the provider documents that lifetime as a promise, so plans may rely on it.
    The `detect` signals are still needed."""
    refresh: str | None = Field(None)
    """Id of the cheapest step that mints this handle again, e.g. `search`: where the run
    rewinds when the handle dies. Write `n/a` when nothing can."""


class Rematch(Element):
    key: StrList = Field(default_factory=list)
    """Intent-level fields that find the same option again after a new search, e.g.
    `[carrier, flight_no, departs_at]`. Never the provider's option id, which changes."""
    on_ambiguous: Literal["model", "gate"] = "model"
    """Who picks again when the key matches no option or several: `model` (the default) or
    `gate` (a person chooses)."""


class Handle(Variant):
    """An opaque token minted by one action and consumed by later ones."""

    id: str
    """The handle's name, unique in this chain, e.g. `search_id` or `payment_intent`."""
    description: str | None = None
    """What the token stands for, in plain words, e.g. `the provider's fare session`."""
    minted_by: str | None = None
    """Id of the step that returns it, e.g. `search`; `external(...)` when it comes from
    outside this chain, e.g. `external(order service)`."""
    derived_from: StrList = Field(default_factory=list)
    """Handles this one depends on, by id, e.g. `[search_id]`. When one of them is minted
    again, this one dies with it."""
    single_use: bool = False
    """True when sending it with a commit uses it up, even if the outcome is unknown; it
    must then be minted again before any reuse."""
    staleness: Staleness | None = None
    """How you learn it expired (signals on use), a planning hint of its lifetime, and which
    step mints it again."""
    rematch: Rematch | None = None
    """For a selection pseudo-handle: how the same pick is made again after a rewind, and
    who decides when that is unclear."""


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
