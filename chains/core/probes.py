"""Reads that confirm commits: which commits a read confirms, and whether it is only a probe.

SPEC §2.1: ``probe_only`` marks a read that "exists only as a confirmation
probe"; it is no step of the run, and takes no ``empty`` block and no
preconditions. A read a commit names as its probe may still be a step: a
reservation read that checks a payment deadline before ticketing acts on
its answer, and a read whose handle a later step consumes feeds the run.
:func:`may_be_probe_only` tells the two apart from the chain's own data;
the importer (which also asks whether the source calls the read a probe),
the lint and its quick fix all ask it.
"""

from __future__ import annotations

from .graph import minters
from .model import Action, ChainSpec, is_commit_class

__all__ = ["acts_on_its_answer", "confirmed_by", "fed_steps", "may_be_probe_only"]


def confirmed_by(spec: ChainSpec, read_id: str) -> list[str]:
    """The commit-class steps whose ``confirmation.probe`` is ``read_id``, in chain order.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "book", "effect": "commit", "confirmation": {"probe": "find"}},
    ...     {"id": "find", "effect": "read"}]})
    >>> confirmed_by(doc, "find"), confirmed_by(doc, "book")
    (['book'], [])
    """
    return [
        a.id
        for a in spec.actions
        if is_commit_class(a) and a.confirmation is not None and a.confirmation.probe == read_id
    ]


def fed_steps(spec: ChainSpec, action: Action) -> list[str]:
    """The other steps that consume (or mutate) a handle ``action`` mints, in chain order."""
    made = {h for h, minter in minters(spec).items() if minter == action.id}
    made |= set(action.output.handles)
    return [
        a.id
        for a in spec.actions
        if a.id != action.id and (made & set(a.input.handles) or a.mutates in made)
    ]


def acts_on_its_answer(action: Action) -> bool:
    """Whether ``action`` decides something from its own response.

    Preconditions and auto-repairs do, and so does an empty result routed
    anywhere but ``ok``; a probe's answer belongs to the reconcile
    procedure, where "nothing found" means not landed.
    """
    empty = action.output.empty
    routed = empty is not None and empty.route is not None and empty.route.type != "ok"
    return bool(action.preconditions or action.auto_repairs or routed)


def may_be_probe_only(spec: ChainSpec, action: Action) -> bool:
    """Whether ``action`` could be ``probe_only`` by the chain's own data.

    It must be a read some commit names as its probe, feed no other step
    and not act on its answer (SPEC §2.1). Whether it exists *only* as a
    probe is the author's word; this says only that nothing in the chain
    contradicts it.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "book", "effect": "commit", "confirmation": {"probe": "find"}},
    ...     {"id": "find", "effect": "read"},
    ...     {"id": "check", "effect": "read", "preconditions": [
    ...         {"when": "deadline passed", "verdict": "dead_end"}]},
    ...     {"id": "pay", "effect": "commit", "confirmation": {"probe": "check"}}]})
    >>> may_be_probe_only(doc, doc.action("find")), may_be_probe_only(doc, doc.action("check"))
    (True, False)
    """
    return (
        action.effect == "read"
        and bool(confirmed_by(spec, action.id))
        and not fed_steps(spec, action)
        and not acts_on_its_answer(action)
    )
