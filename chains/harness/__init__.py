"""The chain-aware fault harness: a real client put through a chain's failures, on the wire.

The schedules (which fault at which call of which step) come from
:mod:`chains.core.sim.schedules`; this package does the I/O the core must
not: :class:`~.proxy.FaultProxy` sits between the client under test and its
provider, maps each request to a step through the chain's HTTP bindings,
injects the planned faults and logs every exchange as a HAR archive the
trace audit reads. Nothing here imports Django.
"""

from __future__ import annotations

from .exchanges import BODY_CAP, Exchange, ExchangeLog
from .faults import DEFAULT_ERROR_BODY, FAULT_KINDS, Fault, Plan, error_body
from .proxy import FaultProxy

__all__ = [
    "BODY_CAP",
    "DEFAULT_ERROR_BODY",
    "FAULT_KINDS",
    "Exchange",
    "ExchangeLog",
    "Fault",
    "FaultProxy",
    "Plan",
    "error_body",
]
