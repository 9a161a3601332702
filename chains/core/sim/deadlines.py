"""Virtual time: a payload's deadline read on the run's clock (SPEC §2.1, C4).

The wall clock and business expiry that end or route a run on it are
:class:`~.outcomes.Outcomes`' (``wall_exhausted``, ``business_expiry``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["EPOCH", "virtual_time"]

# Virtual time 0: a deadline a provider returns as a datetime is placed on the
# run's clock as seconds after this instant.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def virtual_time(value: Any) -> float | None:
    """A payload deadline on the run's clock: seconds as given, an ISO datetime from EPOCH.

    A datetime without a zone is read as UTC; a date alone is its midnight.
    Anything else (a boolean, unparseable text) is no deadline: None.

    >>> virtual_time(90), virtual_time("2026-01-02T00:00:00Z"), virtual_time("2026-01-01")
    (90.0, 86400.0, 0.0)
    >>> virtual_time("soon") is None
    True
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - EPOCH).total_seconds()
