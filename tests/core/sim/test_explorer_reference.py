"""What the explorer finds on every fixture, pinned: a faster explorer must find the same.

``reference/explorations.json`` holds, per fixture chain and fault bound,
the findings (invariant, message and the counterexample's events), the
terminal states reached and the coverage of one exploration. Speed-ups
(cheaper copies, the classifier's memo, the last child taking its parent's
run) must leave all of it unchanged, states included; a state-space
reduction may lower ``states`` but nothing else. After a change that is
meant to alter what the explorer sees, regenerate the file and read its
diff::

    .venv/bin/python -m tests.core.sim.test_explorer_reference
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chains.core import formats
from chains.core.sim.explorer import Bounds, explore, scenario_dict

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = Path(__file__).parent / "reference" / "explorations.json"
# Every fixture chain at one fault; the small ones at two as well.
CASES = [
    ("fixtures/flight-roundtrip.yaml", 1),
    ("fixtures/card-payment.yaml", 1),
    ("fixtures/cloud-provisioning.yaml", 1),
    ("fixtures/hotel-compile.md", 1),
    ("fixtures/unsafe-retry-booking.yaml", 1),
    ("fixtures/unsafe-retry-booking.yaml", 2),
    ("tests/core/sim/fixtures/card-hold.yaml", 1),
    ("tests/core/sim/fixtures/held-booking.yaml", 1),
    ("tests/core/sim/fixtures/held-booking.yaml", 2),
    ("tests/core/sim/fixtures/no-options.yaml", 2),
    ("tests/core/sim/fixtures/offer-search.yaml", 1),
]


def seen(path: str, max_faults: int) -> dict[str, dict]:
    """Each chain of the file explored at ``max_faults``: what the reference keeps."""
    text = (ROOT / path).read_text()
    chains = formats.load(text, format="md" if path.endswith(".md") else "yaml").chains
    out = {}
    for chain in chains:
        result = explore(chain, Bounds(max_faults=max_faults))
        data = result.as_dict()
        out[f"{path} {chain.id} faults={max_faults}"] = {
            "states": data["states"],
            "terminals": data["terminals"],
            "violations": [
                [v.invariant, v.message, scenario_dict(v.scenario)["events"]]
                for v in result.violations
            ],
            "coverage": data["coverage"],
            "happy_path": data["happy_path"],
        }
    return out


@pytest.fixture(scope="module")
def reference() -> dict[str, dict]:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize(("path", "max_faults"), CASES)
def test_the_explorer_finds_what_the_reference_recorded(reference, path, max_faults):
    for name, found in seen(path, max_faults).items():
        assert found == reference[name], name


if __name__ == "__main__":
    everything: dict[str, dict] = {}
    for path, max_faults in CASES:
        everything.update(seen(path, max_faults))
    REFERENCE.write_text(json.dumps(everything, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(everything)} explorations to {REFERENCE.relative_to(ROOT)}")
