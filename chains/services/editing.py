"""Saving an edit, undo and redo: the one path the workspace, the API and ``chain edit`` take.

An edit names a core edit operation (``chains.core.edit``), its arguments and
the revision it started from (:class:`EditIn`, the schema the page and the
API both read). :func:`save_edit` applies it to the head's ChainSpec, lints
the result and stores it as a new revision; :func:`undo` and :func:`redo`
store an earlier document again. Each stores nothing when it refuses: a base
that is no longer the head raises ``StaleEdit`` (a ``StaleRevision`` that also
carries what the edit writes beside the head's values and whether it clashes
with what changed in between, :func:`chains.core.rebase.rebase`), an edit the core refuses
(or one that would change the chain's id, its address) raises ``EditError``
naming the place, and undo with nothing to undo raises ``NothingToUndo``.
Who may edit is the caller's check (``services.access.chain_access``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from chains.core import edit, formats, openapi
from chains.core.drawing import AFRESH_AFTER, Canvas, Drawing, start_drawing
from chains.core.edit import EditError
from chains.core.errors import DocumentError
from chains.core.formats.yamlio import parse_yaml
from chains.core.lint import LintReport, lint
from chains.core.model import ChainSpec
from chains.core.rebase import Rebase, rebase
from chains.models import Chain, Revision, RevisionLayout, StaleRevision
from chains.models.layouts import VIEWS
from chains.services.access import get_head, spec_of

__all__ = [
    "MAX_FIELD",
    "EditIn",
    "Saved",
    "StaleEdit",
    "UndoIn",
    "add_actions",
    "parse_args",
    "parse_value",
    "redo",
    "save_edit",
    "undo",
]

MAX_FIELD = 200_000  # characters in one JSON or YAML value a person types


class UndoIn(BaseModel):
    """An undo or a redo: the revision it started from."""

    model_config = ConfigDict(extra="forbid")

    base: int = Field(ge=1, description="the head revision number the change started from")


class EditIn(UndoIn):
    """One edit: an operation of ``chains.core.edit``, its arguments and its base revision."""

    op: str = Field(
        min_length=1,
        max_length=100,
        description=f"the edit operation, one of: {', '.join(edit.OPS)}",
    )
    args: dict[str, Any] = Field(
        default_factory=dict, description="the operation's arguments, by parameter name"
    )


class StaleEdit(StaleRevision):
    """An edit refused because its base is no longer the head, measured against the head.

    ``rebase`` says, field by field, what the edit writes beside the head's
    values, and what clashes (None when the base revision cannot be read).
    The message adds what clashes, so the API's 409 says it too.
    """

    def __init__(self, head: Revision, base: int, rebase: Rebase | None):
        super().__init__(head, base)
        self.rebase = rebase
        self.plain = str(self)  # the refusal alone, for a page that shows the rest itself
        if rebase is not None:
            self.args = (f"{self.args[0]}. Against revision {head.number}: {rebase.summary()}",)


@dataclass(frozen=True)
class Saved:
    """A saved edit: the revision, and what a page needs to show it without redoing work.

    ``revision`` is the head unchanged when the edit changed nothing.
    ``drawing`` is the changed chain's drawing when the caller asked for one.
    """

    revision: Revision
    spec: ChainSpec
    report: LintReport
    drawing: Drawing | None = None


def save_edit(
    chain: Chain,
    op: str,
    args: dict[str, Any],
    *,
    base: int,
    author: Any,
    draw: Canvas | None = None,
) -> Saved:
    """Apply the edit ``op`` with ``args`` to the head of ``chain`` and store the result.

    ``draw``, when given, says what the caller will show of the changed
    chain (the page: which graph, what is selected): its layout is started
    before the linter runs, so Graphviz works while the chain is linted, and
    comes back as ``Saved.drawing``.
    """
    head = get_head(chain)
    spec = _head_spec(head)
    changed = edit.apply(spec, op, args)
    if changed.id != spec.id:
        raise EditError("id", "a chain's id is its address and cannot change here")
    drawing = None
    if draw is not None:  # drawn where the head was drawn, so the edit moves only what it changes
        memory = None if op in AFRESH_AFTER else RevisionLayout.objects.recall(head, draw.view)
        drawing = start_drawing(changed, replace(draw, memory=memory))
    report = lint(changed)
    try:
        revision = Chain.objects.store(
            formats.to_document(changed),
            _message(op, args),
            base=base,
            author=author,
            status=report.status,
            team=chain.team,
        )
    except StaleRevision as exc:
        raise StaleEdit(exc.head, base, stale_check(chain, op, args, base, exc.head)) from None
    if op in AFRESH_AFTER:
        for view in VIEWS:
            RevisionLayout.objects.tidy(revision, view)
    spec_of(revision, known=changed)
    return Saved(revision, changed, report, drawing)


def add_actions(
    chain: Chain, actions: list[dict[str, Any]], *, base: int, author: Any, message: str
) -> Saved:
    """Add ``actions`` (action documents) to the head of ``chain`` as one revision (one undo).

    Each goes through the ``add_action`` edit, so a taken id or a field the
    model refuses is an ``EditError`` naming the action, and nothing is stored.
    """
    spec = _head_spec(get_head(chain))
    changed = spec
    for action in actions:
        changed = edit.apply(changed, "add_action", action)
    return _store(chain, changed, base=base, author=author, message=message)


def _store(chain: Chain, changed: ChainSpec, *, base: int, author: Any, message: str) -> Saved:
    """``changed`` stored as the new head of ``chain`` on ``base``, linted."""
    report = lint(changed)
    try:
        revision = Chain.objects.store(
            formats.to_document(changed),
            message[:500],
            base=base,
            author=author,
            status=report.status,
            team=chain.team,
        )
    except StaleRevision as exc:
        raise StaleEdit(exc.head, base, None) from None
    spec_of(revision, known=changed)
    return Saved(revision, changed, report, None)


def add_proposal(
    chain: Chain,
    proposal: dict[str, Any],
    *,
    base: int,
    author: Any,
    message: str,
    renames: dict[str, str] | None = None,
) -> Saved:
    """A provider's proposed chain (``openapi.propose_chain``) brought into the head of
    ``chain`` as one revision: attached to the actions bound to the same calls (or named
    by ``renames``), the rest added (``openapi.edits_onto``)."""
    spec = _head_spec(get_head(chain))
    changed = spec
    for op, args in openapi.edits_onto(formats.to_document(spec), proposal, renames):
        changed = edit.apply(changed, op, args)
    return _store(chain, changed, base=base, author=author, message=message)


def stale_check(
    chain: Chain, op: str, args: dict[str, Any], base: int, head: Revision
) -> Rebase | None:
    """The edit ``op(args)`` made on revision ``base``, beside ``head``; None without a base.

    A base that does not exist (a number typed by hand) or no longer
    validates leaves nothing to compare with.
    """
    known = chain.revisions.filter(number=base).first()
    try:
        before = spec_of(known) if known is not None else None
        after = spec_of(head)
    except DocumentError:
        return None
    return rebase(before, after, op, args) if before is not None else None


def undo(chain: Chain, *, base: int, author: Any) -> Revision:
    """A new head with the content before the last edit (see :meth:`Chain.undo`)."""
    return chain.undo(base, author=author)


def redo(chain: Chain, *, base: int, author: Any) -> Revision:
    """A new head with the content the last undo took away."""
    return chain.redo(base, author=author)


def parse_value(text: str, name: str, kind: Literal["JSON", "YAML"]) -> Any:
    """A JSON or YAML value a person typed, read with the importer's limits (size, depth, aliases).

    ``name`` is where it was typed (a form field, a command-line option); a
    refusal is an ``EditError`` there.
    """
    if len(text) > MAX_FIELD:
        raise EditError(name, f"{len(text):,} characters is more than the {MAX_FIELD:,} allowed")
    try:
        return (formats.parse_json(text) if kind == "JSON" else parse_yaml(text))[0]
    except DocumentError as exc:
        raise EditError(name, f"not valid {kind}: {exc}") from None


def parse_args(text: str, name: str = "args") -> dict[str, Any]:
    """An edit's arguments typed as one JSON object."""
    args = parse_value(text, name, "JSON")
    if not isinstance(args, dict):
        raise EditError(name, "expected a JSON object")
    return args


def _head_spec(head: Revision) -> ChainSpec:
    try:
        return spec_of(head)
    except DocumentError as exc:
        raise EditError(
            "", f"the head revision no longer validates, so it cannot be edited: {exc}"
        ) from None


def _message(op: str, args: dict[str, Any]) -> str:
    """The revision's message: the operation and the ids it names (``add edge consumes a b``)."""
    named = [args[k] for k in ("id", "kind", "source", "target") if isinstance(args.get(k), str)]
    return " ".join([op.replace("_", " "), *named])[:500]
