"""A shared definition no chain refers to goes where its own text says, not everywhere.

A compile's shared part may define a gate (or handle, action, row) that no
chain's steps, rows or gates refer to, while its own words name the step it
belongs to ("after the price check, before `pay`"). Copied into every chain,
it would be an unreachable gate in chains that never run that step.
"""

from chains.core.formats.markdown import load_markdown

CHAINS = """# Ferry tickets
## Chain A — book
```yaml
actions:
  - id: look
    effect: read
  - id: pay
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "paid"}
```
## Chain B — refund
```yaml
actions:
  - id: peek
    effect: read
  - id: refund
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: peek, signal: "refunded"}
```
"""

NAMING = """## 7. Gates
```yaml
gates:
  fare_consent:          # shown again before pay when the fare moved
    audience: user
    outcomes: {accept: {verdict: ok}, decline: {verdict: dead_end}}
    timeout: {after: 1h, verdict: dead_end}
```
"""

NAMING_NONE = NAMING.replace("before pay when the fare moved", "when the fare moved")


def gates_of(text):
    return {c.id: [g.id for g in c.gates] for c in load_markdown(text).chains}


def test_an_unreferenced_shared_gate_goes_to_the_chain_whose_step_its_text_names():
    assert gates_of(CHAINS + NAMING) == {
        "chain_a_book": ["fare_consent"],
        "chain_b_refund": [],
    }


def test_an_unreferenced_shared_gate_naming_no_step_stays_out_of_every_chain():
    assert gates_of(CHAINS + NAMING_NONE) == {"chain_a_book": [], "chain_b_refund": []}


def test_where_it_went_is_an_info_at_its_line():
    problems = load_markdown(CHAINS + NAMING).problems
    line = (CHAINS + NAMING).split("\n").index(
        "  fare_consent:          # shown again before pay when the fare moved"
    ) + 1
    (info,) = [p for p in problems if p.line == line]
    assert info.severity == "info"
    assert "chain_a_book" in info.message and "chain_b_refund" not in info.message


def test_one_left_out_is_an_info_at_its_line():
    problems = load_markdown(CHAINS + NAMING_NONE).problems
    (info,) = [p for p in problems if "fare_consent" in p.message]
    assert info.severity == "info"
    assert "left out" in info.message


def test_a_single_chain_document_still_takes_its_unreferenced_gate():
    single = CHAINS.split("## Chain B")[0] + NAMING_NONE
    assert [g.id for c in load_markdown(single).chains for g in c.gates] == ["fare_consent"]
