"""bench/mutate.py's named mutants still apply to the code they mutate.

A rename in the runtime can leave a named mutant's text behind; the check
would then skip or misreport it. This keeps the two in step.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_mutate", ROOT / "bench" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


@pytest.mark.parametrize("mutant", BENCH.NAMED, ids=lambda m: m.name)
def test_each_edit_of_a_named_mutant_finds_its_text_once(mutant):
    source = (ROOT / BENCH.SIM / mutant.file).read_text()
    assert [source.count(old) for old, _ in mutant.edits] == [1] * len(mutant.edits)


@pytest.mark.parametrize("target", sorted(BENCH.TARGETS))
def test_each_target_names_modules_that_exist(target):
    found = BENCH.TARGETS[target]
    assert all((ROOT / found.folder / name).is_file() for name in found.modules)
