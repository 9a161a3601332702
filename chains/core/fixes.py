"""Quick fixes: mechanical edits that make one lint finding go away.

A :class:`Fix` is a titled call of :func:`chains.core.edit.apply` (an op
and JSON-ready args), so the designer can show it as a button, post it back
and apply it like any other edit. :func:`fixes_for` offers fixes only where
the right change follows from the chain itself (a missing ``derived_from``
edge, one attempt for an unkeyed commit); where a human must choose (which
budget, which signal) it offers none, or a stub the user is told to fill in.
Fixes are computed from the chain, not from the finding's wording, except
to tell apart several findings on the same element; each offered fix has
been checked to apply. It sits above both the linter and the edits it
calls, which is why it is not part of :mod:`chains.core.lint`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import edit
from .formats import to_document
from .graph import minters, missing_edges, selection_coupling_gaps, selection_handles
from .keys import arrow
from .lint.registry import Finding
from .model import COMMIT_CLASS_EFFECTS, ChainSpec, VerdictRow, rows_by_ref
from .paths import ElementPath, PathError
from .probes import confirmed_by, may_be_probe_only
from .signals import conjuncts

__all__ = ["Fix", "apply_fix", "fixes_for", "may_fix"]

GATE_TIMEOUT = {"after": "15m", "verdict": "dead_end"}
REMATCH_NOTE = (
    "rematch.key was added by a quick fix as a placeholder: list the intent-level fields "
    "that identify the pick (carrier, flight numbers, times, fare brand), never the "
    "provider's option id."
)


@dataclass(frozen=True)
class Fix:
    """One mechanical fix of a finding: ``edit.apply(spec, op, args)``, titled for a button."""

    rule: str
    element: str
    title: str
    op: str
    args: dict[str, Any]


Fixer = Callable[[ChainSpec, Finding], Iterator[Fix]]
_FIXERS: dict[str, Fixer] = {}


def _fixes(*rule_ids: str) -> Callable[[Fixer], Fixer]:
    def register(fixer: Fixer) -> Fixer:
        for rule_id in rule_ids:
            _FIXERS[rule_id] = fixer
        return fixer

    return register


def may_fix(finding: Finding) -> bool:
    """Whether ``finding``'s rule has quick fixes at all: cheap, with no chain at hand.

    :func:`fixes_for` tries each fix on the whole chain, so its cost grows
    with the chain; a page listing many findings asks this first and
    fetches the fixes of one finding when the user opens it.
    """
    return finding.rule in _FIXERS


def fixes_for(spec: ChainSpec, finding: Finding) -> list[Fix]:
    """The fixes for ``finding`` on ``doc``; empty when no mechanical fix exists.

    >>> from chains.core.lint import lint
    >>> doc = ChainSpec.model_validate({"id": "c", "gates": [
    ...     {"id": "consent", "audience": "user", "outcomes": {"yes": "ok"}}]})
    >>> finding, = [f for f in lint(doc).findings if f.rule == "gates.no-timeout"]
    >>> [fix.title for fix in fixes_for(doc, finding)]
    ['Add a 15m timeout to gate consent that dead-ends the run']
    """
    fixer = _FIXERS.get(finding.rule)
    if fixer is None:
        return []
    return [fix for fix in fixer(spec, finding) if _applies(spec, fix)]


def apply_fix(spec: ChainSpec, fix: Fix) -> ChainSpec:
    """``doc`` with ``fix`` applied; :class:`~chains.core.edit.EditError` if it no longer fits."""
    return edit.apply(spec, fix.op, fix.args)


def _applies(spec: ChainSpec, fix: Fix) -> bool:
    # A fix that the edit would refuse (say, an edge closing a cycle) is no fix.
    try:
        apply_fix(spec, fix)
    except edit.EditError:
        return False
    return True


def _named(element: str, kind: str) -> str | None:
    """The id of the ``kind`` element a path lies in: ``X`` of ``handles[X].derived_from``."""
    try:
        path = ElementPath.parse(element)
    except PathError:
        return None
    return path.ref if path.kind == kind else None


# --- edges -------------------------------------------------------------------


def _edge_fixes(
    finding: Finding, gaps: list[tuple[str, str]], mention: Callable[[str], str]
) -> Iterator[Fix]:
    """One fix per ``(minted, consumed)`` gap of the finding's handle.

    A handle minted from two inputs gets two findings on the same element;
    the message names the input, so keep the gaps it mentions.
    """
    minted = _named(finding.element, "handle")
    mine = [(m, c) for m, c in gaps if m == minted]
    named = [(m, c) for m, c in mine if mention(c) in finding.message]
    for child, parent in dict.fromkeys(named or mine):
        tail, head = arrow("derived_from", child, parent)  # named as the edge is drawn
        yield Fix(
            finding.rule,
            finding.element,
            f"Add edge {tail} → {head}",
            "add_edge",
            {"kind": "derived_from", "source": child, "target": parent},
        )


@_fixes("edges.missing-derivation")
def _missing_derivation(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    picks = selection_handles(spec)
    gaps = [(g.minted, g.consumed) for g in missing_edges(spec) if g.consumed not in picks]
    return _edge_fixes(finding, gaps, lambda c: f"from {ElementPath.handle(c)} ")


@_fixes("edges.selection-coupling")
def _selection_coupling(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    gaps = [(g.minted, g.selection) for g in selection_coupling_gaps(spec)]
    return _edge_fixes(finding, gaps, lambda c: f"the selection {ElementPath.handle(c)} ")


# --- unkeyed commits (SPEC §2.4) ---------------------------------------------


def _one_attempt(finding: Finding, path: list[str], title: str) -> Fix:
    patch: dict[str, Any] = {"attempts": 1}
    for key in reversed(path):
        patch = {key: patch}
    return Fix(
        finding.rule, finding.element, title, "update_policy", {"fields": {"per_step": patch}}
    )


@_fixes("commit.unkeyed-retried")
def _unkeyed_retried(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    action = spec.action(_named(finding.element, "action") or "")
    if action is None:
        return
    override = spec.policy.per_step.get(action.id)
    if override is not None and override.attempts is not None:
        yield _one_attempt(finding, [action.id], f"Set policy.per_step.{action.id}.attempts to 1")
    else:
        # The bucket speaks for every unkeyed commit of the class, all of which need 1.
        where = f"policy.per_step.{action.effect}.unkeyed"
        yield _one_attempt(finding, [action.effect, "unkeyed"], f"Set {where}.attempts to 1")


@_fixes("policy.unkeyed-commit-retried")
def _policy_unkeyed_retried(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    key = finding.element.removeprefix("policy.per_step.")
    bucket = key.removesuffix(".unkeyed")
    if bucket in COMMIT_CLASS_EFFECTS:
        # The bucket speaks for every unkeyed commit of the class, all of which need 1.
        where = f"policy.per_step.{bucket}.unkeyed"
        yield _one_attempt(finding, [bucket, "unkeyed"], f"Set {where}.attempts to 1")
    elif key in spec.policy.per_step:
        yield _one_attempt(finding, [key], f"Set policy.per_step.{key}.attempts to 1")


# --- the verdict table ---------------------------------------------------------


def _row(spec: ChainSpec, element: str) -> tuple[str, VerdictRow] | None:
    """The row an element path names, by id or as ``#n``, with the id the edits take."""
    name = _named(element, "row")
    if name is None:
        return None
    row = rows_by_ref(spec.verdict_table).get(name)
    return (name, row) if row is not None else None


