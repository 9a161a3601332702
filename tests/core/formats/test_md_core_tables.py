"""A shared "verdict-table core" keeps its domain rows; only restated generic rows go.

SKILL Step 6: a multi-chain compile shares "the elicitation log and the
verdict-table core". Such a core holds rows every chain needs (an auth
failure, a validation error, a provider's throttle code) beside rows that
only restate SPEC §3's generic skeleton (staleness, empty, transport
success, unmatched), which follow every domain table anyway.
"""

from chains.core.formats.markdown import load_markdown

TWO_CHAINS = """# Seats
## Chain A — book
```yaml
actions:
  - id: find
    effect: read
  - id: hold
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: find, signal: "held"}
```
## Chain B — change
```yaml
actions:
  - id: look
    effect: read
  - id: change
    effect: commit
    idempotency: {mode: none}
    confirmation: {probe: look, signal: "changed"}
```
"""

CORE = """## 8. Shared verdict-table core
| # | Signal | Applies to | Verdict |
|---|---|---|---|
| G1 | handle staleness per its `staleness.detect` | consumers | `rewind(to: refresh)` |
| G2 | transport success (after every payload row) | any | `ok` |
| G3 | `http:401` / `http:403` | any | `dead_end(reason: auth, permanent: true)` |
| G4 | `bad_input_error` no domain row repaired | any | `dead_end(permanent: true)` |
| G5 | unmatched signal, commit in flight | commits | `reconcile` |
| G6 | unmatched signal, otherwise | any | `dead_end` |
"""

GENERIC = """## 3. Generic skeleton
| # | Signal | Applies to | Verdict |
|---|---|---|---|
| 1 | staleness per `staleness.detect` | consumers | `rewind(to: refresh)` |
| 2 | Rate limit (`http:429`) | read / mint | `retry` |
| 3 | Unmatched | otherwise | `dead_end` |
"""


def rows_of(text):
    return {c.id: [r.id for r in c.verdict_table] for c in load_markdown(text).chains}


def test_a_shared_core_keeps_its_domain_rows_for_every_chain():
    assert rows_of(TWO_CHAINS + CORE) == {
        "chain_a_book": ["G3", "G4"],
        "chain_b_change": ["G3", "G4"],
    }


def test_the_rows_a_core_restates_from_the_generic_skeleton_are_an_info_at_the_table():
    text = TWO_CHAINS + CORE
    (info,) = [p for p in load_markdown(text).problems if "generic" in p.message]
    table_line = text.split("\n").index("| # | Signal | Applies to | Verdict |") + 1
    assert info.severity == "info" and info.line == table_line
    assert "G1, G2, G5, G6" in info.message and "G3, G4" in info.message


def test_a_table_under_a_generic_heading_is_still_not_imported():
    assert rows_of(TWO_CHAINS + GENERIC) == {"chain_a_book": [], "chain_b_change": []}
