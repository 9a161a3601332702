"""Alternative rails written as alternatives become variants, not one sequence.

SPEC §2.7: "Some providers run parallel rails through one API surface ... A
config may declare a variant axis ... Any action ... may carry `only:
[value, ...]` ... A run binds ONE value at start". A compile that sketches
a chain as `LEFT `a → b`; RIGHT `c → d`` runs either rail, never both: read
as one sequence, its happy path would undo a ticket one way and then again
the other way.
"""

from chains.core.formats.markdown import load_markdown
from chains.core.model import main_steps

DOCUMENT = """# Tickets

- **Chain A — sell**: `quote → sell`.
- **Chain B — undo**: LEFT `list_sold → drop_sale`; RIGHT `quote_back → give_back`.

## Chain A — sell
```yaml
actions:
  - id: quote
    effect: mint
  - id: sell
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "sold"}
  - id: look
    effect: read
    probe_only: true
```

## Chain B — undo
```yaml
actions:
  - id: list_sold
    effect: read
  - id: drop_sale
    effect: compensate
    idempotency: {mode: none}
    confirmation: {probe: list_sold, signal: "dropped"}
  - id: quote_back
    effect: mint
  - id: give_back
    effect: compensate
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "given back"}
```
"""


def undo_chain():
    return next(c for c in load_markdown(DOCUMENT).chains if c.id == "chain_b_undo")


def test_labelled_arrow_lists_written_as_alternatives_are_a_variant_axis():
    variants = undo_chain().variants
    assert (variants.axis, variants.values) == ("rail", ["LEFT", "RIGHT"])


def test_each_step_of_one_rail_is_scoped_to_that_rail():
    only = {a.id: a.only for a in undo_chain().actions}
    assert only == {
        "list_sold": ["LEFT"],
        "drop_sale": ["LEFT"],
        "quote_back": ["RIGHT"],
        "give_back": ["RIGHT"],
        "look": [],
    }


def test_a_run_on_one_rail_walks_that_rail_only():
    chain = undo_chain()
    assert main_steps(chain, "LEFT") == ["list_sold", "drop_sale"]
    assert main_steps(chain, "RIGHT") == ["quote_back", "give_back"]


def test_the_rails_are_an_info_at_the_summary_line():
    result = load_markdown(DOCUMENT)
    (info,) = [p for p in result.problems if "variants" in p.message]
    assert info.severity == "info" and info.line == 4 and "drop_sale" in info.message


def test_a_chain_sketched_as_one_arrow_list_has_no_variants():
    sell = next(c for c in load_markdown(DOCUMENT).chains if c.id == "chain_a_sell")
    assert sell.variants is None and all(a.only == [] for a in sell.actions)


def test_one_labelled_arrow_list_alone_is_no_alternative():
    text = DOCUMENT.replace("; RIGHT `quote_back → give_back`", "")
    assert undo_chain_of(text).variants is None


def undo_chain_of(text):
    return next(c for c in load_markdown(text).chains if c.id == "chain_b_undo")
