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

from ..model import ChainSpec
from ..paths import ElementPath
from .context import LintContext
from .registry import Found, rule

__all__: list[str] = []


# The question each tag that is not evidence puts to a human.
_QUESTIONS = {
    "assumed": "Assumed: {note} ({where}); confirm against the provider's docs or observe it.",
    "documented(search-snippet)": "Seen only in a search snippet: {note} ({where}); fetch the "
    "page itself or observe it before relying on it.",
    "spec-example": "Taken from a SPEC example, never evidence: {note} ({where}); does this "
    "provider really behave so?",
}


def _questions(ctx: LintContext, *tags: str) -> Found:
    """The question for every element whose source carries one of ``tags``, tag by tag."""
    for tag in tags:
        for where, element in ctx.elements:
            source = element.source
            if source is not None and source.tag == tag:
                note = (source.note or "").strip().rstrip(".")
                if note.lower() == tag:  # the note is just the tag again
                    note = ""
                yield where, _QUESTIONS[tag].format(note=note or "no note given", where=where)


@rule(
    "evidence.assumed",
    "info",
    "SKILL Step 1",
    hint="Confirm the claim from the provider's documentation page itself or by observing "
    "the behaviour, then change its source tag to documented or observed.",
    unknown=True,
)
def assumed(spec: ChainSpec, ctx: LintContext) -> Found:
    """An assumed or search-snippet claim is a question, not evidence."""
    yield from _questions(ctx, "assumed", "documented(search-snippet)")


@rule(
    "evidence.spec-example",
    "info",
    "SKILL Step 1",
    hint="Find the provider's own documentation or observe the behaviour; until then keep "
    "the signals in known_unmatched.",
    unknown=True,
)
def spec_example(spec: ChainSpec, ctx: LintContext) -> Found:
    """A claim taken from the SPEC's worked examples is never evidence."""
    yield from _questions(ctx, "spec-example")


@rule(
    "evidence.no-compensation",
    "info",
    "SKILL Step 6",
    hint="Declare a compensator if the provider has one; if not, record who accepted that "
    "the commit is final, and why (cost, consent gate before it), in "
    "compensation.ordering_note: the question stays on the UNKNOWNs list for a reviewer "
    "to confirm.",
    unknown=True,
)
def no_compensation(spec: ChainSpec, ctx: LintContext) -> Found:
    """A commit with compensation none needs someone to accept that it is final."""
    for a in spec.actions:
        comp = a.compensation
        final = comp is not None and comp.action == "none" and not (comp.chain or comp.ladder)
        if a.effect == "commit" and final:
            yield (
                ElementPath.action(a.id).field("compensation"),
                f"{ElementPath.action(a.id)} cannot be undone (compensation: none): who "
                "accepts that "
                "this commit is final?",
            )
