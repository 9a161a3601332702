"""Every module of the application stays readable: at most 900 lines, no class over 400.

A module that grows past the limit is split by concern (as ``chains/core/dot.py``
came out of ``render.py`` and ``references.py`` out of ``edit.py``), not
squeezed. Generated migrations do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHAINS = Path(__file__).resolve().parent.parent / "chains"
MODULES = sorted(p for p in CHAINS.rglob("*.py") if "migrations" not in p.parts)


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(CHAINS)))
def test_no_module_is_over_900_lines_nor_any_class_over_400(module):
    text = module.read_text()
    assert len(text.splitlines()) <= 900
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            assert node.end_lineno - node.lineno + 1 <= 400, node.name
