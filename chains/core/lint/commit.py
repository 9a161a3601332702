"""Lint rules: commit safety (SPEC §2.1 Rules, P3; SKILL Step 3 and Step 7).

These rules answer one question per commit-class action: if its response is
lost, can code find out whether it landed, without retrying it? A missing
confirmation, a missing probe, or a probe that needs the lost response leaves
that question unanswered, so those rules *block*. The rest check what the
answer relies on: one attempt for unkeyed commits, declared key retention,
content-based signals for in-place mutations, and an explicit compensation
stance.

Assumption: a probe or compensation reference that names no action is the
structure rules' finding; the rules here skip it rather than report it twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from ..graph import action_verdicts
from ..model import (
    Action,
    ChainSpec,
    Compensation,
    Scope,
    VerdictRow,
    compensators,
    is_external,
    main_steps,
)
from ..paths import ElementPath
from ..probes import may_be_probe_only
from ..signals import scope_actions, scope_applies_to
from ..verdicts import Verdict, parse_verdict
from ..words import article
from .context import LintContext, is_commit_class, is_keyed, is_unkeyed_commit
from .registry import Found, rule
from .structure import row_element

__all__: list[str] = []


def _commits(spec: ChainSpec) -> Iterator[Action]:
    return (a for a in spec.actions if is_commit_class(a))


def _kind(action: Action) -> str:
    if action.effect == "compensate":
        return "compensator"
    return "unkeyed commit" if is_unkeyed_commit(action) else "commit"


def _no_stance(comp: Compensation | None) -> bool:
    """True when no compensation (not even an explicit ``none``) is declared."""
    return comp is None or (comp.action is None and not comp.chain and not comp.ladder)


@rule(
    "commit.missing-confirmation",
    "error",
    "SPEC §2.1",
    hint="Add a confirmation block: a probe (a read that shows whether the call landed) "
    "and its signal, or by_key_replay with its justification for a keyed synchronous commit.",
    blocks=True,
)
def missing_confirmation(spec: ChainSpec, ctx: LintContext) -> Found:
    """Every commit and compensator declares how to learn whether it landed."""
    for a in _commits(spec):
        if a.confirmation is None:
            yield (
                ElementPath.action(a.id),
                f"{ElementPath.action(a.id)} is {article(_kind(a))} with no confirmation: a "
                "lost response "
                "leaves no safe way to learn whether it landed.",
            )


@rule(
    "commit.missing-probe",
    "error",
    "SPEC §2.1",
    hint="Name a read action in confirmation.probe that can see whether the call landed; "
    "by_key_replay alone is enough only for keyed synchronous commits.",
    blocks=True,
)
def missing_probe(spec: ChainSpec, ctx: LintContext) -> Found:
    """Unkeyed and async-finality commits declare a probe; key replay suffices only when keyed."""
    for a in _commits(spec):
        conf = a.confirmation
        if conf is None or conf.probe:
            continue
        where = ElementPath.action(a.id).field("confirmation")
        if is_unkeyed_commit(a):
            yield (
                where,
                f"{ElementPath.action(a.id)} is unkeyed and declares no confirmation probe.",
            )
        elif conf.async_ is not None:
            yield (
                where,
                f"{ElementPath.action(a.id)} finalises asynchronously and declares no probe.",
            )
        elif not is_keyed(a):
            yield where, f"{ElementPath.action(a.id)} has no idempotency key, so it needs a probe."
        elif conf.by_key_replay is None:
            yield where, f"{ElementPath.action(a.id)} declares neither a probe nor by_key_replay."


@rule(
    "commit.probe-not-read",
    "error",
    "SPEC §2.1",
    hint="Point confirmation.probe at a read-class action (effect: read); a probe must be "
    "free to repeat.",
)
def probe_not_read(spec: ChainSpec, ctx: LintContext) -> Found:
    """A confirmation probe is a read-class action."""
    for a in _commits(spec):
        probe = ctx.actions.get(a.confirmation.probe or "") if a.confirmation else None
        if probe is not None and probe.effect != "read":
            yield (
                ElementPath.action(a.id).field("confirmation"),
                f"{ElementPath.action(a.id)} is confirmed by {probe.id}, which is "
                f"{article(probe.effect)}, "
                "not a read.",
            )


def _outputs_probe_needs(action: Action, ctx: LintContext) -> tuple[str, list[str]] | None:
    """The probe and the handles it needs from ``action``'s own response, if any."""
    probe = ctx.actions.get(action.confirmation.probe or "") if action.confirmation else None
    if probe is None:
        return None
    minted = action.output.handles
    needed = [
        h
        for h in probe.input.handles
        if h in minted or any(ctx.ancestry.derives_from(h, m) for m in minted)
    ]
    return (probe.id, needed) if needed else None