@_fixes("table.fragile-without-fallback")
def _fragile_without_fallback(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    found = _row(spec, finding.element)
    if found is None:
        return
    name, row = found
    keyed = [p for a in row.signal for p in conjuncts(a) if p.startswith(("code:", "http:"))]
    signal = next(iter([*keyed, *row.signal]), None) or row.description or name
    entry = {
        "signal": signal,
        "note": f"fallback for the fragile row {name}: other messages fall to the default rows",
    }
    known = to_document(spec).get("known_unmatched", [])
    yield Fix(
        finding.rule,
        finding.element,
        f"List {signal} in known_unmatched as the fallback for row {name}",
        "update_chain",
        {"fields": {"known_unmatched": [*known, entry]}},
    )


@_fixes("table.prose-match-not-fragile")
def _prose_match_not_fragile(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    found = _row(spec, finding.element)
    if found is not None:
        name = found[0]
        yield Fix(
            finding.rule,
            finding.element,
            f"Mark row {name} fragile (prose-match)",
            "update_row",
            {"id": name, "fields": {"fragile": "prose-match"}},
        )


# --- handles, gates, budgets -------------------------------------------------


@_fixes("handles.selection-without-rematch")
def _selection_without_rematch(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    handle = spec.handle(_named(finding.element, "handle") or "")
    if handle is None:
        return
    picker = spec.action(minters(spec).get(handle.id, ""))
    key = list(picker.input.intent) if picker is not None else []
    yield Fix(
        finding.rule,
        finding.element,
        f"Add a rematch stub to {handle.id}",
        "update_handle",
        {
            "id": handle.id,
            "fields": {
                "rematch": {"key": key or ["TODO"], "on_ambiguous": "gate"},
                "notes": [*handle.notes, REMATCH_NOTE],
            },
        },
    )


@_fixes("commit.probe-before-commit")
def _probe_before_commit(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    # Offered only where nothing in the chain needs the read as a step (SPEC §2.1: a
    # probe_only read takes no preconditions and feeds no step); else the user moves it.
    read = spec.action(_named(finding.element, "action") or "")
    if read is not None and may_be_probe_only(spec, read):
        commits = ", ".join(confirmed_by(spec, read.id))
        yield Fix(
            finding.rule,
            finding.element,
            f"Mark {read.id} probe_only (it runs only to confirm {commits})",
            "update_action",
            {"id": read.id, "fields": {"probe_only": True}},
        )


@_fixes("gates.no-timeout")
def _gate_no_timeout(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    gate = spec.gate(_named(finding.element, "gate") or "")
    if gate is not None:
        yield Fix(
            finding.rule,
            finding.element,
            f"Add a {GATE_TIMEOUT['after']} timeout to gate {gate.id} that dead-ends the run",
            "update_gate",
            {"id": gate.id, "fields": {"timeout": dict(GATE_TIMEOUT)}},
        )


@_fixes("policy.repairs-exceed-rewinds")
def _repairs_exceed_rewinds(spec: ChainSpec, finding: Finding) -> Iterator[Fix]:
    rewinds = spec.policy.per_chain.max_rewinds
    if rewinds is not None:
        yield Fix(
            finding.rule,
            finding.element,
            f"Lower policy.per_chain.max_repairs to {rewinds}, the max_rewinds",
            "update_policy",
            {"fields": {"per_chain": {"max_repairs": rewinds}}},
        )
