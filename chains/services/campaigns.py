"""Campaigns: the explorer launched on a revision, followed and cancelled, for the page and the API.

:class:`CampaignIn` is the one definition of what a launch asks for: each
bound's range, default and meaning. The API takes it as its body, and the
campaigns page reads its form through it and labels its boxes with its
descriptions. The defaults of the bounds are the explorer's own
(``core.sim.explorer.Bounds``). A launch is refused here, before any worker
sees it, when the revision is unknown or no longer validates; the model verb
``Exploration.objects.launch`` then queues the shards (and raises
``QueueDown`` when the broker refuses them). Every launch is held to the
caps of the settings (:func:`caps`): the campaign's states, each shard's
time and a worker's memory; the explorer stops at the first one reached and
the result says which.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from annotated_types import Ge, Le
from django.conf import settings
from django.shortcuts import get_object_or_404
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from chains.core.errors import ChainError, DocumentError
from chains.core.sim.explorer import Bounds
from chains.models import Chain, Exploration, Revision
from chains.services.access import find_revision, get_head, spec_of

__all__ = [
    "BadCampaign",
    "CampaignIn",
    "cancel_campaign",
    "caps",
    "launch_campaign",
    "limits",
    "watch_campaign",
]


class CampaignIn(BaseModel):
    """A launch: which revision, how far the explorer looks, and in how many shards."""

    revision: int | None = Field(
        None, ge=1, description="the revision to explore; the head when left out"
    )
    max_faults: int = Field(Bounds.max_faults, ge=0, le=6, description="faults per path")
    max_events: int = Field(Bounds.max_events, ge=1, le=500, description="inputs per path")
    crashes: bool = Field(Bounds.crashes, description="crash while a dispatch is out")
    shards: int = Field(1, ge=1, le=16, description="shards (one task each)")

    @field_validator("max_faults", "max_events", "shards", mode="wrap")
    @classmethod
    def _in_range(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: Any) -> int:
        """Say what a refused number means and its range, not only which limit it crossed."""
        try:
            return handler(value)
        except ValidationError:
            low, high = limits(info.field_name)
            meaning = cls.model_fields[info.field_name].description
            why = f"{meaning} must be a whole number from {low} to {high}, not {value}"
            raise ValueError(why) from None

    def bounds(self) -> Bounds:
        return Bounds(max_faults=self.max_faults, max_events=self.max_events, crashes=self.crashes)


def limits(name: str) -> tuple[int, int]:
    """The smallest and the largest number :class:`CampaignIn` takes for ``name``."""
    metadata = CampaignIn.model_fields[name].metadata
    low = next(m.ge for m in metadata if isinstance(m, Ge))
    high = next(m.le for m in metadata if isinstance(m, Le))
    if not isinstance(low, int) or not isinstance(high, int):
        raise TypeError(f"{name} is not bounded by whole numbers")
    return low, high


class BadCampaign(ChainError):
    """A launch that cannot run; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


def launch_campaign(chain: Chain, campaign: CampaignIn, *, by: Any) -> Exploration:
    """Queue an exploration of ``chain`` as ``campaign`` asks, launched ``by`` a person.

    The campaign records ``by`` as its author (the page and the API show it).

    Raises :class:`BadCampaign` for a revision the chain does not have or one
    that no longer validates (a worker would fail on it), and ``QueueDown``
    when the broker refuses the shards (the exploration is then failed).
    """
    revision = _revision(chain, campaign.revision)
    try:
        spec_of(revision)
    except DocumentError as exc:
        message = f"revision {revision.number} no longer validates: {exc}"
        raise BadCampaign("revision", message) from None
    bounds = replace(
        campaign.bounds(),
        max_states=math.ceil(settings.CAMPAIGN_MAX_STATES / campaign.shards),
        max_seconds=settings.CAMPAIGN_TIME_LIMIT,
        max_memory_mb=settings.CAMPAIGN_MAX_MEMORY_MB,
    )
    return Exploration.objects.launch(revision, bounds, shards=campaign.shards, by=by)


def caps() -> dict[str, int]:
    """What every campaign is held to (settings), for the launch form and the docs.

    The states are the whole campaign's, shared out equally among its shards;
    the time is each shard's; the memory is a worker process's.
    """
    return {
        "states": settings.CAMPAIGN_MAX_STATES,
        "seconds": settings.CAMPAIGN_TIME_LIMIT,
        "memory_mb": settings.CAMPAIGN_MAX_MEMORY_MB,
        "team_campaigns": settings.CAMPAIGN_TEAM_CAMPAIGNS,
        "team_shards": settings.CAMPAIGN_TEAM_SHARDS,
    }


def watch_campaign(chain: Chain, pk: int) -> Exploration:
    """The campaign ``pk`` of ``chain``, after taking back what dead workers or lost messages left.

    Every look recovers, so a campaign is never left running only because
    nobody looked. 404 for a campaign of another chain.
    """
    exploration = _campaign(chain, pk)
    exploration.recover()
    return exploration


def cancel_campaign(chain: Chain, pk: int) -> Exploration:
    """Stop the campaign ``pk`` of ``chain``; its shards stop at their next beat."""
    exploration = _campaign(chain, pk)
    exploration.cancel()
    return exploration


def _campaign(chain: Chain, pk: int) -> Exploration:
    campaigns = Exploration.objects.select_related("revision", "author")
    return get_object_or_404(campaigns, pk=pk, revision__chain=chain)


def _revision(chain: Chain, number: int | None) -> Revision:
    revision = find_revision(chain, number)
    if revision is None:
        head = get_head(chain)
        raise BadCampaign(
            "revision", f"{chain.key} has no revision {number} (its head is {head.number})"
        )
    return revision
