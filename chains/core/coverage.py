"""The coverage matrix: every step against every signal class, as the classifier decides it.

This module owns the table a reviewer reads to see which failures of which
step the chain actually handles: rows are the chain's steps, columns are
signal classes, and each cell is what :func:`chains.core.sim.classifier.classify`
answers for one concrete observation of that class on that step — the
verdict and the row that decided it. Cells decided by SPEC §3 rows 11–12
(the unmatched defaults) are the gaps (:meth:`Matrix.gaps`). Nothing here
matches a signal itself; the module only chooses the observations and the
classification context.

Each column stands for one concrete observation:

* ``success`` — ``http:200`` with no code or predicate.
* ``valid_empty`` — the step's own ``output.empty.detect``, observed as a
  predicate that holds, on the status the predicate names (``http:402`` for
  a decline), else ``http:200``. Only steps whose ``empty.valid`` is true.
* ``stale:<atom>`` — one column per distinct ``staleness.detect`` atom of
  the chain's handles, the atom itself observed (a bare code rides a 2xx
  payload, which SPEC §3 row 1 says staleness outranks). Only steps that
  consume a handle detecting it.
* ``timeout``, ``http_5xx`` (``http:503``), ``http_429`` — the transport alone.
* ``terms_changed`` and ``deterministic_reject`` — SPEC §3 rows 8–10 apply
  "per config" and the classifier has no generic form of them: a bare
  observation cannot tell a price change from any other error. So the cell
  observes the first signal of the first domain row in scope for the step
  whose verdict is a gate (rows 8 and 10 both park at one) or a dead end
  (row 9); with no such row, the class arrives as a code the chain never
  lists, so the cell is the ``unknown_code`` one and says so.
* ``unknown_code`` — ``http:400`` carrying an error code the chain never
  mentions (``UNLISTED_CODE``, suffixed until unique): what rows 11–12 exist for.

The context is the one a run would have at the step's first attempt
(:meth:`chains.core.sim.steps.Steps.context` without a run): every handle live in
mint order, a commit-class step in flight, its idempotency key fresh, no
auto-repair fired yet and no staleness recurrence. Selection pseudo-steps
make no provider call and are never classified, so their cells are all
``None``. With no ``variant``, rows scoped ``only:`` to a variant apply
nowhere, as in a run that has not bound its variant yet; with one, steps
another variant owns are left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .errors import ChainError
from .formats import to_document
from .graph import minters
from .model import Action, ChainSpec, VerdictRow, in_variant, is_commit_class
from .signals import conjuncts, is_catch_all, normalize_atom, scope_applies_to
from .sim.classifier import Classification, ClassifyContext, classify, row_label
from .sim.state import Observation

__all__ = ["Cell", "Column", "CoverageError", "Matrix", "coverage"]

_FAULTS = ("timeout", "conn_reset", "conn_drop")
_DEFAULT_ROWS = ("#11", "#12")


class CoverageError(ChainError):
    """The coverage question cannot be asked of this chain (an unknown variant)."""


@dataclass(frozen=True)
class Column:
    """A signal class; ``signal`` is the observation (or the rule choosing it) used."""

    key: str
    label: str
    signal: str


@dataclass(frozen=True)
class Cell:
    """What the classifier decided: verdict, deciding row, ``table`` or ``default``, why."""

    verdict: str
    row: str
    source: str
    reason: str


@dataclass(frozen=True)
class Matrix:
    """Steps × columns; a cell is ``None`` where the class cannot occur on the step."""

    steps: list[str]
    columns: list[Column]
    cells: dict[tuple[str, str], Cell | None]

    def gaps(self) -> list[tuple[str, str]]:
        """(step, column key) of every cell the unmatched defaults (rows 11–12) decide."""
        return [
            (step, column.key)
            for step in self.steps
            for column in self.columns
            if (cell := self.cells.get((step, column.key))) is not None
            and cell.row in _DEFAULT_ROWS
        ]


def coverage(spec: ChainSpec, variant: str | None = None) -> Matrix:
    """The coverage matrix of ``doc``, optionally in one variant.

    Steps are the chain's actions in order, probe-only reads left out.

    >>> doc = ChainSpec.model_validate({"id": "c", "actions": [
    ...     {"id": "search", "effect": "read"},
    ...     {"id": "book", "effect": "commit", "idempotency": {"mode": "none"}}]})
    >>> m = coverage(doc)
    >>> m.cells[("search", "timeout")].row, m.cells[("book", "timeout")].verdict
    ('#6', 'reconcile')
    >>> m.cells[("book", "unknown_code")].row, m.cells[("book", "unknown_code")].source
    ('#11', 'default')
    """
    _check_variant(spec, variant)
    steps = _steps(spec, variant)
    stale = _stale_atoms(spec)
    unlisted = _unlisted_code(spec)
    columns = _columns(stale, unlisted)
    live = _live(spec)
    detects = _detects(spec)
    scoped = _rows_in_scope(spec, steps, variant)
    cells: dict[tuple[str, str], Cell | None] = {}
    for step in steps:
        ctx = ClassifyContext(variant=variant, commit_in_flight=is_commit_class(step), live=live)
        rows = scoped[step.id]
        consumed = set().union(*(detects.get(h, set()) for h in step.input.handles))
        for column in columns:
            if step.effect == "select" or (
                column.key.startswith("stale:") and column.signal not in consumed
            ):
                # Most stale columns are about handles the step never reads: one per
                # handle, so skipping them without a lookup keeps the matrix linear work.
                cells[(step.id, column.key)] = None
            else:
                cells[(step.id, column.key)] = _cell(spec, ctx, step, column, unlisted, rows)
    return Matrix(steps=[s.id for s in steps], columns=columns, cells=cells)


# --- preconditions and layout ------------------------------------------------


def _check_variant(spec: ChainSpec, variant: str | None) -> None:
    if variant is None:
        return
    if spec.variants is None:
        raise CoverageError(f"chain {spec.id!r} declares no variants; got variant {variant!r}")
    if variant not in spec.variants.values:
        raise CoverageError(
            f"variant must be one of {spec.variants.values} ({spec.variants.axis}); got {variant!r}"
        )


def _steps(spec: ChainSpec, variant: str | None) -> list[Action]:
    seen: set[str] = set()
    steps = []
    for action in spec.actions:
        if action.probe_only or action.id in seen:
            continue
        if variant is not None and action.only and variant not in action.only:
            continue
        seen.add(action.id)
        steps.append(action)
    return steps


def _stale_atoms(spec: ChainSpec) -> list[str]:
    atoms: dict[str, None] = {}
    for handle in spec.handles:
        if handle.staleness is not None:
            atoms.update((normalize_atom(a), None) for a in handle.staleness.detect)
    return list(atoms)


def _unlisted_code(spec: ChainSpec) -> str:
    text = json.dumps(to_document(spec))
    code, n = "UNLISTED_CODE", 1
    while code in text:
        n += 1
        code = f"UNLISTED_CODE_{n}"
    return code


def _columns(stale: list[str], unlisted: str) -> list[Column]:
    unknown = f"http:400 && code:{unlisted}"
    return [
        Column("success", "success", "http:200"),
        Column("valid_empty", "valid empty", "the step's empty.detect"),
        *(Column(f"stale:{atom}", f"stale: {atom}", atom) for atom in stale),
        Column("timeout", "timeout", "timeout"),
        Column("http_5xx", "http 5xx", "http:503"),
        Column("http_429", "http 429", "http:429"),
        Column(
            "terms_changed",
            "terms changed",
            f"first signal of a gate row in scope, else {unknown}",
        ),
        Column(
            "deterministic_reject",
            "deterministic reject",
            f"first signal of a dead_end row in scope, else {unknown}",
        ),
        Column("unknown_code", "unknown code", unknown),
    ]


def _live(spec: ChainSpec) -> dict[str, int]:
    """Every handle live, numbered in mint order (the order the steps mint them)."""
    position = {a.id: i for i, a in reversed(list(enumerate(spec.actions)))}
    minted = minters(spec)
    ranked = sorted(
        enumerate(spec.handles),
        key=lambda ih: (position.get(minted.get(ih[1].id, ""), len(spec.actions)), ih[0]),
    )
    live: dict[str, int] = {}
    for seq, (_, handle) in enumerate(ranked, 1):
        live.setdefault(handle.id, seq)
    return live


# --- cells -------------------------------------------------------------------


def _cell(
    spec: ChainSpec,
    ctx: ClassifyContext,
    step: Action,
    column: Column,
    unlisted: str,
    rows: list[VerdictRow],
) -> Cell | None:
    key = column.key
    if key == "valid_empty":
        return _valid_empty(spec, ctx, step, rows)
    if key.startswith("stale:"):  # only on steps consuming a handle that detects it
        return _classified(spec, ctx, step, rows, _observation(column.signal))
    if key == "terms_changed":
        return _per_config(spec, ctx, step, rows, "gate", unlisted)
    if key == "deterministic_reject":
        return _per_config(spec, ctx, step, rows, "dead_end", unlisted)
    fixed = {
        "success": Observation(),
        "timeout": Observation(transport="timeout"),
        "http_5xx": Observation(transport="http:503"),
        "http_429": Observation(transport="http:429"),
        "unknown_code": _unknown(unlisted),
    }
    return _classified(spec, ctx, step, rows, fixed[key])


def _classified(
    spec: ChainSpec,
    ctx: ClassifyContext,
    step: Action,
    rows: list[VerdictRow],
    obs: Observation,
    note: str = "",
) -> Cell:
    c: Classification = classify(spec, ctx, step, obs, rows)
    return Cell(verdict=str(c.verdict), row=c.row, source=c.source, reason=note + c.reason)


def _valid_empty(
    spec: ChainSpec, ctx: ClassifyContext, step: Action, rows: list[VerdictRow]
) -> Cell | None:
    empty = step.output.empty
    if empty is None or not empty.valid:
        return None
    if not empty.detect:
        note = "no empty.detect declared, so an empty answer looks like any success: "
        return _classified(spec, ctx, step, rows, Observation(), note)
    cell = _classified(spec, ctx, step, rows, _observation(empty.detect, as_predicate=True))
    if cell.row == "#2" and empty.route is not None:
        return Cell(cell.verdict, cell.row, cell.source, f"{cell.reason}; routed to {empty.route}")
    if cell.row == "#2":
        reason = f"{cell.reason}; no empty.route, so the run dead-ends"
        return Cell(cell.verdict, cell.row, cell.source, reason)
    return cell


def _rows_in_scope(
    spec: ChainSpec, steps: list[Action], variant: str | None
) -> dict[str, list[VerdictRow]]:
    """Step id → the domain rows in scope for it (and the variant), in table order.

    Checking every row for every cell cost the table times the matrix; rows
    are indexed by what their scope names, and only a step's candidates
    (rows for any step or by effect class, naming it, or a handle it
    consumes) are checked, once per step.
    """
    broad: list[int] = []
    by_step: dict[str, list[int]] = {}
    by_handle: dict[str, list[int]] = {}
    for i, row in enumerate(spec.verdict_table):
        scope = row.scope
        if scope.any or scope.effects or not (scope.steps or scope.consumers_of):
            broad.append(i)
            continue
        for step_id in scope.steps:
            by_step.setdefault(step_id, []).append(i)
        for handle in scope.consumers_of:
            by_handle.setdefault(handle, []).append(i)
    scoped: dict[str, list[VerdictRow]] = {}
    for step in steps:
        found = {*broad, *by_step.get(step.id, [])}
        for handle in step.input.handles:
            found.update(by_handle.get(handle, []))
        rows = (spec.verdict_table[i] for i in sorted(found))
        scoped[step.id] = [row for row in rows if _row_in_scope(row, step, variant)]
    return scoped


def _detects(spec: ChainSpec) -> dict[str, set[str]]:
    """Handle id → the normalised staleness atoms it detects (the first handle of an id)."""
    detects: dict[str, set[str]] = {}
    for handle in spec.handles:
        atoms = handle.staleness.detect if handle.staleness else []
        detects.setdefault(handle.id, {normalize_atom(a) for a in atoms})
    return detects


def _per_config(
    spec: ChainSpec,
    ctx: ClassifyContext,
    step: Action,
    rows: list[VerdictRow],
    verdict: str,
    unlisted: str,
) -> Cell:
    """SPEC §3 rows 8–10: only a domain row can say what this class looks like."""
    candidates = []
    for row in rows:
        if row.verdict.type == verdict and _row_in_scope(row, step, ctx.variant):
            atom = next((a for a in row.signal if not is_catch_all(a)), None)
            if atom is not None:
                candidates.append((row, atom))
    if not candidates:
        note = f"no {verdict} row in scope; the class arrives as an unlisted code: "
        return _classified(spec, ctx, step, rows, _unknown(unlisted), note)
    row, atom = candidates[0]
    others = sorted({row_label(spec, r) for r, _ in candidates} - {row_label(spec, row)})
    also = f" (also {', '.join(others)})" if others else ""
    note = f"{atom} from row {row_label(spec, row)}{also}: "
    return _classified(spec, ctx, step, rows, _observation(atom), note)


def _row_in_scope(row: VerdictRow, step: Action, variant: str | None) -> bool:
    return in_variant(row.only, variant) and scope_applies_to(row.scope, step) is True


def _unknown(unlisted: str) -> Observation:
    return Observation(transport="http:400", code=unlisted)


def _observation(atom: str, *, as_predicate: bool = False) -> Observation:
    """One observation showing ``atom``: its status or fault, code, events and predicates.

    >>> _observation("status == 402 && error.type == 'card_error'").transport
    'http:402'
    >>> _observation("code:QUOTE_EXPIRED").model_dump(exclude_defaults=True)
    {'code': 'QUOTE_EXPIRED'}
    """
    transport, code, events, payload = "http:200", None, [], as_predicate
    for part in conjuncts(atom):
        status_class = re.fullmatch(r"http:([1-5])xx", part)
        if re.fullmatch(r"http:\d\d\d", part):
            transport = part
        elif status_class:
            transport = f"http:{status_class[1]}00"
        elif part in _FAULTS:
            transport = part
        elif part.startswith("code:"):
            code = part.removeprefix("code:")
        elif part.startswith("webhook:"):
            events.append(part)
        else:
            payload = True
    predicates = [normalize_atom(atom)] if payload else []
    return Observation(transport=transport, code=code, events=events, predicates=predicates)
