"""Import of compile documents: the Markdown files chain-compile produces.

A compile document (SKILL Step 6, SPEC §6-§7) spreads one or more chains
over headings, fenced ``yaml`` blocks written in a lenient YAML dialect
(:mod:`.pseudo_yaml`, read by :mod:`.md_blocks`), Markdown verdict tables
and ``known_unmatched`` lists (:mod:`.md_tables`). :func:`load_markdown`
reads all of it and returns an :class:`~chains.core.formats.ImportResult`:
the chains, plus a problem for every fragment it did not take in, with its
line. This module owns the driver and the rules below; the work is split
by concern:

* :mod:`.md_layout` cuts the document into scopes: which headings and
  marker comments start a chain, and which context holds each line;
* :mod:`.md_reading` files the YAML blocks, verdict tables and
  ``known_unmatched`` lists into those contexts;
* :mod:`.md_assembly` builds one chain per scope from them, following the
  sharing rules of :mod:`.md_scopes`.

How the document is cut into chains:

* A *scope heading* names a scope: ``Scope 1 — `flight_instant_order```,
  ``Scope A — Stay booking chain``, ``Chain A — book + ticket``, ``Worked
  example B``; inside a scope, ``Modify chain`` style headings name
  sub-chains. A scope heading whose section defines actions starts a chain;
  one that only holds sub-chains groups them.
* A ruled comment inside a YAML block (``# ──── Chain M ────``) starts
  scope ``M`` for the items below it, up to the next ruled comment or the
  end of the block; a scope named only this way is a chain too, named after
  what the prose says of it in bold (``**Chain M** — manual capture``).
* A scope heading that defines no actions (``Chain M rows``) routes its
  content to the chain of that name; without one, its content is shared.
* Everything outside a chain's section is shared. Shared policy, variants
  and ``known_unmatched`` apply to every chain; shared verdict rows go to
  the chains holding one of the steps they name (all chains when they name
  none), narrowed to that chain's steps with the rest kept in the note;
  shared handles, actions and gates are copied into a chain when it refers
  to them; one no chain refers to goes to the chains whose steps its own
  text names (notes included), else it is left out with an info.
* A sentence saying every unkeyed commit (or the steps it names) keeps a
  correlation record and a cancellation shield (SPEC P3) is carried into
  the notes of the commits it covers (:mod:`.md_statements`).
* From another scope a chain gets only what the document gives it: the
  steps and rows its prose says it shares (``Shares `a → b` with Scope 1
  (same rows A1–A3)``, ``Steps: ...``; summary arrow lists when the chain
  uses what the step makes), the compensation and probe steps its own
  steps name, and the handles and gates it uses. A handle made by another
  chain's step is ``external(<scope> <step>)``. A chain's own definition
  wins. A chain's handles, actions and gates keep document order, copies
  included, so an earlier scope's steps run before a later scope's
  additions.
* A shared ``per_step`` entry naming another scope's action is left out of
  the chains that lack that action (one info per chain).
* Rails a chain's prose sketches as alternatives (``GDS `a → b`; NDC `c →
  d```) are variants: each step of one rail is ``only`` on it (SPEC §2.7).
* A document without scopes is one chain, named after its title (or the
  ``id:`` a block gives, which makes it a chain even with no elements yet).

YAML comments inside an element become its ``notes`` (:mod:`.md_blocks`).
A read that a commit names as its probe, that no step needs, and that the
source calls a probe is ``probe_only``, with an info (:mod:`.md_probes`).
Nothing is dropped silently: every YAML block either contributes or is
reported, every element that fails validation is reported with its path
and line and the rest still imports, and unknown keys are kept in
``extras`` and listed as info.
"""

from __future__ import annotations

from ..errors import DocumentError, Problem
from .md_assembly import assemble
from .md_blocks import defined_actions, defined_names, is_yaml, parse_block
from .md_layout import Layout
from .md_reading import read_content
from .result import ImportResult

__all__ = ["load_markdown"]


def load_markdown(text: str) -> ImportResult:
    """Read every chain of a compile document; never raises for bad input.

    >>> doc = '''# Demo
    ... ```yaml
    ... actions:
    ...   - {id: search, effect: read}
    ... ```
    ... '''
    >>> result = load_markdown(doc)
    >>> [c.id for c in result.chains], [a.id for a in result.chains[0].actions]
    (['demo'], ['search'])
    """
    try:
        return _import(text)
    except (DocumentError, ValueError, RecursionError) as exc:  # pragma: no cover - safety net
        problems = getattr(exc, "problems", None) or [Problem(f"could not import: {exc}")]
        return ImportResult(problems=list(problems), format="md")


def _import(text: str) -> ImportResult:
    layout = Layout(text)
    blocks = {
        n.line: parse_block(n, layout.problems)
        for n in layout.nodes
        if n.kind == "code" and is_yaml(n)
    }
    names = defined_names(blocks)
    steps = defined_actions(blocks)
    layout.find_scopes(blocks)
    read_content(layout, blocks, names, steps)
    result = ImportResult(format="md")
    result.chains = assemble(layout)
    result.problems = sorted(
        layout.problems, key=lambda p: (p.line is None, p.line or 0, p.column or 0)
    )
    return result
