"""The glossary's index of CONFORMANCE items: every item has its tests, and the index says which.

docs/glossary.md holds, between two markers, one row per item (C1.1 to C8.6,
45 in all) naming the tests in this folder that prove it, read from their
names (``test_c<group>_<item>_…``). The test fails when an item has no test
or the index drifts from the folder; ``python -m tests.core.sim.conformance.test_index``
writes it again.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
GLOSSARY = HERE.parents[3] / "docs" / "glossary.md"
START, END = "<!-- conformance-index -->", "<!-- /conformance-index -->"
# How many items each group of CONFORMANCE.md has.
ITEMS = {1: 8, 2: 6, 3: 6, 4: 5, 5: 5, 6: 5, 7: 4, 8: 6}
_TEST = re.compile(r"^def (test_c(\d)_(\d)_\w+)\(", re.M)


def proofs_by_item() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {
        f"C{g}.{i}": [] for g, n in ITEMS.items() for i in range(1, n + 1)
    }
    for path in sorted(HERE.glob("test_c*.py")):
        for name, group, item in _TEST.findall(path.read_text()):
            key = f"C{group}.{item}"
            if key in found and name not in found[key]:
                found[key].append(f"{path.name}::{name}")
    return found


def index_markdown() -> str:
    rows = ["| Item | Proved by |", "| --- | --- |"]
    for item, names in proofs_by_item().items():
        rows.append(f"| {item} | {', '.join(f'`{n}`' for n in names)} |")
    return "\n".join([START, *rows, END])


def _written() -> str:
    text = GLOSSARY.read_text()
    return text[text.index(START) : text.index(END) + len(END)]


def test_every_conformance_item_has_a_test_of_its_own():
    assert [item for item, names in proofs_by_item().items() if not names] == []


def test_the_glossary_index_names_the_tests_of_every_item():
    assert _written() == index_markdown(), (
        "docs/glossary.md's conformance index is stale: "
        "run python -m tests.core.sim.conformance.test_index"
    )


if __name__ == "__main__":
    text = GLOSSARY.read_text()
    GLOSSARY.write_text(text.replace(_written(), index_markdown()))
    print(f"wrote the conformance index to {GLOSSARY}")
