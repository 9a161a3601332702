"""Probe reads a compile document names in words: ``probe_only`` inferred at import.

Compiles written before SPEC v0.4 have no ``probe_only``; they say which
reads are probes in a comment (``# probe (read-only)``) or a description
("Confirmation probe for create_order"). Read as a step, such a probe runs
after (or before) the commit it confirms and acts on what it finds there.
:func:`mark_probe_reads` sets ``probe_only`` on a read when three things
agree: a commit names it as its ``confirmation.probe``, nothing in the
chain needs it as a step (:func:`~chains.core.probes.may_be_probe_only`:
no later step consumes what it mints, no precondition, auto-repair or
routed empty result), and the source calls it a probe. A read the source
calls "also the probe" is a step as well and stays one. A read that fits
the chain's data but that the source does not call a probe stays a step:
SPEC §2.1 reserves ``probe_only`` for a read that exists *only* as a
probe, which is the author's claim to make; the lint reports the harmful
case (``commit.probe-before-commit``) and offers the mark as a fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..graph import minters
from ..model import Action, ChainSpec, compensators
from ..paths import ElementPath
from ..probes import confirmed_by, may_be_probe_only

__all__ = ["called_a_probe", "mark_probe_reads", "runs_only_after_an_unwind"]

_PROBE = re.compile(r"\bprobes?\b", re.IGNORECASE)
_ALSO_PROBE = re.compile(r"\balso\b[^.;]*\bprobes?\b", re.IGNORECASE)
# A note that starts with a field path ("output.empty.route: ...") is about that field.
_FIELD_NOTE = re.compile(r"^[\w.\[\]]+\s*:")


def called_a_probe(action: Action, section: str = "") -> bool:
    """Whether the author's words call ``action`` a probe, and only a probe.

    ``section`` is the ruled comment heading the part of the block the action
    sits in (``# ──── shared read probes ────``), which speaks of every item
    under it.

    >>> called_a_probe(Action(id="find", effect="read", notes=["probe (read-only)"]))
    True
    >>> called_a_probe(Action(id="get", effect="read", description="Read it (also the probe)"))
    False
    >>> called_a_probe(Action(id="get", effect="read"), section="shared read probes")
    True
    """
    texts = [action.description or "", section]
    texts += [n for n in action.notes if not _FIELD_NOTE.match(n)]
    if any(_ALSO_PROBE.search(t) for t in texts):
        return False
    return any(_PROBE.search(t) for t in texts)


def runs_only_after_an_unwind(spec: ChainSpec, action: Action) -> bool:
    """Whether ``action`` confirms only compensators and needs a handle only they make.

    Such a read cannot be a forward step whatever the words: on the way
    forward nothing has made what it reads (a refund lookup by the refund's
    id, where the refund is the capture's compensation).
    """
    commits = confirmed_by(spec, action.id)
    undo = {name for a in spec.actions for name in compensators(a)}
    made = minters(spec)
    return (
        bool(commits)
        and all(c in undo for c in commits)
        and any(made.get(h) in commits for h in action.input.handles)
    )


def mark_probe_reads(
    spec: ChainSpec,
    lines: Mapping[str, int | None],
    report: Callable[..., None],
    sections: Mapping[str, str] | None = None,
) -> ChainSpec:
    """``chain`` with ``probe_only`` set on each read its source calls a probe.

    Also marked without the words: a read that confirms only compensators
    and needs a handle only they make (:func:`runs_only_after_an_unwind`).
    ``lines`` gives each action's line; ``sections`` the ruled comment each
    action sits under, if any; ``report(message, line, severity, path=...)``
    receives one info per read marked, naming the inference.
    """
    why: dict[str, str] = {}
    headed = sections or {}
    for action in spec.actions:
        if action.probe_only or action.id in why or not may_be_probe_only(spec, action):
            continue
        if called_a_probe(action):
            why[action.id] = "the source calls it a probe"
        elif called_a_probe(action, headed.get(action.id, "")):
            why[action.id] = "its section of the source is headed as probes"
        elif runs_only_after_an_unwind(spec, action):
            needs = ", ".join(action.input.handles)
            why[action.id] = f"it needs {needs}, which only that compensation makes"
    if not why:
        return spec
    actions = [
        a.model_copy(update={"probe_only": True}) if a.id in why else a for a in spec.actions
    ]
    for action in spec.actions:
        if action.id not in why:
            continue
        commits = ", ".join(confirmed_by(spec, action.id))
        report(
            f"chain {spec.id!r}: {action.id} is read as probe_only: {commits} names it as "
            f"its confirmation probe, {why.pop(action.id)}, and no step consumes what it "
            "makes or acts on its answer; it runs only to confirm, never as a step",
            lines.get(action.id),
            "info",
            path=str(ElementPath.action(action.id).field("probe_only")),
        )
    return spec.model_copy(update={"actions": actions})
