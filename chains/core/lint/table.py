"""Lint rules: the verdict table (SPEC §3) and the verdicts written anywhere.

Rows are compared through :mod:`chains.core.signals`, which judges only what
the text shows: an atom covers another when they are written the same, when
a status class holds a status (``http:5xx`` ⊇ ``http:503``), or when the
other is a conjunction containing it. Rows whose signal is prose only (no
atoms) cannot be compared and are skipped by the ordering rules. Whether a
scope or a verdict target names an existing step, handle or gate is left to
the structure rules, so it is reported once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator

from ..model import Action, ChainSpec, VerdictRow
from ..paths import ElementPath
from ..signals import (
    atom_covers,
    atoms_overlap,
    conjuncts,
    covering_parts,
    is_catch_all,
    is_payload_atom,
    is_prose_match,
    is_transport_success,
    normalize_atom,
    scope_actions,
    scope_applies_to,
    scope_covers,
    scopes_overlap,
    variants_cover,
)
from ..verdicts import Verdict
from .context import LintContext, is_commit_class, is_unkeyed_commit
from .handles import reads_as_signal
from .registry import Found, rule
from .structure import row_element, verdicts

__all__: list[str] = []


def _is(ctx: LintContext, step: str, test: Callable[[Action], bool]) -> bool:
    action = ctx.actions.get(step)
    return action is not None and test(action)


def _rows(spec: ChainSpec) -> Iterator[tuple[ElementPath, VerdictRow]]:
    for i, row in enumerate(spec.verdict_table, 1):
        yield row_element(row, i), row


@rule(
    "table.shadowed-row",
    "warning",
    "SPEC §3",
    hint="Move the narrower row above the one that catches its signal first, or delete it.",
)
def shadowed_row(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row can never match: earlier rows catch all of its signals for its whole scope.

    First match wins, so a later row is dead when every one of its atoms is
    covered by an atom of some earlier row whose scope covers the later
    row's scope and whose variant scoping (``only``) includes the later
    row's. Prose-only rows are neither judged nor used to judge.
    """
    rows = list(_rows(spec))
    # An atom that covers another has each of its parts covered, its first
    # part included: indexing earlier rows by that part avoids comparing all pairs.
    by_first_part: dict[str, list[int]] = defaultdict(list)
    for j, (element, row) in enumerate(rows):
        caught = [_caught_by(rows, by_first_part, atom, row, spec) for atom in row.signal]
        if caught and all(caught):
            names = ", ".join(dict.fromkeys(str(c) for c in caught if c))
            yield element, f"{element} can never match: {names} already catches its signals."
        for atom in row.signal:
            for part in conjuncts(atom)[:1]:
                by_first_part[part].append(j)


def _caught_by(
    rows: list[tuple[ElementPath, VerdictRow]],
    by_first_part: dict[str, list[int]],
    atom: str,
    row: VerdictRow,
    spec: ChainSpec,
) -> ElementPath | None:
    """The first earlier row that catches ``atom`` on all of ``row``'s steps and variants."""
    candidates = {
        i
        for part in conjuncts(atom)
        for key in covering_parts(part)
        for i in by_first_part.get(key, ())
    }
    for i in sorted(candidates):
        element, earlier = rows[i]
        if (
            any(atom_covers(e, atom) for e in earlier.signal)
            and scope_covers(earlier.scope, row.scope, spec)
            and variants_cover(earlier.only, row.only)
        ):
            return element
    return None


