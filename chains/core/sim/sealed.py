"""The sealed store: outside values the trace refers to but never holds (SPEC §2.5, C7.3).

SPEC §2.5: "raw handle values and payment data live in a sealed store keyed
by alias; the trace itself is safe to feed to evals and to the model". An
intent value that enters a run from outside — the start intent, the fields
of a repair proposal, a continuation's carried intent — is written to the
trace as a reference ``sealed:<field>:<digest>``, and the value is kept under
that reference in the snapshot's ``sealed`` part. The digest is keyed by the
run, so equal values in one run share a reference (a replay re-derives the
same one) and a bare hash of a common value cannot be looked up elsewhere.

Handle-shaped values (``name#3``) are aliases, not data: they stay as they
are, so a proposal that smuggles a handle is still seen and refused (C4.2).
A value that is already a reference stays as it is, which lets a trace be
replayed without the store.

A provider's response is sealed the same way (:func:`seal_observation`): the
value of every payload field, and of every key field of the options it
returned, becomes a reference named by its field, except the fields it is
told to show (a dotted name shows one field inside another); transport,
code, predicates, events and option ids are signals and stay readable.
:func:`unseal_observation` restores a response from the store for a replay.
A continuation's start event carries the ended run's snapshot: the responses
kept in it are sealed whole by :func:`seal_carried`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Collection
from typing import Any

__all__ = [
    "is_ref",
    "seal",
    "seal_carried",
    "seal_observation",
    "unseal",
    "unseal_carried",
    "unseal_observation",
]

_PREFIX = "sealed:"
_ALIAS = re.compile(r"^([A-Za-z_][\w.\-]*)#\d+$")


def is_ref(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_PREFIX)


def seal(store: dict[str, Any], key: str, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every value replaced by its reference; the values go to ``store``.

    >>> store = {}
    >>> refs = seal(store, "run-1", {"email": "ada@example.org", "offer": "offer#2"})
    >>> refs["email"].startswith("sealed:email:"), refs["offer"]
    (True, 'offer#2')
    >>> unseal(store, refs) == {"email": "ada@example.org", "offer": "offer#2"}
    True
    """
    out: dict[str, Any] = {}
    for name, value in values.items():
        if is_ref(value) or (isinstance(value, str) and _ALIAS.match(value)):
            out[name] = value
            continue
        out[name] = _sealed(store, key, name, value)
    return out


def seal_observation(
    store: dict[str, Any], key: str, observed: dict[str, Any], shown: Collection[str] = ()
) -> dict[str, Any]:
    """A dumped observation with its payload and option key values sealed, but ``shown``.

    ``observed`` is ``Observation.model_dump(exclude_defaults=True)``; one with
    nothing to seal is returned as it is. Unlike :func:`seal`, a handle-shaped
    value is sealed too: a provider's response holds data, never our aliases.

    >>> store = {}
    >>> sealed = seal_observation(
    ...     store, "run-1",
    ...     {"payload": {"holder": "Ada Lovelace", "status": "paid"},
    ...      "options": [{"id": "pm_1", "key": {"last4": "4242"}}]},
    ...     shown=["status"],
    ... )
    >>> sealed["payload"]["holder"].startswith("sealed:holder:"), sealed["payload"]["status"]
    (True, 'paid')
    >>> sealed["options"][0]["id"], sealed["options"][0]["key"]["last4"].startswith("sealed:")
    ('pm_1', True)
    >>> unseal_observation(store, sealed)["payload"]["holder"]
    'Ada Lovelace'
    """
    payload = observed.get("payload")
    options = observed.get("options")
    if not payload and not (options and any(o.get("key") for o in options)):
        return observed
    out = dict(observed)
    if payload:
        out["payload"] = _sealed_fields(store, key, payload, shown)
    if options:
        out["options"] = [
            {**o, "key": _sealed_fields(store, key, o["key"], shown)} if o.get("key") else o
            for o in options
        ]
    return out


def _sealed_fields(
    store: dict[str, Any], key: str, values: dict[str, Any], shown: Collection[str], at: str = ""
) -> dict[str, Any]:
    """``values`` sealed field by field; a dotted name in ``shown`` opens its parent.

    ``at`` is the path of ``values`` in the response: a nested value's
    reference is named by its whole path (``sealed:order.holder:…``).
    """
    out: dict[str, Any] = {}
    for name, value in values.items():
        path = f"{at}{name}"
        if path in shown or is_ref(value):
            out[name] = value
        elif type(value) is dict and any(p.startswith(f"{path}.") for p in shown):
            out[name] = _sealed_fields(store, key, value, shown, f"{path}.")
        else:
            out[name] = _sealed(store, key, path, value)
    return out


def _sealed(store: dict[str, Any], key: str, name: str, value: Any) -> str:
    """The reference of ``value`` under ``name``; the value is kept in ``store``."""
    kept = _cacheable(value)
    ref = _kept(key, name, _frozen(value)) if kept else _reference(key, name, value)
    store[ref] = value
    return ref


