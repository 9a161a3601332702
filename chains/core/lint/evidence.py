"""Lint rules: evidence and UNKNOWNs (SKILL Step 1, Step 6 §10).

Every claim in a compiled chain may carry a ``source`` tag. The claims that
are not evidence (``assumed``, a search-engine snippet, a SPEC worked
example) and every commit that cannot be undone become UNKNOWNs: questions a
human answers before the chain is implemented. None of them makes a chain
invalid; they are ``info`` findings that fill the UNKNOWNs list. (Empty
staleness detection is the fourth kind; it lives with the handle rules.)

Elements are found by walking the document model, so a ``source`` on any
element, however deeply nested, is seen.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model import ChainSpec
from .context import LintContext
from .registry import rule

__all__: list[str] = []

Found = Iterator[tuple[str, str]]


def _sourced(ctx: LintContext, *tags: str) -> Iterator[tuple[str, str]]:
    """(path, note) of every element whose source carries one of ``tags``."""
    for where, element in ctx.elements:
        source = element.source
        if source is not None and source.tag in tags:
            note = (source.note or "").strip().rstrip(".")
            if note.lower() in tags:  # the note is just the tag again
                note = ""
            yield where, note or "no note given"


@rule(
    "evidence.assumed",
    "info",
    "SKILL Step 1",
    hint="Confirm the claim from the provider's documentation page itself or by observing "
    "the behaviour, then change its source tag to documented or observed.",
    unknown=True,
)
def assumed(chain: ChainSpec, ctx: LintContext) -> Found:
    """An assumed or search-snippet claim is a question, not evidence."""
    for where, note in _sourced(ctx, "assumed"):
        yield (
            where,
            f"Assumed: {note} ({where}); confirm against the provider's docs or observe it.",
        )
    for where, note in _sourced(ctx, "documented(search-snippet)"):
        yield (
            where,
            f"Seen only in a search snippet: {note} ({where}); fetch the page itself or observe "
            "it before relying on it.",
        )


@rule(
    "evidence.spec-example",
    "info",
    "SKILL Step 1",
    hint="Find the provider's own documentation or observe the behaviour; until then keep "
    "the signals in known_unmatched.",
    unknown=True,
)
def spec_example(chain: ChainSpec, ctx: LintContext) -> Found:
    """A claim taken from the SPEC's worked examples is never evidence."""
    for where, note in _sourced(ctx, "spec-example"):
        yield (
            where,
            f"Taken from a SPEC example, never evidence: {note} ({where}); does this "
            "provider really behave so?",
        )


@rule(
    "evidence.no-compensation",
    "info",
    "SKILL Step 6",
    hint="Record who accepted that the commit is final, and why (cost, consent gate before "
    "it) in compensation.ordering_note.",
    unknown=True,
)
def no_compensation(chain: ChainSpec, ctx: LintContext) -> Found:
    """A commit with compensation none needs someone to accept that it is final."""
    for a in chain.actions:
        comp = a.compensation
        final = comp is not None and comp.action == "none" and not (comp.chain or comp.ladder)
        if a.effect == "commit" and final:
            yield (
                f"actions[{a.id}].compensation",
                f"actions[{a.id}] cannot be undone (compensation: none): who accepts that "
                "this commit is final?",
            )