@rule(
    "table.row-without-signal",
    "warning",
    "SPEC §3",
    hint="Write the row's signal as matchers code can test (http:409, code:X, timeout, "
    "webhook:x, or a payload predicate such as status == 'requires_action'); keep the prose "
    "as the row's description.",
)
def row_without_signal(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row has no machine-readable signal (at most prose), so it can never match.

    A warning, not an error: what the row meant to catch falls to the fixed
    rows 11-12 (reconcile with a commit in flight, else dead_end), which fail
    closed, so the config stays safe; the recovery the row designs never runs.
    Not reported: a row restating, for a step in its scope, what that step
    already declares with the same verdict (a precondition, its empty route,
    or the staleness rewind of a handle it consumes), since that fires.
    """
    for element, row in _rows(spec):
        if not any(atom.strip() for atom in row.signal) and not _restates(row, spec, ctx):
            said = f" (only the prose {row.description!r})" if row.description else ""
            yield (
                element,
                f"{element} has no signal{said}: the classifier is deterministic code, so "
                "this row never matches and its verdict never fires; what it meant to catch "
                "falls to the unmatched rows 11-12.",
            )


def _same_verdict(a: Verdict, b: Verdict) -> bool:
    return (a.type, a.empty, a.to, a.gate, sorted(a.fields)) == (
        b.type,
        b.empty,
        b.to,
        b.gate,
        sorted(b.fields),
    )


def _restates(row: VerdictRow, spec: ChainSpec, ctx: LintContext) -> bool:
    """Does a step in the row's scope declare the row's verdict itself (precondition,
    empty route, or rewind to the refresh of a consumed handle whose detect has a signal)?"""
    verdict = row.verdict
    for step in sorted(scope_actions(row.scope, spec) or ()):
        action = ctx.actions.get(step)
        if action is None:
            continue
        declared = [p.verdict for p in action.preconditions]
        empty = action.output.empty
        if empty is not None and empty.valid and empty.route is not None:
            declared.append(empty.route)
        if any(_same_verdict(verdict, d) for d in declared):
            return True
        if verdict.type == "rewind":
            for hid in action.input.handles:
                handle = spec.handle(hid)
                staleness = handle.staleness if handle is not None else None
                if (
                    staleness is not None
                    and staleness.refresh == verdict.to
                    and any(reads_as_signal(atom) for atom in staleness.detect)
                ):
                    return True
    return False


@rule(
    "table.repair-without-fields",
    "error",
    "SPEC §2.3",
    hint="Name the intent fields to repair, or use reselect(to: ...) or rewind(to: ...) instead.",
)
def repair_without_fields(spec: ChainSpec, ctx: LintContext) -> Found:
    """A repair verdict names no fields (a repair with nothing to repair)."""
    for element, verdict in verdicts(spec):
        if verdict.type == "repair" and not verdict.fields:
            yield element, f"{element} is a repair(to: {verdict.to}) with no fields."


# Unmatched signals fail closed (rows 11-12). ``escalate`` hands them to an
# operator, which is still closed; anything else guesses what the signal meant.
_CLOSED_FOR_UNMATCHED = ("reconcile", "dead_end", "escalate")
_CATCH_ALL_PROSE = re.compile(
    r"\b(?:unmatched|any other|anything else|everything else|all other|catch[- ]?all|otherwise"
    r"|unknown (?:error|code|signal)s?|unrecogni[sz]ed|unmapped)\b",
    re.I,
)


def _is_catch_all_row(row: VerdictRow) -> bool:
    if row.signal:
        return any(is_catch_all(a) for a in row.signal)
    return bool(row.description and _CATCH_ALL_PROSE.search(row.description))


@rule(
    "table.catch-all-row",
    "error",
    "SPEC §3",
    hint="Delete the row: unmatched signals reconcile when a commit is in flight, else dead_end.",
)
def catch_all_row(spec: ChainSpec, ctx: LintContext) -> Found:
    """A catch-all row routes unmatched signals anywhere but the fixed rows 11-12.

    A row whose signal is a catch-all (``*``, ``unmatched``, ``any other
    error``, ``code:*``, or prose saying so) may only reconcile, dead_end or
    escalate; and it may not dead_end on a commit-class step, where row 11
    reconciles. Any other verdict (retry, repair, rewind, reselect, gate,
    ok) routes a signal nobody classified.
    """
    for element, row in _rows(spec):
        if not _is_catch_all_row(row):
            continue
        kind = row.verdict.type
        if kind not in _CLOSED_FOR_UNMATCHED:
            yield element, f"{element} routes unmatched signals to {row.verdict}."
        elif kind == "dead_end":
            steps = scope_actions(row.scope, spec) or frozenset()
            commits = [s for s in sorted(steps) if _is(ctx, s, is_commit_class)]
            if commits:
                yield (
                    element,
                    f"{element} dead-ends unmatched signals on {', '.join(commits)}, "
                    "where row 11 reconciles.",
                )


_MODEL_DECIDES = re.compile(
    r"\b(?:ask|let|have)\s+the\s+(?:model|llm|agent|assistant)\b"
    r"|\b(?:model|llm|agent|assistant)\b[^.;]{0,40}?\b(?:decides?|classif(?:y|ies)|interprets?"
    r"|judges?|determines?|works out)\b"
    r"|\bmodel[- ](?:classified|decision|judg(?:e)?ment)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:never|not|no|without|don't|do not)\b[^.;]{0,20}$", re.I)


def _says_model_decides(text: str | None) -> bool:
    for m in _MODEL_DECIDES.finditer(text or ""):
        if not _NEGATION.search((text or "")[: m.start()]):
            return True
    return False


@rule(
    "table.model-classifies",
    "error",
    "SPEC §5",
    hint="Classify the signal in code: a gate answered by a user or operator, or a repair.",
)
def model_classifies(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row hands the classification of a signal to the model.

    Signal → verdict is code's job (SPEC §5). A row does hand it over when
    its verdict is a gate answered by the model (the model would pick the
    outcome, hence the verdict), an ``escalate(model)``, or when its
    description says the model decides, classifies or interprets it.
    """
    for element, row in _rows(spec):
        verdict = row.verdict
        gate = ctx.gates.get(verdict.gate or "") if verdict.type == "gate" else None
        if gate is not None and gate.audience == "model":
            yield element, f"{element} raises {gate.id}, which the model answers."
        elif verdict.type == "escalate" and verdict.audience == "model":
            yield element, f"{element} escalates to the model."
        elif _says_model_decides(row.description):
            yield element, f"{element} says the model decides what the signal means."


# What a description says beside the matcher it writes: a code span holds a written
# predicate, whose quoted strings are compared values (`status == "failed"`), and a
# quotation in parentheses cites the provider's wording for the reader.
_CODE_SPAN = re.compile(r"`[^`]*`")
_QUOTED_ASIDE = re.compile(r"\([^()]*[\"“][^()]*\)")


def _prose_matched(row: VerdictRow) -> bool:
    if not any(atom.strip() for atom in row.signal):
        return False  # it matches nothing at all: table.row-without-signal says so
    if any(is_prose_match(atom=a) for a in row.signal):
        return True
    said = _QUOTED_ASIDE.sub(" ", _CODE_SPAN.sub(" ", row.description or ""))
    return is_prose_match(description=said)


@rule(
    "table.prose-match-not-fragile",
    "warning",
    "SPEC §3",
    hint="Mark the row fragile: prose-match and keep a known_unmatched fallback for its code.",
)
def prose_match_not_fragile(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row matches on message text but is not marked ``fragile``.

    Message text compared in an atom (``error.message contains '...'``), a
    bare quoted string, or a description quoting a message in double quotes
    or saying "message contains". Not message text: a value quoted inside a
    predicate written in a code span (``status == "failed"``), a quotation
    in parentheses citing the docs, and anything on a row with no signal
    (it matches nothing; ``table.row-without-signal`` reports it).
    """
    for element, row in _rows(spec):
        if not row.fragile and _prose_matched(row):
            yield element, f"{element} matches on message text but is not marked fragile."


def _has_fallback(row: VerdictRow, spec: ChainSpec) -> bool:
    known = [k.signal for k in spec.known_unmatched]
    keyed = [p for a in row.signal for p in conjuncts(a) if p.startswith(("code:", "http:"))]
    if not keyed:
        return bool(known)
    return any(atoms_overlap(k, p) for k in known for p in keyed)


@rule(
    "table.fragile-without-fallback",
    "warning",
    "SPEC §3",
    hint="List the row's error code in known_unmatched so other messages fall to the defaults.",
)
def fragile_without_fallback(spec: ChainSpec, ctx: LintContext) -> Found:
    """A fragile (prose-match) row has no ``known_unmatched`` fallback for its signal.

    The fallback is a known_unmatched entry overlapping the row's code or
    status (``code:VALIDATION_ERROR`` for a row matching that code plus a
    message); a row without a code or status needs any known_unmatched entry.
    """
    for element, row in _rows(spec):
        if row.fragile and not _has_fallback(row, spec):
            yield element, f"{element} is fragile but known_unmatched keeps no fallback for it."


def _is_success_row(row: VerdictRow) -> bool:
    return (
        bool(row.signal)
        and all(is_transport_success(a) for a in row.signal)
        and row.verdict.type == "ok"
        and not row.verdict.empty
    )


@rule(
    "table.payload-row-after-success",
    "error",
    "SPEC §3",
    hint="Move staleness and payload rows above the transport-success row.",
)
def payload_row_after_success(spec: ChainSpec, ctx: LintContext) -> Found:
    """A staleness or payload row comes after an unconditional transport-success row.

    A 2xx can carry an expiry or error code; once a bare ``http:200`` /
    ``http:2xx`` / ``success`` row routes to ``ok``, a later row over an
    overlapping scope whose atoms can ride a success (a code, a header, a
    payload predicate, a non-status staleness signal) never sees it.
    """
    rows = list(_rows(spec))
    for i, (success_element, success) in enumerate(rows):
        if not _is_success_row(success):
            continue
        for element, row in rows[i + 1 :]:
            if any(is_payload_atom(a) for a in row.signal) and scopes_overlap(
                success.scope, row.scope, spec
            ):
                yield element, f"{element} comes after {success_element}, which routes 2xx to ok."


@rule(
    "table.retry-on-unkeyed-commit",
    "error",
    "SPEC §3",
    hint="Route the signal to reconcile, or mark it no_side_effect: true on provider evidence.",
)
def retry_on_unkeyed_commit(spec: ChainSpec, ctx: LintContext) -> Found:
    """A row retries an unkeyed commit on a signal not declared ``no_side_effect``.

    An unkeyed commit (commit or compensate with idempotency none or
    undeclared) may have landed on any ambiguous failure; only a provider-
    verified ``no_side_effect`` signal permits a fresh dispatch (rows 5, 7).
    """
    for element, row in _rows(spec):
        if row.verdict.type != "retry" or row.no_side_effect:
            continue
        steps = scope_actions(row.scope, spec) or frozenset()
        unkeyed = [s for s in sorted(steps) if _is(ctx, s, is_unkeyed_commit)]
        if unkeyed:
            yield element, f"{element} retries the unkeyed commit {', '.join(unkeyed)}."


@rule(
    "table.no-domain-rows",
    "warning",
    "SKILL Step 4",
    hint="Map the provider's documented error codes to verdicts, or list them in known_unmatched.",
)
def no_domain_rows(spec: ChainSpec, ctx: LintContext) -> Found:
    """A chain with a commit has an empty verdict table.

    Only the generic rows would classify its failures, so every provider
    error on the commit falls to reconcile or dead_end.
    """
    if not spec.verdict_table and any(is_commit_class(a) for a in spec.actions):
        yield "verdict_table", "verdict_table has no domain rows although the chain commits."


# Signals that arrive without a provider response: nothing can vouch for them.
_AMBIGUOUS = re.compile(r"^(timeout|conn_reset|conn_drop|http:5xx|http:50[024])$")


@rule(
    "table.no-side-effect-on-ambiguous-signal",
    "error",
    "SPEC §3",
    hint="Drop no_side_effect: a timeout or dropped connection carries no response, so the "
    "commit may have landed; route it to reconcile and let the probe decide.",
)
def no_side_effect_on_ambiguous_signal(spec: ChainSpec, ctx: LintContext) -> Found:
    """A lost or ambiguous response is never declared free of side effects."""
    for where, row in _rows(spec):
        if not row.no_side_effect:
            continue
        ambiguous = [a for a in row.signal if _AMBIGUOUS.match(normalize_atom(a))]
        if ambiguous:
            yield (
                where,
                f"{where} declares no_side_effect on {', '.join(ambiguous)}, which carries no "
                "response that could vouch for it; an unkeyed commit would be dispatched twice.",
            )


@rule(
    "table.documented-error-uncovered",
    "error",
    "SPEC §3",
    hint="Add a verdict row in the action's scope that names the code (a status class such "
    "as http:4xx covers only a documented status that names none), or list it in "
    "known_unmatched with why no row needs it.",
)
def documented_error_uncovered(spec: ChainSpec, ctx: LintContext) -> Found:
    """A provider-documented error of an action matches no row in its scope and no known_unmatched.

    SPEC §3: every error code the provider documents appears in the verdict
    table or in ``known_unmatched``. An action's ``documented_errors`` (an
    OpenAPI import fills them in) are checked against the rows whose scope
    takes the action (prose scopes count) and the known_unmatched signals: a
    row covers a documented ``http:409 && code:X`` when it matches every such
    response and names the code (``code:X`` or the pair itself do; a status
    class such as ``http:4xx`` covers only a documented status that names no
    code, since a catch-all row is not the decision the SPEC asks for each code).
    """
    known = [k.signal for k in spec.known_unmatched]
    for action in spec.actions:
        if not action.documented_errors:
            continue
        atoms = [
            atom
            for row in spec.verdict_table
            if scope_applies_to(row.scope, action) is not False
            for atom in row.signal
        ]
        for documented in action.documented_errors:
            if not any(_covers_documented(atom, documented) for atom in [*atoms, *known]):
                yield (
                    ElementPath.action(action.id).field("documented_errors"),
                    f"{documented} is documented for {action.id} but no row in its scope and "
                    "no known_unmatched entry covers it",
                )


def _covers_documented(atom: str, documented: str) -> bool:
    """Does ``atom`` cover the documented error, naming its code if it has one?

    >>> _covers_documented("http:4xx", "http:409 && code:X")
    False
    >>> _covers_documented("code:X", "http:409 && code:X")
    True
    """
    if not atom_covers(atom, documented):
        return False
    named = [p for p in conjuncts(documented) if p.startswith(("code:", "type:"))]
    return not named or any(p in conjuncts(atom) for p in named)