# A lookup the correlation record makes possible (SPEC §2.1: "list-by-window +
# correlation label"): "list refunds by metadata.run_ref", "matched via our
# reference", "look up by booking_ref", "lookup key: …".
_LOOKUP = re.compile(
    r"\blist[- ]by[- ]window\b"
    r"|\blookup[- ]keys?\b"
    r"|\blook(?:ed|s)?[- ]up\b[^.;\n]{0,60}?\bby\b\s*`?[\w.]+"
    r"|\blist(?:s|ed|ing)?\b[^.;\n]{0,60}?\b(?:by|via|matched (?:by|via|on)|filtered by)\b"
    r"\s*`?[\w.]+",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:no|not|never|without|cannot|can't)\b[^.;\n]*$", re.IGNORECASE)


def documented_lookup(
    action: Action, probe: Action | None = None, rows: Iterable[VerdictRow] = ()
) -> str | None:
    """The correlation lookup the commit's text (its probe's, its rows' notes) describes.

    The grammar has no field for the correlation record, so its lookup keys
    live in descriptions and notes, and in the notes of verdict rows scoped
    to the commit (a reconcile row saying how the probe matches our
    reference); a negated mention ("no documented search by passenger") is
    not a lookup.

    >>> from chains.core.model import Action
    >>> refund = Action(id="refund", effect="commit",
    ...     notes=["probe: list refunds on the payment by metadata.run_ref"])
    >>> documented_lookup(refund)
    'list refunds on the payment by metadata.run_ref'
    >>> documented_lookup(Action(id="book", effect="commit",
    ...     notes=["no documented list of bookings by passenger exists"])) is None
    True
    """
    texts = [row.note or "" for row in rows]
    for element in (action, probe):
        if element is not None:
            texts += [element.description or "", *element.notes]
            if element.confirmation is not None:
                texts += [str(v) for v in element.confirmation.extras.values()]
    for text in texts:
        for match in _LOOKUP.finditer(text):
            if not _NEGATION.search(text[: match.start()]):
                return match.group(0).strip("` ")
    return None


def _lookup(action: Action, probe: str, spec: ChainSpec, ctx: LintContext) -> str | None:
    rows = (row for row in spec.verdict_table if action.id in row.scope.steps)
    return documented_lookup(action, ctx.actions[probe], rows)


@rule(
    "commit.probe-needs-commit-output",
    "error",
    "SPEC §2.1",
    hint="Probe with something known before dispatch (a list-by-window or a lookup by our "
    "own reference kept in the correlation record); if the provider offers no such read, "
    "the chain cannot be made safe.",
    blocks=True,
)
def probe_needs_commit_output(spec: ChainSpec, ctx: LintContext) -> Found:
    """An unkeyed commit's probe needs its lost output, and no lookup is documented.

    SPEC §2.1 blocks only "if neither exists": a keyed commit recovers its
    response by replaying its key, and a documented correlation lookup lets
    a probe find the result; both get ``commit.probe-lookup-undeclared``.
    """
    for a in _commits(spec):
        needs = _outputs_probe_needs(a, ctx)
        if needs is None or is_keyed(a) or _lookup(a, needs[0], spec, ctx):
            continue
        probe, needed = needs
        yield (
            ElementPath.action(a.id).field("confirmation"),
            f"{ElementPath.action(a.id)} is confirmed by {probe}, which needs "
            f"{', '.join(needed)} from "
            "the commit's own response, and neither an idempotency key nor a correlation "
            "lookup is documented: when that response is lost nothing can find the result.",
        )


@rule(
    "commit.probe-lookup-undeclared",
    "warning",
    "SPEC §2.1",
    hint="Declare a read that finds the result by a key known before dispatch (our reference "
    "in the correlation record, or a list over the dispatch window) and name it in "
    "confirmation.probe; an async-finality commit still needs that probe.",
)
def probe_lookup_undeclared(spec: ChainSpec, ctx: LintContext) -> Found:
    """A keyed or lookup-documented commit's probe still needs the commit's output."""
    for a in _commits(spec):
        needs = _outputs_probe_needs(a, ctx)
        if needs is None:
            continue
        probe, needed = needs
        lookup = _lookup(a, probe, spec, ctx)
        if not is_keyed(a) and lookup is None:
            continue  # commit.probe-needs-commit-output blocks it
        why = (
            "its key replay recovers a lost response only within key retention"
            if is_keyed(a)
            else "it is unkeyed"
        )
        then = (
            f"declare the documented lookup ({lookup!r}) as the probe"
            if lookup
            else "declare a lookup by a key known before dispatch as the probe"
        )
        yield (
            ElementPath.action(a.id).field("confirmation"),
            f"{ElementPath.action(a.id)} is confirmed by {probe}, which needs "
            f"{', '.join(needed)} from "
            f"the commit's own response; {why}, so {then}.",
        )


@rule(
    "commit.probe-before-commit",
    "warning",
    "SPEC §2.1",
    hint="Mark the read probe_only if it exists only to confirm the commit (a probe runs "
    "only in the reconcile procedure), or move it after the commit it confirms.",
)
def probe_before_commit(spec: ChainSpec, ctx: LintContext) -> Found:
    """A commit's probe that runs as a step before the commit it confirms.

    A read without ``probe_only`` is a step of the run (SPEC §2.1). Placed
    before the commit it confirms, it looks for a result that cannot exist
    yet, and its answer (an empty list, a stale handle's error) routes the
    run as any step's would; so too a probe of a compensator of that commit
    (it looks for an undo of what does not exist yet). Not reported: a read
    the run needs as a step (it feeds a later step or acts on its answer,
    like a reservation read checking the payment deadline), and a read of
    what the commit or compensator ``mutates`` (it exists before; reading it
    first is the point).
    """
    variants: list[str | None] = [*spec.variants.values] if spec.variants else [None]
    reported: set[tuple[str, str]] = set()
    for variant in variants:
        steps = main_steps(spec, variant)
        at = {step: i for i, step in enumerate(steps)}
        for commit in (ctx.actions[s] for s in steps if ctx.actions[s].effect == "commit"):
            probe = commit.confirmation.probe if commit.confirmation else None
            if probe not in at or at[probe] > at[commit.id] or (probe, commit.id) in reported:
                continue
            if commit.mutates or not may_be_probe_only(spec, ctx.actions[probe]):
                continue
            reported.add((probe, commit.id))
            yield (
                ElementPath.action(probe),
                f"{ElementPath.action(probe)} is the confirmation probe of {commit.id} but "
                "runs as a step "
                f"before it (step {at[probe] + 1}, {commit.id} is step {at[commit.id] + 1}): it "
                f"looks for what {commit.id} has not made yet, and its answer routes the run; "
                f"mark it probe_only, or move it after {commit.id}.",
            )
        yield from _compensator_probes_as_steps(spec, ctx, steps, reported)


def _compensator_probes_as_steps(
    spec: ChainSpec, ctx: LintContext, steps: list[str], reported: set[tuple[str, str]]
) -> Found:
    """Probes of the compensators of each commit, run as steps before that commit."""
    at = {step: i for i, step in enumerate(steps)}
    for commit in (ctx.actions[s] for s in steps if is_commit_class(ctx.actions[s])):
        for undoer in (ctx.actions[u] for u in compensators(commit) if u in ctx.actions):
            probe = undoer.confirmation.probe if undoer.confirmation else None
            if probe not in at or at[probe] > at[commit.id] or (probe, undoer.id) in reported:
                continue
            if undoer.mutates or not may_be_probe_only(spec, ctx.actions[probe]):
                continue
            reported.add((probe, undoer.id))
            yield (
                ElementPath.action(probe),
                f"{ElementPath.action(probe)} is the confirmation probe of {undoer.id}, which "
                "undoes "
                f"{commit.id}, but runs as a step before {commit.id} (step {at[probe] + 1}, "
                f"{commit.id} is step {at[commit.id] + 1}): it looks for an undo of what "
                f"{commit.id} has not made yet, and its answer routes the run; mark it "
                "probe_only.",
            )


@rule(
    "commit.unkeyed-retried",
    "error",
    "SPEC §2.4",
    hint="Give unkeyed commits attempts: 1 (policy.per_step.commit.unkeyed and any per-step "
    "override); only no_side_effect signals may re-dispatch, via safe_reject_redispatch.",
)
def unkeyed_retried(spec: ChainSpec, ctx: LintContext) -> Found:
    """An unkeyed commit gets exactly one attempt."""
    for a in _commits(spec):
        attempts = ctx.attempts(a)
        if is_unkeyed_commit(a) and attempts > 1:
            yield (
                ElementPath.action(a.id),
                f"{ElementPath.action(a.id)} is unkeyed but the policy gives it {attempts} "
                "attempts; "
                "a second uncertain dispatch can land twice.",
            )


@rule(
    "commit.precondition-replays-landed-commit",
    "error",
    "SPEC §2.1",
    hint="Check the condition before the commit dispatches: put the precondition on the read "
    "that returns the data (or an entry gate), since a commit's own preconditions run only "
    "after it landed; or make the precondition end the run (dead_end, a gate) instead.",
)
def precondition_replays_landed_commit(spec: ChainSpec, ctx: LintContext) -> Found:
    """An unkeyed commit's precondition sends the run back to a step at or before it.

    Preconditions are evaluated after ``ok`` (SPEC §2.1), so the commit has
    landed; the replay reaches the commit again and dispatches it a second
    time without a key to deduplicate it (P3, §2.4: one uncertain dispatch).
    """
    for a in _commits(spec):
        if not is_unkeyed_commit(a) or a.id not in ctx.order:
            continue
        for i, pre in enumerate(a.preconditions, 1):
            v = pre.verdict
            if v.type not in ("rewind", "repair", "reselect") or v.to not in ctx.order:
                continue
            if ctx.order[v.to] <= ctx.order[a.id]:
                at = ElementPath.action(a.id).field("preconditions").item(i)
                yield (
                    at.field("verdict"),
                    f"{at} answers {v} after {a.id} landed "
                    f"(preconditions run on its ok response); the replay from {v.to} reaches "
                    f"{a.id} again and dispatches it again with no key: a second booking.",
                )


@rule(
    "commit.compensation-without-target",
    "error",
    "SPEC §2.1",
    hint="Give the compensator the handle the commit it undoes presents or mints (the "
    "booking it cancels), or mint the handle it needs in an earlier step of its "
    "compensation chain.",
)
def compensation_without_target(spec: ChainSpec, ctx: LintContext) -> Found:
    """A compensator needs a handle that neither its commit nor any step before it mints.

    A compensator acts on what the landed commit it undoes presented and
    minted (I5), on handles minted before that commit, and on what earlier
    steps of its own compensation chain mint. A handle from anywhere else
    (another scope's order id, even one declared ``minted_by: external``)
    is not there when the unwind runs: the
    compensator goes out naming nothing to undo, and the run records the
    commit compensated.
    """
    missing: dict[tuple[str, str], list[str]] = {}  # (compensator, handle) -> commits
    for a in _commits(spec):
        if a.effect != "commit" or a.id not in ctx.order:
            continue
        before = {
            h
            for x in spec.actions
            if ctx.order.get(x.id, len(ctx.order)) < ctx.order[a.id] and not x.probe_only
            for h in _mints(x, ctx)
        }
        at_hand = {*before, *a.input.handles, *_mints(a, ctx)}
        for steps in _compensation_paths(a):
            minted = set(at_hand)
            for step in steps:
                c = ctx.actions.get(step)
                if c is None:
                    break  # a dangling reference: the structure rules report it
                for hid in c.input.handles:
                    undone = missing.setdefault((c.id, hid), []) if hid not in minted else None
                    if undone is not None and a.id not in undone:
                        undone.append(a.id)
                minted.update(_mints(c, ctx))
    for (step, hid), undone in missing.items():
        handle = ctx.handles.get(hid)
        outside = (
            f" (this chain takes it from outside ({handle.minted_by}), and no unwind of this "
            "chain has it)"
            if handle is not None and handle.minted_by and is_external(handle)
            else ""
        )
        commits = " or ".join(undone)
        yield (
            ElementPath.action(step).field("input"),
            f"{ElementPath.action(step)} undoes {commits} but needs {hid}, which {commits} neither "
            f"presents nor mints and no step before it mints{outside}: an unwind sends it "
            "naming nothing to undo.",
        )


def _mints(action: Action, ctx: LintContext) -> set[str]:
    """The handles ``action`` mints: its outputs and the handles that name it ``minted_by``."""
    return {
        *action.output.handles,
        *(h for h, x in ctx.handles.items() if x.minted_by == action.id),
    }


def _compensation_paths(action: Action) -> list[list[str]]:
    """Each sequence of steps an unwind of ``action`` may run: its action, chain or a rung."""
    comp = action.compensation
    if comp is None:
        return []
    paths = [[comp.action]] if comp.action and comp.action != "none" else []
    paths += [list(comp.chain)] if comp.chain else []
    for rung in comp.ladder:
        steps = list(rung.chain) or ([rung.action] if rung.action else [])
        paths += [steps] if steps else []
    return paths


@rule(
    "commit.rewind-past-landed-commit",
    "warning",
    "SPEC §2.1",
    hint="Scope the row (or the handle's staleness) to the steps before the commit, mark a read "
    "that exists only to confirm the commit probe_only, or point the verdict at a step after "
    "the commit.",
)
def rewind_past_landed_commit(spec: ChainSpec, ctx: LintContext) -> Found:
    """A verdict that can fire after an unkeyed commit landed sends the run back before it.

    The replay reaches the commit again and dispatches it with no key to
    deduplicate it (P3, §2.4): a second booking. Counted: rows naming the
    later step or a handle it consumes, the staleness of a handle it
    consumes, and its own preconditions and empty route. Not counted: the
    death of what the commit itself made (its outputs and what derives from
    them) — then the first booking is gone and a new one is the point (SPEC
    §7 P4). Rows scoped to any step or by an effect class count at every
    later step they apply to (SPEC §3 "Applies to"); a row in prose scope
    cannot be placed and is left out.
    """
    main = set(main_steps(spec))
    flagged: set[ElementPath] = set()
    rows = _rows_naming(spec)
    # How far back any verdict at each step can send the run, whatever the commit made
    # (made only removes verdicts): a step that cannot reach before a commit is skipped
    # without reading its verdicts again, which kept the rule from costing
    # commits x steps x verdicts.
    reach = [
        min(
            (
                ctx.order[b]
                for _, v in _verdicts_at(spec, ctx, a, set(), rows.get(a.id, []))
                if (b := _back(v)) in ctx.order
            ),
            default=len(spec.actions),
        )
        for a in spec.actions
    ]
    for commit in (a for a in spec.actions if is_unkeyed_commit(a) and a.id in main):
        at = ctx.order[commit.id]
        made = set(commit.output.handles) | ({commit.mutates} if commit.mutates else set())
        later = range(at + 1, len(spec.actions))
        for step in (spec.actions[i] for i in later if reach[i] <= at):
            if step.id not in main:
                continue
            for where, verdict in _verdicts_at(spec, ctx, step, made, rows.get(step.id, [])):
                back = _back(verdict)
                if where in flagged or back not in ctx.order or ctx.order[back] > at:
                    continue
                flagged.add(where)
                yield (
                    where,
                    f"{where} can fire at {step.id}, after {commit.id} landed; {verdict} sends "
                    f"the run back to {back}, and the replay dispatches {commit.id} again with "
                    "no key: a second booking.",
                )


def _back(verdict: Verdict) -> str | None:
    """The step a verdict sends the run back to, if it sends it back."""
    return verdict.to if verdict.type in ("rewind", "repair", "reselect") else None


def _rows_naming(spec: ChainSpec) -> dict[str, list[int]]:
    """Step id → the (1-based) rows whose scope names it or a handle it consumes, in order.

    Read once per lint: scanning the whole table for every (commit, later step)
    pair cost the cube of the chain's size.
    """
    by_handle: dict[str, list[int]] = {}
    by_step: dict[str, list[int]] = {}
    for i, row in enumerate(spec.verdict_table, 1):
        for step_id in row.scope.steps:
            by_step.setdefault(step_id, []).append(i)
        for handle in row.scope.consumers_of:
            by_handle.setdefault(handle, []).append(i)
    broad = [i for i, row in enumerate(spec.verdict_table, 1) if _broad(row.scope)]
    # A superset is harmless (the caller checks each row); duplicate ids share one.
    found: dict[str, set[int]] = {}
    for a in spec.actions:
        mine = found.setdefault(a.id, set(by_step.get(a.id, [])))
        for handle in a.input.handles:
            mine.update(by_handle.get(handle, []))
        mine.update(broad)
    return {step_id: sorted(rows) for step_id, rows in found.items()}


def _broad(scope: Scope) -> bool:
    """A scope of any step (written ``any`` or left empty) or of effect classes."""
    return scope.any or bool(scope.effects) or not (scope.steps or scope.consumers_of or scope.text)


def _broadly_names(scope: Scope, step: Action) -> bool:
    """Does ``scope`` take ``step`` as any step or by its effect class (SPEC §3 "Applies to")?"""
    if not _broad(scope):
        return False
    if scope.any or not scope.effects:
        return True
    return scope_applies_to(Scope(effects=scope.effects), step) is True


_EXPIRY = ElementPath.root("output", "business_expiry")


def _verdicts_at(
    spec: ChainSpec, ctx: LintContext, step: Action, made: set[str], rows: list[int]
) -> Iterator[tuple[ElementPath, Verdict]]:
    """Verdicts that can fire at ``step`` for a reason other than the death of ``made``.

    ``rows`` are the rows that may name ``step`` (:func:`_rows_naming`).
    """

    def of_commit(handle: str) -> bool:
        return handle in made or any(ctx.ancestry.derives_from(handle, m) for m in made)

    for path, verdict in action_verdicts(step):
        if not path.is_within(_EXPIRY):
            yield ElementPath.action(step.id).join(path), verdict
    for i in rows:
        row = spec.verdict_table[i - 1]
        named = (
            step.id in row.scope.steps
            or any(h in step.input.handles and not of_commit(h) for h in row.scope.consumers_of)
            or _broadly_names(row.scope, step)
        )
        same_rail = not row.only or not step.only or set(row.only) & set(step.only)
        if named and same_rail:
            yield row_element(row, i), row.verdict
    for handle in dict.fromkeys(step.input.handles):
        declared = ctx.handles.get(handle)
        stale = declared.staleness if declared is not None else None
        if stale is None or not stale.detect or not stale.refresh or of_commit(handle):
            continue
        verdict = parse_verdict(f"rewind(to: {stale.refresh})")
        yield ElementPath.handle(handle).field("staleness", "refresh"), verdict


_CORRELATION = re.compile(r"correlation[\s_-]+record", re.IGNORECASE)
_SHIELD = re.compile(r"cancell?ation[\s_-]+shield", re.IGNORECASE)


@rule(
    "commit.unkeyed-without-p3-mechanics",
    "warning",
    "SPEC P3",
    hint="Say in the action's description (or confirmation notes) where the correlation "
    "record is persisted before dispatch, so it survives process death, and that the "
    "in-flight attempt runs under a cancellation shield.",
)
def unkeyed_without_p3_mechanics(spec: ChainSpec, ctx: LintContext) -> Found:
    """Unkeyed commits note a correlation record and a cancellation shield."""
    # The grammar has no field for either, so look for them in every text the
    # action carries (description, notes, unknown keys kept in extras).
    for a in _commits(spec):
        if not is_unkeyed_commit(a):
            continue
        text = json.dumps(a.model_dump(mode="json", by_alias=True))
        missing = [
            name
            for name, pattern in (
                ("a correlation record", _CORRELATION),
                ("a cancellation shield", _SHIELD),
            )
            if not pattern.search(text)
        ]
        if missing:
            yield (
                ElementPath.action(a.id),
                f"{ElementPath.action(a.id)} is unkeyed and nowhere mentions "
                f"{' or '.join(missing)}.",
            )


_EXISTENCE = re.compile(
    r"\b(exists?|found|present|returned|is not null|!= ?null|not empty|non-empty)\b",
    re.IGNORECASE,
)
# Naming the object's state or status ("shows cancelled state") observes content too.
_COMPARISON = re.compile(
    r"==|!=|<|>|≤|≥|\bin\b|\bcontains\b|\bmatch(es|ing)?\b|\bstate\b|\bstatus\b",
    re.IGNORECASE,
)


def _existence_only(signal: str) -> bool:
    """True for signals such as ``booking exists`` that say nothing about content.

    >>> _existence_only("the volume exists"), _existence_only("volume.size_gb == 40")
    (True, False)
    >>> _existence_only("booking shows cancelled state / receipt present")
    False
    """
    without_null_checks = re.sub(r"!= ?null|is not null", "", signal, flags=re.IGNORECASE)
    return bool(_EXISTENCE.search(signal)) and not _COMPARISON.search(without_null_checks)


@rule(
    "commit.mutates-existence-signal",
    "warning",
    "SPEC §2.1",
    hint="Make confirmation.signal compare the mutated content (new size, status, amount) "
    "with what was requested; the object existed before the commit.",
)
def mutates_existence_signal(spec: ChainSpec, ctx: LintContext) -> Found:
    """An in-place commit is confirmed by content, not by existence."""
    for a in spec.actions:
        if not a.mutates or not is_commit_class(a):
            continue
        signal = a.confirmation.signal if a.confirmation else None
        where = ElementPath.action(a.id).field("confirmation")
        if not signal:
            yield (
                where,
                f"{ElementPath.action(a.id)} mutates {a.mutates} but has no confirmation signal.",
            )
        elif _existence_only(signal):
            yield (
                where,
                f"{ElementPath.action(a.id)} mutates {a.mutates} but its signal ({signal!r}) "
                "only shows "
                "that the object exists.",
            )


@rule(
    "commit.mutates-without-compensation-stance",
    "error",
    "SPEC §2.1",
    hint="Declare compensation: an action, a chain or a ladder that undoes the change, or "
    "action: none with the pre-commit safety named in ordering_note.",
)
def mutates_without_compensation_stance(spec: ChainSpec, ctx: LintContext) -> Found:
    """An in-place commit states how it is undone, or that it cannot be."""
    for a in spec.actions:
        if a.mutates and is_commit_class(a) and _no_stance(a.compensation):
            yield (
                ElementPath.action(a.id),
                f"{ElementPath.action(a.id)} mutates {a.mutates} in place but declares no "
                "compensation.",
            )


@rule(
    "commit.irreversible-mutation-unprotected",
    "error",
    "SPEC §2.1",
    hint="Put the protection before the commit: an entry_gate (usually consent) and an "
    "ordering_note naming it.",
)
def irreversible_mutation_unprotected(spec: ChainSpec, ctx: LintContext) -> Found:
    """An in-place commit with no undo names its pre-commit safety."""
    for a in spec.actions:
        comp = a.compensation
        if not a.mutates or comp is None or comp.action != "none" or comp.chain or comp.ladder:
            continue
        if not a.entry_gate and not comp.ordering_note:
            yield (
                ElementPath.action(a.id).field("compensation"),
                f"{ElementPath.action(a.id)} mutates {a.mutates} with no undo and names no "
                "pre-commit "
                "safety (no entry_gate, no ordering_note).",
            )


def _keyed_without(spec: ChainSpec, field: str) -> Found:
    """Keyed commits whose idempotency block leaves ``field`` out."""
    for a in _commits(spec):
        if is_keyed(a) and a.idempotency and getattr(a.idempotency, field) is None:
            yield (
                ElementPath.action(a.id).field("idempotency"),
                f"{ElementPath.action(a.id)} is keyed but declares no {field}.",
            )


@rule(
    "commit.keyed-without-retention",
    "warning",
    "SPEC §2.1",
    hint="Declare idempotency.key_retention from the provider's docs (often ~24h); past it "
    "the commit is effectively unkeyed and must be probed, not replayed.",
)
def keyed_without_retention(spec: ChainSpec, ctx: LintContext) -> Found:
    """A keyed commit says how long the provider keeps its key."""
    yield from _keyed_without(spec, "key_retention")


@rule(
    "commit.keyed-without-replay-semantics",
    "warning",
    "SPEC §2.1",
    hint="Declare idempotency.replay_semantics: returns_cached (a replay returns the stored "
    "response, errors included) or reexecutes.",
)
def keyed_without_replay_semantics(spec: ChainSpec, ctx: LintContext) -> Found:
    """A keyed commit says what replaying its key does."""
    yield from _keyed_without(spec, "replay_semantics")


@rule(
    "commit.no-side-effect-outside-unkeyed",
    "warning",
    "SPEC §3",
    hint="Drop no_side_effect, or scope the row to the unkeyed commits it protects; the flag "
    "only ever permits re-dispatching an unkeyed commit.",
)
def no_side_effect_outside_unkeyed(spec: ChainSpec, ctx: LintContext) -> Found:
    """A no_side_effect row applies to at least one unkeyed commit."""
    for n, row in enumerate(spec.verdict_table, 1):
        if not row.no_side_effect:
            continue
        covered = scope_actions(row.scope, spec)
        if covered is None:  # prose scope: cannot tell
            continue
        if not any(is_unkeyed_commit(ctx.actions[a]) for a in covered if a in ctx.actions):
            name = row_element(row, n)
            yield name, f"{name} is flagged no_side_effect but applies to no unkeyed commit."


@rule(
    "commit.replaced-by-not-a-later-commit",
    "error",
    "SPEC §2.1 compensation.ordering_note",
    hint="Name in replaced_by the commit that books the replacement, a step the run reaches "
    "after this one, or remove replaced_by if nothing in this chain replaces this commit.",
)
def replaced_by_not_a_later_commit(spec: ChainSpec, ctx: LintContext) -> Found:
    """``compensation.replaced_by`` names another commit the run reaches after this one.

    A dead end leaves a commit with ``replaced_by`` standing until a later
    landing of its replacement stands (replace before compensate, C8.2).
    A name that is no later commit of the run can never land after it, so
    every dead end would leave this booking standing and never undo it.
    """
    for a in _commits(spec):
        target = a.compensation.replaced_by if a.compensation else None
        if not target:
            continue
        other = ctx.actions.get(target)
        if other is None:
            why = f"names {target}, which is no action of this chain"
        elif other.id == a.id:
            why = f"names {a.id} itself"
        elif other.effect != "commit":
            noun = "compensator" if other.effect == "compensate" else other.effect
            why = f"names {target}, but {target} is {article(noun)}, not a commit"
        elif ctx.order[target] < ctx.order[a.id]:
            why = f"names {target}, but {target} comes before {a.id} in the chain"
        else:
            continue
        at = ElementPath.action(a.id).field("compensation", "replaced_by")
        yield (
            at,
            f"{at} {why}: no replacement can land after {a.id}, so every dead end leaves "
            f"{a.id} standing and never undoes it.",
        )


@rule(
    "commit.compensation-not-declared",
    "warning",
    "SKILL Step 3",
    hint="Declare compensation: the undoing action, chain or ladder, or action: none with "
    "the reason in ordering_note.",
)
def compensation_not_declared(spec: ChainSpec, ctx: LintContext) -> Found:
    """A commit states its compensation stance; `none` must be explicit."""
    # In-place commits get the stronger error from mutates-without-compensation-stance.
    for a in spec.actions:
        if a.effect == "commit" and not a.mutates and _no_stance(a.compensation):
            yield (
                ElementPath.action(a.id),
                f"{ElementPath.action(a.id)} declares no compensation stance, so nobody has said "
                "whether it can be undone.",
            )