def _reference(key: str, name: str, value: Any) -> str:
    text = json.dumps([key, name, value], sort_keys=True, default=str)
    return f"{_PREFIX}{name}:{hashlib.blake2b(text.encode(), digest_size=8).hexdigest()}"


# A run seals its intent at every dispatch of an unkeyed commit, and the explorer makes
# thousands: the reference of a short scalar, or of a short flat dict of them by name,
# is kept.
_SCALARS = (str, int, float, bool, type(None))
_KEPT_CHARS = 500


def _cacheable(value: Any) -> bool:
    # The cache counts entries: only short values keep it small in bytes too.
    if type(value) in _SCALARS:
        return type(value) is not str or len(value) <= _KEPT_CHARS
    if type(value) is not dict:
        return False
    chars = 0
    for k, v in value.items():
        if type(k) is not str or type(v) not in _SCALARS:
            return False
        chars += len(k) + (len(v) if type(v) is str else 0)
    return chars <= _KEPT_CHARS


def _frozen(value: Any) -> tuple:
    """A hashable stand-in for a cacheable value; types kept, so ``1`` is not ``True``."""
    if type(value) is dict:
        return ("dict", tuple(sorted((k, type(v), v) for k, v in value.items())))
    return ("scalar", type(value), value)


@functools.lru_cache(maxsize=4096)
def _kept(key: str, name: str, frozen: tuple) -> str:
    """:func:`_reference` of the value ``frozen`` stands for."""
    if frozen[0] == "dict":
        return _reference(key, name, {k: v for k, _, v in frozen[1]})
    return _reference(key, name, frozen[2])


def unseal(store: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every reference found in ``store`` replaced by its value."""
    return {k: store.get(v, v) if is_ref(v) else v for k, v in values.items()}


def _unsealed_fields(store: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """:func:`unseal`, into the dicts :func:`_sealed_fields` opened as well."""
    return {
        k: _unsealed_fields(store, v) if type(v) is dict else store.get(v, v) if is_ref(v) else v
        for k, v in values.items()
    }


def unseal_observation(store: dict[str, Any], observed: dict[str, Any]) -> dict[str, Any]:
    """:func:`seal_observation` undone: every reference found in ``store`` is its value again.

    A reference the store lacks (a trace replayed without it) stays as it is.
    """
    payload = observed.get("payload")
    options = observed.get("options")
    if not payload and not options:
        return observed
    out = dict(observed)
    if payload:
        out["payload"] = _unsealed_fields(store, payload)
    if options:
        out["options"] = [
            {**o, "key": _unsealed_fields(store, o["key"])} if o.get("key") else o for o in options
        ]
    return out


def seal_carried(store: dict[str, Any], key: str, carried: dict[str, Any]) -> dict[str, Any]:
    """A dumped snapshot as a continuation's start event carries it: its responses sealed.

    The ended run's last observation, its options (results, picks, the
    options of a gate or a wait) and a gate's or a wait's payload hold what
    providers returned; every value in them becomes a reference, none shown
    (the continuation decides nothing from them that a replay without the
    store would miss: equal values have equal references).
    """
    return _responses(carried, lambda values: _sealed_fields(store, key, values, ()))


def unseal_carried(store: dict[str, Any], carried: dict[str, Any]) -> dict[str, Any]:
    """:func:`seal_carried` undone, as far as ``store`` holds the values."""
    return _responses(carried, lambda values: _unsealed_fields(store, values))


def _responses(
    snapshot: dict[str, Any], fields: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """``snapshot`` (dumped) with ``fields`` applied to every response mapping it holds."""

    def option(o: dict[str, Any] | None) -> dict[str, Any] | None:
        return {**o, "key": fields(o["key"])} if o and o.get("key") else o

    def shown(part: dict[str, Any] | None) -> dict[str, Any] | None:
        if not part:
            return part
        out = dict(part)
        if part.get("options"):
            out["options"] = [option(o) for o in part["options"]]
        if part.get("payload"):
            out["payload"] = fields(part["payload"])
        return out

    def kept(part: dict[str, Any]) -> dict[str, Any]:
        out = dict(part)
        if part.get("results"):
            out["results"] = {a: [option(o) for o in opts] for a, opts in part["results"].items()}
        if part.get("handles"):
            out["handles"] = {
                h: {**v, "option": option(v["option"])} if v.get("option") else v
                for h, v in part["handles"].items()
            }
        return out

    out = kept(snapshot)
    if snapshot.get("selections"):
        out["selections"] = {k: option(o) for k, o in snapshot["selections"].items()}
    for name in ("last_observation", "gate_context", "waiting"):
        if name in snapshot:
            out[name] = shown(snapshot[name])
    if snapshot.get("fanout"):
        out["fanout"] = kept(snapshot["fanout"])
    return out
